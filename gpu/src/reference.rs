//! CPU twins of every kernel in `shaders/`, written with the same index arithmetic, for tests:
//! each kernel is checked against its twin, and the twins against realfft and a direct
//! convolution. Complex numbers are `[re, im]`, as `vec2<f32>` in WGSL.

use crate::layout::{InJob, OutJob, PathJob};

/// A complex number as the kernels store it.
pub type C32 = [f32; 2];

fn cmul(a: C32, b: C32) -> C32 {
    [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]]
}

fn conj(a: C32) -> C32 {
    [a[0], -a[1]]
}

fn add(a: C32, b: C32) -> C32 {
    [a[0] + b[0], a[1] + b[1]]
}

fn sub(a: C32, b: C32) -> C32 {
    [a[0] - b[0], a[1] - b[1]]
}

fn scale(a: C32, s: f32) -> C32 {
    [a[0] * s, a[1] * s]
}

/// `real_spectrum_bin` of `common.wgsl`: bin `k` of a real signal's spectrum from bins `k`
/// and `M - k` of its half-length FFT, `w = W^k`.
fn real_spectrum_bin(z: C32, z_mirror: C32, w: C32) -> C32 {
    let zr = conj(z_mirror);
    let even = scale(add(z, zr), 0.5);
    let d = scale(sub(z, zr), 0.5);
    add(even, cmul(w, [d[1], -d[0]]))
}

/// `half_spectrum_bin` of `common.wgsl`: bin `k` of the half-length spectrum for the inverse
/// FFT from bins `k` and `M - k` of a real signal's spectrum, `w = W^k`.
fn half_spectrum_bin(x: C32, x_mirror: C32, w: C32) -> C32 {
    let xr = conj(x_mirror);
    let even = add(x, xr);
    let odd = cmul(sub(x, xr), conj(w));
    [even[0] - odd[1], even[1] + odd[0]]
}

/// `e^{-2 pi i t / M}` for `t < M / 2`, computed in double precision (the FFT's table).
pub fn twiddles(m: usize) -> Vec<C32> {
    (0..m / 2)
        .map(|t| {
            let angle = -2.0 * std::f64::consts::PI * t as f64 / m as f64;
            [angle.cos() as f32, angle.sin() as f32]
        })
        .collect()
}

/// `W^k = e^{-2 pi i k / 2M}` for `k <= M` (the real-FFT post- and pre-pass table).
pub fn half_twiddles(m: usize) -> Vec<C32> {
    (0..=m)
        .map(|k| {
            let angle = -std::f64::consts::PI * k as f64 / m as f64;
            [angle.cos() as f32, angle.sin() as f32]
        })
        .collect()
}

/// `fft_stockham.wgsl`, one stage: `count` transforms of length `m` from `src` into `dst`.
pub fn fft_stage(src: &[C32], dst: &mut [C32], m: usize, span: usize, inverse: bool, tw: &[C32]) {
    let half = m / 2;
    for id in 0..src.len() / 2 {
        let base = (id / half) * m;
        let i = id % half;
        let k = i & (span - 1);
        let mut w = tw[k * (half / span)];
        if inverse {
            w = conj(w);
        }
        let u0 = src[base + i];
        let u1 = cmul(src[base + i + half], w);
        let j = (i << 1) - k;
        dst[base + j] = add(u0, u1);
        dst[base + j + span] = sub(u0, u1);
    }
}

/// Every stage of [`fft_stage`] in turn (unscaled), in place; `scratch` is the ping-pong
/// buffer.
pub fn fft(data: &mut Vec<C32>, scratch: &mut Vec<C32>, m: usize, inverse: bool) {
    let tw = twiddles(m);
    scratch.resize(data.len(), [0.0; 2]);
    let mut span = 1;
    while span < m {
        fft_stage(data, scratch, m, span, inverse, &tw);
        std::mem::swap(data, scratch);
        span *= 2;
    }
}

/// `window.wgsl`: each input job's 2P window (`history` stream, then the uploaded chunk),
/// packed as P complex points.
pub fn window(jobs: &[InJob], history: &[f32], upload: &[f32], p: usize) -> Vec<C32> {
    let sample = |job: usize, stream: usize, index: usize| {
        if index < p {
            history[stream * p + index]
        } else {
            upload[job * p + index - p]
        }
    };
    (0..jobs.len() * p)
        .map(|id| {
            let (job, n) = (id / p, id % p);
            let stream = jobs[job].stream as usize;
            [sample(job, stream, 2 * n), sample(job, stream, 2 * n + 1)]
        })
        .collect()
}

