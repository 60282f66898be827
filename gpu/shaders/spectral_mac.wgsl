// The spectral multiply-accumulate over every (input, output, partition) triple: for each
// output stream and bin, the sum over its paths and partitions j of the input spectrum of j
// periods ago times the path's IR spectrum of partition j. One invocation per (output, bin).

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(2) var<storage, read> out_jobs: array<OutJob>;
@group(0) @binding(3) var<storage, read> path_jobs: array<PathJob>;
@group(0) @binding(4) var<storage, read> fdl: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> spectra: array<vec2<f32>>;
@group(0) @binding(6) var<storage, read_write> acc: array<vec2<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let bins = params.m + 1u;
    let out = out_jobs[id / bins];
    let k = id % bins;
    var sum = vec2<f32>(0.0, 0.0);
    for (var path = out.path_start; path < out.path_start + out.path_count; path++) {
        let info = path_jobs[path];
        let input = in_jobs[info.in_job];
        var slot = input.head;
        for (var j = 0u; j < input.slots; j++) {
            let x = fdl[(input.fdl_base + slot) * bins + k];
            let h = spectra[(info.spectra_base + j) * bins + k];
            sum += cmul(x, h);
            slot = select(slot - 1u, input.slots - 1u, slot == 0u);
        }
    }
    acc[id] = sum;
}
