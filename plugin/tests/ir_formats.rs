//! IR files: every format and bit depth decodes to the samples that were written, and every bad
//! input is refused with one clear message (never a panic, never a huge read).

use std::path::{Path, PathBuf};

use longtail::ir::decode::{self, MAX_FILE_BYTES};
use longtail::ir::{self, IR_LIMITS, IrError, IrLayout};
use longtail::rng::Rng;

#[path = "support/alloc_guard.rs"]
mod alloc_guard;

// Decoding and restoring run under the allocation guard (see `ir_mutation.rs`).
#[cfg(not(feature = "assert_process_allocs"))]
#[global_allocator]
static GUARD: alloc_guard::AllocGuard = alloc_guard::AllocGuard;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-irfmt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn noise(len: usize, seed: u64, amplitude: f32) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| amplitude * rng.bipolar()).collect()
}

/// Writes integer samples of `bits` (8, 16, 24 or 32) with hound; returns what a decoder must
/// give back (the quantised values scaled to [-1, 1)).
fn write_int_wav(path: &Path, rate: u32, bits: u16, channels: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let spec = hound::WavSpec {
        channels: channels.len() as u16,
        sample_rate: rate,
        bits_per_sample: bits,
        sample_format: hound::SampleFormat::Int,
    };
    let full_scale = (1i64 << (bits - 1)) as f64;
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    let mut expected = vec![Vec::new(); channels.len()];
    for frame in 0..channels[0].len() {
        for (channel_idx, channel) in channels.iter().enumerate() {
            let value = (f64::from(channel[frame]) * full_scale)
                .round()
                .clamp(-full_scale, full_scale - 1.0) as i32;
            match bits {
                8 => writer.write_sample(value as i8).unwrap(),
                16 => writer.write_sample(value as i16).unwrap(),
                _ => writer.write_sample(value).unwrap(),
            }
            expected[channel_idx].push((f64::from(value) / full_scale) as f32);
        }
    }
    writer.finalize().unwrap();
    expected
}

/// A WAV file with a hand-made header: `format_tag` 1 (PCM) or 3 (float), `data` as given,
/// and `data_len` as the data chunk's stated size.
fn raw_wav(
    format_tag: u16,
    num_channels: u16,
    rate: u32,
    bits: u16,
    data: &[u8],
    data_len: u32,
) -> Vec<u8> {
    let block_align = num_channels * bits / 8;
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"RIFF");
    bytes.extend_from_slice(&(36 + data_len).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&format_tag.to_le_bytes());
    bytes.extend_from_slice(&num_channels.to_le_bytes());
    bytes.extend_from_slice(&rate.to_le_bytes());
    bytes.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
    bytes.extend_from_slice(&block_align.to_le_bytes());
    bytes.extend_from_slice(&bits.to_le_bytes());
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&data_len.to_le_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn read(path: &Path) -> Result<Vec<Vec<f32>>, IrError> {
    decode::read(path, IR_LIMITS).map(|(audio, _)| audio.channels)
}

fn assert_close(actual: &[Vec<f32>], expected: &[Vec<f32>], tolerance: f32, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: channel count");
    for (a, e) in actual.iter().zip(expected) {
        assert_eq!(a.len(), e.len(), "{what}: length");
        let worst = a
            .iter()
            .zip(e)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0f32, f32::max);
        assert!(worst <= tolerance, "{what}: off by {worst}");
    }
}