/// `history.wgsl`: the uploaded chunks become the streams' history.
pub fn update_history(jobs: &[InJob], history: &mut [f32], upload: &[f32], p: usize) {
    for id in 0..jobs.len() * p {
        history[jobs[id / p].stream as usize * p + id % p] = upload[id];
    }
}

/// `fdl_update.wgsl`: the real-FFT post-pass from each job's half-length spectrum into slot
/// `head` of its delay line.
pub fn fdl_update(jobs: &[InJob], spectrum: &[C32], fdl: &mut [C32], m: usize) {
    let bins = m + 1;
    let half_tw = half_twiddles(m);
    for id in 0..jobs.len() * bins {
        let (job, k) = (id / bins, id % bins);
        let z = spectrum[job * m + k % m];
        let z_mirror = spectrum[job * m + (m - k) % m];
        let info = jobs[job];
        fdl[(info.fdl_base + info.head) as usize * bins + k] =
            real_spectrum_bin(z, z_mirror, half_tw[k]);
    }
}

/// Bin `k` of output job `out`'s sum over its paths and partitions j: the input spectrum of j
/// periods ago times the path's IR spectrum of partition j (the loop of `spectral_mac.wgsl`
/// and `mac_pre.wgsl`, in their order).
fn mac_bin(
    in_jobs: &[InJob],
    out: OutJob,
    path_jobs: &[PathJob],
    fdl: &[C32],
    spectra: &[C32],
    bins: usize,
    k: usize,
) -> C32 {
    let mut sum = [0.0f32; 2];
    for path in out.path_start..out.path_start + out.path_count {
        let info = path_jobs[path as usize];
        let input = in_jobs[info.in_job as usize];
        let mut slot = input.head;
        for j in 0..input.slots {
            let x = fdl[(input.fdl_base + slot) as usize * bins + k];
            let h = spectra[(info.spectra_base + j) as usize * bins + k];
            sum = add(sum, cmul(x, h));
            slot = if slot == 0 { input.slots - 1 } else { slot - 1 };
        }
    }
    sum
}

/// `spectral_mac.wgsl`: per output job and bin, the sum over its paths and partitions.
pub fn spectral_mac(
    in_jobs: &[InJob],
    out_jobs: &[OutJob],
    path_jobs: &[PathJob],
    fdl: &[C32],
    spectra: &[C32],
    m: usize,
) -> Vec<C32> {
    let bins = m + 1;
    (0..out_jobs.len() * bins)
        .map(|id| {
            mac_bin(
                in_jobs,
                out_jobs[id / bins],
                path_jobs,
                fdl,
                spectra,
                bins,
                id % bins,
            )
        })
        .collect()
}

/// `c2r_pre.wgsl`: P + 1 bins per job into the half-length spectrum for the inverse FFT.
pub fn c2r_pre(acc: &[C32], m: usize) -> Vec<C32> {
    let half_tw = half_twiddles(m);
    let count = acc.len() / (m + 1);
    let bin = |base: usize, k: usize| {
        let x = acc[base + k];
        if k == 0 || k == m { [x[0], 0.0] } else { x }
    };
    (0..count * m)
        .map(|id| {
            let (job, k) = (id / m, id % m);
            let base = job * (m + 1);
            half_spectrum_bin(bin(base, k), bin(base, m - k), half_tw[k])
        })
        .collect()
}

/// `overlap_save.wgsl`: the last P real samples of each job's inverse transform.
pub fn overlap_save(signal: &[C32], p: usize) -> Vec<f32> {
    (0..signal.len())
        .map(|id| {
            let (job, i) = (id / p, id % p);
            let z = signal[job * p + p / 2 + i / 2];
            if i & 1 == 1 { z[1] } else { z[0] }
        })
        .collect()
}

/// `e^{-2 pi i t / M}` for every `t < M`, in double precision (the tiled kernels' table).
pub fn full_twiddles(m: usize) -> Vec<C32> {
    (0..m)
        .map(|t| {
            let angle = -2.0 * std::f64::consts::PI * t as f64 / m as f64;
            [angle.cos() as f32, angle.sin() as f32]
        })
        .collect()
}

