//! Reading the sweep file and the recording, with bounds of their own: not the IR's 60 s, but
//! [`MAX_FILE_SECONDS`] (a K = 8 recording of 15 s slots is 2 minutes) and
//! [`RECORDING_MAX_CHANNELS`], within the decoder's file size bound
//! ([`crate::ir::decode::MAX_FILE_BYTES`]) and its rule that no length read from a file sizes an
//! allocation beyond what the file can hold. Then the recording's checks against the sweep:
//! the rate, the length, non-finite samples and clipping (where, by channel and time).
//!
//! Any thread but the audio thread; allocates the decoded samples (`f32`, 4 bytes each).

use std::path::Path;

use super::error::CaptureError;
use super::sweep::{Excitation, MAX_FILE_SECONDS};
use crate::ir::MAX_MATRIX_SIDE;
use crate::ir::decode::{self, Audio, Limits};

/// Most channels of a recording: a microphone per matrix output, and a loopback.
pub const RECORDING_MAX_CHANNELS: usize = MAX_MATRIX_SIDE + 1;
/// A sample this close to full scale (-0.01 dBFS) is taken for clipping.
pub const CLIP_LEVEL: f32 = 0.999;

/// The bounds of a recording read.
pub const RECORDING_LIMITS: Limits = Limits {
    max_channels: RECORDING_MAX_CHANNELS,
    max_seconds: Some(MAX_FILE_SECONDS),
};

/// The bounds of a sweep file read: a channel per loudspeaker.
pub const SWEEP_LIMITS: Limits = Limits {
    max_channels: MAX_MATRIX_SIDE,
    max_seconds: Some(MAX_FILE_SECONDS),
};

/// Decodes the recording at `path` within [`RECORDING_LIMITS`].
pub fn read_recording(path: &Path) -> Result<Audio, CaptureError> {
    decode::read(path, RECORDING_LIMITS)
        .map(|(audio, _)| audio)
        .map_err(|error| file_error("recording", &path.display().to_string(), error))
}

/// [`read_recording`] of a file's bytes in memory, `name` standing for its path (for tests and
/// the fuzz target).
pub fn read_recording_bytes(bytes: &[u8], name: &str) -> Result<Audio, CaptureError> {
    decode::read_bytes(bytes, name, RECORDING_LIMITS)
        .map(|(audio, _)| audio)
        .map_err(|error| file_error("recording", name, error))
}

/// Decodes the sweep file at `path` within [`SWEEP_LIMITS`].
pub fn read_sweep(path: &Path) -> Result<Audio, CaptureError> {
    decode::read(path, SWEEP_LIMITS)
        .map(|(audio, _)| audio)
        .map_err(|error| file_error("sweep", &path.display().to_string(), error))
}

/// The decoder's refusal, named for the file it came from.
fn file_error(which: &'static str, path: &str, error: crate::ir::IrError) -> CaptureError {
    use crate::ir::IrError;
    let error = match error {
        IrError::TooLong { seconds, .. } => IrError::InvalidEdit(format!(
            "'{path}' is {seconds:.1} s long; the longest {which} read is {MAX_FILE_SECONDS:.0} s"
        )),
        IrError::UnsupportedChannels(found) => IrError::InvalidEdit(format!(
            "'{path}' has {found} channels; a {which} has at most {}",
            if which == "sweep" {
                MAX_MATRIX_SIDE
            } else {
                RECORDING_MAX_CHANNELS
            }
        )),
        error => error.in_file(path),
    };
    CaptureError::File { which, error }
}

