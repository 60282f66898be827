//! The excitation: an exponential sine sweep, synchronised (Novak et al., JAES 2015, after
//! Farina, AES 2000), so that each harmonic distortion product of order `k` comes out of the
//! deconvolution as an impulse response `L ln k` seconds before the linear one, and its fades;
//! then the silence in which the room rings out. With `K` loudspeakers the file has `K`
//! channels and `K` slots one after another in time: slot `k` holds the sweep in channel `k`
//! (its tail in every channel silent).
//!
//! Also the other direction: what a sweep file holds ([`Excitation::from_file`]), for the
//! deconvolution. Runs on any thread but the audio thread; allocates the file's samples.

use std::f64::consts::TAU;

use super::error::CaptureError;
use crate::ir::{MAX_MATRIX_SIDE, MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ};

/// Default sweep length in seconds (`sweep --seconds`).
pub const DEFAULT_SECONDS: f64 = 10.0;
/// Default start frequency in Hz.
pub const DEFAULT_FROM_HZ: f64 = 20.0;
/// Default end frequency in Hz.
pub const DEFAULT_TO_HZ: f64 = 20_000.0;
/// Default peak level in dBFS.
pub const DEFAULT_LEVEL_DB: f64 = -6.0;
/// Default sample rate in Hz.
pub const DEFAULT_RATE_HZ: u32 = 48_000;
/// Default silence after each sweep, in seconds.
pub const DEFAULT_TAIL_SECONDS: f64 = 4.0;
/// Longest sweep, in seconds.
pub const MAX_SWEEP_SECONDS: f64 = 120.0;
/// Longest tail, in seconds.
pub const MAX_TAIL_SECONDS: f64 = 60.0;
/// Shortest tail, in seconds: the noise floor is read from its last tenth.
pub const MIN_TAIL_SECONDS: f64 = 0.1;
/// Longest sweep file (every slot), in seconds: also the longest recording read.
pub const MAX_FILE_SECONDS: f64 = 1_200.0;
/// Longest fade-in, in seconds (at most a tenth of the sweep).
const FADE_IN_SECONDS: f64 = 0.05;
/// Longest fade-out, in seconds (at most a tenth of the sweep).
const FADE_OUT_SECONDS: f64 = 0.01;

/// What `longtail-cli sweep` writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepSpec {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Asked sweep length in seconds; the synchronised sweep is within half a period of `from_hz`
    /// of it ([`SweepSpec::sweep_len`]).
    pub seconds: f64,
    /// Start frequency in Hz.
    pub from_hz: f64,
    /// End frequency in Hz, below Nyquist.
    pub to_hz: f64,
    /// Peak level in dBFS, at most 0.
    pub level_db: f64,
    /// Silence after each sweep, in seconds.
    pub tail_seconds: f64,
    /// Loudspeakers, one slot (and one channel) each.
    pub num_speakers: usize,
}

impl Default for SweepSpec {
    fn default() -> Self {
        Self {
            sample_rate: DEFAULT_RATE_HZ,
            seconds: DEFAULT_SECONDS,
            from_hz: DEFAULT_FROM_HZ,
            to_hz: DEFAULT_TO_HZ,
            level_db: DEFAULT_LEVEL_DB,
            tail_seconds: DEFAULT_TAIL_SECONDS,
            num_speakers: 1,
        }
    }
}

