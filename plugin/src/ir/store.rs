//! The plugin's user IR file: loading it, keeping it in the project state, restoring it.
//!
//! Threads: [`IrFileState::load_paths`] and state restore ([`PersistentField::set`]) run on the
//! GUI or main thread; state save ([`PersistentField::map`]) on the main thread; the preparation
//! thread reads [`IrFileState::current`]. They share a `Mutex` that the audio thread never takes:
//! the audio thread only reads [`IrFileState::generation`], an atomic counter that changes
//! whenever the file changes, and asks the preparation thread for an engine when it does.
//!
//! What the state keeps ([`SavedIrFile`], persist key `"ir-file"`), so that a project opens on a
//! machine without the file:
//!
//! - `version`: [`STATE_VERSION`]. A state from a newer Longtail is refused, keeping the IR that
//!   plays, and the status says so. Older states load: states from before this field existed
//!   simply lack it (built-in IRs only), and a state with a path but no embedded copy (version 0,
//!   or one written by hand to point the plugin at a file) loads the file.
//! - `paths` and `hash`: the file(s) as loaded and a 64-bit FNV-1a hash of their bytes (a change
//!   detector, not a security measure). On restore the file is used when it is there and its hash
//!   matches; otherwise the embedded copy, and the status says why.
//! - the decoded source samples (at the file's own rate, before edits: edits are parameters),
//!   compressed losslessly: the `f32` samples, channel after channel, little-endian, with their
//!   bytes regrouped by significance (all first bytes, then all second bytes, ...) so the
//!   sign/exponent bytes sit together, then deflated with miniz_oxide (pure Rust, already in the
//!   dependency tree through the standard library's backtrace support) and written as base64
//!   because the state is JSON. Measured on decaying noise (a reverb tail's worst case): the
//!   state text is 0.9 times the raw size for a 24-bit source and 1.13 times for full-precision
//!   float samples (regrouping saves 8 to 15 % against plain deflate, base64 adds 33 %), so a
//!   10 s stereo IR at 48 kHz (3.8 MB of samples) takes 3.5 to 4.3 MB; silence costs nearly
//!   nothing.
//!
//! The copy is kept up to [`MAX_EMBEDDED_BYTES`] (64 MiB of text); a bigger IR (a dense 16 x 16
//! matrix of long rooms) is kept by its paths and hash only, the status line says so when it is
//! loaded, and a project that misses the file says so when it opens.
//!
//! Nothing the state says sizes an allocation before it is checked: the shape (1 to
//! [`MAX_IR_CHANNELS`] channels, 1 Hz to 768 kHz, at most [`MAX_IR_SECONDS`] at that rate, at
//! most 256 Mi samples, at most [`MAX_EMBEDDED_BYTES`] of text) is checked first; the
//! base64 text is decoded (the `base64` crate) only when it is no longer than those samples could
//! need, inflating stops at their size, and the samples are made from exactly that many bytes
//! ([`decode_samples`]). Names and paths are the JSON's own strings, which the host has already
//! read; paths are opened only to hash and decode files within the decoder's limits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use nice_plug::params::persist::PersistentField;
use serde::{Deserialize, Serialize};

use super::{Ir, IrError, MAX_IR_CHANNELS, MAX_IR_SECONDS};

/// Version of [`SavedIrFile`] this Longtail writes and the newest it reads.
pub const STATE_VERSION: u32 = 1;
/// Largest copy of an IR the project state keeps, in bytes of its text (compressed, base64):
/// about a 16 x 16 matrix of 1.5 s rooms at 48 kHz in full-precision float. Past it the state
/// keeps the paths and hash only, and says so when the file is missing.
pub const MAX_EMBEDDED_BYTES: usize = 64 << 20;
/// Most samples a state's copy may declare (1 GiB of `f32`), so a small text that inflates to
/// a lot is refused before it is inflated.
const MAX_EMBEDDED_SAMPLES: usize = 256 << 20;
/// Largest sample rate accepted in a state's embedded copy (as for files).
const MAX_STATE_RATE: u32 = 768_000;

