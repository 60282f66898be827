// After the window is built: this period's chunk becomes each input stream's history.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(2) var<storage, read_write> history: array<f32>;
@group(0) @binding(3) var<storage, read> upload: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let p = params.m;
    let job = id / p;
    history[in_jobs[job].stream * p + id % p] = upload[id];
}
