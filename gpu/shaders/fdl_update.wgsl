// The real-to-complex post-pass, written straight into the frequency-domain delay line: from the
// half-length FFT Z of z[n] = x[2n] + i x[2n + 1], the spectrum of the real window x,
// X[k] = (Z[k] + conj Z[M - k]) / 2 + W^k (Z[k] - conj Z[M - k]) / 2i, W = e^{-2 pi i / 2M},
// for the P + 1 bins k = 0..M, goes to slot `head` of each input stream's delay line.
// half_twiddles[k] = W^k, k <= M. `with_history` (the four-step path) also makes this period's
// chunk each input stream's history, as history.wgsl does: the window was read in an earlier
// dispatch.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> in_jobs: array<InJob>;
@group(0) @binding(2) var<storage, read> half_twiddles: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> spectrum: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> fdl: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> upload: array<f32>;
@group(0) @binding(6) var<storage, read_write> history: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    post_pass(id);
}

@compute @workgroup_size(64)
fn with_history(@builtin(global_invocation_id) gid: vec3<u32>) {
    let id = invocation(gid, params);
    if id >= params.total {
        return;
    }
    post_pass(id);
    let m = params.m;
    let job = id / (m + 1u);
    let k = id % (m + 1u);
    if k < m {
        history[in_jobs[job].stream * m + k] = upload[job * m + k];
    }
}

fn post_pass(id: u32) {
    let m = params.m;
    let bins = m + 1u;
    let job = id / bins;
    let k = id % bins;
    let z = spectrum[job * m + k % m];
    let z_mirror = spectrum[job * m + (m - k) % m];
    let info = in_jobs[job];
    fdl[(info.fdl_base + info.head) * bins + k] = real_spectrum_bin(z, z_mirror, half_twiddles[k]);
}
