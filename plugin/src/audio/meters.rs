//! Input and output meters: sample peak and RMS over [`RMS_WINDOW_MS`], per channel.
//!
//! The audio thread owns a [`Meter`] per side (sized in `initialize()`, only cleared in
//! `reset()`) and publishes into the [`MeterLevels`] of the shared
//! [`crate::audio::monitor::EngineMonitor`] with relaxed atomics:
//!
//! - **Peak**: the largest `|x|` since the editor last took it. The audio thread raises it with
//!   `fetch_max` on the `f32` bits (for non-negative floats the bit patterns order like the
//!   values), the editor takes it with `swap(0)`, so no peak between two frames is lost and
//!   neither side waits. The hold (how long the editor keeps showing a peak) is the editor's.
//! - **RMS**: the root of the mean square over the last [`RMS_WINDOW_MS`], a sliding window of
//!   [`SEGMENTS`] segments of 10 ms whose sums of squares sit in a ring, published each time a
//!   segment completes. Until the first window fills, the mean is over what was seen.
//!
//! NaN samples are ignored (the engine never outputs them; a host may feed them in).

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Channels metered per side: the widest bus.
pub const MAX_METERED: usize = 64;
/// Length of the RMS window, in milliseconds.
pub const RMS_WINDOW_MS: u32 = 300;
/// Segments of the RMS window (10 ms each).
pub const SEGMENTS: usize = 30;

/// Levels of one side (input or output), shared between the audio thread and the editor.
#[derive(Debug)]
pub struct MeterLevels {
    /// Channels metered now.
    channels: AtomicU32,
    /// Per channel, the peak (linear, `f32` bits) since the editor last took it.
    peak: [AtomicU32; MAX_METERED],
    /// Per channel, the RMS (linear, `f32` bits) of the last window.
    rms: [AtomicU32; MAX_METERED],
}

impl Default for MeterLevels {
    fn default() -> Self {
        Self {
            channels: AtomicU32::new(0),
            peak: std::array::from_fn(|_| AtomicU32::new(0)),
            rms: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }
}

impl MeterLevels {
    /// Channels metered now.
    pub fn channels(&self) -> usize {
        (self.channels.load(Relaxed) as usize).min(MAX_METERED)
    }

    /// The largest `|x|` of `channel` since the last call, and starts a new one. For the
    /// editor (one reader).
    pub fn take_peak(&self, channel: usize) -> f32 {
        self.peak
            .get(channel)
            .map_or(0.0, |p| f32::from_bits(p.swap(0, Relaxed)))
    }

    /// The RMS of `channel` over the last [`RMS_WINDOW_MS`].
    pub fn rms(&self, channel: usize) -> f32 {
        self.rms
            .get(channel)
            .map_or(0.0, |r| f32::from_bits(r.load(Relaxed)))
    }

    fn raise_peak(&self, channel: usize, peak: f32) {
        self.peak[channel].fetch_max(peak.to_bits(), Relaxed);
    }
}

/// The audio thread's half of one side's meter: the RMS ring.
#[derive(Debug, Default)]
pub struct Meter {
    /// Samples per segment (10 ms).
    segment_len: usize,
    /// Samples in the segment being summed.
    filled: usize,
    /// Channels this meter was sized for.
    channels: usize,
    /// Sum of squares of the segment being summed, per channel.
    current: Vec<f64>,
    /// Per channel, [`SEGMENTS`] completed segment sums (channel-major).
    ring: Vec<f64>,
    /// Ring slot the next completed segment goes to.
    next: usize,
    /// Completed segments, up to [`SEGMENTS`].
    completed: usize,
}

impl Meter {
    /// A meter for `channels` channels (at most [`MAX_METERED`]) at `sample_rate`. Allocates:
    /// `initialize()` only.
    pub fn new(sample_rate: u32, channels: usize) -> Self {
        let channels = channels.min(MAX_METERED);
        Self {
            segment_len: (sample_rate as usize / 100).max(1),
            filled: 0,
            channels,
            current: vec![0.0; channels],
            ring: vec![0.0; channels * SEGMENTS],
            next: 0,
            completed: 0,
        }
    }

    /// Forgets every level. No allocation.
    pub fn reset(&mut self, levels: &MeterLevels) {
        self.filled = 0;
        self.next = 0;
        self.completed = 0;
        self.current.fill(0.0);
        self.ring.fill(0.0);
        for channel in 0..MAX_METERED {
            levels.rms[channel].store(0, Relaxed);
            levels.peak[channel].store(0, Relaxed);
        }
    }

    /// Measures a block (one slice per channel, all of one length) and publishes into
    /// `levels`. Channels past the meter's size are not metered. No allocation, no lock.
    pub fn measure<S: AsRef<[f32]>>(&mut self, block: &[S], levels: &MeterLevels) {
        let channels = block.len().min(self.channels);
        levels.channels.store(channels as u32, Relaxed);
        let Some(first) = block.first() else {
            return;
        };
        let len = first.as_ref().len();
        for (channel, samples) in block[..channels].iter().enumerate() {
            // `f32::max` drops NaN.
            let peak = samples.as_ref().iter().fold(0.0f32, |p, s| p.max(s.abs()));
            levels.raise_peak(channel, peak);
        }
        let mut start = 0;
        while start < len {
            let take = (self.segment_len - self.filled).min(len - start);
            for (channel, samples) in block[..channels].iter().enumerate() {
                let piece = &samples.as_ref()[start..start + take];
                self.current[channel] += piece
                    .iter()
                    .filter(|s| !s.is_nan())
                    .map(|&s| f64::from(s) * f64::from(s))
                    .sum::<f64>();
            }
            self.filled += take;
            start += take;
            if self.filled == self.segment_len {
                self.complete_segment(channels, levels);
            }
        }
    }

