//! Decoding audio files through symphonia 0.6: WAV (8/16/24/32-bit integer, 32/64-bit float,
//! plain or `WAVE_FORMAT_EXTENSIBLE`), FLAC, AIFF/AIFC and Ogg Vorbis; WAVs of more than 18
//! channels through hound ([`super::wide_wav`], with the same bounds), and every WAV's channel
//! mask as stated. Off the audio thread (the GUI or main thread, the preparation thread, the
//! CLI); allocates.
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
//! No length read from the file sizes an allocation unchecked. The samples are reserved up front
//! for the frame count the header states only up to what the file can hold (every sample takes
//! at least one byte of a PCM file, so `file bytes / channels` frames) and the caller's maximum
//! length; past that they grow as they are decoded, and decoding stops at the maximum. Lengths
//! inside the container (tags, pictures, ID3 chunks) are symphonia's: 0.6 checks them against
//! the bytes left in the stream before it allocates (0.5 allocated a FLAC comment's stated
//! length first, 4 GB for a damaged file, and an allocation that fails aborts the process).
//!
//! A decoder that panics on malformed data is caught ([`std::panic::catch_unwind`]) and the file
//! refused with a message; the panic itself stays quiet: a panic hook, chained in front of the
//! one the process had, drops the message of a panic inside a decode and passes every other to
//! the previous hook, so a host's log never shows our decoder's backtraces.
//!
//! Samples are converted to `f32` by symphonia (integers scaled to `[-1, 1)`); non-finite samples
//! are refused later by [`super::Ir::new`] (IRs) or by the caller (dry signals).

use std::cell::Cell;
use std::fs::File;
use std::io::Cursor;
use std::path::Path;
use std::sync::Once;

use symphonia::core::codecs::audio::well_known::*;
use symphonia::core::codecs::audio::{
    AudioCodecParameters, AudioDecoderOptions, CODEC_ID_NULL_AUDIO,
};
use symphonia::core::errors::Error as SymphoniaError;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::{MediaSource, MediaSourceStream, MediaSourceStreamOptions};
use symphonia::core::meta::MetadataOptions;

use super::{IrError, validate_sample_rate, wide_wav};

/// Largest file accepted, in bytes (512 MiB).
pub const MAX_FILE_BYTES: u64 = 512 << 20;

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
    /// A WAV's `WAVE_FORMAT_EXTENSIBLE` channel mask as the file states it, where not zero
    /// ([`super::wide_wav::header`]).
    pub channel_mask: Option<u32>,
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
    read_path(path, limits, false)
}

/// What the container says about `path`, without decoding its samples: [`read`]'s checks up to
/// the header (steps 1 to 3 of the module docs), reading only the first
/// [`INFO_HEAD_BYTES`] and what symphonia's probe needs. For the IR library, which lists
/// thousands of files. Where the header states no frame count, the info has none.
pub fn read_info(path: &Path, limits: Limits) -> Result<FileInfo, IrError> {
    read_path(path, limits, true).map(|(_, info)| info)
}

/// [`read`], or with `header_only` [`read_info`]: the path's checks, then the decode.
fn read_path(path: &Path, limits: Limits, header_only: bool) -> Result<(Audio, FileInfo), IrError> {
    let display = path.display().to_string();
    let unreadable = |reason: String| IrError::Unreadable {
        path: display.clone(),
        reason,
    };
    let metadata = std::fs::metadata(path).map_err(|err| unreadable(err.to_string()))?;
    if metadata.is_dir() {
        return Err(unreadable("it is a directory".into()));
    }
    let file_bytes = metadata.len();
    check_size(&display, file_bytes)?;
    let file = File::open(path).map_err(|err| unreadable(err.to_string()))?;
    decode_quietly(
        Box::new(file),
        extension(path),
        &display,
        file_bytes,
        limits,
        header_only,
    )
}

/// Bytes [`read_info`] reads from a file's start to find a WAV's `fmt ` chunk (it is in the
/// first few hundred bytes of any WAV a tool writes).
pub const INFO_HEAD_BYTES: usize = 4 << 10;