impl SweepSpec {
    /// Refuses settings no measurement needs, naming the flag and its range.
    pub fn validate(&self) -> Result<(), CaptureError> {
        let bad = |text: String| Err(CaptureError::Setting(text));
        let rate = self.sample_rate;
        if !(MIN_SAMPLE_RATE_HZ..=MAX_SAMPLE_RATE_HZ).contains(&rate) {
            return bad(format!(
                "--rate {rate}: use whole hertz from {MIN_SAMPLE_RATE_HZ} to {MAX_SAMPLE_RATE_HZ}"
            ));
        }
        if !(0.5..=MAX_SWEEP_SECONDS).contains(&self.seconds) {
            return bad(format!(
                "--seconds {}: a sweep lasts 0.5 to {MAX_SWEEP_SECONDS} s",
                self.seconds
            ));
        }
        let nyquist = f64::from(rate) / 2.0;
        if !(self.from_hz >= 1.0 && self.from_hz < self.to_hz && self.to_hz < nyquist) {
            return bad(format!(
                "--from {} --to {}: the sweep needs 1 Hz <= from < to < {nyquist} Hz (half the rate)",
                self.from_hz, self.to_hz
            ));
        }
        if self.to_hz / self.from_hz < 2.0 {
            return bad(format!(
                "--from {} --to {}: a sweep spans at least an octave",
                self.from_hz, self.to_hz
            ));
        }
        if !(-60.0..=0.0).contains(&self.level_db) {
            return bad(format!(
                "--level {}: the peak is -60 to 0 dBFS",
                self.level_db
            ));
        }
        if !(MIN_TAIL_SECONDS..=MAX_TAIL_SECONDS).contains(&self.tail_seconds) {
            return bad(format!(
                "--tail {}: the tail lasts {MIN_TAIL_SECONDS} to {MAX_TAIL_SECONDS} s",
                self.tail_seconds
            ));
        }
        if !(1..=MAX_MATRIX_SIDE).contains(&self.num_speakers) {
            return bad(format!(
                "--speakers {}: 1 to {MAX_MATRIX_SIDE} loudspeakers",
                self.num_speakers
            ));
        }
        let total = self.num_speakers as f64 * (self.sweep_seconds() + self.tail_seconds);
        if total > MAX_FILE_SECONDS {
            return bad(format!(
                "{} slots of {:.1} s are {total:.0} s; the longest sweep file is {MAX_FILE_SECONDS:.0} s",
                self.num_speakers,
                self.sweep_seconds() + self.tail_seconds
            ));
        }
        Ok(())
    }

    /// The synchronised sweep's rate constant `L` in seconds: `from_hz * L` is a whole number,
    /// so that every harmonic starts in phase with the fundamental.
    pub fn rate_constant(&self) -> f64 {
        let ratio_ln = (self.to_hz / self.from_hz).ln();
        (self.from_hz * self.seconds / ratio_ln).round().max(1.0) / self.from_hz
    }

    /// The sweep's own length in seconds (`L ln(to / from)`).
    pub fn sweep_seconds(&self) -> f64 {
        self.rate_constant() * (self.to_hz / self.from_hz).ln()
    }

    /// The sweep's length in samples.
    pub fn sweep_len(&self) -> usize {
        (self.sweep_seconds() * f64::from(self.sample_rate)).round() as usize
    }

    /// One slot (the sweep and its tail) in samples.
    pub fn slot_len(&self) -> usize {
        self.sweep_len() + (self.tail_seconds * f64::from(self.sample_rate)).round() as usize
    }

    /// The sweep alone: `sin(2 pi f1 L (exp(t / L) - 1))` at the peak level, with a raised-cosine
    /// fade-in (50 ms, at most a tenth of the sweep) and fade-out (10 ms). Allocates its samples.
    pub fn sweep(&self) -> Vec<f64> {
        let rate = f64::from(self.sample_rate);
        let l = self.rate_constant();
        let peak = 10f64.powf(self.level_db / 20.0);
        let len = self.sweep_len();
        let fade =
            |seconds: f64| ((seconds.min(0.1 * self.sweep_seconds()) * rate) as usize).max(1);
        let (fade_in, fade_out) = (fade(FADE_IN_SECONDS), fade(FADE_OUT_SECONDS));
        (0..len)
            .map(|idx| {
                let t = idx as f64 / rate;
                let phase = TAU * self.from_hz * l * ((t / l).exp() - 1.0);
                let gain = if idx < fade_in {
                    0.5 - 0.5 * (std::f64::consts::PI * idx as f64 / fade_in as f64).cos()
                } else if len - idx <= fade_out {
                    // Not quite 0 at the last sample: the sweep's length is its last non-zero one.
                    let left = (len - idx) as f64;
                    0.5 - 0.5 * (std::f64::consts::PI * left / fade_out as f64).cos()
                } else {
                    1.0
                };
                peak * gain * phase.sin()
            })
            .collect()
    }

