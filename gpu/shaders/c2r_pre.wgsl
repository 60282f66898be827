// The complex-to-real pre-pass: P + 1 bins of a real signal's spectrum X become the half-length
// spectrum Z whose inverse FFT is z[n] = N (x[2n] + i x[2n + 1]), N = 2M (unscaled, like
// realfft): E = X[k] + conj X[M - k], O = (X[k] - conj X[M - k]) conj(W^k), Z[k] = E + i O.
// The imaginary parts of the DC and Nyquist bins are ignored, as for a real signal.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> half_twiddles: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> acc: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> work: array<vec2<f32>>;

fn bin(base: u32, k: u32) -> vec2<f32> {
    let x = acc[base + k];
    if k == 0u || k == params.m {
        return vec2<f32>(x.x, 0.0);
    }
    return x;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    let m = params.m;
    let job = id / m;
    let k = id % m;
    let base = job * (m + 1u);
    work[id] = half_spectrum_bin(bin(base, k), bin(base, m - k), half_twiddles[k]);
}
