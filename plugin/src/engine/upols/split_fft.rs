//! The real FFTs of a level (its IR partitions at build, its inputs and sums every period),
//! straight between real samples and the split real and imaginary arrays the spectral MAC
//! reads ([`super::mac`]).
//!
//! A real signal of `2P` samples is transformed as `P` complex samples (even samples real, odd
//! samples imaginary) by rustfft, and one pass of twiddles separates the two halves' spectra.
//! realfft does the same, but its pass is a scalar loop over interleaved complex values, and the
//! level then needed one more pass to split them (and one to interleave the sum back before
//! the inverse). Here the twiddle pass reads and writes the split arrays itself and
//! vectorises: a period's forward and inverse take 26 to 45 % less time than realfft's plus
//! those passes (`cargo bench -p longtail-tests --features bench --bench engine -- period_fft`:
//! 2.7 against 4.9 us at 2048 points, 71 against 96 us at 32768, on the EPYC VM). The
//! transforms are about a third of a stereo reverb's or a small matrix's work.
//!
//! The transforms are unnormalised, as realfft's: a forward then an inverse multiplies by
//! `2P`. The inverse reads the DC and Nyquist bins' real parts only (a real signal's are real).
//!
//! Uses the engine's pages ([`PageBuf`]) for its buffers.

use std::sync::Arc;

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use crate::engine::memory::pages::PageBuf;

/// The twiddle pass after the forward complex FFT: `spectrum` (`P` values, interleaved, and a
/// spare) into `P + 1` bins of split real and imaginary parts.
type PostPass = fn(&[Complex<f32>], &mut [f32], &mut [f32], &Twiddles);
/// The twiddle pass before the inverse complex FFT: `P + 1` split bins into `P` interleaved
/// values.
type PrePass = fn(&[f32], &[f32], &mut [Complex<f32>], &Twiddles);

/// `cos` and `sin` of `2 pi k / 2P` for `k` in `0..P`.
struct Twiddles {
    cos: PageBuf,
    sin: PageBuf,
}

/// Forward and inverse real FFTs of one size, with their buffers. Built off the audio thread
/// ([`Self::new`] allocates and plans); the transforms never allocate.
pub struct SplitRealFft {
    /// `P`: half the real size, the complex FFTs' size.
    half: usize,
    forward: Arc<dyn Fft<f32>>,
    inverse: Arc<dyn Fft<f32>>,
    twiddles: Twiddles,
    post: PostPass,
    pre: PrePass,
    /// `P` complex values between the twiddle pass and the complex FFT, and one spare that the
    /// forward pass reads as `Z[P]` ([`post_body`]).
    buffer: PageBuf<Complex<f32>>,
    /// rustfft's scratch, sized for both directions.
    scratch: PageBuf<Complex<f32>>,
}

impl SplitRealFft {
    /// Plans the transforms of `fft_size` real samples (even, at least 2). Allocates.
    pub fn new(planner: &mut FftPlanner<f32>, fft_size: usize) -> Self {
        assert!(
            fft_size >= 2 && fft_size.is_multiple_of(2),
            "real FFT size {fft_size} must be even and at least 2"
        );
        let half = fft_size / 2;
        let forward = planner.plan_fft_forward(half);
        let inverse = planner.plan_fft_inverse(half);
        let scratch_len = forward
            .get_outofplace_scratch_len()
            .max(inverse.get_outofplace_scratch_len());
        let (mut cos, mut sin) = (PageBuf::zeroed(half), PageBuf::zeroed(half));
        for (k, (cos, sin)) in cos.iter_mut().zip(sin.iter_mut()).enumerate() {
            let angle = std::f64::consts::TAU * k as f64 / fft_size as f64;
            (*cos, *sin) = (angle.cos() as f32, angle.sin() as f32);
        }
        let (post, pre) = best_passes();
        Self {
            half,
            forward,
            inverse,
            twiddles: Twiddles { cos, sin },
            post,
            pre,
            buffer: PageBuf::zeroed(half + 1),
            scratch: PageBuf::zeroed(scratch_len),
        }
    }

    /// Makes the buffers each transform writes resident now ([`PageBuf::prefault`]).
    pub fn prefault(&mut self) {
        self.buffer.prefault();
        self.scratch.prefault();
    }

    /// Bins of the spectrum, `P + 1`.
    pub fn num_bins(&self) -> usize {
        self.half + 1
    }

    /// The spectrum of `input` (`2P` samples, left as scratch) into `re` and `im` (`P + 1` bins
    /// each). Does not allocate.
    ///
    /// A level copies its window into `input` first. rustfft's transform that reads its input
    /// in place (`process_immutable_with_scratch`) gave the same bits without that copy but no
    /// less CPU (Xeon VM, 2026-12-02, 8 rounds alternated: a stereo 10 s reverb at 1024 and
    /// 12 x 12 and 4 x 4 rooms within 1 %, a stereo 1 s reverb at 256 12 % dearer).
    pub fn forward(&mut self, input: &mut [f32], re: &mut [f32], im: &mut [f32]) {
        let input = as_complex(&mut input[..2 * self.half]);
        self.forward.process_outofplace_with_scratch(
            input,
            &mut self.buffer[..self.half],
            &mut self.scratch,
        );
        (self.post)(&self.buffer, re, im, &self.twiddles);
    }