    /// The file's channels: one per loudspeaker, `num_speakers` slots long, slot `k` holding the
    /// sweep in channel `k`. Allocates `num_speakers^2` slots of samples; call
    /// [`SweepSpec::validate`] first.
    pub fn channels(&self) -> Vec<Vec<f32>> {
        let sweep: Vec<f32> = self.sweep().into_iter().map(|s| s as f32).collect();
        let slot_len = self.slot_len();
        (0..self.num_speakers)
            .map(|speaker_idx| {
                let mut channel = vec![0.0f32; slot_len * self.num_speakers];
                let start = speaker_idx * slot_len;
                channel[start..start + sweep.len()].copy_from_slice(&sweep);
                channel
            })
            .collect()
    }
}

/// What the deconvolution needs from a sweep file: the first slot's excitation (the sweep and
/// its silent tail) and the slots' shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Excitation {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// The excitation of one slot, `slot_len` samples: the sweep, then zeros.
    pub samples: Vec<f32>,
    /// Samples up to the sweep's last non-zero sample.
    pub sweep_len: usize,
    /// Loudspeakers: slots in the recording.
    pub num_speakers: usize,
}

impl Excitation {
    /// Samples per slot.
    pub fn slot_len(&self) -> usize {
        self.samples.len()
    }

    /// The silence after the sweep in each slot, in samples: the longest IR it can give.
    pub fn tail_len(&self) -> usize {
        self.samples.len() - self.sweep_len
    }

