// Overlap-save output: the valid part of each output stream's circular convolution is the last
// P of its 2P real samples, z[P/2 ..] unpacked (x[2n] = re, x[2n + 1] = im).

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> signal: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> output: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let p = params.m;
    let job = id / p;
    let i = id % p;
    let z = signal[job * p + p / 2u + i / 2u];
    output[id] = select(z.x, z.y, (i & 1u) == 1u);
}
