//! Decoding audio files through symphonia: WAV (8/16/24/32-bit integer, 32/64-bit float, plain
//! or `WAVE_FORMAT_EXTENSIBLE`), FLAC, AIFF/AIFC and Ogg Vorbis. Off the audio thread (the GUI or
//! main thread, the preparation thread, the CLI); allocates.
//!
//! Limits, checked in this order so that nothing large is read for a file that will be refused:
//!
//! 1. the path: a directory, a missing or unreadable file are refused with the OS's reason;
//! 2. the file size from its metadata: at most [`MAX_FILE_BYTES`] (a 60 s true-stereo IR at
//!    192 kHz in 64-bit float is 369 MB, so this refuses only files no IR needs);
//! 3. the header: the channel count (at most the caller's maximum), the sample rate
//!    ([`super::validate_sample_rate`]) and, when the header states it, the frame count against
//!    the caller's maximum length, before any packet is decoded;
//! 4. while decoding: headers can lie, so decoding stops as soon as the decoded length passes the
//!    maximum; a file that ends before the frame count its header states is refused as truncated
//!    or damaged (decoders skip damaged FLAC frames), and a corrupt packet is refused with the
//!    decoder's reason.
//!
//! Samples are converted to `f32` by symphonia (integers scaled to `[-1, 1)`); non-finite samples
//! are refused later by [`super::Ir::new`] (IRs) or by the caller (dry signals).

use std::fs::File;
use std::path::Path;

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::{MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use super::{IrError, validate_sample_rate};

/// Largest file accepted, in bytes (512 MiB).
pub const MAX_FILE_BYTES: u64 = 512 << 20;

/// How many frames fewer than its header states a file may decode to without being called
/// truncated. symphonia 0.5's AIFF reader counts the 8 bytes of the SSND chunk's offset and
/// block-size fields as audio, so it states up to 8 frames too many (8-bit mono); a file that
/// lost fewer frames than this at its end loses nothing audible of an IR.
const HEADER_SLACK_FRAMES: u64 = 8;

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

/// What the container says about a file, before decoding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// Container and codec, for users: "WAV, 24-bit PCM", "FLAC, 16-bit", ...
    pub format: String,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Channels.
    pub num_channels: usize,
    /// Frames per channel, when the header states it.
    pub num_frames: Option<u64>,
    /// File size in bytes.
    pub file_bytes: u64,
}

/// Limits of one read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most channels accepted; more is [`IrError::UnsupportedChannels`].
    pub max_channels: usize,
    /// Longest audio accepted, in seconds; `None`: no limit (dry signals of the CLI).
    pub max_seconds: Option<f64>,
}

/// Decodes `path` into `f32` channels within `limits`. See the module docs for the checks.
/// Allocates; call off the audio thread.
pub fn read(path: &Path, limits: Limits) -> Result<(Audio, FileInfo), IrError> {
    let display = path.display().to_string();
    let unreadable = |reason: String| IrError::Unreadable {
        path: display.clone(),
        reason,
    };
    let undecodable = |reason: String| IrError::Undecodable {
        path: display.clone(),
        reason,
    };
    let metadata = std::fs::metadata(path).map_err(|err| unreadable(err.to_string()))?;
    if metadata.is_dir() {
        return Err(unreadable("it is a directory".into()));
    }
    let file_bytes = metadata.len();
    if file_bytes > MAX_FILE_BYTES {
        return Err(IrError::FileTooLarge {
            path: display,
            bytes: file_bytes,
            max: MAX_FILE_BYTES,
        });
    }
    if file_bytes == 0 {
        return Err(undecodable("the file is empty".into()));
    }
    let mut file = File::open(path).map_err(|err| unreadable(err.to_string()))?;
    // symphonia 0.5 panics on a sample rate of 0 in WAV and AIFF headers (a zero time base):
    // refuse those first.
    if header_sample_rate(&mut file) == Some(0) {
        return Err(IrError::InvalidSampleRate(0));
    }
    // A decoder that panics on some other malformed input must not take the host with it.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode_file(file, path, &display, file_bytes, limits)
    }))
    .unwrap_or_else(|_| {
        Err(undecodable(
            "the decoder failed on malformed data in this file".into(),
        ))
    })
}