    /// The excitation in a sweep file's `channels` at `sample_rate` for `num_speakers` slots
    /// (`None`: one per channel). A file of `K` channels is what `sweep --speakers K` writes: `K`
    /// equal slots, the first slot's sweep in channel 1; a mono file is one slot, played once per
    /// loudspeaker. Copies the first slot.
    pub fn from_file(
        sample_rate: u32,
        channels: &[Vec<f32>],
        num_speakers: Option<usize>,
    ) -> Result<Self, CaptureError> {
        let num_channels = channels.len();
        let num_frames = channels.first().map_or(0, Vec::len);
        let num_speakers = num_speakers.unwrap_or(num_channels);
        if !(1..=MAX_MATRIX_SIDE).contains(&num_speakers) {
            return Err(CaptureError::Speakers(format!(
                "--speakers {num_speakers}: 1 to {MAX_MATRIX_SIDE} loudspeakers"
            )));
        }
        let slot_len = match num_channels {
            1 => num_frames,
            n if n == num_speakers => num_frames / num_speakers,
            n => {
                return Err(CaptureError::Speakers(format!(
                    "the sweep file has {n} channels but --speakers is {num_speakers}: use the \
                     file `sweep --speakers {num_speakers}` wrote, or a mono sweep"
                )));
            }
        };
        let first = channels
            .first()
            .map_or(&[][..], |c| &c[..slot_len.min(c.len())]);
        let Some(last) = first.iter().rposition(|s| *s != 0.0) else {
            return Err(CaptureError::BadSweep(
                "is silent in its first slot (channel 1)".into(),
            ));
        };
        if let Some(frame) = first.iter().position(|s| !s.is_finite()) {
            return Err(CaptureError::BadSweep(format!(
                "contains a non-finite sample at sample {frame}"
            )));
        }
        let sweep_len = last + 1;
        let min_tail = (MIN_TAIL_SECONDS * f64::from(sample_rate)).ceil() as usize;
        if slot_len - sweep_len < min_tail {
            return Err(CaptureError::BadSweep(format!(
                "has {:.3} s of silence after its sweep; the deconvolution needs at least \
                 {MIN_TAIL_SECONDS} s (`sweep --tail`)",
                (slot_len - sweep_len) as f64 / f64::from(sample_rate)
            )));
        }
        Ok(Self {
            sample_rate,
            samples: first.to_vec(),
            sweep_len,
            num_speakers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_is_synchronised_faded_and_at_its_level() {
        let spec = SweepSpec {
            sample_rate: 16_000,
            seconds: 2.0,
            from_hz: 50.0,
            to_hz: 5_000.0,
            level_db: -6.0,
            tail_seconds: 0.5,
            num_speakers: 1,
        };
        spec.validate().unwrap();
        // f1 L is whole: every harmonic starts in phase.
        let l = spec.rate_constant();
        assert!((spec.from_hz * l - (spec.from_hz * l).round()).abs() < 1e-9);
        // Rounding f1 L moves the length by at most half a period of f1, times ln(f2 / f1).
        let most = 0.5 / spec.from_hz * (spec.to_hz / spec.from_hz).ln();
        assert!((spec.sweep_seconds() - 2.0).abs() <= most + 1e-9);
        let sweep = spec.sweep();
        let peak = sweep.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        assert!((20.0 * peak.log10() + 6.0).abs() < 0.01, "peak {peak}");
        assert!(sweep[0].abs() < 1e-12 && sweep[sweep.len() - 1].abs() < 1e-3);
        // The instantaneous frequency at the middle is the geometric mean of the ends.
        let mid = sweep.len() / 2;
        let window = &sweep[mid - 200..mid + 200];
        let crossings = window
            .windows(2)
            .filter(|w| w[0] < 0.0 && w[1] >= 0.0)
            .count();
        let hz = crossings as f64 * 16_000.0 / 400.0;
        assert!((hz - 500.0).abs() < 60.0, "{hz} Hz");
    }

    #[test]
    fn slots_put_each_speaker_after_the_last() {
        let spec = SweepSpec {
            sample_rate: 8_000,
            seconds: 1.0,
            from_hz: 40.0,
            to_hz: 3_000.0,
            num_speakers: 3,
            tail_seconds: 0.25,
            ..SweepSpec::default()
        };
        spec.validate().unwrap();
        let channels = spec.channels();
        let slot_len = spec.slot_len();
        assert_eq!(channels.len(), 3);
        for (speaker_idx, channel) in channels.iter().enumerate() {
            assert_eq!(channel.len(), 3 * slot_len);
            for slot_idx in 0..3 {
                let slot = &channel[slot_idx * slot_len..(slot_idx + 1) * slot_len];
                let energy: f32 = slot.iter().map(|s| s * s).sum();
                assert_eq!(energy > 0.0, slot_idx == speaker_idx);
            }
        }
        let excitation = Excitation::from_file(8_000, &channels, None).unwrap();
        assert_eq!(excitation.num_speakers, 3);
        assert_eq!(excitation.slot_len(), slot_len);
        assert_eq!(excitation.sweep_len, spec.sweep_len());
        assert!(Excitation::from_file(8_000, &channels, Some(2)).is_err());
        let mono = Excitation::from_file(8_000, &channels[..1], Some(4)).unwrap();
        assert_eq!((mono.num_speakers, mono.slot_len()), (4, 3 * slot_len));
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        let ok = SweepSpec::default();
        ok.validate().unwrap();
        for spec in [
            SweepSpec {
                to_hz: 24_000.0,
                ..ok
            },
            SweepSpec { from_hz: 0.0, ..ok },
            SweepSpec {
                level_db: 1.0,
                ..ok
            },
            SweepSpec {
                tail_seconds: 0.0,
                ..ok
            },
            SweepSpec {
                num_speakers: 0,
                ..ok
            },
            SweepSpec {
                num_speakers: 64,
                seconds: 60.0,
                ..ok
            },
            SweepSpec {
                seconds: f64::NAN,
                ..ok
            },
        ] {
            assert!(spec.validate().is_err(), "{spec:?}");
        }
        let silent = vec![vec![0.0f32; 48_000]];
        assert!(matches!(
            Excitation::from_file(48_000, &silent, None),
            Err(CaptureError::BadSweep(_))
        ));
    }
}
