//! The deconvolution: a recording's slot divided by the excitation's spectrum, in `f64`, with
//! regularisation outside the sweep's band (Kirkeby et al., 1998, in its simplest form).
//!
//! An exponential sweep's power falls as `1 / f` (pink). The filter is
//! `T(f) conj(X) / max(|X|^2, g P / f)`: exact division wherever the sweep has at least a
//! quarter of its plateau's power `P / f` (`g` = -6 dB), and in its fades a gain that falls
//! with the sweep's own power instead of lifting noise by the inverse of it. `P` is read from
//! the excitation itself (the median of `|X|^2 f` over the bins within 10 dB of its maximum),
//! so any exponential sweep works, whatever its band or level. `T` is the band: 0 outside the
//! bins where the sweep reaches `g P / f`, 1 inside, with raised-cosine edges a third of an
//! octave wide at the bottom and a sixth at the top ([`LOW_EDGE_OCTAVES`],
//! [`HIGH_EDGE_OCTAVES`]): a sharp band edge would ring for tens of milliseconds on both sides
//! of every arrival, and the ringing before the IR's start is lost when it is cut. A sweep
//! from 20 Hz to 20 kHz gives an IR flat from 25 Hz to 17.8 kHz.
//!
//! The transform is circular, of [`InverseFilter::fft_len`] samples (the slot, rounded up to a
//! size whose factors are 2, 3, 5 and 7): the response's negative times (where a synchronised
//! sweep puts its harmonic distortion products, `L ln k` before the linear response) land at
//! its end, away from the linear part at its start.
//!
//! Any thread but the audio thread. [`InverseFilter::new`] allocates the plans and one spectrum;
//! [`InverseFilter::process_with_scratch`] uses the caller's [`Scratch`] and allocates nothing.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// The power, relative to the sweep's plateau, under which the filter stops dividing (-6 dB).
const REGULARISATION: f64 = 0.25;

/// The band's low edge: the IR's response rises over this many octaves from the sweep's start.
pub const LOW_EDGE_OCTAVES: f64 = 1.0 / 3.0;
/// The band's high edge: the IR's response falls over this many octaves to the sweep's end
/// (a short transition rings for a short time: about half a millisecond at 20 kHz).
pub const HIGH_EDGE_OCTAVES: f64 = 1.0 / 6.0;

/// The regularised inverse of one excitation, ready to deconvolve slots of its length.
pub struct InverseFilter {
    /// The transform length, at least the slot's.
    fft_len: usize,
    /// `conj(X) / max(|X|^2, g P / f) / fft_len`, one value per bin (the inverse transform's
    /// scale folded in).
    spectrum: Vec<Complex<f64>>,
    r2c_plan: Arc<dyn RealToComplex<f64>>,
    c2r_plan: Arc<dyn ComplexToReal<f64>>,
}

impl std::fmt::Debug for InverseFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InverseFilter")
            .field("fft_len", &self.fft_len)
            .finish_non_exhaustive()
    }
}

/// One thread's buffers for [`InverseFilter::process_with_scratch`].
#[derive(Debug)]
pub struct Scratch {
    /// Time-domain samples, `fft_len`.
    real_buffer: Vec<f64>,
    /// The spectrum, `fft_len / 2 + 1` bins.
    complex_fft_buffer: Vec<Complex<f64>>,
    /// realfft's scratch, the larger of the two plans'.
    complex_scratch_buffer: Vec<Complex<f64>>,
}

/// The smallest `n >= len` whose prime factors are 2, 3, 5 and 7 (RustFFT's fast sizes).
pub fn fast_len(len: usize) -> usize {
    let mut n = len.max(2);
    loop {
        let mut rest = n;
        for factor in [2, 3, 5, 7] {
            while rest.is_multiple_of(factor) {
                rest /= factor;
            }
        }
        if rest == 1 {
            return n;
        }
        n += 1;
    }
}

