//! Ducking: the wet signal lowered while a key signal plays, so the reverb gets out of the way
//! of the dry one. Run-time, on the audio thread, after the engine (not an IR edit).
//!
//! The key is the plugin's own input, or a sidechain where the host feeds one. Its level is
//! the largest absolute sample over its channels, held for [`HOLD_SECONDS`] (longer than the
//! period of any audible tone, so a sine's zero crossings do not open the gate). While the
//! held level is at or over the threshold, the wet signal's gain moves to `-amount` dB; while
//! it is under, back to 0 dB. Both moves are straight lines in dB:
//!
//! - **attack**: the whole amount in the attack time;
//! - **release**: back within 1 dB of unity at the release time after the key fell under the
//!   threshold (the hold included), and at unity soon after (amounts of 1 dB or less: at
//!   unity at the release time).
//!
//! So a change of any setting glides at those rates: no step, no click. At an amount of 0 dB
//! with the gain at rest, nothing is computed and the wet signal is untouched, bit for bit.

/// How long the key's level is held after its last sample over the threshold, in seconds.
pub const HOLD_SECONDS: f64 = 0.02;
/// Largest reduction, in dB.
pub const MAX_DUCK_DB: f32 = 24.0;

/// The ducker's settings for one block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DuckSettings {
    /// Reduction while the key plays, in dB, 0 to [`MAX_DUCK_DB`]; 0: off.
    pub amount_db: f32,
    /// The key's level (sample peak) that starts the ducking, in dBFS.
    pub threshold_db: f32,
    /// Time to reach the whole amount, in milliseconds.
    pub attack_ms: f32,
    /// Time from the key falling under the threshold to the gain within 1 dB of unity, in
    /// milliseconds.
    pub release_ms: f32,
}

impl DuckSettings {
    /// No ducking.
    pub const OFF: Self = Self {
        amount_db: 0.0,
        threshold_db: -30.0,
        attack_ms: 10.0,
        release_ms: 300.0,
    };
}

/// The ducker's state: built off the audio thread, run on it without allocating.
#[derive(Debug)]
pub struct Ducker {
    sample_rate: f32,
    hold_samples: u32,
    /// Samples of hold left; 0: the key is under the threshold.
    hold_left: u32,
    /// The gain now, in dB (0 or less).
    gain_db: f32,
    /// The gain per sample of the last block, linear.
    gains: Vec<f32>,
}

impl Ducker {
    /// A ducker for blocks of up to `max_block_size` at `sample_rate`. Allocates.
    pub fn new(sample_rate: f32, max_block_size: usize) -> Self {
        let mut ducker = Self {
            sample_rate,
            hold_samples: 0,
            hold_left: 0,
            gain_db: 0.0,
            gains: vec![1.0; max_block_size],
        };
        ducker.set_sample_rate(sample_rate);
        ducker
    }

    /// The rate the times count in. Does not allocate.
    pub fn set_sample_rate(&mut self, sample_rate: f32) {
        self.sample_rate = sample_rate.max(1.0);
        self.hold_samples = (f64::from(self.sample_rate) * HOLD_SECONDS).round() as u32;
    }

    /// The reduction now, in dB (0 or more), for the meters.
    pub fn reduction_db(&self) -> f32 {
        -self.gain_db
    }

    /// Back to rest: no reduction, no hold. Does not allocate.
    pub fn reset(&mut self) {
        self.hold_left = 0;
        self.gain_db = 0.0;
    }

