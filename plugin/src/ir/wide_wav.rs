//! WAV files past what symphonia reads, and the channel mask of any WAV.
//!
//! symphonia 0.6.1 refuses a WAV with more than 26 channels, or more than 18 with a channel
//! mask (a mask has 18 speaker bits), so a 16 x 16 matrix in one file (256 channels) or a
//! 9.1.6 bed cannot be read through it. [`header`] reads a WAV's `fmt ` chunk from the first
//! bytes of the file; a WAV of more than [`SYMPHONIA_MAX_CHANNELS`] channels is decoded here
//! with hound (already a dependency: it writes the renders), under the same bounds as every
//! other file: the channel count against the caller's maximum, the sample rate, the stated
//! length against the maximum before any sample is read, the samples reserved only as far as
//! the file's bytes can hold them, decoding stopped as soon as it passes the maximum, and a
//! file shorter than its header states refused as truncated.
//!
//! [`header`] also gives the `WAVE_FORMAT_EXTENSIBLE` channel mask as the file states it:
//! symphonia replaces a zero mask by the first `n` speaker bits, which hides whether the file
//! named its speakers at all. The mask is checked against the bus in [`super::mapping`].

use std::io::Read;

use super::{IrError, validate_sample_rate};

/// Most channels of a WAV decoded through symphonia; wider ones are decoded here.
pub const SYMPHONIA_MAX_CHANNELS: usize = 18;
/// Bytes read from a file's start to find its `fmt ` chunk.
pub const HEAD_BYTES: usize = 64 << 10;

/// What a WAV's `fmt ` chunk says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WavHeader {
    /// Channels.
    pub channels: usize,
    /// The `WAVE_FORMAT_EXTENSIBLE` channel mask, where the file has one and it is not zero.
    pub mask: Option<u32>,
}

/// The `fmt ` chunk of a RIFF/WAVE file whose first bytes are `head`, if it is one and the
/// chunk lies within `head`. Reads only `head`; never allocates.
pub fn header(head: &[u8]) -> Option<WavHeader> {
    if head.len() < 12 || &head[0..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return None;
    }
    let mut at = 12usize;
    while at.checked_add(8)? <= head.len() {
        let id = &head[at..at + 4];
        let size = u32::from_le_bytes(head[at + 4..at + 8].try_into().ok()?) as usize;
        let body = head.get(at + 8..at.checked_add(8)?.checked_add(size)?);
        if id == b"fmt " {
            let body = body?;
            if body.len() < 16 {
                return None;
            }
            let tag = u16::from_le_bytes([body[0], body[1]]);
            let channels = usize::from(u16::from_le_bytes([body[2], body[3]]));
            let mask = (tag == 0xFFFE && body.len() >= 24)
                .then(|| u32::from_le_bytes([body[20], body[21], body[22], body[23]]))
                .filter(|&mask| mask != 0);
            return Some(WavHeader { channels, mask });
        }
        // Chunks are padded to an even size.
        at = at
            .checked_add(8)?
            .checked_add(size)?
            .checked_add(size & 1)?;
    }
    None
}

/// A WAV decoded by [`decode`].
#[derive(Debug)]
pub struct WideAudio {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Samples per channel.
    pub channels: Vec<Vec<f32>>,
    /// Frames the header states.
    pub stated_frames: u64,
    /// "WAV, 24-bit integer", as symphonia's files are described.
    pub format: String,
}