/// The shape of one tiled dispatch: the transforms a workgroup runs in its memory.
#[derive(Debug, Clone, Copy)]
pub struct TileShape {
    /// Points per half of the workgroup's ping-pong buffer (`TILE`).
    pub tile: usize,
    /// The FFT's length `M`.
    pub m: usize,
    /// Length of each transform in the workgroup (`params.len`).
    pub len: usize,
    /// Transforms per workgroup (`params.batch`).
    pub batch: usize,
    /// Conjugate twiddles.
    pub inverse: bool,
}

impl TileShape {
    fn twiddle(&self, tw: &[C32], t: usize) -> C32 {
        if self.inverse { conj(tw[t]) } else { tw[t] }
    }

    fn rotate(&self, a: C32) -> C32 {
        if self.inverse {
            [-a[1], a[0]]
        } else {
            [a[1], -a[0]]
        }
    }

    /// `a` times `e^(-i pi / 4)` (forward) or `e^(i pi / 4)` (inverse).
    fn eighth_turn(&self, a: C32) -> C32 {
        let c = std::f32::consts::FRAC_1_SQRT_2;
        if self.inverse {
            [c * (a[0] - a[1]), c * (a[0] + a[1])]
        } else {
            [c * (a[0] + a[1]), c * (a[1] - a[0])]
        }
    }

    /// The 4-point DFT.
    fn dft4(&self, [a0, a1, a2, a3]: [C32; 4]) -> [C32; 4] {
        let (t0, t1) = (add(a0, a2), sub(a0, a2));
        let (t2, t3) = (add(a1, a3), self.rotate(sub(a1, a3)));
        [add(t0, t2), add(t1, t3), sub(t0, t2), sub(t1, t3)]
    }
}

/// `tile_fft` of `fft_tiled.wgsl`: the `batch` transforms of `len` points in `tile[..]` (two
/// halves of `shape.tile` points), radix-8 Stockham stages and a last one of radix 4 or 2.
/// Returns where the result starts (0 or `shape.tile`).
pub fn tile_fft(tile: &mut [C32], shape: TileShape, tw: &[C32]) -> usize {
    let TileShape { len, batch, .. } = shape;
    let log_len = len.trailing_zeros();
    let elements = batch * len;
    let log_step = shape.m.trailing_zeros() - log_len;
    let (mut at, mut log_span) = (0, 0);
    while log_span < log_len {
        let to = shape.tile - at;
        let span = 1 << log_span;
        let radix_log = (log_len - log_span).min(3);
        let radix = 1usize << radix_log;
        let part = len >> radix_log;
        for b in 0..elements >> radix_log {
            let base = (b >> (log_len - radix_log)) << log_len;
            let i = b & (part - 1);
            let k = i & (span - 1);
            let w = shape.twiddle(tw, k << (log_len - radix_log - log_span + log_step));
            let src = at + base + i;
            let j = to + base + ((i - k) << radix_log) + k;
            match radix {
                2 => {
                    let u0 = tile[src];
                    let u1 = cmul(tile[src + part], w);
                    tile[j] = add(u0, u1);
                    tile[j + span] = sub(u0, u1);
                }
                4 => {
                    let w2 = cmul(w, w);
                    let y = shape.dft4([
                        tile[src],
                        cmul(tile[src + part], w),
                        cmul(tile[src + 2 * part], w2),
                        cmul(tile[src + 3 * part], cmul(w2, w)),
                    ]);
                    for (q, v) in y.into_iter().enumerate() {
                        tile[j + q * span] = v;
                    }
                }
                _ => {
                    let w2 = cmul(w, w);
                    let w3 = cmul(w2, w);
                    let w4 = cmul(w2, w2);
                    let even = shape.dft4([
                        tile[src],
                        cmul(tile[src + 2 * part], w2),
                        cmul(tile[src + 4 * part], w4),
                        cmul(tile[src + 6 * part], cmul(w4, w2)),
                    ]);
                    let odd = shape.dft4([
                        cmul(tile[src + part], w),
                        cmul(tile[src + 3 * part], w3),
                        cmul(tile[src + 5 * part], cmul(w4, w)),
                        cmul(tile[src + 7 * part], cmul(w4, w3)),
                    ]);
                    let turned = [
                        odd[0],
                        shape.eighth_turn(odd[1]),
                        shape.rotate(odd[2]),
                        shape.rotate(shape.eighth_turn(odd[3])),
                    ];
                    for q in 0..4 {
                        tile[j + q * span] = add(even[q], turned[q]);
                        tile[j + (q + 4) * span] = sub(even[q], turned[q]);
                    }
                }
            }
        }
        log_span += radix_log;
        at = to;
    }
    at
}