    /// The signal of the spectrum `re`, `im` (`P + 1` bins each) into `output` (`2P` samples),
    /// times `2P`. Does not allocate.
    pub fn inverse(&mut self, re: &[f32], im: &[f32], output: &mut [f32]) {
        let buffer = &mut self.buffer[..self.half];
        (self.pre)(re, im, buffer, &self.twiddles);
        let output = as_complex(&mut output[..2 * self.half]);
        self.inverse
            .process_outofplace_with_scratch(buffer, output, &mut self.scratch);
    }

    /// Test hook: fills the buffers with `value`, to prove no result depends on them.
    pub fn poison(&mut self, value: f32) {
        self.buffer.fill(Complex::new(value, value));
        self.scratch.fill(Complex::new(value, value));
    }
}

/// `2P` real samples as `P` complex ones, even samples real.
fn as_complex(samples: &mut [f32]) -> &mut [Complex<f32>] {
    // SAFETY: `Complex<f32>` is `repr(C)` (`re`, then `im`), so it has `f32`'s alignment and
    // two `f32`s' size; the slice covers `samples` exactly, whose borrow it takes over.
    unsafe {
        std::slice::from_raw_parts_mut(
            samples.as_mut_ptr().cast::<Complex<f32>>(),
            samples.len() / 2,
        )
    }
}

/// The twiddle passes for this CPU (AVX2 where available). Both compile the same operations
/// (no fused multiply-adds), so they give the same bits.
fn best_passes() -> (PostPass, PrePass) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        return (post_avx2, pre_avx2);
    }
    (post_body, pre_body)
}

