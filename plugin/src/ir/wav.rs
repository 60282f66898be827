//! Writing 32-bit float WAV files (renders, the demo, the built-in IRs). Off the audio thread.
//! Reading goes through [`super::decode`].
//!
//! hound writes a `WAVE_FORMAT_EXTENSIBLE` header past two channels with the first `n`
//! speaker bits as its channel mask, which is wrong for most layouts (7.1.4's twelve channels
//! are not WAV's first twelve speakers). [`write_f32_masked`] writes through hound and then
//! puts the right mask into the header it wrote.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

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

/// [`write_f32`] with `mask` as the channel mask (0: no speaker positions, as for Ambisonics
/// or discrete channels). Files of one or two channels have no mask to set.
pub fn write_f32_masked(
    path: &Path,
    sample_rate: u32,
    channels: &[Vec<f32>],
    mask: u32,
) -> Result<(), hound::Error> {
    write_f32(path, sample_rate, channels)?;
    if channels.len() <= 2 {
        return Ok(());
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let mut head = [0u8; 64];
    file.read_exact(&mut head)?;
    // hound's extensible header: RIFF, WAVE, then `fmt ` (40 bytes: tag 0xFFFE at 20, the
    // extension's size 22 at 36, the mask at 40).
    let extensible = &head[12..16] == b"fmt "
        && head[20..22] == 0xFFFEu16.to_le_bytes()
        && head[36..38] == 22u16.to_le_bytes();
    if !extensible {
        return Err(hound::Error::Unsupported);
    }
    file.seek(SeekFrom::Start(40))?;
    file.write_all(&mask.to_le_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_is_the_one_asked_for() {
        let path = std::env::temp_dir().join(format!("longtail-mask-{}.wav", std::process::id()));
        let channels = vec![vec![0.25f32, -0.5]; 12];
        write_f32_masked(&path, 48_000, &channels, 0x2D63F).expect("writes");
        let bytes = std::fs::read(&path).expect("reads");
        let header = super::super::wide_wav::header(&bytes).expect("a WAV");
        assert_eq!(header.channels, 12);
        assert_eq!(header.mask, Some(0x2D63F));
        let (audio, info) = super::super::decode::read(
            &path,
            super::super::decode::Limits {
                max_channels: 64,
                max_seconds: None,
            },
        )
        .expect("decodes");
        assert_eq!(audio.channels, channels);
        assert_eq!(info.channel_mask, Some(0x2D63F));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn wavs_wider_than_symphonia_reads_decode_within_the_same_bounds() {
        use super::super::IrError;
        use super::super::decode::{Limits, read_bytes};
        let path = std::env::temp_dir().join(format!("longtail-wide-{}.wav", std::process::id()));
        let channels: Vec<Vec<f32>> = (0..36).map(|c| vec![c as f32 / 64.0; 100]).collect();
        write_f32_masked(&path, 48_000, &channels, 0).expect("writes");
        let bytes = std::fs::read(&path).expect("reads");
        std::fs::remove_file(&path).ok();
        let limits = |max_channels, max_seconds| Limits {
            max_channels,
            max_seconds,
        };
        let (audio, info) = read_bytes(&bytes, "wide.wav", limits(64, None)).expect("decodes");
        assert_eq!(audio.channels, channels);
        assert_eq!((info.num_channels, info.channel_mask), (36, None));
        assert_eq!(info.format, "WAV, 32-bit float");
        assert!(matches!(
            read_bytes(&bytes, "wide.wav", limits(32, None)),
            Err(IrError::UnsupportedChannels(36))
        ));
        assert!(matches!(
            read_bytes(&bytes, "wide.wav", limits(64, Some(0.001))),
            Err(IrError::TooLong { .. })
        ));
        let cut = &bytes[..bytes.len() - 36 * 4 * 10];
        assert!(matches!(
            read_bytes(cut, "wide.wav", limits(64, None)),
            Err(IrError::Truncated { expected: 100, .. } | IrError::Undecodable { .. })
        ));
    }
}