/// The overlap-save window point `n` of input job `job` (`window_point` in `fft_tiled.wgsl`).
fn window_point(
    jobs: &[InJob],
    history: &[f32],
    upload: &[f32],
    p: usize,
    job: usize,
    n: usize,
) -> C32 {
    let stream = jobs[job].stream as usize;
    if n < p / 2 {
        return [history[stream * p + 2 * n], history[stream * p + 2 * n + 1]];
    }
    let at = job * p + 2 * n - p;
    [upload[at], upload[at + 1]]
}

/// The real-FFT post-pass of bin `k` from the half-length spectrum at `z[..m]`.
fn post_pass(z: &[C32], m: usize, k: usize, half_tw: &[C32]) -> C32 {
    real_spectrum_bin(z[k % m], z[(m - k) % m], half_tw[k])
}

/// Overlap-save: the samples of output job `job` from point `n` of its inverse transform.
fn write_output(output: &mut [f32], p: usize, job: usize, n: usize, z: C32) {
    if n >= p / 2 {
        let at = job * p + 2 * (n - p / 2);
        output[at] = z[0];
        output[at + 1] = z[1];
    }
}

/// `forward_whole` of `fft_tiled.wgsl`: each job's window, its whole FFT, the post-pass into
/// slot `head` of its delay line, and the chunk into the history.
pub fn forward_whole(
    jobs: &[InJob],
    history: &mut [f32],
    upload: &[f32],
    fdl: &mut [C32],
    shape: TileShape,
) {
    let m = shape.m;
    let (tw, half_tw) = (full_twiddles(m), half_twiddles(m));
    let mut tile = vec![[0.0; 2]; 2 * shape.tile];
    for group in 0..jobs.len().div_ceil(shape.batch) {
        let first = group * shape.batch;
        let count = shape.batch.min(jobs.len() - first);
        for (e, point) in tile[..shape.batch * m].iter_mut().enumerate() {
            *point = if e / m < count {
                window_point(jobs, history, upload, m, first + e / m, e % m)
            } else {
                [0.0; 2]
            };
        }
        for e in 0..count * m {
            let job = first + e / m;
            history[jobs[job].stream as usize * m + e % m] = upload[job * m + e % m];
        }
        let at = tile_fft(&mut tile, shape, &tw);
        let bins = m + 1;
        for e in 0..count * bins {
            let (job, k) = (first + e / bins, e % bins);
            let info = jobs[job];
            let z = &tile[at + (e / bins) * m..];
            fdl[(info.fdl_base + info.head) as usize * bins + k] = post_pass(z, m, k, &half_tw);
        }
    }
}

/// `inverse_whole` of `fft_tiled.wgsl`: each output job's whole inverse FFT from `src`, and
/// the overlap-save output (`P` samples per job).
pub fn inverse_whole(src: &[C32], count: usize, shape: TileShape) -> Vec<f32> {
    let m = shape.m;
    let tw = full_twiddles(m);
    let mut output = vec![0.0; count * m];
    let mut tile = vec![[0.0; 2]; 2 * shape.tile];
    for group in 0..count.div_ceil(shape.batch) {
        let first = group * shape.batch;
        let jobs = shape.batch.min(count - first);
        for e in 0..shape.batch * m {
            tile[e] = if e / m < jobs {
                src[first * m + e]
            } else {
                [0.0; 2]
            };
        }
        let at = tile_fft(&mut tile, shape, &tw);
        for e in 0..jobs * m {
            write_output(&mut output, m, first + e / m, e % m, tile[at + e]);
        }
    }
    output
}

/// `four_step_place` of `fft_tiled.wgsl`: a four-step workgroup's job and first column or row.
fn four_step_place(shape: TileShape, group: usize) -> (usize, usize) {
    let groups_per_job = shape.m / shape.len / shape.batch;
    (
        group / groups_per_job,
        (group % groups_per_job) * shape.batch,
    )
}