#[test]
fn wav_integer_and_float_depths_round_trip() {
    let dir = temp_dir("wav");
    let signal = [noise(500, 1, 0.9), noise(500, 2, 0.9)];
    for bits in [8u16, 16, 24, 32] {
        let path = dir.join(format!("int{bits}.wav"));
        let expected = write_int_wav(&path, 44_100, bits, &signal);
        let (audio, info) = decode::read(&path, IR_LIMITS).unwrap();
        assert_eq!(audio.sample_rate, 44_100);
        assert_eq!(info.num_channels, 2);
        assert_eq!(info.num_frames, Some(500));
        assert!(
            info.format.contains(&format!("{bits}-bit")),
            "{}",
            info.format
        );
        // Exact up to the f32 rounding of 32-bit integers.
        assert_close(&audio.channels, &expected, 1e-7, &format!("{bits}-bit"));
    }

    let path = dir.join("f32.wav");
    longtail::ir::wav::write_f32(&path, 96_000, &signal).unwrap();
    let (audio, info) = decode::read(&path, IR_LIMITS).unwrap();
    assert_eq!(audio.sample_rate, 96_000);
    assert_eq!(audio.channels, signal.to_vec(), "32-bit float is exact");
    assert!(info.format.contains("32-bit float"), "{}", info.format);

    // 64-bit float, which hound cannot write: a hand-made header.
    let values: Vec<f64> = noise(300, 3, 0.7)
        .iter()
        .map(|&s| f64::from(s) / 3.0)
        .collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let path = dir.join("f64.wav");
    std::fs::write(&path, raw_wav(3, 1, 48_000, 64, &data, data.len() as u32)).unwrap();
    let (audio, info) = decode::read(&path, IR_LIMITS).unwrap();
    let expected: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    assert_eq!(audio.channels, vec![expected]);
    assert!(info.format.contains("64-bit float"), "{}", info.format);
}

#[test]
fn wave_format_extensible_four_channels_read_as_true_stereo() {
    let dir = temp_dir("ext");
    let signal: Vec<Vec<f32>> = (0..4).map(|c| noise(200, 10 + c, 0.5)).collect();
    let path = dir.join("ts24.wav");
    let expected = write_int_wav(&path, 48_000, 24, &signal);
    let bytes = std::fs::read(&path).unwrap();
    // hound writes WAVE_FORMAT_EXTENSIBLE (0xFFFE) for more than two channels or 24 bits.
    assert_eq!(u16::from_le_bytes([bytes[20], bytes[21]]), 0xFFFE);
    let (ir, infos) = ir::load(&[&path]).unwrap();
    assert_eq!(ir.layout, IrLayout::TrueStereo);
    assert_eq!(infos[0].num_channels, 4);
    assert_close(&ir.channels, &expected, 1e-7, "extensible");
}

#[test]
fn flac_aiff_aifc_and_ogg_fixtures_decode() {
    let reference = read(&fixture("ir-16.wav")).unwrap();
    assert_eq!(reference.len(), 2);
    assert_eq!(reference[0].len(), 1323);
    for name in ["ir-16.flac", "ir-24.aiff", "ir-f32.aifc"] {
        let (audio, info) = decode::read(&fixture(name), IR_LIMITS).unwrap();
        assert_eq!(audio.sample_rate, 44_100, "{name}");
        assert_eq!(
            audio.channels, reference,
            "{name} is lossless: {}",
            info.format
        );
    }
    // Vorbis is lossy: same length, and close to the source.
    let (audio, info) = decode::read(&fixture("ir.ogg"), IR_LIMITS).unwrap();
    assert!(info.format.contains("Vorbis"), "{}", info.format);
    assert_eq!(audio.channels.len(), 2);
    assert_eq!(audio.channels[0].len(), 1323);
    for (decoded, source) in audio.channels.iter().zip(&reference) {
        let signal: f64 = source.iter().map(|&s| f64::from(s).powi(2)).sum();
        let error: f64 = decoded
            .iter()
            .zip(source)
            .map(|(&d, &s)| f64::from(d - s).powi(2))
            .sum();
        let snr = 10.0 * (signal / error).log10();
        assert!(snr > 20.0, "Ogg Vorbis SNR {snr:.1} dB");
    }
}

