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
    /// Points in the workgroup's buffer (`TILE`).
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
    /// log2 of `len`.
    fn log_len(&self) -> u32 {
        self.len.trailing_zeros()
    }

    /// log2 of the rounds of a whole transform (`M / len`: 0 for one round, 1 for two).
    fn log_split(&self) -> u32 {
        self.m.trailing_zeros() - self.log_len()
    }

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

/// `tile_fft` of `fft_tiled.wgsl`: the `batch` transforms of `len` points in `tile[..]`, in
/// place, by decimation-in-frequency stages of radix 8 and a last one of radix 4 or 2. Bin `k`
/// of a transform ends at [`bin_slot`]`(k)` from its start.
pub fn tile_fft(tile: &mut [C32], shape: TileShape, tw: &[C32]) {
    let TileShape { len, batch, .. } = shape;
    let log_len = shape.log_len();
    let elements = batch * len;
    let log_m = shape.m.trailing_zeros();
    let mut log_sub = log_len;
    while log_sub > 0 {
        let radix_log = log_sub.min(3);
        let log_part = log_sub - radix_log;
        let part = 1usize << log_part;
        let log_step = log_m - log_sub;
        for b in 0..elements >> radix_log {
            let j = b & (part - 1);
            let at = ((b >> log_part) << log_sub) + j;
            let w = shape.twiddle(tw, j << log_step);
            let x = |r: usize| tile[at + r * part];
            let y: Vec<C32> = match radix_log {
                1 => vec![add(x(0), x(1)), sub(x(0), x(1))],
                2 => shape.dft4([x(0), x(1), x(2), x(3)]).to_vec(),
                _ => {
                    let even = shape.dft4([x(0), x(2), x(4), x(6)]);
                    let odd = shape.dft4([x(1), x(3), x(5), x(7)]);
                    let turned = [
                        odd[0],
                        shape.eighth_turn(odd[1]),
                        shape.rotate(odd[2]),
                        shape.rotate(shape.eighth_turn(odd[3])),
                    ];
                    let mut y = vec![[0.0; 2]; 8];
                    for q in 0..4 {
                        y[q] = add(even[q], turned[q]);
                        y[q + 4] = sub(even[q], turned[q]);
                    }
                    y
                }
            };
            // y_q times w^q, the powers as the kernel forms them (each at most two products
            // deep)
            let w2 = cmul(w, w);
            let w3 = cmul(w2, w);
            let w4 = cmul(w2, w2);
            let powers = [
                [1.0, 0.0],
                w,
                w2,
                w3,
                w4,
                cmul(w4, w),
                cmul(w4, w2),
                cmul(w4, w3),
            ];
            for (q, value) in y.into_iter().enumerate() {
                tile[at + q * part] = if q == 0 {
                    value
                } else {
                    cmul(value, powers[q])
                };
            }
        }
        log_sub = log_part;
    }
}

