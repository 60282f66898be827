// Shared by every kernel (prepended to each file when it is compiled).
//
// Complex numbers are vec2<f32> (re, im). A batch is `count` independent items laid out one
// after another; every kernel but the tiled ones runs one invocation per output element, `total`
// of them, spread over a 2D grid of `row` invocations per row (a 1D grid would be limited to
// 65535 workgroups). The tiled kernels count workgroups instead: `total` of them, `row / 64` per
// grid row.

struct Params {
    // Invocations with work to do.
    total: u32,
    // Invocations per grid row (workgroups in x times 64).
    row: u32,
    // Complex FFT length M = P (the real FFT length is N = 2P).
    m: u32,
    // Stockham stage span: 1, 2, 4, ..., M / 2.
    span: u32,
    // 0: forward FFT (twiddles e^{-i...}); 1: inverse (conjugate twiddles).
    inverse: u32,
    // Items in the batch (input streams or output streams).
    count: u32,
    // Tiled kernels (fft_tiled.wgsl): the length of the transforms a workgroup runs in
    // workgroup memory (M, or M1 or M2 of a four-step pass) ...
    len: u32,
    // ... and how many of them it runs (jobs, or adjacent columns or rows).
    batch: u32,
}

// One input stream (one input channel of one level) in this period's batch.
struct InJob {
    // The stream's index in the history arena.
    stream: u32,
    // First slot of the stream's frequency-domain delay line in the FDL arena.
    fdl_base: u32,
    // Slots of the delay line (the level's partition count).
    slots: u32,
    // Slot of the newest spectrum, this period's.
    head: u32,
}

// One output stream in this period's batch: its paths are path_jobs[start .. start + count].
struct OutJob {
    path_start: u32,
    path_count: u32,
}

// One path into an output: the input job it reads and the first of its IR spectra (one per
// partition) in the spectra arena.
struct PathJob {
    in_job: u32,
    spectra_base: u32,
}

fn invocation(gid: vec3<u32>, params: Params) -> u32 {
    return gid.x + gid.y * params.row;
}

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn conj(a: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x, -a.y);
}

// The real-FFT post-pass of one bin: from bins k and M - k of the half-length FFT Z of
// z[n] = x[2n] + i x[2n + 1], bin k of the real x's spectrum,
// X[k] = (Z[k] + conj Z[M - k]) / 2 + W^k (Z[k] - conj Z[M - k]) / 2i, with w = W^k.
fn real_spectrum_bin(z: vec2<f32>, z_mirror: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let zr = conj(z_mirror);
    let even = 0.5 * (z + zr);
    let d = 0.5 * (z - zr);
    // d / i = (d.y, -d.x)
    return even + cmul(w, vec2<f32>(d.y, -d.x));
}

// The inverse pre-pass of one bin, the post-pass undone (unscaled, like realfft): from bins k
// and M - k of a real signal's spectrum X, Z[k] = E + i O with E = X[k] + conj X[M - k] and
// O = (X[k] - conj X[M - k]) conj(W^k), w = W^k.
fn half_spectrum_bin(x: vec2<f32>, x_mirror: vec2<f32>, w: vec2<f32>) -> vec2<f32> {
    let xr = conj(x_mirror);
    let even = x + xr;
    let odd = cmul(x - xr, conj(w));
    // even + i odd
    return vec2<f32>(even.x - odd.y, even.y + odd.x);
}