#[cfg(target_arch = "x86_64")]
fn post_avx2(spectrum: &[Complex<f32>], re: &mut [f32], im: &mut [f32], twiddles: &Twiddles) {
    // SAFETY: `best_passes` returns this function only when the CPU reports AVX2.
    unsafe { post_avx2_inner(spectrum, re, im, twiddles) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn post_avx2_inner(spectrum: &[Complex<f32>], re: &mut [f32], im: &mut [f32], twiddles: &Twiddles) {
    post_body(spectrum, re, im, twiddles);
}

#[cfg(target_arch = "x86_64")]
fn pre_avx2(re: &[f32], im: &[f32], buffer: &mut [Complex<f32>], twiddles: &Twiddles) {
    // SAFETY: `best_passes` returns this function only when the CPU reports AVX2.
    unsafe { pre_avx2_inner(re, im, buffer, twiddles) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn pre_avx2_inner(re: &[f32], im: &[f32], buffer: &mut [Complex<f32>], twiddles: &Twiddles) {
    pre_body(re, im, buffer, twiddles);
}

/// With `Z` the complex FFT of `z[n] = x[2n] + i x[2n + 1]`, the spectra of the even and odd
/// samples are `E[k] = (Z[k] + conj Z[P - k]) / 2` and `O[k] = -i (Z[k] - conj Z[P - k]) / 2`,
/// and `X[k] = E[k] + W^k O[k]` with `W = exp(-2 pi i / 2P)`, `Z[P] = Z[0]`.
///
/// `spectrum` holds `Z` and one spare value. The loop runs from bin 0, which reads the spare
/// as `Z[P]` and is then written from `Z[0]` alone, so that its loads of `Z[k]` and stores of
/// `X[k]` start on the buffers' cache lines: from bin 1 half of them split two lines.
#[inline(always)]
fn post_body(spectrum: &[Complex<f32>], re: &mut [f32], im: &mut [f32], twiddles: &Twiddles) {
    let half = spectrum.len() - 1;
    // Slices cut to one length so the loop vectorises.
    let (out_re, out_im) = (&mut re[..half], &mut im[..half]);
    let (cos, sin) = (&twiddles.cos[..half], &twiddles.sin[..half]);
    let (ahead, behind) = (&spectrum[..half], &spectrum[1..=half]);
    for k in 0..half {
        let a = ahead[k];
        // Z[P - k], walked backwards (unchecked: with the bounds check the loop stays scalar).
        // SAFETY: `k < half`, and `behind` holds `half` values.
        let b = unsafe { *behind.get_unchecked(half - 1 - k) };
        let (even_re, even_im) = (0.5 * (a.re + b.re), 0.5 * (a.im - b.im));
        let (odd_re, odd_im) = (0.5 * (a.im + b.im), 0.5 * (b.re - a.re));
        out_re[k] = even_re + cos[k] * odd_re + sin[k] * odd_im;
        out_im[k] = even_im + cos[k] * odd_im - sin[k] * odd_re;
    }
    let first = spectrum[0];
    re[0] = first.re + first.im;
    im[0] = 0.0;
    re[half] = first.re - first.im;
    im[half] = 0.0;
}

/// The inverse of [`post_body`], times two:
/// `Z[k] = (X[k] + conj X[P - k]) + i (X[k] - conj X[P - k]) W^-k`, whose inverse complex FFT
/// is `2P z`. DC and Nyquist are taken as real: bin 0's lane reads their imaginary parts like
/// any other bin's (the loop then starts on the buffers' cache lines) and is computed again
/// without them.
#[inline(always)]
fn pre_body(re: &[f32], im: &[f32], buffer: &mut [Complex<f32>], twiddles: &Twiddles) {
    let half = buffer.len();
    let (re, im) = (&re[..=half], &im[..=half]);
    let (cos, sin) = (&twiddles.cos[..half], &twiddles.sin[..half]);
    for k in 0..half {
        buffer[k] = pre_bin([re[k], im[k]], [re[half - k], im[half - k]], cos[k], sin[k]);
    }
    buffer[0] = pre_bin([re[0], 0.0], [re[half], 0.0], cos[0], sin[0]);
}

/// One value of [`pre_body`] from `X[k]` (`a`) and `X[P - k]` (`b`).
#[inline(always)]
fn pre_bin([a_re, a_im]: [f32; 2], [b_re, b_im]: [f32; 2], cos: f32, sin: f32) -> Complex<f32> {
    let (sum_re, sum_im) = (a_re + b_re, a_im - b_im);
    let (diff_re, diff_im) = (a_re - b_re, a_im + b_im);
    let odd_re = diff_re * cos - diff_im * sin;
    let odd_im = diff_re * sin + diff_im * cos;
    Complex::new(sum_re - odd_im, sum_im + odd_re)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The DFT of `x` in f64, bins `0..=N/2`.
    fn dft(x: &[f32]) -> Vec<(f64, f64)> {
        let n = x.len();
        (0..=n / 2)
            .map(|k| {
                x.iter().enumerate().fold((0.0, 0.0), |(re, im), (t, &v)| {
                    let angle = -std::f64::consts::TAU * (k * t % n) as f64 / n as f64;
                    (re + v as f64 * angle.cos(), im + v as f64 * angle.sin())
                })
            })
            .collect()
    }

    /// Seeded noise in `[-0.5, 0.5)`.
    fn signal(len: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        (0..len).map(|_| 0.5 * rng.bipolar()).collect()
    }

    #[test]
    fn forward_is_the_dft_and_inverse_brings_the_signal_back() {
        let mut planner = FftPlanner::new();
        for fft_size in [2, 4, 16, 64, 2048] {
            let mut fft = SplitRealFft::new(&mut planner, fft_size);
            let x = signal(fft_size, fft_size as u64);
            let (mut re, mut im) = (vec![0.0; fft.num_bins()], vec![0.0; fft.num_bins()]);
            fft.poison(f32::NAN);
            fft.forward(&mut x.clone(), &mut re, &mut im);
            let scale = (fft_size as f64).sqrt();
            for (k, &(want_re, want_im)) in dft(&x).iter().enumerate() {
                assert!(
                    (re[k] as f64 - want_re).abs() < 1e-5 * scale
                        && (im[k] as f64 - want_im).abs() < 1e-5 * scale,
                    "size {fft_size} bin {k}: ({}, {}) against ({want_re}, {want_im})",
                    re[k],
                    im[k]
                );
            }
            // Stray imaginary parts at DC and Nyquist are ignored, as a real signal has none.
            im[0] = 1.0;
            im[fft_size / 2] = -1.0;
            let mut back = vec![0.0; fft_size];
            fft.poison(f32::NAN);
            fft.inverse(&re, &im, &mut back);
            for (t, (&got, &want)) in back.iter().zip(&x).enumerate() {
                let got = got / fft_size as f32;
                assert!(
                    (got - want).abs() < 1e-6,
                    "size {fft_size} sample {t}: {got} against {want}"
                );
            }
        }
    }

    #[test]
    fn the_simd_passes_give_the_scalar_bits() {
        let mut planner = FftPlanner::new();
        let fft = SplitRealFft::new(&mut planner, 1024);
        let (best_post, best_pre) = best_passes();
        // 512 values and the spare.
        let spectrum: Vec<Complex<f32>> = signal(1026, 7)
            .chunks_exact(2)
            .map(|pair| Complex::new(pair[0], pair[1]))
            .collect();
        let bins = fft.num_bins();
        let mut outputs = [(); 2].map(|_| (vec![0.0; bins], vec![0.0; bins]));
        for (pass, (re, im)) in [post_body as PostPass, best_post].iter().zip(&mut outputs) {
            pass(&spectrum, re, im, &fft.twiddles);
        }
        assert_eq!(outputs[0], outputs[1]);
        let (re, im) = &outputs[0];
        let mut buffers = [(); 2].map(|_| vec![Complex::default(); 512]);
        for (pass, buffer) in [pre_body as PrePass, best_pre].iter().zip(&mut buffers) {
            pass(re, im, buffer, &fft.twiddles);
        }
        assert_eq!(buffers[0], buffers[1]);
    }
}