/// A user IR file, decoded, with what the state keeps of it.
#[derive(Debug)]
pub struct IrFile {
    /// The decoded IR at the file's own rate, before edits.
    pub ir: Ir,
    /// The file(s) it came from: one, or two for true stereo from two stereo files.
    pub paths: Vec<PathBuf>,
    /// FNV-1a 64 of the files' bytes, in order, as 16 hex digits.
    pub hash: String,
    /// The samples compressed for the state (see the module docs); empty when they are over
    /// [`MAX_EMBEDDED_BYTES`] and the state keeps only the paths and the hash.
    pub embedded: String,
    /// A single WAV's channel mask as the file states it, checked against the bus.
    pub channel_mask: Option<u32>,
}

/// The IR file as saved in the project state. Every field has a default, so states that lack
/// some (older ones, hand-written ones) still parse.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SavedIrFile {
    /// [`STATE_VERSION`] of the Longtail that wrote it.
    pub version: u32,
    /// The file paths; empty when no file is loaded.
    pub paths: Vec<String>,
    /// FNV-1a 64 of the files' bytes, 16 hex digits.
    pub hash: String,
    /// The IR's name.
    pub name: String,
    /// Sample rate of the embedded samples, in Hz.
    pub sample_rate: u32,
    /// Channels of the embedded samples.
    pub num_channels: usize,
    /// Frames of the embedded samples.
    pub num_frames: usize,
    /// The compressed samples (see the module docs); empty when none are embedded.
    pub samples: String,
    /// The file's WAV channel mask, if it stated one.
    pub channel_mask: Option<u32>,
}

/// The user IR file shared by the plugin, its state, the preparation thread and the editor.
#[derive(Debug, Default)]
pub struct IrFileState {
    /// The file, if one is loaded. Locked only off the audio thread.
    current: Mutex<Option<Arc<IrFile>>>,
    /// Identifies `current`: 0 while no file is loaded, else a value never used before. Read by
    /// the audio thread.
    generation: AtomicU64,
    /// The last generation handed out.
    last_generation: AtomicU64,
    /// What happened last, for the editor: "" or one line.
    status: Mutex<String>,
}

impl IrFileState {
    /// The generation of the current file: 0 when none is loaded, else a new value for every
    /// file. Lock-free; the audio thread's view of the file.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current file and its generation, if one is loaded. Locks; never on the audio thread.
    pub fn current(&self) -> Option<(Arc<IrFile>, u64)> {
        let current = lock(&self.current);
        current
            .as_ref()
            .map(|file| (Arc::clone(file), self.generation()))
    }

    /// The last status line (loaded, restored from the embedded copy, refused, ...).
    pub fn status(&self) -> String {
        lock(&self.status).clone()
    }

    /// Sets the status line (the preparation thread reports edit errors here).
    /// Control characters (a newline in a path the state names, say) are escaped, so the
    /// status stays one line.
    pub fn set_status(&self, status: impl Into<String>) {
        let status: String = status.into();
        let one_line = if status.contains(char::is_control) {
            status
                .chars()
                .map(|c| match c {
                    c if c.is_control() => c.escape_default().to_string(),
                    c => c.to_string(),
                })
                .collect()
        } else {
            status
        };
        *lock(&self.status) = one_line;
    }

    /// Loads an IR from one file, or from two stereo files making true stereo, and makes it the
    /// current file. On error the current file stays and the status holds the message.
    /// Reads and decodes on the calling thread (GUI or main thread, never the audio thread).
    pub fn load_paths(&self, paths: &[&Path]) -> Result<(), IrError> {
        let result = load_file(paths);
        match result {
            Ok(file) => {
                let name = file.ir.name.clone();
                let not_kept = file.embedded.is_empty();
                self.replace(Some(file));
                self.set_status(if not_kept {
                    format!(
                        "loaded {name}; it is over the {} MiB the project keeps a copy of, so \
                         the project keeps its path and hash only",
                        MAX_EMBEDDED_BYTES >> 20
                    )
                } else {
                    format!("loaded {name}")
                });
                Ok(())
            }
            Err(err) => {
                self.set_status(format!("{err}; kept the current IR"));
                Err(err)
            }
        }
    }

