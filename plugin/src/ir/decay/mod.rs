//! Decay time: lengthen or shorten how long the IR's room rings, per band, as an IR edit.
//!
//! The IR is split into third-octave bands that sum back to it ([`bands`]). Each band's decay
//! time T comes from the octave bands around it ([`estimate`]: Schroeder's integral of the
//! band's energy over its noise floor). Band by band, from the IR's onset (its first sample
//! within 20 dB of the peak) on, an exponential envelope turns a decay of T into one of
//! `ratio · T`: a gain of `10^(3 · t / T · (1 - 1 / ratio))` at `t` seconds after the onset.
//! The ratio is [`DecaySettings::ratio_at`] the band's centre: the overall ratio times the low
//! and high multipliers, each of which fades in over the octave around its corner.
//!
//! An envelope lifts everything a band holds, its recording's noise floor too. So where a band
//! is lengthened, it ends with a [`END_FADE_SECONDS`] fade where the recording met its floor
//! instead of lifting the floor into a rising plateau. A band that never rises
//! [`estimate::MIN_RANGE_DB`] above its floor (a file with nothing above 16 kHz, say) is left as
//! it is. The IR keeps its length.
//!
//! Only the bands whose gain is not one are computed: the result is the IR plus, per changed
//! band, the band times its gain less one. Neutral settings are skipped by the caller, so they
//! return the IR bit for bit.

pub mod bands;
pub mod estimate;

use bands::{Bands, Splitter};
use estimate::BandDecay;

/// Smallest and largest overall ratio of the decay time.
pub const RATIO_RANGE: (f64, f64) = (0.25, 2.0);
/// Smallest and largest low or high multiplier.
pub const MULTIPLIER_RANGE: (f64, f64) = (0.5, 2.0);
/// A lengthened band fades out over this long where it met its noise floor.
pub const END_FADE_SECONDS: f64 = 0.02;
/// The onset is the first sample within this many dB of the IR's peak.
const ONSET_DB: f64 = -20.0;

/// A multiplier of the decay time on one side of a corner frequency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandScale {
    /// The corner, in Hz: half the multiplier's effect (in log terms) there, all of it half an
    /// octave beyond, none half an octave inside.
    pub hz: f64,
    /// The multiplier, [`MULTIPLIER_RANGE`].
    pub factor: f64,
}

/// How the decay time changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecaySettings {
    /// The decay time's ratio to the IR's own, [`RATIO_RANGE`]; 1: as recorded.
    pub ratio: f64,
    /// A further multiplier below a corner.
    pub low: Option<BandScale>,
    /// A further multiplier above a corner.
    pub high: Option<BandScale>,
}

impl DecaySettings {
    /// The IR's decay as recorded.
    pub const NEUTRAL: Self = Self {
        ratio: 1.0,
        low: None,
        high: None,
    };

    /// Whether nothing changes.
    pub fn is_neutral(&self) -> bool {
        self.ratio == 1.0
            && self.low.is_none_or(|s| s.factor == 1.0)
            && self.high.is_none_or(|s| s.factor == 1.0)
    }

    /// The ratio of the decay time at `hz`.
    pub fn ratio_at(&self, hz: f64) -> f64 {
        // How far `hz` is past the corner, 0 to 1 across the octave around it.
        let past = |corner: f64| {
            let x = ((hz.max(1e-9) / corner).log2() + 0.5).clamp(0.0, 1.0);
            (std::f64::consts::FRAC_PI_2 * x).sin().powi(2)
        };
        let low = self.low.map_or(1.0, |s| s.factor.powf(1.0 - past(s.hz)));
        let high = self.high.map_or(1.0, |s| s.factor.powf(past(s.hz)));
        self.ratio * low * high
    }

    /// Refuses values outside the ranges, with a message for users.
    pub fn validate(&self, nyquist: f64) -> Result<(), String> {
        let (low, high) = RATIO_RANGE;
        if !(low..=high).contains(&self.ratio) {
            return Err(format!(
                "decay {:.0} % is out of range; use {:.0} to {:.0} %",
                self.ratio * 100.0,
                low * 100.0,
                high * 100.0
            ));
        }
        let (low, high) = MULTIPLIER_RANGE;
        for (name, scale) in [("low", self.low), ("high", self.high)] {
            let Some(scale) = scale else { continue };
            if !(low..=high).contains(&scale.factor) {
                return Err(format!(
                    "decay {name} multiplier {} is out of range; use {low} to {high}",
                    scale.factor
                ));
            }
            if !(scale.hz.is_finite() && scale.hz > 0.0 && scale.hz < nyquist * 0.98) {
                return Err(format!(
                    "decay {name} corner {} Hz is out of range; use above 0 and below {:.0} Hz",
                    scale.hz,
                    nyquist * 0.98
                ));
            }
        }
        Ok(())
    }
}

/// Changes the decay of `channels` (one IR at `rate` Hz) as `settings` say.
pub fn apply(channels: &mut [Vec<f32>], rate: f64, settings: &DecaySettings) {
    let len = channels.first().map_or(0, Vec::len);
    let Some(onset) = onset(channels) else {
        return;
    };
    // One splitter (its FFT plans and scratch) for the estimate and the change.
    let mut splitter = Splitter::new(len, rate);
    let octaves = estimate::estimate_with(&mut splitter, channels, rate, &Bands::OCTAVES);
    let thirds = Bands::THIRDS;
    let envelopes: Vec<Option<Envelope>> = (0..thirds.count)
        .map(|j| Envelope::new(&octaves, thirds.center_hz(j), settings, rate, onset))
        .collect();
    if envelopes.iter().all(Option::is_none) {
        return;
    }
    let mut band = Vec::new();
    for channel in channels.iter_mut() {
        let spectrum = splitter.spectrum(channel);
        let mut out: Vec<f64> = channel.iter().map(|&s| f64::from(s)).collect();
        for (j, envelope) in envelopes.iter().enumerate() {
            let Some(envelope) = envelope else { continue };
            splitter.band(&spectrum, &thirds, j, &mut band);
            envelope.add_change(&band[onset..len], &mut out[onset..]);
        }
        for (sample, value) in channel.iter_mut().zip(out) {
            *sample = value as f32;
        }
    }
}

