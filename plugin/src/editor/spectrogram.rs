//! The IR's spectrogram for the editor: power over time and frequency, made off the GUI thread
//! with the waveform preview (see `editor::make_preview`).
//!
//! Frames of [`FRAME_LEN`] samples (Hann window) are centred on `columns` evenly spaced times
//! over the IR; the power of every channel is summed; frequencies are grouped into `bands`
//! logarithmic bands from [`LOW_HZ`] to Nyquist (a band narrower than one FFT bin takes the bin
//! at its centre). Levels are in dB below the loudest cell, floored at [`FLOOR_DB`].

use realfft::RealFftPlanner;

/// FFT frame length: 43 ms at 48 kHz, 11.7 Hz bins.
pub const FRAME_LEN: usize = 2048;
/// The lowest band's lower edge.
pub const LOW_HZ: f32 = 20.0;
/// The quietest level kept, in dB below the loudest cell.
pub const FLOOR_DB: f32 = -90.0;

/// Levels over time (columns) and frequency (bands).
#[derive(Debug, Clone, PartialEq)]
pub struct Spectrogram {
    pub columns: usize,
    pub bands: usize,
    /// The bands' edges in Hz, `bands + 1` of them, rising.
    pub edges_hz: Vec<f32>,
    /// dB below the loudest cell (0 at the loudest, down to [`FLOOR_DB`]), column by column:
    /// `db[column * bands + band]`, band 0 the lowest.
    pub db: Vec<f32>,
}

impl Spectrogram {
    /// The level of one cell.
    pub fn at(&self, column: usize, band: usize) -> f32 {
        self.db[column * self.bands + band]
    }

    /// The band holding `hz`, if any.
    pub fn band_of(&self, hz: f32) -> Option<usize> {
        self.edges_hz
            .windows(2)
            .position(|e| e[0] <= hz && hz < e[1])
    }
}