/// The symphonia part of [`read`]: probe, header checks, decode.
fn decode_file(
    file: File,
    path: &Path,
    display: &str,
    file_bytes: u64,
    limits: Limits,
) -> Result<(Audio, FileInfo), IrError> {
    let undecodable = |reason: String| IrError::Undecodable {
        path: display.to_string(),
        reason,
    };

    let stream = MediaSourceStream::new(Box::new(file), MediaSourceStreamOptions::default());
    let mut hint = Hint::new();
    if let Some(extension) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(extension);
    }
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            stream,
            // Gapless: Vorbis (and MP4-style) priming and padding frames are trimmed.
            &FormatOptions {
                enable_gapless: true,
                ..FormatOptions::default()
            },
            &MetadataOptions::default(),
        )
        .map_err(|err| undecodable(describe(&err)))?;
    let mut reader = probed.format;
    let track = reader
        .tracks()
        .iter()
        .find(|track| track.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or_else(|| undecodable("it has no audio track".into()))?;
    let track_id = track.id;
    let params = track.codec_params.clone();

    // Header checks, before any packet is decoded.
    let num_channels = params.channels.map_or(0, |c| c.count());
    if num_channels == 0 {
        return Err(undecodable("the header states no channels".into()));
    }
    if num_channels > limits.max_channels {
        return Err(IrError::UnsupportedChannels(num_channels));
    }
    let sample_rate = params.sample_rate.unwrap_or(0);
    validate_sample_rate(sample_rate)?;
    let max_frames = limits
        .max_seconds
        .map(|seconds| (seconds * f64::from(sample_rate)).floor() as u64);
    if let (Some(max_frames), Some(num_frames)) = (max_frames, params.n_frames)
        && num_frames > max_frames
    {
        return Err(too_long(num_frames, sample_rate, limits));
    }
    let info = FileInfo {
        format: format_name(path, &params),
        sample_rate,
        num_channels,
        num_frames: params.n_frames,
        file_bytes,
    };

    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions::default())
        .map_err(|err| undecodable(describe(&err)))?;
    let capacity = params
        .n_frames
        .unwrap_or(0)
        .min(max_frames.unwrap_or(u64::MAX)) as usize;
    let mut channels: Vec<Vec<f32>> = (0..num_channels)
        .map(|_| Vec::with_capacity(capacity))
        .collect();
    let mut sample_buffer: Option<SampleBuffer<f32>> = None;
    loop {
        let packet = match reader.next_packet() {
            Ok(packet) => packet,
            // The normal end of the stream.
            Err(SymphoniaError::IoError(err))
                if err.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                break;
            }
            Err(SymphoniaError::ResetRequired) => break,
            Err(err) => return Err(undecodable(describe(&err))),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = decoder
            .decode(&packet)
            .map_err(|err| undecodable(describe(&err)))?;
        if decoded.frames() == 0 {
            continue;
        }
        let spec = *decoded.spec();
        if spec.channels.count() != num_channels {
            return Err(undecodable(
                "the channel count changes inside the stream".into(),
            ));
        }
        let buffer = match &mut sample_buffer {
            Some(buffer) if buffer.capacity() >= decoded.capacity() * num_channels => buffer,
            slot => slot.insert(SampleBuffer::new(decoded.capacity() as u64, spec)),
        };
        buffer.copy_interleaved_ref(decoded);
        for frame in buffer.samples().chunks_exact(num_channels) {
            for (channel, &sample) in channels.iter_mut().zip(frame) {
                channel.push(sample);
            }
        }
        // Headers can lie: stop as soon as the decoded audio passes the limit.
        let decoded_frames = channels[0].len() as u64;
        if let Some(max_frames) = max_frames
            && decoded_frames > max_frames
        {
            return Err(too_long(decoded_frames, sample_rate, limits));
        }
    }
    // Decoders may pad the last packet (Vorbis, FLAC blocks): the header's count is exact.
    let decoded_frames = channels[0].len() as u64;
    if let Some(num_frames) = params.n_frames {
        if decoded_frames + HEADER_SLACK_FRAMES < num_frames {
            return Err(IrError::Truncated {
                path: display.to_string(),
                expected: num_frames,
                found: decoded_frames,
            });
        }
        let num_frames = num_frames as usize;
        channels.iter_mut().for_each(|c| c.truncate(num_frames));
    }
    Ok((
        Audio {
            sample_rate,
            channels,
        },
        info,
    ))
}

