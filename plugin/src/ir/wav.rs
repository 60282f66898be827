//! WAV files: reading IRs and dry signals, writing 32-bit float renders. Off the audio thread.
//!
//! The header is checked (channels, length, rate) before any sample is read, so a file that
//! claims an absurd size is refused without decoding it.

use std::path::Path;

use super::{IrError, MAX_IR_CHANNELS, validate_sample_rate};

/// Decoded audio: sample rate and one `Vec` per channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Samples per channel, all of the same length.
    pub channels: Vec<Vec<f32>>,
}

impl Audio {
    /// Frames per channel.
    pub fn num_frames(&self) -> usize {
        self.channels.first().map_or(0, Vec::len)
    }
}

/// Reads a WAV file (8/16/24/32-bit integer or 32-bit float PCM) with at most `max_channels`
/// channels and at most `max_seconds` seconds. Samples are converted to `f32` in `[-1, 1)`.
pub fn read(path: &Path, max_channels: usize, max_seconds: Option<f64>) -> Result<Audio, IrError> {
    let display = path.display().to_string();
    if path.is_dir() {
        return Err(IrError::Unreadable {
            path: display,
            reason: "it is a directory".into(),
        });
    }
    let file = std::fs::File::open(path).map_err(|err| IrError::Unreadable {
        path: display.clone(),
        reason: err.to_string(),
    })?;
    let mut reader =
        hound::WavReader::new(std::io::BufReader::new(file)).map_err(|err| IrError::NotWav {
            path: display.clone(),
            reason: err.to_string(),
        })?;
    let spec = reader.spec();
    let num_channels = usize::from(spec.channels);
    if num_channels == 0 || num_channels > max_channels {
        return Err(IrError::UnsupportedChannels(num_channels));
    }
    validate_sample_rate(spec.sample_rate)?;
    let num_frames = reader.duration() as usize;
    if let Some(max_seconds) = max_seconds {
        let seconds = num_frames as f64 / f64::from(spec.sample_rate);
        if seconds > max_seconds {
            return Err(IrError::TooLong {
                seconds,
                max: max_seconds,
            });
        }
    }
    // Files shorter than their header claims are caught by the sample iterator below.
    let interleaved: Vec<f32> = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => reader.samples::<f32>().collect::<Result<_, _>>(),
        (hound::SampleFormat::Int, bits @ 1..=32) => {
            let scale = 1.0 / (1u64 << (bits - 1)) as f32;
            reader
                .samples::<i32>()
                .map(|s| s.map(|s| s as f32 * scale))
                .collect::<Result<_, _>>()
        }
        (format, bits) => {
            return Err(IrError::NotWav {
                path: display,
                reason: format!("{bits}-bit {format:?} samples are not supported"),
            });
        }
    }
    .map_err(|err| IrError::NotWav {
        path: display.clone(),
        reason: err.to_string(),
    })?;

    let num_frames = interleaved.len() / num_channels;
    let channels = (0..num_channels)
        .map(|channel_idx| {
            interleaved
                .iter()
                .skip(channel_idx)
                .step_by(num_channels)
                .take(num_frames)
                .copied()
                .collect()
        })
        .collect();
    Ok(Audio {
        sample_rate: spec.sample_rate,
        channels,
    })
}

/// Reads an IR file: WAV, 1, 2 or 4 channels, at most [`super::MAX_IR_SECONDS`], finite samples.
pub fn read_ir(path: &Path) -> Result<super::Ir, IrError> {
    let audio = read(path, MAX_IR_CHANNELS, Some(super::MAX_IR_SECONDS))?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    super::Ir::new(name, audio.sample_rate, audio.channels)
}

/// Writes `channels` as a 32-bit float WAV file.
pub fn write_f32(path: &Path, sample_rate: u32, channels: &[Vec<f32>]) -> Result<(), hound::Error> {
    let spec = hound::WavSpec {
        channels: channels.len() as u16,
        sample_rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writer = hound::WavWriter::create(path, spec)?;
    let num_frames = channels.first().map_or(0, Vec::len);
    for frame_idx in 0..num_frames {
        for channel in channels {
            writer.write_sample(channel[frame_idx])?;
        }
    }
    writer.finalize()
}
