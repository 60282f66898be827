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
        let zr = conj(spectrum[job * m + (m - k) % m]);
        let even = scale(add(z, zr), 0.5);
        let d = scale(sub(z, zr), 0.5);
        let odd = [d[1], -d[0]];
        let info = jobs[job];
        fdl[(info.fdl_base + info.head) as usize * bins + k] = add(even, cmul(half_tw[k], odd));
    }
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
            let out = out_jobs[id / bins];
            let k = id % bins;
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
            let x = bin(base, k);
            let xr = conj(bin(base, m - k));
            let even = add(x, xr);
            let odd = cmul(sub(x, xr), conj(half_tw[k]));
            [even[0] - odd[1], even[1] + odd[0]]
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
