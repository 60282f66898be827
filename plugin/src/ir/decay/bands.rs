//! Complementary bands of a whole signal: zero-phase masks on its spectrum, spaced evenly in
//! log frequency, that sum to one at every frequency. The bands of a signal therefore sum back
//! to the signal, up to rounding.
//!
//! Band `k` of a set is centred on `lowest_hz · 2^(k · step)` octaves and its mask falls as
//! `cos²` to zero at the centres of its neighbours; the lowest band keeps everything below its
//! centre (DC included), the highest everything above its own.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// A set of log-spaced complementary bands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bands {
    /// Centre of the lowest band, in Hz.
    pub lowest_hz: f64,
    /// Spacing of the centres, in octaves.
    pub step_octaves: f64,
    /// Number of bands.
    pub count: usize,
}

impl Bands {
    /// Octave bands from 31.25 Hz to 16 kHz (1 kHz among them): the analysis bands.
    pub const OCTAVES: Self = Self {
        lowest_hz: 31.25,
        step_octaves: 1.0,
        count: 10,
    };
    /// Third-octave bands over the same span: the bands the decay is changed in.
    pub const THIRDS: Self = Self {
        lowest_hz: 31.25,
        step_octaves: 1.0 / 3.0,
        count: 28,
    };

    /// The centre of band `k`, in Hz.
    pub fn center_hz(&self, k: usize) -> f64 {
        self.lowest_hz * (k as f64 * self.step_octaves).exp2()
    }

    /// Where `hz` lies, in bands: `k` at band `k`'s centre.
    pub fn position(&self, hz: f64) -> f64 {
        if hz <= 0.0 {
            f64::NEG_INFINITY
        } else {
            (hz / self.lowest_hz).log2() / self.step_octaves
        }
    }

    /// The mask of band `k` at `hz`; the masks of all bands sum to one.
    pub fn weight(&self, k: usize, hz: f64) -> f64 {
        let distance = self.position(hz) - k as f64;
        if (k == 0 && distance <= 0.0) || (k + 1 == self.count && distance >= 0.0) {
            1.0
        } else if distance.abs() >= 1.0 {
            0.0
        } else {
            (std::f64::consts::FRAC_PI_2 * distance).cos().powi(2)
        }
    }

    /// The frequencies where band `k`'s mask is not zero, in Hz (`0` and infinity at the ends).
    fn support_hz(&self, k: usize) -> (f64, f64) {
        let low = if k == 0 { 0.0 } else { self.center_hz(k - 1) };
        let high = if k + 1 == self.count {
            f64::INFINITY
        } else {
            self.center_hz(k + 1)
        };
        (low, high)
    }
}

/// Splits signals of one length into bands, through one FFT of the whole signal (zero-padded
/// far enough that the masks' ringing stays out of the signal's span).
pub struct Splitter {
    fft_len: usize,
    rate: f64,
    forward: Arc<dyn RealToComplex<f64>>,
    inverse: Arc<dyn ComplexToReal<f64>>,
    scratch: Vec<Complex<f64>>,
}

/// Padding beyond the signal: the narrowest third-octave masks ring for a few tens of
/// milliseconds.
const PAD_SECONDS: f64 = 0.25;

impl Splitter {
    /// A splitter for signals of `len` samples at `rate` Hz.
    pub fn new(len: usize, rate: f64) -> Self {
        let fft_len = (len + (rate * PAD_SECONDS) as usize).next_power_of_two();
        let mut planner = RealFftPlanner::<f64>::new();
        let forward = planner.plan_fft_forward(fft_len);
        let inverse = planner.plan_fft_inverse(fft_len);
        let scratch = forward.make_output_vec();
        Self {
            fft_len,
            rate,
            forward,
            inverse,
            scratch,
        }
    }

    /// The spectrum of `samples` (at most the length the splitter was made for).
    pub fn spectrum(&self, samples: &[f32]) -> Vec<Complex<f64>> {
        let mut input = vec![0.0; self.fft_len];
        for (slot, &s) in input.iter_mut().zip(samples) {
            *slot = f64::from(s);
        }
        let mut spectrum = self.forward.make_output_vec();
        self.forward
            .process(&mut input, &mut spectrum)
            .expect("buffers sized by the plan");
        spectrum
    }

    /// Band `k` of `bands` of the signal whose spectrum is `spectrum`, into `out` (resized to
    /// the FFT's length; the signal's samples come first).
    pub fn band(&mut self, spectrum: &[Complex<f64>], bands: &Bands, k: usize, out: &mut Vec<f64>) {
        let bin_hz = self.rate / self.fft_len as f64;
        let (low, high) = bands.support_hz(k);
        let last = ((high / bin_hz).ceil() as usize).min(spectrum.len() - 1);
        // A band above Nyquist (a low sample rate) has no bins: an empty range.
        let first = ((low / bin_hz).floor() as usize).min(last + 1);
        self.scratch.fill(Complex::new(0.0, 0.0));
        let scale = 1.0 / self.fft_len as f64;
        for (bin, (slot, value)) in self.scratch[first..=last]
            .iter_mut()
            .zip(&spectrum[first..=last])
            .enumerate()
        {
            let hz = (first + bin) as f64 * bin_hz;
            *slot = value * (bands.weight(k, hz) * scale);
        }
        // The transform of a real signal has real ends.
        let end = self.scratch.len() - 1;
        self.scratch[0].im = 0.0;
        self.scratch[end].im = 0.0;
        out.resize(self.fft_len, 0.0);
        self.inverse
            .process(&mut self.scratch, out)
            .expect("buffers sized by the plan");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masks_sum_to_one_and_the_bands_sum_back_to_the_signal() {
        for bands in [Bands::OCTAVES, Bands::THIRDS] {
            for hz in [
                0.0, 5.0, 31.25, 40.0, 999.0, 1000.0, 11_000.0, 16_000.0, 23_000.0,
            ] {
                let sum: f64 = (0..bands.count).map(|k| bands.weight(k, hz)).sum();
                assert!((sum - 1.0).abs() < 1e-12, "{hz} Hz: {sum}");
            }
            assert_eq!(bands.weight(1, bands.center_hz(1)), 1.0);
        }
        let signal: Vec<f32> = (0..3000)
            .map(|i| ((i as f64 * 0.37).sin() * (-(i as f64) / 700.0).exp()) as f32)
            .collect();
        let mut splitter = Splitter::new(signal.len(), 48_000.0);
        let spectrum = splitter.spectrum(&signal);
        let mut sum = vec![0.0; signal.len()];
        let mut band = Vec::new();
        for k in 0..Bands::THIRDS.count {
            splitter.band(&spectrum, &Bands::THIRDS, k, &mut band);
            sum.iter_mut().zip(&band).for_each(|(s, b)| *s += b);
        }
        let error = sum
            .iter()
            .zip(&signal)
            .fold(0.0f64, |e, (s, &x)| e.max((s - f64::from(x)).abs()));
        assert!(error < 1e-9, "{error}");
    }
}