/// The spectrogram of `channels` (all of one length) at `rate`. Allocates; a 10 s stereo IR
/// takes a few milliseconds.
pub fn spectrogram(channels: &[Vec<f32>], rate: u32, columns: usize, bands: usize) -> Spectrogram {
    let columns = columns.max(1);
    let bands = bands.max(1);
    let nyquist = rate as f32 / 2.0;
    let low = LOW_HZ.min(nyquist / 2.0);
    let ratio = (nyquist / low).powf(1.0 / bands as f32);
    let edges_hz: Vec<f32> = (0..=bands).map(|b| low * ratio.powi(b as i32)).collect();
    let bin_hz = rate as f32 / FRAME_LEN as f32;
    // Each band's bins, as a half-open range (at least one bin).
    let band_bins: Vec<(usize, usize)> = edges_hz
        .windows(2)
        .map(|e| {
            let first = (e[0] / bin_hz).ceil() as usize;
            let end = (e[1] / bin_hz).ceil() as usize;
            if end > first {
                (first, end.min(FRAME_LEN / 2 + 1))
            } else {
                let centre = ((e[0] * e[1]).sqrt() / bin_hz).round() as usize;
                let centre = centre.min(FRAME_LEN / 2);
                (centre, centre + 1)
            }
        })
        .collect();

    let window: Vec<f32> = (0..FRAME_LEN)
        .map(|i| {
            let phase = std::f32::consts::TAU * (i as f32 + 0.5) / FRAME_LEN as f32;
            0.5 - 0.5 * phase.cos()
        })
        .collect();
    let fft = RealFftPlanner::<f32>::new().plan_fft_forward(FRAME_LEN);
    let mut frame = fft.make_input_vec();
    let mut spectrum = fft.make_output_vec();
    let mut power = vec![0.0f32; FRAME_LEN / 2 + 1];
    let len = channels.first().map_or(0, Vec::len);
    let mut db = Vec::with_capacity(columns * bands);
    for column in 0..columns {
        let centre = ((column as f64 + 0.5) * len as f64 / columns as f64) as isize;
        let start = centre - FRAME_LEN as isize / 2;
        power.fill(0.0);
        for channel in channels {
            for (i, slot) in frame.iter_mut().enumerate() {
                let at = start + i as isize;
                let sample = usize::try_from(at)
                    .ok()
                    .and_then(|at| channel.get(at))
                    .copied()
                    .unwrap_or(0.0);
                *slot = sample * window[i];
            }
            if fft.process(&mut frame, &mut spectrum).is_err() {
                continue;
            }
            for (p, bin) in power.iter_mut().zip(&spectrum) {
                *p += bin.norm_sqr();
            }
        }
        db.extend(band_bins.iter().map(|&(first, end)| {
            let mean = power[first..end].iter().sum::<f32>() / (end - first) as f32;
            10.0 * mean.max(1e-30).log10()
        }));
    }
    let loudest = db.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for level in &mut db {
        *level = (*level - loudest).clamp(FLOOR_DB, 0.0);
        if !level.is_finite() {
            *level = FLOOR_DB;
        }
    }
    Spectrogram {
        columns,
        bands,
        edges_hz,
        db,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn a_tone_lights_its_band() {
        let rate = 48_000;
        let tone: Vec<f32> = (0..rate as usize)
            .map(|i| (std::f32::consts::TAU * 1000.0 * i as f32 / rate as f32).sin())
            .collect();
        let s = spectrogram(&[tone], rate, 20, 48);
        assert_eq!(s.db.len(), 20 * 48);
        assert_eq!(s.edges_hz.len(), 49);
        assert!((s.edges_hz[0] - LOW_HZ).abs() < 1e-3);
        assert!((s.edges_hz[48] - 24_000.0).abs() < 1.0);
        let band = s.band_of(1000.0).expect("1 kHz is in range");
        for column in 2..18 {
            let loudest = (0..s.bands)
                .max_by(|&a, &b| s.at(column, a).total_cmp(&s.at(column, b)))
                .unwrap_or(0);
            assert!(
                loudest.abs_diff(band) <= 1,
                "column {column}: band {loudest}"
            );
            // Far from the tone, the window's sidelobes are deep down.
            assert!(s.at(column, band.saturating_sub(12)) < -40.0);
            assert!(s.at(column, (band + 12).min(s.bands - 1)) < -40.0);
        }
    }

    #[test]
    fn a_decaying_tail_fades_over_the_columns_and_silence_is_the_floor() {
        let rate = 48_000;
        let mut rng = Rng::new(5);
        let len = 2 * rate as usize;
        let tail: Vec<f32> = (0..len)
            .map(|i| rng.bipolar() * (-3.0 * i as f32 / rate as f32).exp())
            .collect();
        // A silent second channel adds nothing.
        let s = spectrogram(&[tail, vec![0.0; len]], rate, 40, 32);
        let mean = |column: usize| (0..s.bands).map(|b| s.at(column, b)).sum::<f32>() / 32.0;
        // About 26 dB per second of decay: 6.5 dB every 5 columns (250 ms), well above the
        // noise's own spread.
        for column in 1..33 {
            assert!(mean(column + 5) < mean(column) - 3.0, "column {column}");
        }
        assert!(mean(1) - mean(38) > 40.0, "{} {}", mean(1), mean(38));
        assert!(s.db.iter().all(|&d| (FLOOR_DB..=0.0).contains(&d)));
        assert_eq!(s.db.iter().copied().fold(f32::MIN, f32::max), 0.0);
    }

    #[test]
    fn empty_and_tiny_inputs_give_a_floor_grid() {
        let s = spectrogram(&[Vec::new()], 44_100, 8, 4);
        assert_eq!(s.db.len(), 32);
        assert!(s.db.iter().all(|d| d.is_finite()));
        let s = spectrogram(&[vec![1.0]], 8_000, 3, 16);
        assert!(s.db.iter().all(|d| d.is_finite()));
        assert_eq!(s.edges_hz.len(), 17);
    }
}
