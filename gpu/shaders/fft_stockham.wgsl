// One radix-2 Stockham autosort stage of `count` complex FFTs of length M (a power of two),
// forward or inverse (unscaled). Stages run with span = 1, 2, ..., M / 2, ping-ponging between
// two buffers; the result of the last stage is in natural order. Twiddles come from a table
// computed in double precision (WGSL's sin and cos are not accurate enough for 100 dB):
// twiddles[t] = e^{-2 pi i t / M}, t < M / 2.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> dst: array<vec2<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let m = params.m;
    let half = m / 2u;
    let base = (id / half) * m;
    let i = id % half;
    let span = params.span;
    let k = i & (span - 1u);
    // e^{-i pi k / span} = e^{-2 pi i (k * M / (2 span)) / M}
    var w = twiddles[k * (half / span)];
    if params.inverse != 0u {
        w = conj(w);
    }
    let u0 = src[base + i];
    let u1 = cmul(src[base + i + half], w);
    let j = (i << 1u) - k;
    dst[base + j] = u0 + u1;
    dst[base + j + span] = u0 - u1;
}
