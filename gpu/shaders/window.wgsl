// Overlap-save input window, packed for the half-length complex FFT: each input stream's window
// is its previous chunk (history) followed by this period's chunk (upload), 2P real samples,
// read as P complex points z[n] = x[2n] + i x[2n + 1].

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(2) var<storage, read> history: array<f32>;
@group(0) @binding(3) var<storage, read> upload: array<f32>;
@group(0) @binding(4) var<storage, read_write> work: array<vec2<f32>>;

fn window_sample(job: u32, stream: u32, index: u32) -> f32 {
    let p = params.m;
    if index < p {
        return history[stream * p + index];
    }
    return upload[job * p + index - p];
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let job = id / params.m;
    let n = id % params.m;
    let stream = in_jobs[job].stream;
    work[id] = vec2<f32>(window_sample(job, stream, 2u * n), window_sample(job, stream, 2u * n + 1u));
}