/// Pass 1 of the four-step FFT (`columns` of `fft_tiled.wgsl`): for `count` jobs, `len`-point
/// transforms over every column, times `W_M^(n2 k1)`, at `k1 M2 + n2`. The input point `n` of
/// job `job` comes from `load`.
pub fn columns(count: usize, shape: TileShape, load: impl Fn(usize, usize) -> C32) -> Vec<C32> {
    let TileShape {
        m, len: m1, batch, ..
    } = shape;
    let m2 = m / m1;
    let tw = full_twiddles(m);
    let mut dst = vec![[0.0; 2]; count * m];
    let mut tile = vec![[0.0; 2]; 2 * shape.tile];
    for group in 0..count * m2 / batch {
        let (job, c0) = four_step_place(shape, group);
        for e in 0..batch * m1 {
            let (b, n1) = (e % batch, e / batch);
            tile[b * m1 + n1] = load(job, n1 * m2 + c0 + b);
        }
        let at = tile_fft(&mut tile, shape, &tw);
        for e in 0..batch * m1 {
            let (b, k1) = (e % batch, e / batch);
            let n2 = c0 + b;
            dst[job * m + k1 * m2 + n2] = cmul(tile[at + b * m1 + k1], shape.twiddle(&tw, n2 * k1));
        }
    }
    dst
}

/// `forward_columns`: pass 1 from each input job's overlap-save window.
pub fn forward_columns(
    jobs: &[InJob],
    history: &[f32],
    upload: &[f32],
    shape: TileShape,
) -> Vec<C32> {
    columns(jobs.len(), shape, |job, n| {
        window_point(jobs, history, upload, shape.m, job, n)
    })
}

/// Pass 2 of the four-step FFT (`rows` of `fft_tiled.wgsl`): for `count` jobs of `src`, the
/// `len`-point transform of every row, each point handed to `store(job, k, value)` with `k`
/// in natural order.
pub fn rows(src: &[C32], count: usize, shape: TileShape, mut store: impl FnMut(usize, usize, C32)) {
    let TileShape {
        m, len: m2, batch, ..
    } = shape;
    let m1 = m / m2;
    let tw = full_twiddles(m);
    let mut tile = vec![[0.0; 2]; 2 * shape.tile];
    for group in 0..count * m1 / batch {
        let (job, r0) = four_step_place(shape, group);
        tile[..batch * m2].copy_from_slice(&src[job * m + r0 * m2..][..batch * m2]);
        let at = tile_fft(&mut tile, shape, &tw);
        for e in 0..batch * m2 {
            let (b, k2) = (e % batch, e / batch);
            store(job, r0 + b + m1 * k2, tile[at + b * m2 + k2]);
        }
    }
}

/// `forward_rows`: pass 2 into natural order.
pub fn forward_rows(src: &[C32], count: usize, shape: TileShape) -> Vec<C32> {
    let mut dst = vec![[0.0; 2]; count * shape.m];
    rows(src, count, shape, |job, k, z| dst[job * shape.m + k] = z);
    dst
}

/// `inverse_rows`: pass 2 of the inverse into the overlap-save output.
pub fn inverse_rows(src: &[C32], count: usize, shape: TileShape) -> Vec<f32> {
    let mut output = vec![0.0; count * shape.m];
    rows(src, count, shape, |job, n, z| {
        write_output(&mut output, shape.m, job, n, z)
    });
    output
}

/// `mac_pre.wgsl`: the spectral MAC of bins `k` and `M - k` and the inverse pre-pass of both,
/// per output job: the half-length spectra for the inverse FFT.
pub fn mac_pre(
    in_jobs: &[InJob],
    out_jobs: &[OutJob],
    path_jobs: &[PathJob],
    fdl: &[C32],
    spectra: &[C32],
    m: usize,
) -> Vec<C32> {
    let (bins, pairs) = (m + 1, m / 2 + 1);
    let half_tw = half_twiddles(m);
    let mut work = vec![[0.0; 2]; out_jobs.len() * m];
    for id in 0..out_jobs.len() * pairs {
        let (job, k) = (id / pairs, id % pairs);
        let kr = m - k;
        let bin = |k: usize| mac_bin(in_jobs, out_jobs[job], path_jobs, fdl, spectra, bins, k);
        let (mut sum, mut sum_r) = (bin(k), bin(kr));
        if k == 0 {
            sum[1] = 0.0;
            sum_r[1] = 0.0;
        }
        work[job * m + k] = half_spectrum_bin(sum, sum_r, half_tw[k]);
        if k != 0 && k != kr {
            work[job * m + kr] = half_spectrum_bin(sum_r, sum, half_tw[kr]);
        }
    }
    work
}