impl InverseFilter {
    /// The inverse of `excitation` (one slot: the sweep and its tail), sampled at `sample_rate`.
    /// Plans the transforms and allocates the spectrum and a scratch (three `fft_len` buffers
    /// of `f64`).
    pub fn new(excitation: &[f32], sample_rate: u32) -> Self {
        let fft_len = fast_len(excitation.len());
        let mut planner = RealFftPlanner::<f64>::new();
        let r2c_plan = planner.plan_fft_forward(fft_len);
        let c2r_plan = planner.plan_fft_inverse(fft_len);
        let mut filter = Self {
            fft_len,
            spectrum: Vec::new(),
            r2c_plan,
            c2r_plan,
        };
        let mut scratch = filter.make_scratch();
        let Scratch {
            real_buffer,
            complex_fft_buffer,
            complex_scratch_buffer,
        } = &mut scratch;
        real_buffer.fill(0.0);
        for (slot, &sample) in real_buffer.iter_mut().zip(excitation) {
            *slot = f64::from(sample);
        }
        // The buffers have the plan's sizes, so the transform cannot fail.
        let _ = filter.r2c_plan.process_with_scratch(
            real_buffer,
            complex_fft_buffer,
            complex_scratch_buffer,
        );
        let hz_per_bin = f64::from(sample_rate) / fft_len as f64;
        let pink: Vec<f64> = complex_fft_buffer
            .iter()
            .enumerate()
            .skip(1)
            .map(|(bin_idx, x)| x.norm_sqr() * bin_idx as f64 * hz_per_bin)
            .collect();
        let plateau = plateau(&pink);
        // The band: the bins where the sweep has at least the regularisation's share of its
        // plateau (index into `pink`, which starts at bin 1).
        let in_band = |p: &f64| *p >= REGULARISATION * plateau;
        let low_hz = pink
            .iter()
            .position(in_band)
            .map_or(0.0, |idx| (idx + 1) as f64 * hz_per_bin);
        let high_hz = pink
            .iter()
            .rposition(in_band)
            .map_or(0.0, |idx| (idx + 1) as f64 * hz_per_bin);
        let scale = 1.0 / fft_len as f64;
        filter.spectrum = complex_fft_buffer
            .iter()
            .enumerate()
            .map(|(bin_idx, x)| {
                let hz = bin_idx as f64 * hz_per_bin;
                let taper = band_taper(hz, low_hz, high_hz);
                if taper == 0.0 {
                    return Complex::new(0.0, 0.0);
                }
                let floor = REGULARISATION * plateau / hz;
                x.conj() * (taper * scale / x.norm_sqr().max(floor))
            })
            .collect();
        filter
    }

    /// The transform length.
    pub fn fft_len(&self) -> usize {
        self.fft_len
    }

    /// Buffers for one thread. Allocates three buffers of about `fft_len` values.
    pub fn make_scratch(&self) -> Scratch {
        let scratch_len = self
            .r2c_plan
            .get_scratch_len()
            .max(self.c2r_plan.get_scratch_len());
        Scratch {
            real_buffer: self.r2c_plan.make_input_vec(),
            complex_fft_buffer: self.r2c_plan.make_output_vec(),
            complex_scratch_buffer: vec![Complex::new(0.0, 0.0); scratch_len],
        }
    }