    /// Lowers `wet` (the channels of one block of `len` samples) as the `key` block (its
    /// channels, each at least `len` long) and `settings` say. Does not allocate.
    pub fn process(
        &mut self,
        key: &[&[f32]],
        wet: &mut [Vec<f32>],
        len: usize,
        settings: &DuckSettings,
    ) {
        let amount = settings.amount_db.clamp(0.0, MAX_DUCK_DB);
        if amount == 0.0 && self.gain_db == 0.0 {
            self.hold_left = 0;
            return;
        }
        let threshold = 10f32.powf(settings.threshold_db / 20.0);
        let to_samples = |ms: f32| (ms * 1e-3 * self.sample_rate).max(1.0);
        let down = amount / to_samples(settings.attack_ms);
        let ramp = (to_samples(settings.release_ms) - self.hold_samples as f32).max(1.0);
        let up = if amount > 1.0 {
            amount - 1.0
        } else {
            amount.max(0.01)
        } / ramp;
        let len = len.min(self.gains.len());
        // The linear gain changes only while the gain glides: no `powf` at rest.
        let mut gain = 10f32.powf(self.gain_db / 20.0);
        for idx in 0..len {
            let level = key
                .iter()
                .fold(0.0f32, |peak, channel| peak.max(channel[idx].abs()));
            if level >= threshold && amount > 0.0 {
                self.hold_left = self.hold_samples.max(1);
            } else {
                self.hold_left = self.hold_left.saturating_sub(1);
            }
            let target = if self.hold_left > 0 { -amount } else { 0.0 };
            if self.gain_db != target {
                self.gain_db = if self.gain_db > target {
                    (self.gain_db - down).max(target)
                } else {
                    (self.gain_db + up).min(target)
                };
                gain = 10f32.powf(self.gain_db / 20.0);
            }
            self.gains[idx] = gain;
        }
        for channel in wet.iter_mut() {
            for (sample, gain) in channel[..len].iter_mut().zip(&self.gains[..len]) {
                *sample *= gain;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst over the threshold ducks by the amount after the attack, and the gain is back
    /// within 1 dB at the release time after the burst.
    #[test]
    fn a_burst_ducks_by_the_amount_and_releases_in_time() {
        let rate = 48_000.0;
        let mut ducker = Ducker::new(rate, 64);
        let settings = DuckSettings {
            amount_db: 12.0,
            threshold_db: -30.0,
            attack_ms: 10.0,
            release_ms: 200.0,
        };
        let burst = 24_000;
        let total = 48_000;
        let key: Vec<f32> = (0..total)
            .map(|i| {
                if i < burst {
                    0.25 * (i as f32 * 0.13).sin()
                } else {
                    0.0
                }
            })
            .collect();
        let mut gains = Vec::new();
        for start in (0..total).step_by(64) {
            let mut wet = vec![vec![1.0f32; 64]];
            ducker.process(&[&key[start..start + 64]], &mut wet, 64, &settings);
            gains.extend_from_slice(&wet[0]);
        }
        let db = |g: f32| 20.0 * g.log10();
        assert!((db(gains[burst - 1]) + 12.0).abs() < 1e-3);
        let back = gains[burst..]
            .iter()
            .position(|&g| db(g) > -1.0)
            .expect("releases") as f32
            / rate;
        assert!(
            (back - 0.2).abs() < 0.002,
            "back within 1 dB after {back} s"
        );
        assert_eq!(*gains.last().unwrap(), 1.0);
    }

    /// At an amount of 0 dB the wet signal is not touched.
    #[test]
    fn no_amount_leaves_the_wet_signal_alone() {
        let mut ducker = Ducker::new(48_000.0, 16);
        let key = [1.0f32; 16];
        let mut wet = vec![vec![0.3f32; 16]];
        ducker.process(&[&key], &mut wet, 16, &DuckSettings::OFF);
        assert!(wet[0].iter().all(|&s| s == 0.3));
    }

    /// Settings automated at block boundaries while a sine plays (the key and the wet signal
    /// both): the gain glides, so the output never jumps from one sample to the next by more
    /// than 1e-3 beyond the sine's own largest step.
    #[test]
    fn automated_settings_never_click() {
        let rate = 48_000.0;
        let mut ducker = Ducker::new(rate, 256);
        let sine: Vec<f32> = (0..96_000)
            .map(|i| 0.5 * (std::f32::consts::TAU * 440.0 * i as f32 / rate).cos())
            .collect();
        let on = |amount_db: f32, threshold_db: f32| DuckSettings {
            amount_db,
            threshold_db,
            attack_ms: 50.0,
            release_ms: 300.0,
        };
        let steps = [
            DuckSettings::OFF,
            on(12.0, -30.0),
            on(24.0, -30.0),
            on(24.0, 0.0),
            on(6.0, -30.0),
            on(0.0, -30.0),
        ];
        let mut output = Vec::new();
        for (idx, start) in (0..sine.len()).step_by(256).enumerate() {
            let settings = steps[idx * steps.len() * 256 / sine.len()];
            let block = &sine[start..start + 256];
            let mut wet = vec![block.to_vec()];
            ducker.process(&[block], &mut wet, 256, &settings);
            output.extend_from_slice(&wet[0]);
        }
        let jump = |signal: &[f32]| {
            signal
                .windows(2)
                .fold(0.0f32, |m, pair| m.max((pair[1] - pair[0]).abs()))
        };
        let (own, stepped) = (jump(&sine), jump(&output));
        assert!(
            stepped <= own + 1e-3,
            "jumps by {stepped}, the sine by {own}"
        );
        // The steps did duck: somewhere the output is 24 dB under the sine.
        let ducked = output
            .chunks(4_800)
            .zip(sine.chunks(4_800))
            .any(|(o, s)| jump(o) < jump(s) * 10f32.powf(-23.0 / 20.0));
        assert!(ducked, "the steps never reached 24 dB");
    }
}
