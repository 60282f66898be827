//! Measuring tools for synthetic rooms, in f64: a linear convolution, a band limit with smooth
//! skirts, the harmonic distortion of an analog stage, and how far what it adds to an IR
//! stays under it. The capture's tests (the library's
//! and the command line's) build their recordings and compare their IRs with these; nothing in
//! the capture itself uses them.

use realfft::RealFftPlanner;
use realfft::num_complex::Complex;

use super::deconvolve::fast_len;

/// Linear convolution through one FFT, in f64.
pub fn convolve(x: &[f64], h: &[f64]) -> Vec<f64> {
    let len = x.len() + h.len() - 1;
    let fft_len = fast_len(len);
    let mut planner = RealFftPlanner::<f64>::new();
    let (r2c, c2r) = (
        planner.plan_fft_forward(fft_len),
        planner.plan_fft_inverse(fft_len),
    );
    let spectrum = |signal: &[f64]| {
        let mut buffer = vec![0.0; fft_len];
        buffer[..signal.len()].copy_from_slice(signal);
        let mut out = r2c.make_output_vec();
        r2c.process(&mut buffer, &mut out).unwrap();
        out
    };
    let (a, b) = (spectrum(x), spectrum(h));
    let mut product: Vec<Complex<f64>> = a
        .iter()
        .zip(&b)
        .map(|(a, b)| a * b / fft_len as f64)
        .collect();
    let mut out = vec![0.0; fft_len];
    product[0].im = 0.0;
    if let Some(last) = product.last_mut() {
        last.im = 0.0;
    }
    c2r.process(&mut product, &mut out).unwrap();
    out.truncate(len);
    out
}

/// `signal` band-limited to `low_hz ..= high_hz`: zero-padded to twice its length, every bin
/// in the band kept, raised-cosine skirts half an octave wide below and a quarter above, zero
/// past them. (A brick wall rings for the whole length of the IR, and its ringing of the
/// out-of-band difference between the two signals, cut to the window, would be measured as
/// an in-band error.)
pub fn band_limit(signal: &[f64], rate: u32, low_hz: f64, high_hz: f64) -> Vec<f64> {
    let fft_len = fast_len(2 * signal.len());
    let mut planner = RealFftPlanner::<f64>::new();
    let (r2c, c2r) = (
        planner.plan_fft_forward(fft_len),
        planner.plan_fft_inverse(fft_len),
    );
    let mut buffer = vec![0.0; fft_len];
    buffer[..signal.len()].copy_from_slice(signal);
    let mut spectrum = r2c.make_output_vec();
    r2c.process(&mut buffer, &mut spectrum).unwrap();
    let hz_per_bin = f64::from(rate) / fft_len as f64;
    let skirt = |octaves: f64| 0.5 + 0.5 * (std::f64::consts::PI * octaves.clamp(0.0, 1.0)).cos();
    for (bin_idx, bin) in spectrum.iter_mut().enumerate() {
        let hz = bin_idx as f64 * hz_per_bin;
        let gain = if hz <= 0.0 {
            0.0
        } else if hz < low_hz {
            skirt((low_hz / hz).log2() / 0.5)
        } else if hz > high_hz {
            skirt((hz / high_hz).log2() / 0.25)
        } else {
            1.0
        };
        *bin *= gain / fft_len as f64;
    }
    c2r.process(&mut spectrum, &mut buffer).unwrap();
    buffer.truncate(signal.len());
    buffer
}

/// `x + a2 x^2 + a3 x^3` as an analog stage would make it before the converter's anti-alias
/// filter: at four times the rate (band-limited interpolation), then band-limited back to the
/// rate. Computed at the rate itself, the harmonics of the sweep's top octaves would fold back
/// under Nyquist as falling sweeps, which no loudspeaker makes.
pub fn distort(x: &[f64], a2: f64, a3: f64) -> Vec<f64> {
    let n = x.len() + x.len() % 2;
    let mut planner = RealFftPlanner::<f64>::new();
    let (r2c, c2r) = (planner.plan_fft_forward(n), planner.plan_fft_inverse(n));
    let (r2c_up, c2r_up) = (
        planner.plan_fft_forward(4 * n),
        planner.plan_fft_inverse(4 * n),
    );
    let mut buffer = vec![0.0; n];
    buffer[..x.len()].copy_from_slice(x);
    let mut spectrum = r2c.make_output_vec();
    r2c.process(&mut buffer, &mut spectrum).unwrap();
    let mut up_spectrum = r2c_up.make_output_vec();
    for (up, bin) in up_spectrum.iter_mut().zip(&spectrum) {
        *up = bin / n as f64;
    }
    let mut up = vec![0.0; 4 * n];
    c2r_up.process(&mut up_spectrum, &mut up).unwrap();
    for s in &mut up {
        *s += a2 * *s * *s + a3 * *s * *s * *s;
    }
    r2c_up.process(&mut up, &mut up_spectrum).unwrap();
    for (bin, up) in spectrum.iter_mut().zip(&up_spectrum) {
        *bin = up / (4 * n) as f64;
    }
    spectrum[0].im = 0.0;
    if let Some(last) = spectrum.last_mut() {
        last.im = 0.0;
    }
    c2r.process(&mut spectrum, &mut buffer).unwrap();
    buffer.truncate(x.len());
    buffer
}

/// How far `dirty` (an IR recovered through a distorting stage) differs from `clean` (the same
/// without it), over their common length: the gain that fits `dirty` to `clean` best (a
/// 3rd-order term also lifts the fundamental), the largest residual sample in dB under
/// `clean`'s peak, and the residual's energy in dB under `clean`'s.
pub struct DistortionFigures {
    pub gain: f64,
    pub under_peak_db: f64,
    pub under_energy_db: f64,
}

/// [`DistortionFigures`] of `dirty` against `clean`.
pub fn distortion_figures(clean: &[f64], dirty: &[f64]) -> DistortionFigures {
    let len = clean.len().min(dirty.len());
    let (clean, dirty) = (&clean[..len], &dirty[..len]);
    let energy = clean.iter().map(|c| c * c).sum::<f64>();
    let gain = dirty.iter().zip(clean).map(|(d, c)| d * c).sum::<f64>() / energy;
    let peak = clean.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    let residual = dirty
        .iter()
        .zip(clean)
        .fold(0.0f64, |m, (d, c)| m.max((d - gain * c).abs()));
    let products = dirty
        .iter()
        .zip(clean)
        .map(|(d, c)| (d - gain * c).powi(2))
        .sum::<f64>();
    DistortionFigures {
        gain,
        under_peak_db: 20.0 * (peak / residual).log10(),
        under_energy_db: 10.0 * (energy / products).log10(),
    }
}
