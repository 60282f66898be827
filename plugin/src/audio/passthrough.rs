//! What the plugin plays when it cannot convolve: the dry input, unchanged.
//!
//! # When
//!
//! Activation never fails. Longtail convolves at session rates from [`MIN_SESSION_RATE_HZ`] to
//! [`MAX_SESSION_RATE_HZ`] (1 kHz to 768 kHz), the rates an IR file may have: the built-in IRs
//! are generated at the session rate and files are resampled to it, so below that range an IR
//! would keep only what lies under a few hundred hertz, and above it a 60 s IR would run to
//! hundreds of millions of samples per channel. A fractional rate is rounded to the nearest
//! hertz for that (44 100.4 Hz builds the IR at 44 100 Hz, 9 ppm off). When the host asks for
//! a rate outside the range (1 Hz, 1 234 567.8 Hz, 3 MHz, or no number at all), or when no
//! engine can be built even from the built-in IR (a worker thread that cannot start), the
//! activation succeeds and passes the signal through instead, and the editor says why: its
//! problem line ([`crate::audio::monitor::EngineMonitor::pass_through`]), its Engine tab, and the
//! IR preview ("Not playable: ...").
//!
//! # What
//!
//! The output is the input, sample for sample, as the host's own bypass would give: zero
//! latency (reported as such), no wet signal and no tail, and Mix and Output gain have no
//! effect (with no wet signal to mix, a gain alone would make the bypass louder or quieter than
//! the track). A mono input feeds both outputs of the mono-to-stereo layout. Non-finite and
//! subnormal input samples become silence, as on the convolving path. The next activation at a
//! supported rate convolves again.
//!
//! [`PassThrough::process`] runs on the audio thread: it never allocates, locks or waits.

use std::fmt::Write as _;

use crate::ir::mapping::{Bus, ChannelFormat, Dry, dry_source};
use crate::ir::{MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ};

/// Lowest session rate Longtail convolves at, in Hz.
pub const MIN_SESSION_RATE_HZ: u32 = MIN_SAMPLE_RATE_HZ;
/// Highest session rate Longtail convolves at, in Hz.
pub const MAX_SESSION_RATE_HZ: u32 = MAX_SAMPLE_RATE_HZ;

/// The rate, in whole hertz, at which Longtail convolves for a host running at `host_rate_hz`,
/// or why it passes the signal through instead (a line for the editor). Allocates only for the
/// message.
pub fn session_rate(host_rate_hz: f32) -> Result<u32, String> {
    let range = f64::from(MIN_SESSION_RATE_HZ)..=f64::from(MAX_SESSION_RATE_HZ);
    let rounded = f64::from(host_rate_hz).round();
    if range.contains(&rounded) {
        Ok(rounded as u32)
    } else {
        let mut message = String::from("the host runs at ");
        if host_rate_hz.is_finite() {
            let _ = write!(message, "{host_rate_hz} Hz");
        } else {
            let _ = write!(message, "no valid sample rate ({host_rate_hz})");
        }
        let _ = write!(
            message,
            "; Longtail convolves at {MIN_SESSION_RATE_HZ} Hz to {MAX_SESSION_RATE_HZ} Hz"
        );
        Err(message)
    }
}

/// The dry path of an activation that cannot convolve (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassThrough {
    bus: Bus,
}

impl PassThrough {
    /// For a layout of `num_inputs` inputs and `num_outputs` outputs, read as `format`.
    pub fn new(num_inputs: usize, num_outputs: usize, format: ChannelFormat) -> Self {
        Self {
            bus: Bus::new(num_inputs, num_outputs, format),
        }
    }