/// The sample rate stated by a WAV (`fmt ` chunk) or AIFF/AIFC (`COMM` chunk) header within
/// the first 64 KiB of `file`, if it is one; rewinds the file.
fn header_sample_rate(file: &mut File) -> Option<u32> {
    use std::io::{Read, Seek};
    let mut head = Vec::with_capacity(1 << 16);
    let read = file.by_ref().take(1 << 16).read_to_end(&mut head);
    file.rewind().ok()?;
    read.ok()?;
    let (big_endian, first_chunk) = match head.get(..12)? {
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'A', b'V', b'E'] => (false, 12),
        [
            b'F',
            b'O',
            b'R',
            b'M',
            _,
            _,
            _,
            _,
            b'A',
            b'I',
            b'F',
            b'F' | b'C',
        ] => (true, 12),
        _ => return None,
    };
    let mut offset = first_chunk;
    while offset + 8 <= head.len() {
        let id = &head[offset..offset + 4];
        let size_bytes: [u8; 4] = head[offset + 4..offset + 8].try_into().ok()?;
        let size = if big_endian {
            u32::from_be_bytes(size_bytes)
        } else {
            u32::from_le_bytes(size_bytes)
        } as usize;
        let body = head.get(offset + 8..)?;
        match id {
            // WAV: format tag (2), channels (2), sample rate (4, little-endian).
            b"fmt " if !big_endian => {
                return Some(u32::from_le_bytes(body.get(4..8)?.try_into().ok()?));
            }
            // AIFF: channels (2), frames (4), bits (2), rate (80-bit extended, big-endian).
            b"COMM" if big_endian => {
                let extended = body.get(8..18)?;
                let exponent = i32::from(u16::from_be_bytes([extended[0], extended[1]]) & 0x7FFF);
                let mantissa = u64::from_be_bytes(extended[2..10].try_into().ok()?);
                if mantissa == 0 {
                    return Some(0);
                }
                let rate = mantissa as f64 * 2f64.powi(exponent - 16383 - 63);
                return Some(rate.min(f64::from(u32::MAX)) as u32);
            }
            _ => offset = offset.checked_add(8 + size + (size & 1))?,
        }
    }
    None
}

fn too_long(num_frames: u64, sample_rate: u32, limits: Limits) -> IrError {
    IrError::TooLong {
        seconds: num_frames as f64 / f64::from(sample_rate),
        max: limits.max_seconds.unwrap_or(f64::INFINITY),
    }
}

/// Symphonia's error, phrased for users.
fn describe(err: &SymphoniaError) -> String {
    match err {
        SymphoniaError::IoError(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the file ends too early (truncated)".into()
        }
        SymphoniaError::Unsupported(what) if what.contains("core (probe)") => {
            "not a recognised audio file; supported are WAV, FLAC, AIFF and Ogg Vorbis".into()
        }
        other => other.to_string(),
    }
}

/// File name extensions of the formats [`read`] decodes, for file dialogs.
pub const EXTENSIONS: &[&str] = &["wav", "wave", "flac", "aif", "aiff", "aifc", "ogg", "oga"];

/// "WAV, 24-bit integer", "FLAC, 16-bit integer", "Ogg Vorbis", ...
fn format_name(path: &Path, params: &symphonia::core::codecs::CodecParameters) -> String {
    use symphonia::core::codecs::*;
    let container = match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("wav" | "wave") => "WAV",
        Some("aif" | "aiff") => "AIFF",
        Some("aifc") => "AIFC",
        Some("flac") => "FLAC",
        Some("ogg" | "oga") => "Ogg",
        _ => "file",
    };
    let codec = match params.codec {
        CODEC_TYPE_FLAC => "FLAC".to_string(),
        CODEC_TYPE_VORBIS => "Vorbis".to_string(),
        CODEC_TYPE_PCM_F32LE | CODEC_TYPE_PCM_F32BE => "32-bit float".to_string(),
        CODEC_TYPE_PCM_F64LE | CODEC_TYPE_PCM_F64BE => "64-bit float".to_string(),
        codec => match params.bits_per_sample {
            Some(bits) => format!(
                "{bits}-bit {}",
                if codec == CODEC_TYPE_PCM_U8 {
                    "unsigned integer"
                } else {
                    "integer"
                }
            ),
            None => symphonia::default::get_codecs()
                .get_codec(codec)
                .map_or_else(|| "unknown codec".into(), |d| d.short_name.to_string()),
        },
    };
    match (params.codec, params.bits_per_sample) {
        (CODEC_TYPE_FLAC, Some(bits)) => format!("{container}, {bits}-bit"),
        _ => format!("{container}, {codec}"),
    }
}
