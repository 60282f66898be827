//! How long each band of an IR rings: its decay time, its noise floor and where it meets it.
//!
//! Per band, from the energy summed over the IR's channels:
//!
//! 1. the **noise floor** is the mean energy of the last tenth of the IR (at least 10 ms);
//!    a band whose loudest 10 ms are less than [`MIN_RANGE_DB`] above it has no decay to speak
//!    of, and is left as it is;
//! 2. the band **meets its floor** at the first 10 ms block after its peak that is less than
//!    [`END_ABOVE_FLOOR_DB`] above the floor;
//! 3. the **energy decay curve** is Schroeder's backward integral of the energy less the floor,
//!    from the peak to that point, plus the energy a decay at a first estimate's rate would
//!    still have had beyond it (Lundeby's compensation);
//! 4. the **decay time** (T60) is a least-squares line through that curve from -5 dB down to
//!    -35 dB (T30), or as far as the band's range allows ([`BandDecay::fit_db`]; at least
//!    10 dB).

use super::bands::{Bands, Splitter};

/// A band less than this far above its floor has no decay to change, in dB.
pub const MIN_RANGE_DB: f64 = 20.0;
/// A band meets its floor where its level is less than this far above it, in dB.
pub const END_ABOVE_FLOOR_DB: f64 = 10.0;
/// The levels are measured in blocks of this many seconds.
const BLOCK_SECONDS: f64 = 0.01;
/// Channels measured at most: a large matrix is estimated from this many of its paths, evenly
/// spread.
const MAX_MEASURED_CHANNELS: usize = 16;

/// One band's decay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandDecay {
    /// The band's centre, in Hz.
    pub center_hz: f64,
    /// Loudest 10 ms over the noise floor, in dB.
    pub range_db: f64,
    /// The decay time: the time to fall 60 dB, in seconds; `None` where the band has no decay
    /// above its floor.
    pub t60_s: Option<f64>,
    /// How far down the line was fitted, in dB below the curve's start (35: a T30).
    pub fit_db: f64,
    /// The band's peak, in samples.
    pub peak: usize,
    /// Where the band meets its noise floor, in samples (the IR's length where it never does).
    pub floor_at: usize,
}

/// The decays of `bands` of `channels` (one IR at `rate` Hz).
pub fn estimate(channels: &[Vec<f32>], rate: f64, bands: &Bands) -> Vec<BandDecay> {
    let len = channels.first().map_or(0, Vec::len);
    estimate_with(&mut Splitter::new(len, rate), channels, rate, bands)
}

/// [`estimate`] through `splitter` (made for these channels' length at `rate`).
pub fn estimate_with(
    splitter: &mut Splitter,
    channels: &[Vec<f32>],
    rate: f64,
    bands: &Bands,
) -> Vec<BandDecay> {
    let len = channels.first().map_or(0, Vec::len);
    let step = channels.len().div_ceil(MAX_MEASURED_CHANNELS).max(1);
    let mut energies = vec![vec![0.0f64; len]; bands.count];
    let mut band = Vec::new();
    for channel in channels.iter().step_by(step) {
        let spectrum = splitter.spectrum(channel);
        for (k, energy) in energies.iter_mut().enumerate() {
            splitter.band(&spectrum, bands, k, &mut band);
            for (e, b) in energy.iter_mut().zip(&band) {
                *e += b * b;
            }
        }
    }
    energies
        .iter()
        .enumerate()
        .map(|(k, energy)| band_decay(energy, rate, bands.center_hz(k)))
        .collect()
}