/// Decodes a file's bytes already in memory, as [`read`] decodes the file at `name` (the name
/// gives the extension, a hint to the format, and the messages' file name). For tests and fuzz
/// targets, which make thousands of damaged files.
pub fn read_bytes(bytes: &[u8], name: &str, limits: Limits) -> Result<(Audio, FileInfo), IrError> {
    let file_bytes = bytes.len() as u64;
    check_size(name, file_bytes)?;
    decode_quietly(
        Box::new(Cursor::new(bytes)),
        extension(Path::new(name)),
        name,
        file_bytes,
        limits,
        false,
    )
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

fn check_size(display: &str, file_bytes: u64) -> Result<(), IrError> {
    if file_bytes > MAX_FILE_BYTES {
        return Err(IrError::FileTooLarge {
            path: display.to_string(),
            bytes: file_bytes,
            max: MAX_FILE_BYTES,
        });
    }
    if file_bytes == 0 {
        return Err(IrError::Undecodable {
            path: display.to_string(),
            reason: "the file is empty".into(),
        });
    }
    Ok(())
}

/// [`decode`], with a panic inside symphonia caught, kept out of the log, and turned into a
/// refusal. `header_only`: the info alone ([`read_info`]); the audio has no samples.
fn decode_quietly(
    mut source: Box<dyn MediaSource + '_>,
    extension: Option<String>,
    display: &str,
    file_bytes: u64,
    limits: Limits,
    header_only: bool,
) -> Result<(Audio, FileInfo), IrError> {
    let failed = || IrError::Undecodable {
        path: display.to_string(),
        reason: "the decoder failed on malformed data in this file".into(),
    };
    // A WAV's header first: its mask as stated, and whether symphonia can read it at all.
    let head_bytes = if header_only {
        INFO_HEAD_BYTES
    } else {
        wide_wav::HEAD_BYTES
    };
    let mut head = vec![0u8; head_bytes.min(file_bytes as usize)];
    let head_len = read_head(&mut source, &mut head).map_err(|err| IrError::Unreadable {
        path: display.to_string(),
        reason: err.to_string(),
    })?;
    let wav = wide_wav::header(&head[..head_len]);
    if let Some(wav) = wav
        && wav.channels > wide_wav::SYMPHONIA_MAX_CHANNELS
    {
        let max = limits.max_channels;
        let wide = catch_quietly(|| {
            wide_wav::decode(
                source,
                display,
                file_bytes,
                max,
                limits.max_seconds,
                header_only,
            )
        })
        .unwrap_or_else(|| Err(failed()))?;
        let info = FileInfo {
            format: wide.format,
            sample_rate: wide.sample_rate,
            num_channels: wide.channels.len(),
            num_frames: Some(wide.stated_frames),
            file_bytes,
            channel_mask: wav.mask,
        };
        let audio = Audio {
            sample_rate: wide.sample_rate,
            channels: wide.channels,
        };
        return Ok((audio, info));
    }
    let (audio, mut info) = catch_quietly(|| {
        decode(
            source,
            extension.as_deref(),
            display,
            file_bytes,
            limits,
            header_only,
        )
    })
    .unwrap_or_else(|| Err(failed()))?;
    info.channel_mask = wav.and_then(|wav| wav.mask);
    Ok((audio, info))
}

/// Fills `head` from the start of `source` as far as it goes, then rewinds it.
fn read_head(source: &mut Box<dyn MediaSource + '_>, head: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < head.len() {
        match source.read(&mut head[filled..])? {
            0 => break,
            read => filled += read,
        }
    }
    source.seek(std::io::SeekFrom::Start(0))?;
    Ok(filled)
}

thread_local! {
    /// Set while this thread runs a decode inside [`catch_quietly`].
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, catching a panic; the panic's message is not printed. The panic hook is installed
/// once per process, in front of the hook the process had (a host's own, or the standard one),
/// which still gets every panic outside such a call.
fn catch_quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET.with(|quiet| quiet.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|quiet| quiet.set(was_quiet));
    result.ok()
}