    /// Makes `ir`, made in memory (a captured room), the current file: the project keeps its
    /// copy (it has no path), within [`MAX_EMBEDDED_BYTES`]. Off the audio thread.
    pub fn load_ir(&self, ir: Ir) -> Result<(), IrError> {
        let name = ir.name.clone();
        let embedded = embed(&ir.channels);
        if embedded.is_empty() {
            let err = IrError::InvalidEdit(format!(
                "{name} is over the {} MiB a project keeps: save it to a file and load that",
                MAX_EMBEDDED_BYTES >> 20
            ));
            self.set_status(format!("{err}; kept the current IR"));
            return Err(err);
        }
        self.replace(Some(IrFile {
            ir,
            paths: Vec::new(),
            hash: String::new(),
            embedded,
            channel_mask: None,
        }));
        self.set_status(format!("loaded {name}"));
        Ok(())
    }

    /// Forgets the file: the plugin plays its built-in IRs again.
    pub fn clear(&self) {
        self.replace(None);
        self.set_status("");
    }

    fn replace(&self, file: Option<IrFile>) {
        let old = {
            let mut current = lock(&self.current);
            let generation = if file.is_some() {
                self.last_generation.fetch_add(1, Ordering::AcqRel) + 1
            } else {
                0
            };
            let old = std::mem::replace(&mut *current, file.map(Arc::new));
            // Under the lock, so readers of `current` see the generation that goes with it.
            self.generation.store(generation, Ordering::Release);
            old
        };
        // The old file is dropped here, on this (non-audio) thread, outside the lock.
        drop(old);
    }

    /// What the state keeps now.
    pub fn saved(&self) -> SavedIrFile {
        match self.current() {
            None => SavedIrFile {
                version: STATE_VERSION,
                ..SavedIrFile::default()
            },
            Some((file, _)) => SavedIrFile {
                version: STATE_VERSION,
                paths: file
                    .paths
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect(),
                hash: file.hash.clone(),
                name: file.ir.name.clone(),
                sample_rate: file.ir.sample_rate,
                num_channels: file.ir.channels.len(),
                num_frames: file.ir.len(),
                samples: file.embedded.clone(),
                channel_mask: file.channel_mask,
            },
        }
    }

    /// Restores a saved file (see the module docs for the rules). Sets the status line.
    pub fn restore(&self, saved: SavedIrFile) {
        if saved.version > STATE_VERSION {
            self.set_status(format!(
                "the project's IR was saved by a newer Longtail (state version {}; this one reads \
                 up to {STATE_VERSION}): kept the current IR",
                saved.version
            ));
            return;
        }
        if saved.paths.is_empty() && saved.samples.is_empty() {
            self.clear();
            return;
        }
        let paths: Vec<PathBuf> = saved.paths.iter().map(PathBuf::from).collect();
        let path_refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let shown = saved.paths.join(" + ");
        // Why the file cannot be used, if it cannot.
        let file_problem = if paths.is_empty() {
            Some("no file path was saved".to_string())
        } else if let Some(missing) = paths.iter().find(|p| !p.is_file()) {
            Some(format!("'{}' is not there", missing.display()))
        } else {
            match hash_files(&path_refs) {
                Err(err) => Some(err.to_string()),
                Ok(hash) if !saved.hash.is_empty() && hash != saved.hash => {
                    Some(format!("'{shown}' has changed since the project was saved"))
                }
                Ok(_) => match load_file(&path_refs) {
                    Ok(file) => {
                        let name = file.ir.name.clone();
                        self.replace(Some(file));
                        self.set_status(format!("loaded {name} from {shown}"));
                        return;
                    }
                    Err(err) => Some(err.to_string()),
                },
            }
        };
        let problem = file_problem.unwrap_or_default();
        if saved.samples.is_empty() {
            self.set_status(format!(
                "{problem}, and the project holds no copy of the IR: kept the current IR"
            ));
            return;
        }
        match embedded_ir(&saved) {
            Ok(ir) => {
                let name = ir.name.clone();
                self.replace(Some(IrFile {
                    ir,
                    paths,
                    hash: saved.hash,
                    embedded: saved.samples,
                    channel_mask: saved.channel_mask,
                }));
                // An IR made in memory (a captured room) has no file: its copy is the IR.
                self.set_status(if saved.paths.is_empty() {
                    format!("restored {name}, kept in the project")
                } else {
                    format!("{problem}: using the copy of {name} saved in the project")
                });
            }
            Err(err) => self.set_status(format!(
                "{problem}, and the project's copy of the IR is damaged ({err}): kept the current IR"
            )),
        }
    }
}