    /// Deconvolves `recording` (at most `fft_len` samples, padded with zeros) and writes the
    /// raw response's first `response.len()` samples (at most `fft_len`): sample 0 is the
    /// excitation's sample 0. Uses `scratch` (from [`InverseFilter::make_scratch`]); allocates
    /// nothing.
    pub fn process_with_scratch(
        &self,
        recording: &[f32],
        response: &mut [f64],
        scratch: &mut Scratch,
    ) {
        let Scratch {
            real_buffer,
            complex_fft_buffer,
            complex_scratch_buffer,
        } = scratch;
        real_buffer.fill(0.0);
        for (slot, &sample) in real_buffer.iter_mut().zip(recording) {
            *slot = f64::from(sample);
        }
        // Sizes come from the plans: the transforms cannot fail.
        let _ = self.r2c_plan.process_with_scratch(
            real_buffer,
            complex_fft_buffer,
            complex_scratch_buffer,
        );
        for (bin, inverse) in complex_fft_buffer.iter_mut().zip(&self.spectrum) {
            *bin *= inverse;
        }
        // The inverse real transform wants real DC and Nyquist bins.
        if let Some(first) = complex_fft_buffer.first_mut() {
            first.im = 0.0;
        }
        if self.fft_len.is_multiple_of(2)
            && let Some(last) = complex_fft_buffer.last_mut()
        {
            last.im = 0.0;
        }
        let _ = self.c2r_plan.process_with_scratch(
            complex_fft_buffer,
            real_buffer,
            complex_scratch_buffer,
        );
        let len = response.len().min(self.fft_len);
        response[..len].copy_from_slice(&real_buffer[..len]);
        response[len..].fill(0.0);
    }
}

/// The gain of the band's edges at `hz`: 0 outside `low_hz ..= high_hz`, a raised cosine up
/// over [`LOW_EDGE_OCTAVES`] from `low_hz` and down over [`HIGH_EDGE_OCTAVES`] to `high_hz`, 1
/// between.
fn band_taper(hz: f64, low_hz: f64, high_hz: f64) -> f64 {
    if !(hz >= low_hz && hz <= high_hz && low_hz > 0.0) {
        return 0.0;
    }
    let rise = (hz / low_hz).log2() / LOW_EDGE_OCTAVES;
    let fall = (high_hz / hz).log2() / HIGH_EDGE_OCTAVES;
    let edge = rise.min(fall);
    if edge >= 1.0 {
        1.0
    } else {
        0.5 - 0.5 * (std::f64::consts::PI * edge).cos()
    }
}

/// The sweep's plateau `P`: the median of the pink-weighted power over the bins within 10 dB
/// of its maximum. 0 for a silent excitation.
fn plateau(pink: &[f64]) -> f64 {
    let max = pink.iter().copied().fold(0.0, f64::max);
    let mut near: Vec<f64> = pink.iter().copied().filter(|p| *p >= 0.1 * max).collect();
    if near.is_empty() {
        return 0.0;
    }
    let mid = near.len() / 2;
    *near.select_nth_unstable_by(mid, |a, b| a.total_cmp(b)).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::sweep::SweepSpec;

    #[test]
    fn fast_lengths_have_small_factors() {
        assert_eq!(fast_len(672_000), 672_000);
        assert_eq!(fast_len(1), 2);
        assert_eq!(fast_len(11), 12);
        assert_eq!(fast_len(1_000_003), 1_000_188);
    }

    /// A delayed, scaled impulse through the sweep comes back as itself inside the band.
    #[test]
    fn a_pure_delay_comes_back_as_an_impulse() {
        let spec = SweepSpec {
            sample_rate: 16_000,
            seconds: 1.0,
            from_hz: 40.0,
            to_hz: 7_000.0,
            tail_seconds: 0.3,
            ..SweepSpec::default()
        };
        let excitation: Vec<f32> = spec.channels().remove(0);
        let filter = InverseFilter::new(&excitation, 16_000);
        let mut recording = vec![0.0f32; excitation.len()];
        let delay = 123;
        for (idx, &s) in excitation.iter().enumerate() {
            if idx + delay < recording.len() {
                recording[idx + delay] = 0.5 * s;
            }
        }
        let mut response = vec![0.0; 2_000];
        let mut scratch = filter.make_scratch();
        filter.process_with_scratch(&recording, &mut response, &mut scratch);
        let (peak_idx, peak) = response
            .iter()
            .enumerate()
            .fold((0, 0.0f64), |best, (idx, &v)| {
                if v.abs() > best.1.abs() {
                    (idx, v)
                } else {
                    best
                }
            });
        assert_eq!(peak_idx, delay);
        // Band-limited to 40 Hz .. 7 kHz of 8 kHz: a little under the 0.5 it was.
        assert!((0.38..0.5).contains(&peak), "peak {peak}");
    }
}