/// Refuses a recording the excitation cannot be deconvolved from: another sample rate, fewer
/// samples than every slot needs, a non-finite sample, or clipping (the earliest clipped
/// sample's channel and time).
pub fn check(recording: &Audio, excitation: &Excitation) -> Result<(), CaptureError> {
    if recording.sample_rate != excitation.sample_rate {
        return Err(CaptureError::RateMismatch {
            recording: recording.sample_rate,
            sweep: excitation.sample_rate,
        });
    }
    let rate = f64::from(recording.sample_rate);
    let found = recording.num_frames();
    let needed = excitation.num_speakers * excitation.slot_len();
    if found < needed {
        let slots = match excitation.num_speakers {
            1 => "one slot".to_string(),
            k => format!("{k} slots"),
        };
        return Err(CaptureError::TooShort {
            found,
            found_s: found as f64 / rate,
            needed,
            needed_s: needed as f64 / rate,
            slots,
        });
    }
    for (channel_idx, channel) in recording.channels.iter().enumerate() {
        if let Some(frame) = channel.iter().position(|s| !s.is_finite()) {
            return Err(CaptureError::NonFinite {
                channel: channel_idx + 1,
                frame,
            });
        }
    }
    let clipped = recording
        .channels
        .iter()
        .enumerate()
        .filter_map(|(channel_idx, channel)| {
            let frame = channel.iter().position(|s| s.abs() >= CLIP_LEVEL)?;
            Some((frame, channel_idx, channel[frame]))
        })
        .min_by_key(|&(frame, channel_idx, _)| (frame, channel_idx));
    if let Some((frame, channel_idx, sample)) = clipped {
        return Err(CaptureError::Clipped {
            channel: channel_idx + 1,
            frame,
            seconds: frame as f64 / rate,
            level_dbfs: 20.0 * f64::from(sample.abs()).log10(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excitation(num_speakers: usize) -> Excitation {
        let mut samples = vec![0.0f32; 2_000];
        samples[..500].fill(0.5);
        Excitation {
            sample_rate: 8_000,
            samples,
            sweep_len: 500,
            num_speakers,
        }
    }

    fn recording(num_frames: usize) -> Audio {
        Audio {
            sample_rate: 8_000,
            channels: vec![vec![0.1; num_frames]; 3],
        }
    }

    #[test]
    fn clipping_is_refused_with_its_channel_and_time() {
        let mut audio = recording(4_000);
        check(&audio, &excitation(2)).unwrap();
        audio.channels[2][3_000] = 1.0;
        audio.channels[1][3_200] = -1.0;
        let error = check(&audio, &excitation(2)).unwrap_err();
        assert!(
            matches!(
                error,
                CaptureError::Clipped {
                    channel: 3,
                    frame: 3_000,
                    ..
                }
            ),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains("channel 3") && message.contains("0.375 s"),
            "{message}"
        );
    }

    #[test]
    fn short_recordings_other_rates_and_nans_are_refused() {
        let error = check(&recording(3_999), &excitation(2)).unwrap_err();
        assert!(
            matches!(error, CaptureError::TooShort { needed: 4_000, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("2 slots"), "{error}");
        let mut audio = recording(4_000);
        audio.sample_rate = 16_000;
        assert!(matches!(
            check(&audio, &excitation(2)),
            Err(CaptureError::RateMismatch {
                recording: 16_000,
                sweep: 8_000
            })
        ));
        let mut audio = recording(4_000);
        audio.channels[0][7] = f32::NAN;
        assert!(matches!(
            check(&audio, &excitation(1)),
            Err(CaptureError::NonFinite {
                channel: 1,
                frame: 7
            })
        ));
    }

    #[test]
    fn files_past_the_bounds_are_refused_before_their_samples_are_read() {
        let path = std::env::temp_dir().join(format!("longtail-rec-{}.wav", std::process::id()));
        crate::ir::wav::write_f32(&path, 8_000, &vec![vec![0.0f32; 10]; 66]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let error = read_recording_bytes(&bytes, "wide.wav")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("66 channels") && error.contains("65"),
            "{error}"
        );
        let error = read_recording_bytes(b"RIFF....WAVEjunk", "junk.wav").unwrap_err();
        assert!(error.to_string().starts_with("recording: "), "{error}");
    }
}