impl<'a> PersistentField<'a, SavedIrFile> for Arc<IrFileState> {
    fn set(&self, new_value: SavedIrFile) {
        // The host's state call: a bug in the restore must not unwind into it.
        if let Err(message) = crate::guard::unwind::catch(|| self.restore(new_value)) {
            self.set_status(format!(
                "The project's IR could not be restored ({message}): kept the current IR"
            ));
        }
    }

    fn map<F, R>(&self, f: F) -> R
    where
        F: Fn(&SavedIrFile) -> R,
    {
        f(&self.saved())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves consistent data here (plain replacements).
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn load_file(paths: &[&Path]) -> Result<IrFile, IrError> {
    let hash = hash_files(paths)?;
    let (ir, infos) = super::load(paths)?;
    let embedded = embed(&ir.channels);
    Ok(IrFile {
        channel_mask: super::single_file_mask(&infos),
        ir,
        paths: paths.iter().map(|p| p.to_path_buf()).collect(),
        hash,
        embedded,
    })
}

/// The state's copy of `channels`, or nothing over [`MAX_EMBEDDED_BYTES`].
fn embed(channels: &[Vec<f32>]) -> String {
    let num_samples = channels.len() * channels.first().map_or(0, Vec::len);
    if num_samples <= MAX_EMBEDDED_SAMPLES {
        Some(encode_samples(channels)).filter(|text| text.len() <= MAX_EMBEDDED_BYTES)
    } else {
        None
    }
    .unwrap_or_default()
}

/// FNV-1a 64 of the files' bytes, in order, as 16 hex digits.
pub fn hash_files(paths: &[&Path]) -> Result<String, IrError> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in paths {
        let metadata = std::fs::metadata(path).map_err(|err| IrError::Unreadable {
            path: path.display().to_string(),
            reason: err.to_string(),
        })?;
        if metadata.len() > super::decode::MAX_FILE_BYTES {
            return Err(IrError::FileTooLarge {
                path: path.display().to_string(),
                bytes: metadata.len(),
                max: super::decode::MAX_FILE_BYTES,
            });
        }
        let bytes = std::fs::read(path).map_err(|err| IrError::Unreadable {
            path: path.display().to_string(),
            reason: err.to_string(),
        })?;
        for byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Ok(format!("{hash:016x}"))
}

/// Compresses channels for the state: byte planes of little-endian `f32`, deflate, base64.
pub fn encode_samples(channels: &[Vec<f32>]) -> String {
    let num_samples: usize = channels.iter().map(Vec::len).sum();
    let mut planes = vec![0u8; num_samples * 4];
    for (idx, sample) in channels.iter().flatten().enumerate() {
        for (plane, byte) in sample.to_le_bytes().into_iter().enumerate() {
            planes[plane * num_samples + idx] = byte;
        }
    }
    base64_encode(&miniz_oxide::deflate::compress_to_vec(&planes, 6))
}

/// The inverse of [`encode_samples`], for `num_channels` channels of `num_frames`.
///
/// The stated shape decides no allocation on its own: the base64 text is decoded only when it is
/// no longer than the samples could need (deflate adds at most 5 bytes per 16 KiB stored block,
/// the margin below is far more), inflating stops at the stated size, and the samples are
/// allocated once the inflated bytes are there and of exactly that size.
pub fn decode_samples(
    text: &str,
    num_channels: usize,
    num_frames: usize,
) -> Result<Vec<Vec<f32>>, String> {
    let num_bytes = num_channels
        .checked_mul(num_frames)
        .and_then(|num_samples| num_samples.checked_mul(4))
        .ok_or_else(|| format!("{num_channels} channels of {num_frames} frames"))?;
    let num_samples = num_bytes / 4;
    let max_deflated = num_bytes + num_bytes / 64 + 1024;
    if text.len() / 4 * 3 > max_deflated {
        return Err(format!(
            "{} characters of samples for {num_samples} samples",
            text.len()
        ));
    }
    let deflated = base64_decode(text).ok_or("not base64")?;
    let planes = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, num_bytes)
        .map_err(|err| format!("cannot inflate: {err:?}"))?;
    if planes.len() != num_bytes {
        return Err(format!("{} bytes instead of {num_bytes}", planes.len()));
    }
    Ok((0..num_channels)
        .map(|channel_idx| {
            (0..num_frames)
                .map(|frame_idx| {
                    let idx = channel_idx * num_frames + frame_idx;
                    f32::from_le_bytes(std::array::from_fn(|plane| {
                        planes[plane * num_samples + idx]
                    }))
                })
                .collect()
        })
        .collect())
}

fn embedded_ir(saved: &SavedIrFile) -> Result<Ir, String> {
    if saved.num_channels == 0 || saved.num_channels > MAX_IR_CHANNELS {
        return Err(format!("{} channels", saved.num_channels));
    }
    if saved.sample_rate == 0 || saved.sample_rate > MAX_STATE_RATE {
        return Err(format!("sample rate {} Hz", saved.sample_rate));
    }
    let max_frames = (MAX_IR_SECONDS * f64::from(saved.sample_rate)) as usize;
    if saved.num_frames == 0 || saved.num_frames > max_frames {
        return Err(format!("{} frames", saved.num_frames));
    }
    if saved.num_channels * saved.num_frames > MAX_EMBEDDED_SAMPLES
        || saved.samples.len() > MAX_EMBEDDED_BYTES
    {
        return Err(format!(
            "{} x {} samples, over what a project keeps",
            saved.num_channels, saved.num_frames
        ));
    }
    let channels = decode_samples(&saved.samples, saved.num_channels, saved.num_frames)?;
    Ir::new(saved.name.clone(), saved.sample_rate, channels).map_err(|err| err.to_string())
}

/// The state's base64: the standard alphabet, written padded; read with or without padding
/// and with any trailing bits, as the hand-written codec before it read.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

fn base64_encode(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    BASE64.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        for len in 0..10 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 5) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert!(base64_decode("a*b").is_none());
    }

    /// A state's samples as the hand-written base64 codec before the `base64` crate wrote them
    /// (the same input as here, encoded by that code): they load unchanged, and today's encoder
    /// writes the same text.
    #[test]
    fn samples_saved_by_the_earlier_codec_load_unchanged() {
        const SAVED: &str = "AUABv/4A+yQG+Giquhurse/zP4FUfPT6dYbDARCk605ovweXnNiKG4/BQZVQAGBgkGD4kABgrPhEkO4AOmCGrNL4AERqkLbuAQAnOk1gc4YArL/S5QAsKzCLyX1j34yLwvUELBgFGopZJCRU/afoIQIxzx2WJKh2YwgxbQgAQkJjQtJjAEKK0htj1QAeQmaKrtIAGz9jh9XoAAweMEJUZgCKnK7AAIjqEhwWBNOUKUlK/zNMTj0e7ZgL8ftRgYmEZzf/j5vEZ5+0taWJTYCiInOiyvOAIjZKX3ODgJiirLbAyoDf6fP9AwiAExgdIicsgDY7QEUAPj4/Pz8/Pj4+Pb29vr6+vr69vb06PD09PT09PTw8O7u8vLy8vLy8vg0ODg4ODr4PDw8PDw++Dw8PDw8Pvg8PDw8QEL4QEBAQEBC+EBAQEA==";
        let channels = [
            (0..40)
                .map(|i| ((i as f32) * 0.3).sin() * 0.9f32.powi(i))
                .collect::<Vec<f32>>(),
            (0..40)
                .map(|i| if i % 7 == 0 { -0.25 } else { 1e-30 * i as f32 })
                .collect::<Vec<f32>>(),
        ];
        let decoded = decode_samples(SAVED, 2, 40).unwrap();
        // The input was made on Linux, where glibc's `sinf` rounds correctly; other C
        // libraries' (mingw's on Windows) differ in the last bits, so there the samples are
        // checked within 4 ulps, and exactly through the encoder below.
        #[cfg(target_os = "linux")]
        assert_eq!(decoded, channels);
        for (got, want) in decoded.iter().flatten().zip(channels.iter().flatten()) {
            let ulps = (i64::from(got.to_bits() as i32) - i64::from(want.to_bits() as i32)).abs();
            assert!(ulps <= 4, "{got} against {want}");
        }
        assert_eq!(encode_samples(&decoded), SAVED);
        // Unpadded, as a hand-edited state may be.
        assert_eq!(
            decode_samples(SAVED.trim_end_matches('='), 2, 40).unwrap(),
            decoded
        );
    }

    /// A stated shape sizes nothing on its own: absurd or overflowing shapes and texts longer
    /// than the samples could need are refused before anything is decoded.
    #[test]
    fn stated_shapes_are_bounded_before_anything_is_allocated() {
        let text = encode_samples(&[vec![0.5; 100]]);
        assert!(decode_samples(&text, usize::MAX, 2).is_err());
        assert!(decode_samples(&text, 1, usize::MAX / 2).is_err());
        let long = "A".repeat(10_000);
        let message = decode_samples(&long, 1, 10).unwrap_err();
        assert!(message.contains("characters of samples"), "{message}");
        // The right shape still decodes; a smaller stated shape stops inflating at its size.
        assert_eq!(decode_samples(&text, 1, 100).unwrap(), vec![vec![0.5; 100]]);
        assert!(decode_samples(&text, 1, 99).is_err());
    }

    /// A state may claim up to 4096 channels of 60 s at 768 kHz (47 G samples): the shape is
    /// refused past 256 Mi samples, or past 64 MiB of text, before any inflating.
    #[test]
    fn a_wide_stated_shape_is_refused_before_it_is_inflated() {
        let saved = |num_channels, num_frames, samples: String| SavedIrFile {
            version: STATE_VERSION,
            sample_rate: 768_000,
            num_channels,
            num_frames,
            samples,
            ..SavedIrFile::default()
        };
        let text = encode_samples(&[vec![0.5; 100]]);
        let lie = saved(MAX_IR_CHANNELS, 60 * 768_000, text.clone());
        let message = embedded_ir(&lie).unwrap_err();
        assert!(message.contains("over what a project keeps"), "{message}");
        let long = saved(1, 100, "A".repeat(MAX_EMBEDDED_BYTES + 1));
        assert!(
            embedded_ir(&long)
                .unwrap_err()
                .contains("over what a project keeps")
        );
        assert!(embedded_ir(&saved(1, 100, text)).is_ok());
    }

    /// Found by the `state_restore` fuzz target: a path with a newline in the state made the
    /// status two lines.
    #[test]
    fn the_status_stays_one_line_whatever_the_state_names() {
        let state = IrFileState::default();
        state.restore(SavedIrFile {
            version: STATE_VERSION,
            paths: vec!["/nonexistent/a\nb\r\u{7}.wav".into()],
            ..SavedIrFile::default()
        });
        let status = state.status();
        assert!(!status.chars().any(char::is_control), "{status:?}");
        assert!(status.contains("a\\nb\\r"), "{status:?}");
    }

    #[test]
    fn samples_round_trip_bit_exactly() {
        let channels = vec![
            vec![0.0, -0.0, 1.0, f32::MIN_POSITIVE, 1e-30, -0.75],
            vec![0.5, 0.25, -1.0, 3.5e-8, 0.0, 0.125],
        ];
        let text = encode_samples(&channels);
        let back = decode_samples(&text, 2, 6).unwrap();
        for (a, b) in channels.iter().flatten().zip(back.iter().flatten()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert!(decode_samples(&text, 2, 7).is_err());
    }
}