/// The first frame where any channel comes within [`ONSET_DB`] of the IR's peak.
fn onset(channels: &[Vec<f32>]) -> Option<usize> {
    let peak = channels
        .iter()
        .flatten()
        .fold(0.0f64, |peak, &s| peak.max(f64::from(s.abs())));
    if peak == 0.0 {
        return None;
    }
    let threshold = peak * 10f64.powf(ONSET_DB / 20.0);
    let len = channels.first().map_or(0, Vec::len);
    (0..len).find(|&idx| {
        channels
            .iter()
            .any(|c| f64::from(c[idx].abs()) >= threshold)
    })
}

/// One third-octave band's gain over time, from the onset on.
struct Envelope {
    /// The gain's ratio from one sample to the next.
    step: f64,
    /// Where a lengthened band starts its fade to silence, in samples after the onset.
    fade_from: Option<usize>,
    fade_len: usize,
}

impl Envelope {
    /// The envelope of the band centred on `hz`, from the octave estimates around it; `None`
    /// where its gain stays one (a neutral ratio there, or no decay to change).
    fn new(
        octaves: &[BandDecay],
        hz: f64,
        settings: &DecaySettings,
        rate: f64,
        onset: usize,
    ) -> Option<Self> {
        let ratio = settings.ratio_at(hz);
        if ratio == 1.0 {
            return None;
        }
        let position = Bands::OCTAVES.position(hz);
        let nearest = (position.round().max(0.0) as usize).min(octaves.len() - 1);
        octaves[nearest].t60_s?;
        // The decay time between the measured octaves around `hz` (log-linear), held flat past
        // the outermost ones.
        let measured: Vec<(f64, f64, usize)> = octaves
            .iter()
            .enumerate()
            .filter_map(|(k, band)| band.t60_s.map(|t| (k as f64, t.ln(), band.floor_at)))
            .collect();
        let below = measured.iter().rev().find(|m| m.0 <= position);
        let above = measured.iter().find(|m| m.0 >= position);
        let (t60, floor_at) = match (below, above) {
            (Some(b), Some(a)) if a.0 > b.0 => {
                let x = (position - b.0) / (a.0 - b.0);
                ((b.1 + (a.1 - b.1) * x).exp(), b.2.min(a.2))
            }
            (Some(m), _) | (_, Some(m)) => (m.1.exp(), m.2),
            (None, None) => return None,
        };
        let db_per_second = 60.0 / t60 * (1.0 - 1.0 / ratio);
        let step = 10f64.powf(db_per_second / 20.0 / rate);
        let fade_len = ((END_FADE_SECONDS * rate) as usize).max(1);
        let fade_from = (ratio > 1.0).then_some(floor_at.saturating_sub(onset));
        Some(Self {
            step,
            fade_from,
            fade_len,
        })
    }

    /// Adds `band · (gain - 1)` to `out`, both starting at the onset.
    fn add_change(&self, band: &[f64], out: &mut [f64]) {
        let mut gain = 1.0;
        for (idx, (o, b)) in out.iter_mut().zip(band).enumerate() {
            let faded = match self.fade_from {
                Some(from) if idx >= from + self.fade_len => 0.0,
                Some(from) if idx >= from => {
                    let x = (from + self.fade_len - idx) as f64 / self.fade_len as f64;
                    gain * (std::f64::consts::FRAC_PI_2 * x).sin().powi(2)
                }
                _ => gain,
            };
            *o += b * (faded - 1.0);
            gain *= self.step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edge cases keep the IR's length and stay finite: a low sample rate (bands above
    /// Nyquist), a short IR, a silent one; a ratio below one shortens a decaying IR's energy.
    #[test]
    fn edge_cases_keep_the_length_and_stay_finite() {
        let settings = DecaySettings {
            ratio: 0.5,
            low: Some(BandScale {
                hz: 300.0,
                factor: 2.0,
            }),
            high: None,
        };
        let mut rng = crate::rng::Rng::new(9);
        for (rate, len) in [(8_000.0, 16_000), (48_000.0, 100), (48_000.0, 48_000)] {
            let ir: Vec<f32> = (0..len)
                .map(|i| rng.bipolar() * (-(i as f32) / (rate as f32 * 0.2)).exp())
                .collect();
            let mut channels = vec![ir.clone(), vec![0.0; len]];
            apply(&mut channels, rate, &settings);
            assert!(channels.iter().all(|c| c.len() == len));
            assert!(channels.iter().flatten().all(|s| s.is_finite()));
            let energy = |c: &[f32]| c.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>();
            if len >= 16_000 {
                assert!(energy(&channels[0]) < energy(&ir), "{rate} Hz");
            }
        }
        let mut silent = vec![vec![0.0f32; 4_800]];
        apply(&mut silent, 48_000.0, &settings);
        assert!(silent[0].iter().all(|&s| s == 0.0));
    }
}