/// Decodes a WAV of any channel count with hound, within the bounds of the module docs:
/// `max_channels`, `max_seconds` (none for dry signals), `file_bytes` the file's size. With
/// `header_only`, stops after the header's checks: no channel holds a sample.
pub fn decode(
    source: impl Read,
    display: &str,
    file_bytes: u64,
    max_channels: usize,
    max_seconds: Option<f64>,
    header_only: bool,
) -> Result<WideAudio, IrError> {
    let undecodable = |reason: String| IrError::Undecodable {
        path: display.to_string(),
        reason,
    };
    let mut reader = hound::WavReader::new(source).map_err(|err| undecodable(err.to_string()))?;
    let spec = reader.spec();
    let num_channels = usize::from(spec.channels);
    if num_channels == 0 {
        return Err(undecodable("the header states no channels".into()));
    }
    if num_channels > max_channels {
        return Err(IrError::UnsupportedChannels(num_channels));
    }
    validate_sample_rate(spec.sample_rate)?;
    let rate = f64::from(spec.sample_rate);
    let max_frames = max_seconds.map(|seconds| (seconds * rate).floor() as u64);
    let too_long = |frames: u64| IrError::TooLong {
        seconds: frames as f64 / rate,
        max: max_seconds.unwrap_or(f64::INFINITY),
    };
    let stated_frames = u64::from(reader.duration());
    if let Some(max_frames) = max_frames
        && stated_frames > max_frames
    {
        return Err(too_long(stated_frames));
    }
    let bytes_per_frame = (num_channels * usize::from(spec.bits_per_sample).div_ceil(8)).max(1);
    let capacity = stated_frames
        .min(file_bytes / bytes_per_frame as u64)
        .min(max_frames.unwrap_or(u64::MAX)) as usize;
    let format = match spec.sample_format {
        hound::SampleFormat::Float => format!("WAV, {}-bit float", spec.bits_per_sample),
        hound::SampleFormat::Int => format!("WAV, {}-bit integer", spec.bits_per_sample),
    };
    if header_only {
        return Ok(WideAudio {
            sample_rate: spec.sample_rate,
            channels: vec![Vec::new(); num_channels],
            stated_frames,
            format,
        });
    }
    let mut channels: Vec<Vec<f32>> = (0..num_channels)
        .map(|_| Vec::with_capacity(capacity))
        .collect();
    let mut push = |idx: usize, sample: f32| -> Result<(), IrError> {
        let channel = &mut channels[idx % num_channels];
        channel.push(sample);
        match max_frames {
            Some(max_frames) if channel.len() as u64 > max_frames => {
                Err(too_long(channel.len() as u64))
            }
            _ => Ok(()),
        }
    };
    let truncated = |err: hound::Error| undecodable(format!("a sample cannot be read: {err}"));
    match spec.sample_format {
        hound::SampleFormat::Float => {
            for (idx, sample) in reader.samples::<f32>().enumerate() {
                push(idx, sample.map_err(truncated)?)?;
            }
        }
        hound::SampleFormat::Int => {
            let scale = 1.0 / f64::from(1u32 << (spec.bits_per_sample.clamp(1, 32) - 1));
            for (idx, sample) in reader.samples::<i32>().enumerate() {
                push(idx, (f64::from(sample.map_err(truncated)?) * scale) as f32)?;
            }
        }
    }
    let found = channels.iter().map(Vec::len).min().unwrap_or(0) as u64;
    if found < stated_frames {
        return Err(IrError::Truncated {
            path: display.to_string(),
            expected: stated_frames,
            found,
        });
    }
    Ok(WideAudio {
        sample_rate: spec.sample_rate,
        channels,
        stated_frames,
        format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(channels: u16, mask: Option<u32>) -> Vec<u8> {
        let mut fmt = Vec::new();
        let tag: u16 = if mask.is_some() { 0xFFFE } else { 1 };
        fmt.extend_from_slice(&tag.to_le_bytes());
        fmt.extend_from_slice(&channels.to_le_bytes());
        fmt.extend_from_slice(&48_000u32.to_le_bytes());
        fmt.extend_from_slice(&(48_000u32 * 2 * u32::from(channels)).to_le_bytes());
        fmt.extend_from_slice(&(2 * channels).to_le_bytes());
        fmt.extend_from_slice(&16u16.to_le_bytes());
        if let Some(mask) = mask {
            fmt.extend_from_slice(&22u16.to_le_bytes());
            fmt.extend_from_slice(&16u16.to_le_bytes());
            fmt.extend_from_slice(&mask.to_le_bytes());
            fmt.extend_from_slice(&[
                1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71,
            ]);
        }
        let mut bytes = b"RIFF\0\0\0\0WAVE".to_vec();
        // A chunk before `fmt `, of odd size (padded).
        bytes.extend_from_slice(b"JUNK\x03\0\0\0abc\0");
        bytes.extend_from_slice(b"fmt ");
        bytes.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&fmt);
        bytes
    }

    #[test]
    fn the_header_gives_the_channels_and_the_mask_as_stated() {
        assert_eq!(
            header(&wav(12, Some(0x2D63F))),
            Some(WavHeader {
                channels: 12,
                mask: Some(0x2D63F)
            })
        );
        assert_eq!(header(&wav(2, None)).unwrap().mask, None);
        assert_eq!(header(&wav(9, Some(0))).unwrap().mask, None);
        // Cut inside the chunk, not a WAV, a chunk size that runs past the end.
        let whole = wav(4, Some(0x33));
        assert_eq!(header(&whole[..whole.len() - 1]), None);
        assert_eq!(header(b"fLaC\0\0\0\0\0\0\0\0"), None);
        let mut lying = whole.clone();
        lying[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(header(&lying), None);
    }
}