    /// Turns one host block, processed in place (the first `num_inputs` slices hold the input,
    /// further outputs arrive silent), into the dry output the processor would mix
    /// ([`dry_source`]). Never allocates.
    pub fn process(&self, channels: &mut [&mut [f32]]) {
        let (num_inputs, num_outputs) = (self.bus.inputs, self.bus.outputs);
        for channel in channels.iter_mut().take(num_inputs.max(num_outputs)) {
            for sample in channel.iter_mut() {
                // Subnormals too: a host's bypass may pass them, a plugin must not (the
                // convolving path flushes them in its arithmetic; this one only copies).
                if !(sample.is_normal() || *sample == 0.0) {
                    *sample = 0.0;
                }
            }
        }
        if num_inputs == num_outputs || channels.len() < num_inputs.max(num_outputs) {
            return;
        }
        // Outputs past the inputs first, while the inputs are still in place; then the
        // outputs that hold an input.
        let order = (num_inputs..num_outputs).chain(0..num_inputs.min(num_outputs));
        for output_idx in order {
            match dry_source(self.bus, output_idx) {
                Dry::Input(input_idx) if input_idx == output_idx => {}
                Dry::Input(input_idx) => {
                    // Only outputs past the inputs copy one, from a lower index.
                    let (inputs, outputs) = channels.split_at_mut(output_idx);
                    let len = outputs[0].len();
                    outputs[0].copy_from_slice(&inputs[input_idx][..len]);
                }
                Dry::Mid if output_idx == 0 => {
                    let (left, rest) = channels.split_at_mut(1);
                    for (sample, &right) in left[0].iter_mut().zip(rest[0].iter()) {
                        *sample = 0.5 * (*sample + right);
                    }
                }
                Dry::Mid => {
                    let (inputs, outputs) = channels.split_at_mut(output_idx);
                    for (idx, sample) in outputs[0].iter_mut().enumerate() {
                        *sample = 0.5 * (inputs[0][idx] + inputs[1][idx]);
                    }
                }
                Dry::None => channels[output_idx].fill(0.0),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supported_rates_are_rounded_and_others_explained() {
        assert_eq!(session_rate(48_000.0), Ok(48_000));
        assert_eq!(session_rate(44_100.4), Ok(44_100));
        assert_eq!(session_rate(999.6), Ok(1_000));
        assert_eq!(session_rate(768_000.0), Ok(768_000));
        for rate in [1.0, 999.4, 768_001.0, 1_234_567.8, 3e6, 0.0, -48_000.0] {
            let message = session_rate(rate).unwrap_err();
            assert!(message.contains("1000 Hz to 768000 Hz"), "{message}");
        }
        assert_eq!(
            session_rate(1_234_567.8).unwrap_err(),
            "the host runs at 1234567.8 Hz; Longtail convolves at 1000 Hz to 768000 Hz"
        );
        for rate in [f32::NAN, f32::INFINITY] {
            assert!(
                session_rate(rate)
                    .unwrap_err()
                    .contains("no valid sample rate")
            );
        }
    }

    #[test]
    fn the_output_is_the_input_finite_and_normal() {
        let tiny = f32::MIN_POSITIVE / 4.0;
        let mut left = [0.5, f32::NAN, -0.25, f32::INFINITY, tiny, -tiny];
        let mut right = [0.1, 0.2, 0.3, 0.4, f32::MIN_POSITIVE, -0.0];
        PassThrough::new(2, 2, ChannelFormat::Auto).process(&mut [&mut left, &mut right]);
        assert_eq!(left, [0.5, 0.0, -0.25, 0.0, 0.0, 0.0]);
        assert_eq!(right, [0.1, 0.2, 0.3, 0.4, f32::MIN_POSITIVE, -0.0]);

        let mut mono = [0.5, -0.5, 0.25];
        let mut silent = [0.0; 3];
        PassThrough::new(1, 2, ChannelFormat::Auto).process(&mut [&mut mono, &mut silent]);
        assert_eq!(silent, mono);

        let mut mono = [0.5, -0.5];
        PassThrough::new(1, 1, ChannelFormat::Auto).process(&mut [&mut mono]);
        assert_eq!(mono, [0.5, -0.5]);

        // Stereo into first-order Ambisonics: the mid on W, nothing elsewhere.
        let (mut w, mut y, mut z, mut x) = ([1.0, 0.5], [0.0, 0.5], [0.0; 2], [0.0; 2]);
        PassThrough::new(2, 4, ChannelFormat::Ambisonics)
            .process(&mut [&mut w, &mut y, &mut z, &mut x]);
        assert_eq!((w, y, z, x), ([0.5, 0.5], [0.0; 2], [0.0; 2], [0.0; 2]));
        // Mono into 5.1: L and R.
        let mut channels = [
            [0.25f32; 2],
            [0.0; 2],
            [0.0; 2],
            [0.0; 2],
            [0.0; 2],
            [0.0; 2],
        ];
        let mut slices: Vec<&mut [f32]> = channels.iter_mut().map(|c| &mut c[..]).collect();
        PassThrough::new(1, 6, ChannelFormat::Auto).process(&mut slices);
        assert_eq!(channels[1], [0.25; 2]);
        assert!(channels[2..].iter().all(|c| *c == [0.0; 2]));
    }
}