/// Every bad input gets its own clear message, without a panic and without reading a big file.
#[test]
fn bad_files_are_refused_with_a_clear_message() {
    let dir = temp_dir("bad");
    let good = dir.join("good.wav");
    write_int_wav(&good, 44_100, 16, &[noise(1000, 4, 0.5)]);
    let good_bytes = std::fs::read(&good).unwrap();

    let truncated = dir.join("truncated.wav");
    std::fs::write(&truncated, &good_bytes[..good_bytes.len() - 700]).unwrap();
    let header_only = dir.join("header-only.wav");
    std::fs::write(&header_only, &good_bytes[..30]).unwrap();
    let garbage = dir.join("garbage.flac");
    let mut rng = Rng::new(5);
    let bytes: Vec<u8> = (0..4000)
        .map(|_| (rng.bipolar() * 127.0) as i8 as u8)
        .collect();
    std::fs::write(&garbage, bytes).unwrap();
    let corrupt_flac = dir.join("corrupt.flac");
    let mut flac = std::fs::read(fixture("ir-16.flac")).unwrap();
    let len = flac.len();
    flac[len / 2..len / 2 + 200].fill(0xA5);
    std::fs::write(&corrupt_flac, flac).unwrap();
    let absurd = dir.join("absurd.wav");
    std::fs::write(&absurd, raw_wav(1, 1, 44_100, 16, &[0; 64], 0x7FFF_FFF0)).unwrap();
    let zero_frames = dir.join("zero.wav");
    std::fs::write(&zero_frames, raw_wav(3, 1, 44_100, 32, &[], 0)).unwrap();
    let nan = dir.join("nan.wav");
    longtail::ir::wav::write_f32(&nan, 44_100, &[vec![0.5, f32::NAN, 0.1]]).unwrap();
    let inf = dir.join("inf.wav");
    longtail::ir::wav::write_f32(&inf, 44_100, &[vec![0.5, 0.2, f32::NEG_INFINITY]]).unwrap();
    let rate_zero = dir.join("rate0.wav");
    std::fs::write(&rate_zero, raw_wav(1, 1, 0, 16, &[0; 64], 64)).unwrap();
    let rate_10mhz = dir.join("rate10m.wav");
    write_int_wav(&rate_10mhz, 10_000_000, 16, &[noise(100, 6, 0.5)]);
    // Past one path per channel of a 64 x 64 matrix (read with hound: past symphonia's 18).
    let too_wide = dir.join("too-wide.wav");
    write_int_wav(&too_wide, 44_100, 16, &vec![noise(2, 7, 0.5); 4097]);
    let three = dir.join("three.wav");
    write_int_wav(&three, 44_100, 16, &vec![noise(10, 8, 0.5); 3]);
    let aiff_rate_zero = dir.join("rate0.aiff");
    let mut aiff = std::fs::read(fixture("ir-24.aiff")).unwrap();
    let comm = aiff.windows(4).position(|w| w == b"COMM").unwrap();
    aiff[comm + 16..comm + 26].fill(0);
    std::fs::write(&aiff_rate_zero, aiff).unwrap();
    let missing = dir.join("missing.wav");
    let below_a_file = good.join("ir.wav");
    // A 2 GB sparse file: refused by its size, so none of it is read.
    let huge = dir.join("huge.wav");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(2 << 30).unwrap();
    let empty_file = dir.join("empty.wav");
    std::fs::write(&empty_file, []).unwrap();

    let cases: Vec<(&Path, &str)> = vec![
        (
            &truncated,
            "truncated or damaged: its header states 1000 frames but only 650",
        ),
        (&header_only, "cannot decode"),
        (&garbage, "not a recognised audio file"),
        (&corrupt_flac, "truncated or damaged"),
        (&absurd, "maximum is 60 s"),
        (&zero_frames, "the IR is empty"),
        (&nan, "non-finite sample (NaN or infinity) at frame 1"),
        (&inf, "non-finite sample (NaN or infinity) at frame 2"),
        (&rate_zero, "invalid sample rate 0 Hz"),
        // symphonia 0.6 refuses a zero rate itself (0.5 panicked, so the decoder checked first).
        (&aiff_rate_zero, "sample rate cannot be 0"),
        (&rate_10mhz, "invalid sample rate 10000000 Hz"),
        (
            &too_wide,
            "4097 channels; supported are 1 (mono), 2 (stereo), 4 (true stereo",
        ),
        (&dir, "it is a directory"),
        (&missing, "cannot read"),
        (&below_a_file, "cannot read"),
        (&huge, "2147483648 bytes; the largest file accepted"),
        (&empty_file, "the file is empty"),
    ];
    for (path, expected) in cases {
        let message = match ir::load(&[path]) {
            Ok((ir, _)) => panic!("{} loaded ({} frames)", path.display(), ir.len()),
            Err(err) => err.to_string(),
        };
        assert!(
            message.contains(expected),
            "{}: expected '{expected}' in '{message}'",
            path.display()
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
    const { assert!(MAX_FILE_BYTES < 2 << 30) };
    // Three channels are a multichannel IR whose meaning comes from the bus.
    let (ir, _) = ir::load(&[&three]).expect("three channels load");
    assert_eq!(ir.layout, ir::IrLayout::Channels(3));
}

/// Headers can lie, or say nothing: a FLAC file whose STREAMINFO states no total length
/// (allowed: 0 means unknown) is stopped while decoding once it passes the limit.
#[test]
fn decoding_stops_at_the_length_limit_when_the_header_states_none() {
    let dir = temp_dir("limit");
    let mut flac = std::fs::read(fixture("ir-16.flac")).unwrap();
    assert_eq!(&flac[..4], b"fLaC");
    // STREAMINFO: bytes 18..26 hold rate (20 bits), channels (3), depth (5), total frames (36).
    let mut packed = u64::from_be_bytes(flac[18..26].try_into().unwrap());
    assert_eq!(packed & ((1 << 36) - 1), 1323);
    packed &= !((1u64 << 36) - 1);
    flac[18..26].copy_from_slice(&packed.to_be_bytes());
    let path = dir.join("unknown-length.flac");
    std::fs::write(&path, flac).unwrap();

    let (audio, info) = decode::read(&path, IR_LIMITS).unwrap();
    assert_eq!(info.num_frames, None);
    assert_eq!(
        audio.channels[0].len(),
        1323,
        "decoded whole without a limit"
    );
    let limits = decode::Limits {
        max_channels: 2,
        max_seconds: Some(0.01),
    };
    let message = decode::read(&path, limits).unwrap_err().to_string();
    assert!(message.contains("the maximum is 0 s"), "{message}");
}

/// An 8-bit mono AIFF, written by hand: every frame its header states decodes, no more and no
/// fewer. symphonia 0.5 counted the SSND chunk's offset and block-size fields as 8 more frames,
/// which the decoder used to forgive as slack; 0.6 reads the chunk right, so a file cut even one
/// frame short is refused as truncated.
#[test]
fn an_8_bit_mono_aiff_decodes_exactly_the_frames_it_states() {
    let dir = temp_dir("aiff8");
    let samples: Vec<i8> = (0..500).map(|i| ((i * 37) % 200 - 100) as i8).collect();
    let aiff = |num_frames: u32, data: &[i8]| {
        let mut comm = Vec::new();
        comm.extend(1u16.to_be_bytes());
        comm.extend(num_frames.to_be_bytes());
        comm.extend(8u16.to_be_bytes());
        // 44100 Hz as an 80-bit extended float.
        comm.extend([0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0]);
        let mut ssnd = vec![0u8; 8];
        ssnd.extend(data.iter().map(|&s| s as u8));
        let mut body = b"AIFF".to_vec();
        for (id, chunk) in [(b"COMM", comm), (b"SSND", ssnd)] {
            body.extend(id);
            body.extend((chunk.len() as u32).to_be_bytes());
            body.extend(&chunk);
            if chunk.len() % 2 == 1 {
                body.push(0);
            }
        }
        let mut file = b"FORM".to_vec();
        file.extend((body.len() as u32).to_be_bytes());
        file.extend(body);
        file
    };
    let whole = dir.join("whole.aiff");
    std::fs::write(&whole, aiff(500, &samples)).unwrap();
    let audio = read(&whole).unwrap();
    assert_eq!(audio[0].len(), 500);
    for (decoded, &written) in audio[0].iter().zip(&samples) {
        assert_eq!(*decoded, f32::from(written) / 128.0);
    }
    // Cut one byte short: the chunk sizes still say 500 frames.
    let short = dir.join("short.aiff");
    let bytes = aiff(500, &samples);
    std::fs::write(&short, &bytes[..bytes.len() - 1]).unwrap();
    let message = read(&short).unwrap_err().to_string();
    assert!(message.contains("truncated"), "{message}");
}