/// The symphonia part of [`read`]: probe, header checks, decode.
fn decode(
    source: Box<dyn MediaSource + '_>,
    extension: Option<&str>,
    display: &str,
    file_bytes: u64,
    limits: Limits,
    header_only: bool,
) -> Result<(Audio, FileInfo), IrError> {
    let undecodable = |reason: String| IrError::Undecodable {
        path: display.to_string(),
        reason,
    };

    let stream = MediaSourceStream::new(source, MediaSourceStreamOptions::default());
    let mut hint = Hint::new();
    if let Some(extension) = extension {
        hint.with_extension(extension);
    }
    let mut reader = symphonia::default::get_probe()
        .probe(
            &hint,
            stream,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .map_err(|err| undecodable(describe(&err)))?;
    let track = reader
        .default_track(TrackType::Audio)
        .ok_or_else(|| undecodable("it has no audio track".into()))?;
    let track_id = track.id;
    let stated_frames = track.num_frames;
    let params = track
        .codec_params
        .as_ref()
        .and_then(|params| params.audio())
        .filter(|params| params.codec != CODEC_ID_NULL_AUDIO)
        .ok_or_else(|| undecodable("it has no audio track".into()))?
        .clone();

    // Header checks, before any packet is decoded.
    let num_channels = params.channels.as_ref().map_or(0, |c| c.count());
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
    if let (Some(max_frames), Some(num_frames)) = (max_frames, stated_frames)
        && num_frames > max_frames
    {
        return Err(too_long(num_frames, sample_rate, limits));
    }
    let info = FileInfo {
        format: format_name(extension, &params),
        sample_rate,
        num_channels,
        num_frames: stated_frames,
        file_bytes,
        channel_mask: None,
    };
    if header_only {
        let audio = Audio {
            sample_rate,
            channels: Vec::new(),
        };
        return Ok((audio, info));
    }

    // Gapless (the default): Vorbis priming and padding frames are trimmed.
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(&params, &AudioDecoderOptions::default())
        .map_err(|err| undecodable(describe(&err)))?;
    // The header's count sizes the samples only as far as the file can hold them (module docs).
    let capacity = stated_frames
        .unwrap_or(0)
        .min(max_frames.unwrap_or(u64::MAX))
        .min(file_bytes / num_channels as u64) as usize;
    let mut channels: Vec<Vec<f32>> = (0..num_channels)
        .map(|_| Vec::with_capacity(capacity))
        .collect();
    let mut planes: Vec<Vec<f32>> = Vec::with_capacity(num_channels);
    loop {
        let packet = match reader.next_packet() {
            Ok(Some(packet)) => packet,
            // The normal end of the stream.
            Ok(None) | Err(SymphoniaError::ResetRequired) => break,
            // A stream cut short; a header that stated more frames makes it a refusal below.
            Err(SymphoniaError::IoError(err))
                if err.kind() == std::io::ErrorKind::UnexpectedEof =>
            {
                break;
            }
            Err(err) => return Err(undecodable(describe(&err))),
        };
        if packet.track_id != track_id {
            continue;
        }
        let decoded = decoder
            .decode(&packet)
            .map_err(|err| undecodable(describe(&err)))?;
        if decoded.frames() == 0 {
            continue;
        }
        if decoded.spec().channels().count() != num_channels {
            return Err(undecodable(
                "the channel count changes inside the stream".into(),
            ));
        }
        decoded.copy_to_vecs_planar::<f32>(&mut planes);
        for (channel, plane) in channels.iter_mut().zip(&planes) {
            channel.extend_from_slice(plane);
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
    if let Some(num_frames) = stated_frames {
        if decoded_frames < num_frames {
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

/// "WAV, 24-bit integer", "FLAC, 16-bit", "Ogg, Vorbis", ...
fn format_name(extension: Option<&str>, params: &AudioCodecParameters) -> String {
    let container = match extension {
        Some("wav" | "wave") => "WAV",
        Some("aif" | "aiff") => "AIFF",
        Some("aifc") => "AIFC",
        Some("flac") => "FLAC",
        Some("ogg" | "oga") => "Ogg",
        _ => "file",
    };
    let codec = match params.codec {
        CODEC_ID_FLAC => "FLAC".to_string(),
        CODEC_ID_VORBIS => "Vorbis".to_string(),
        CODEC_ID_PCM_F32LE | CODEC_ID_PCM_F32BE => "32-bit float".to_string(),
        CODEC_ID_PCM_F64LE | CODEC_ID_PCM_F64BE => "64-bit float".to_string(),
        codec => match params.bits_per_sample {
            Some(bits) => format!(
                "{bits}-bit {}",
                if codec == CODEC_ID_PCM_U8 {
                    "unsigned integer"
                } else {
                    "integer"
                }
            ),
            None => symphonia::default::get_codecs()
                .get_audio_decoder(codec)
                .map_or_else(
                    || "unknown codec".into(),
                    |d| d.codec.info.short_name.to_string(),
                ),
        },
    };
    match (params.codec, params.bits_per_sample) {
        (CODEC_ID_FLAC, Some(bits)) => format!("{container}, {bits}-bit"),
        _ => format!("{container}, {codec}"),
    }
}