/// The decay of one band from its energy per sample.
pub fn band_decay(energy: &[f64], rate: f64, center_hz: f64) -> BandDecay {
    let len = energy.len();
    let block = ((rate * BLOCK_SECONDS) as usize).max(1);
    let mut decay = BandDecay {
        center_hz,
        range_db: 0.0,
        t60_s: None,
        fit_db: 0.0,
        peak: 0,
        floor_at: len,
    };
    if len < 4 * block {
        return decay;
    }
    let levels: Vec<f64> = energy
        .chunks(block)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let (peak_block, peak) =
        levels
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, 0.0),
                |best, (idx, level)| if level > best.1 { (idx, level) } else { best },
            );
    if peak <= 0.0 {
        return decay;
    }
    let tail = (len / 10).max(block);
    let floor = (energy[len - tail..].iter().sum::<f64>() / tail as f64).max(peak * 1e-15);
    decay.range_db = 10.0 * (peak / floor).log10();
    decay.peak = peak_block * block;
    if decay.range_db < MIN_RANGE_DB {
        return decay;
    }
    let end_level = floor * 10f64.powf(END_ABOVE_FLOOR_DB / 10.0);
    let end_block = (peak_block..levels.len())
        .find(|&idx| levels[idx] < end_level)
        .unwrap_or(levels.len());
    decay.floor_at = (end_block * block).min(len);
    let span = &energy[decay.peak..decay.floor_at];
    if span.len() < 4 * block {
        return decay;
    }
    // A first slope through the block levels, for the energy past the end.
    let first: Vec<(f64, f64)> = (peak_block..end_block)
        .map(|idx| {
            let t = (idx - peak_block) as f64 * block as f64;
            (t, 10.0 * (levels[idx] / peak).max(1e-30).log10())
        })
        .collect();
    let Some(slope) = line_slope(&first).filter(|s| *s < 0.0) else {
        return decay;
    };
    // Energy of an exponential decay from the last block's mean level on: level / (1 - q),
    // where q is the energy's ratio per sample.
    let q = 10f64.powf(slope / 10.0);
    let last_level = (levels[end_block - 1] - floor).max(0.0);
    let mut remaining = last_level * q / (1.0 - q);
    let mut curve = vec![0.0; span.len()];
    for (slot, &e) in curve.iter_mut().zip(span).rev() {
        remaining += e - floor;
        *slot = remaining;
    }
    let start = curve[0];
    if start <= 0.0 {
        return decay;
    }
    let usable_db = (decay.range_db - END_ABOVE_FLOOR_DB - 5.0).min(35.0);
    if usable_db < 15.0 {
        return decay;
    }
    let points: Vec<(f64, f64)> = curve
        .iter()
        .enumerate()
        .step_by((block / 8).max(1))
        .map(|(t, &c)| (t as f64, 10.0 * (c / start).max(1e-30).log10()))
        .filter(|&(_, db)| db <= -5.0 && db >= -usable_db)
        .collect();
    if let Some(slope) = line_slope(&points).filter(|s| *s < 0.0) {
        decay.t60_s = Some(-60.0 / slope / rate);
        decay.fit_db = usable_db;
    }
    decay
}

/// The least-squares slope of `points` (`None` with fewer than two).
fn line_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mean_x, mean_y) = points
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), p| {
        let dx = p.0 - mean_x;
        (sxy + dx * (p.1 - mean_y), sxx + dx * dx)
    });
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exponential decay of known T60 over a floor 90 dB down reads back within 2 %; a flat
    /// band has no decay.
    #[test]
    fn a_known_decay_reads_back() {
        let rate = 48_000.0;
        let mut rng = crate::rng::Rng::new(3);
        for t60 in [0.3, 1.0, 2.5] {
            let len = (rate * (t60 * 1.6 + 0.5)) as usize;
            let energy: Vec<f64> = (0..len)
                .map(|i| {
                    let noise = rng.next_f64().max(1e-12);
                    let chi = -noise.ln(); // exponential: the energy of Gaussian noise pairs
                    chi * (10f64.powf(-6.0 * i as f64 / (t60 * rate)) + 1e-9)
                })
                .collect();
            let decay = band_decay(&energy, rate, 1000.0);
            let got = decay.t60_s.expect("decays");
            assert!((got / t60 - 1.0).abs() < 0.02, "{t60} s read as {got}");
            assert!(decay.range_db > 80.0, "{decay:?}");
            assert!(decay.floor_at < len, "{decay:?}");
        }
        let flat = vec![1.0; 48_000];
        assert_eq!(band_decay(&flat, rate, 1000.0).t60_s, None);
    }
}
