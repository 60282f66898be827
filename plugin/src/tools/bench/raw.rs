//! The harness contract's files: raw little-endian f32, channels interleaved.

/// Reads raw little-endian f32 interleaved samples into `num_channels` channels, keeping at most
/// `max_frames` frames. Streams the file (64 KiB at a time) into channels sized by its length,
/// so the process never holds the file's bytes and its samples at once: for the harness's 60 s
/// stereo input that is 23 MB of peak memory.
pub fn read_raw_f32(
    path: &std::path::Path,
    num_channels: usize,
    max_frames: Option<usize>,
) -> std::io::Result<Vec<Vec<f32>>> {
    let mut file = std::fs::File::open(path)?;
    let num_channels = num_channels.max(1);
    let frame_bytes = 4 * num_channels;
    let file_frames = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX) / frame_bytes;
    let num_frames = max_frames.map_or(file_frames, |max| file_frames.min(max));
    let mut channels: Vec<Vec<f32>> = (0..num_channels)
        .map(|_| Vec::with_capacity(num_frames))
        .collect();
    let frames_per_chunk = (64 * 1024 / frame_bytes).max(1);
    let mut chunk = vec![0u8; frames_per_chunk * frame_bytes];
    let mut frames_read = 0;
    while frames_read < num_frames {
        let frames = frames_per_chunk.min(num_frames - frames_read);
        let bytes = &mut chunk[..frames * frame_bytes];
        // The file may have shrunk since its length was read: keep the whole frames there are.
        let got = read_full(&mut file, bytes)?;
        for frame in bytes[..got - got % frame_bytes].chunks_exact(frame_bytes) {
            for (channel, sample) in channels.iter_mut().zip(frame.chunks_exact(4)) {
                channel.push(f32::from_le_bytes([
                    sample[0], sample[1], sample[2], sample[3],
                ]));
            }
        }
        frames_read += got / frame_bytes;
        if got < bytes.len() {
            break;
        }
    }
    Ok(channels)
}

/// Fills `buf` from `reader` as far as it goes; returns the bytes read (fewer at its end).
fn read_full(reader: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Writes channels as raw little-endian f32 interleaved samples, through a buffer (never the
/// whole file's bytes at once).
pub fn write_raw_f32(path: &std::path::Path, channels: &[Vec<f32>]) -> std::io::Result<()> {
    use std::io::Write;
    let num_frames = channels.first().map_or(0, Vec::len);
    let mut file = std::io::BufWriter::with_capacity(64 * 1024, std::fs::File::create(path)?);
    for frame in 0..num_frames {
        for channel in channels {
            file.write_all(&channel[frame].to_le_bytes())?;
        }
    }
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_files_round_trip_and_keep_whole_frames() {
        let dir = std::env::temp_dir().join(format!("longtail-raw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("three.f32");
        // More than one 64 KiB chunk of 3 channels, and not a whole number of chunks.
        let channels: Vec<Vec<f32>> = (0..3)
            .map(|c| (0..9001).map(|i| (i * 3 + c) as f32 * 0.5).collect())
            .collect();
        write_raw_f32(&path, &channels).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 9001 * 3 * 4);
        assert_eq!(read_raw_f32(&path, 3, None).unwrap(), channels);
        let head = read_raw_f32(&path, 3, Some(100)).unwrap();
        assert!(head.iter().zip(&channels).all(|(h, c)| h[..] == c[..100]));
        // Two bytes more: a partial frame at the end is left out.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[1, 2]);
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(read_raw_f32(&path, 3, None).unwrap(), channels);
        // Read as stereo, the same samples deinterleave the other way.
        let stereo = read_raw_f32(&path, 2, None).unwrap();
        assert_eq!(stereo[0].len(), 9001 * 3 / 2);
        assert_eq!(stereo[1][0], channels[1][0]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