/// `bin_slot` of `fft_tiled.wgsl`: where [`tile_fft`] leaves bin `k` of a `2^log_len`-point
/// transform, relative to its start (the digits of `k`, radix 8 from the lowest and the last
/// one of radix 4 or 2, reversed).
pub fn bin_slot(k: usize, log_len: u32) -> usize {
    let (mut slot, mut rest, mut log_sub) = (0, k, log_len);
    while log_sub > 0 {
        let radix_log = log_sub.min(3);
        log_sub -= radix_log;
        slot |= (rest & ((1 << radix_log) - 1)) << log_sub;
        rest >>= radix_log;
    }
    slot
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

/// The real-FFT post-pass of bin `k` in a round of `forward_whole`: `Z[k']` is bin
/// `k' >> log_split` of the transform at `z[..]`, in [`bin_slot`] order.
fn post_pass(z: &[C32], shape: TileShape, k: usize, half_tw: &[C32]) -> C32 {
    let m = shape.m;
    let at = |k: usize| z[bin_slot((k % m) >> shape.log_split(), shape.log_len())];
    real_spectrum_bin(at(k), at(m - k), half_tw[k])
}

/// `split_point` of `fft_tiled.wgsl`: input point `n` of a whole transform's round, `z` itself,
/// or for `M = 2 len` the first radix-2 stage, `z + z_upper` (round 0) or
/// `(z - z_upper) W_M^n` (round 1).
fn split_point(
    z: C32,
    z_upper: Option<C32>,
    n: usize,
    round: usize,
    shape: TileShape,
    tw: &[C32],
) -> C32 {
    match z_upper {
        None => z,
        Some(upper) if round == 0 => add(z, upper),
        Some(upper) => cmul(sub(z, upper), shape.twiddle(tw, n)),
    }
}

/// Overlap-save: the samples of output job `job` from point `n` of its inverse transform.
fn write_output(output: &mut [f32], p: usize, job: usize, n: usize, z: C32) {
    if n >= p / 2 {
        let at = job * p + 2 * (n - p / 2);
        output[at] = z[0];
        output[at + 1] = z[1];
    }
}

/// `forward_whole` of `fft_tiled.wgsl`: each job's window, its whole FFT (in two rounds, the
/// even bins and the odd ones, where `len = M / 2`), the post-pass into slot `head` of its
/// delay line, and the chunk into the history.
pub fn forward_whole(
    jobs: &[InJob],
    history: &mut [f32],
    upload: &[f32],
    fdl: &mut [C32],
    shape: TileShape,
) {
    let TileShape { m, len, batch, .. } = shape;
    let log_split = shape.log_split();
    let (tw, half_tw) = (full_twiddles(m), half_twiddles(m));
    let mut tile = vec![[0.0; 2]; shape.tile];
    for group in 0..jobs.len().div_ceil(batch) {
        let first = group * batch;
        let count = batch.min(jobs.len() - first);
        for round in 0..=log_split as usize {
            for (e, point) in tile[..batch * len].iter_mut().enumerate() {
                let (j, n) = (e / len, e % len);
                *point = if j < count {
                    let at = |n| window_point(jobs, history, upload, m, first + j, n);
                    let upper = (log_split == 1).then(|| at(n + len));
                    split_point(at(n), upper, n, round, shape, &tw)
                } else {
                    [0.0; 2]
                };
            }
            if round == log_split as usize {
                for e in 0..count * m {
                    let job = first + e / m;
                    history[jobs[job].stream as usize * m + e % m] = upload[job * m + e % m];
                }
            }
            tile_fft(&mut tile, shape, &tw);
            let bins = m + 1;
            for j in 0..count {
                let info = jobs[first + j];
                let z = &tile[j * len..];
                for k in (round..bins).step_by(1 << log_split) {
                    let to = (info.fdl_base + info.head) as usize * bins + k;
                    fdl[to] = post_pass(z, shape, k, &half_tw);
                }
            }
        }
    }
}

/// `inverse_whole` of `fft_tiled.wgsl`: each output job's whole inverse FFT from `src` (in two
/// rounds, the even points and the odd ones, where `len = M / 2`), and the overlap-save output
/// (`P` samples per job).
pub fn inverse_whole(src: &[C32], count: usize, shape: TileShape) -> Vec<f32> {
    let TileShape { m, len, batch, .. } = shape;
    let (log_len, log_split) = (shape.log_len(), shape.log_split());
    let tw = full_twiddles(m);
    let mut output = vec![0.0; count * m];
    let mut tile = vec![[0.0; 2]; shape.tile];
    for group in 0..count.div_ceil(batch) {
        let first = group * batch;
        let jobs = batch.min(count - first);
        for round in 0..=log_split as usize {
            for (e, point) in tile[..batch * len].iter_mut().enumerate() {
                let (j, n) = (e / len, e % len);
                *point = if j < jobs {
                    let at = (first + j) * m + n;
                    let upper = (log_split == 1).then(|| src[at + len]);
                    split_point(src[at], upper, n, round, shape, &tw)
                } else {
                    [0.0; 2]
                };
            }
            tile_fft(&mut tile, shape, &tw);
            for j in 0..jobs {
                for q in len / 2..len {
                    let z = tile[j * len + bin_slot(q, log_len)];
                    write_output(&mut output, m, first + j, (q << log_split) + round, z);
                }
            }
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
    let mut tile = vec![[0.0; 2]; shape.tile];
    for group in 0..count * m2 / batch {
        let (job, c0) = four_step_place(shape, group);
        for e in 0..batch * m1 {
            let (b, n1) = (e % batch, e / batch);
            tile[b * m1 + n1] = load(job, n1 * m2 + c0 + b);
        }
        tile_fft(&mut tile, shape, &tw);
        for e in 0..batch * m1 {
            let (b, k1) = (e % batch, e / batch);
            let n2 = c0 + b;
            let z = tile[b * m1 + bin_slot(k1, shape.log_len())];
            dst[job * m + k1 * m2 + n2] = cmul(z, shape.twiddle(&tw, n2 * k1));
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
    let mut tile = vec![[0.0; 2]; shape.tile];
    for group in 0..count * m1 / batch {
        let (job, r0) = four_step_place(shape, group);
        tile[..batch * m2].copy_from_slice(&src[job * m + r0 * m2..][..batch * m2]);
        tile_fft(&mut tile, shape, &tw);
        for e in 0..batch * m2 {
            let (b, k2) = (e % batch, e / batch);
            store(
                job,
                r0 + b + m1 * k2,
                tile[b * m2 + bin_slot(k2, shape.log_len())],
            );
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