    /// Moves the segment sums into the ring and publishes each channel's window RMS.
    fn complete_segment(&mut self, channels: usize, levels: &MeterLevels) {
        self.completed = (self.completed + 1).min(SEGMENTS);
        let samples = (self.completed * self.segment_len) as f64;
        for channel in 0..self.channels {
            let ring = &mut self.ring[channel * SEGMENTS..(channel + 1) * SEGMENTS];
            ring[self.next] = std::mem::take(&mut self.current[channel]);
            if channel < channels {
                let rms = (ring.iter().sum::<f64>() / samples).sqrt() as f32;
                levels.rms[channel].store(rms.to_bits(), Relaxed);
            }
        }
        self.next = (self.next + 1) % SEGMENTS;
        self.filled = 0;
    }
}

/// A linear level in dBFS, with a floor for silence.
pub fn to_db(level: f32) -> f32 {
    20.0 * level.max(1e-7).log10()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(rate: u32, hz: f32, amplitude: f32, len: usize, phase: f32) -> Vec<f32> {
        (0..len)
            .map(|n| {
                amplitude * (std::f32::consts::TAU * hz * n as f32 / rate as f32 + phase).sin()
            })
            .collect()
    }

    #[test]
    fn a_sine_reads_its_peak_and_rms() {
        let rate = 48_000;
        // -6 dBFS at 1 kHz on the left, -20 dBFS at 440 Hz on the right, ragged blocks.
        let left = sine(rate, 1000.0, 0.5, rate as usize, 0.3);
        let right = sine(rate, 440.0, 0.1, rate as usize, 1.1);
        let levels = MeterLevels::default();
        let mut meter = Meter::new(rate, 2);
        let mut start = 0;
        for block in [64usize, 1, 480, 511, 128].iter().cycle() {
            if start >= left.len() {
                break;
            }
            let end = (start + block).min(left.len());
            meter.measure(&[&left[start..end], &right[start..end]], &levels);
            start = end;
        }
        assert_eq!(levels.channels(), 2);
        let peak_l = to_db(levels.take_peak(0));
        let peak_r = to_db(levels.take_peak(1));
        let expect_l = to_db(0.5);
        let expect_r = to_db(0.1);
        assert!((peak_l - expect_l).abs() < 0.01, "{peak_l} vs {expect_l}");
        assert!((peak_r - expect_r).abs() < 0.01, "{peak_r} vs {expect_r}");
        // A sine's RMS is its amplitude over sqrt(2): -3.01 dB under its peak.
        let rms_l = to_db(levels.rms(0));
        let rms_r = to_db(levels.rms(1));
        let sqrt_half = to_db(std::f32::consts::FRAC_1_SQRT_2);
        assert!((rms_l - (expect_l + sqrt_half)).abs() < 0.1, "{rms_l}");
        assert!((rms_r - (expect_r + sqrt_half)).abs() < 0.1, "{rms_r}");
        // Taking the peak starts a new one.
        assert_eq!(levels.take_peak(0), 0.0);
    }

    #[test]
    fn the_rms_window_forgets_after_300_ms_and_nan_is_ignored() {
        let rate = 44_100;
        let levels = MeterLevels::default();
        let mut meter = Meter::new(rate, 1);
        let loud = vec![1.0f32; rate as usize / 2];
        meter.measure(&[&loud[..]], &levels);
        assert!((levels.rms(0) - 1.0).abs() < 1e-6);
        // 290 ms of silence: one loud segment of 30 is still in the window.
        let quiet = vec![0.0f32; rate as usize * 29 / 100];
        meter.measure(&[&quiet[..]], &levels);
        let expected = (1.0f32 / SEGMENTS as f32).sqrt();
        assert!((levels.rms(0) - expected).abs() < 1e-4, "{}", levels.rms(0));
        // 10 ms more: the window is all silence.
        let more = vec![0.0f32; rate as usize / 100];
        meter.measure(&[&more[..]], &levels);
        assert_eq!(levels.rms(0), 0.0);
        let nan = [f32::NAN, 0.25, f32::NAN];
        levels.take_peak(0);
        meter.measure(&[&nan[..]], &levels);
        assert_eq!(levels.take_peak(0), 0.25);
        meter.reset(&levels);
        assert_eq!(levels.rms(0), 0.0);
    }

    #[test]
    fn channels_past_the_meter_are_left_out() {
        let levels = MeterLevels::default();
        let mut meter = Meter::new(48_000, 1);
        let a = [0.5f32; 10];
        meter.measure(&[&a[..], &a[..]], &levels);
        assert_eq!(levels.channels(), 1);
        assert_eq!(levels.take_peak(1), 0.0);
        assert_eq!(levels.take_peak(0), 0.5);
    }
}
