//! Writing 32-bit float WAV files (renders, the demo, the built-in IRs). Off the audio thread.
//! Reading goes through [`super::decode`].

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
