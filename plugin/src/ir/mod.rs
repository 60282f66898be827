//! Impulse responses: the in-memory type, validation, channel layouts, loading files and the
//! built-in set.
//!
//! Everything here runs off the audio thread and allocates freely. The audio thread only ever
//! sees a fully built [`crate::engine::Engine`].
//!
//! Limits: at most [`MAX_IR_CHANNELS`] channels (1 mono, 2 stereo, 4 true stereo, any other
//! count a multichannel IR whose meaning comes from the bus: see [`mapping`]), at most
//! [`MAX_IR_SECONDS`] seconds, files of at most [`decode::MAX_FILE_BYTES`], sample rates from
//! 1 kHz to 768 kHz, every sample finite. Files are checked before they are decoded (see
//! [`decode`]). True stereo comes as one 4-channel file (LL, LR, RL, RR) or as two stereo files
//! (the left input's file gives LL, LR; the right input's RL, RR); more generally one file per
//! input makes a matrix, each file a row with one channel per output; see [`load`].
//!
//! Submodules: [`decode`] (symphonia; [`wide_wav`]: WAVs past its 18 channels, through hound,
//! and every WAV's channel mask), [`resample`] (rubato), [`edit`] (trim, fades, filters,
//! normalisation: the pure preparation step), [`decay`] (decay time per band, one of the edits), [`store`] (the plugin's user file and its place in
//! the project state), [`wav`] (writing renders, with the bus's channel mask), [`builtin`],
//! [`speakers`] (speaker sets and WAV channel masks) and [`mapping`] (how every IR meets every
//! bus: the rules, the refusals, the budget, the dry signal).

pub mod builtin;
pub mod decay;
pub mod decode;
pub mod edit;
pub mod mapping;
pub mod resample;
pub mod speakers;
pub mod store;
pub mod wav;
pub mod wide_wav;

use std::path::Path;

use thiserror::Error;

use decode::{FileInfo, Limits};

/// Most channels an IR may have: one per path of a 64 x 64 matrix.
pub const MAX_IR_CHANNELS: usize = MAX_MATRIX_SIDE * MAX_MATRIX_SIDE;
/// Most inputs, and most outputs, of a matrix IR ([`IrLayout::Matrix`]): 64 x 64 paths.
pub const MAX_MATRIX_SIDE: usize = 64;
/// Longest IR accepted, in seconds.
pub const MAX_IR_SECONDS: f64 = 60.0;
/// Lowest sample rate of an IR (and of a session Longtail convolves in), in Hz.
pub const MIN_SAMPLE_RATE_HZ: u32 = 1_000;
/// Highest sample rate of an IR (and of a session Longtail convolves in), in Hz.
pub const MAX_SAMPLE_RATE_HZ: u32 = 768_000;

/// How the channels of an IR map inputs to outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IrLayout {
    /// One channel, used for every input to its own output.
    Mono,
    /// Two channels: L -> L and R -> R.
    Stereo,
    /// Four channels, in this order: L -> L, L -> R, R -> L, R -> R.
    TrueStereo,
    /// `inputs * outputs` channels, input-major: channel `i * outputs + o` is the path from
    /// input `i` to output `o` (the peer harness contract's matrix mode). Plays only on a bus
    /// of exactly `inputs` in and `outputs` out; a silent channel is a path that is not there.
    Matrix { inputs: usize, outputs: usize },
    /// Another channel count (3, or 5 to [`MAX_IR_CHANNELS`]), as a multichannel file comes:
    /// what its channels mean is decided by the bus it plays on ([`mapping::map`]).
    Channels(usize),
}

impl IrLayout {
    /// The layout of an IR with `num_channels` channels, if supported.
    pub fn from_channel_count(num_channels: usize) -> Option<Self> {
        match num_channels {
            1 => Some(Self::Mono),
            2 => Some(Self::Stereo),
            4 => Some(Self::TrueStereo),
            3 | 5..=MAX_IR_CHANNELS => Some(Self::Channels(num_channels)),
            _ => None,
        }
    }

    /// The matrix layout of `inputs` x `outputs` paths, if both are 1 to [`MAX_MATRIX_SIDE`].
    pub fn matrix(inputs: usize, outputs: usize) -> Option<Self> {
        let side = 1..=MAX_MATRIX_SIDE;
        (side.contains(&inputs) && side.contains(&outputs))
            .then_some(Self::Matrix { inputs, outputs })
    }

    /// Number of IR channels of this layout.
    pub fn num_channels(self) -> usize {
        match self {
            Self::Mono => 1,
            Self::Stereo => 2,
            Self::TrueStereo => 4,
            Self::Matrix { inputs, outputs } => inputs * outputs,
            Self::Channels(num_channels) => num_channels,
        }
    }

    /// Nominal `(source, destination)` of IR channel `channel_idx`: the stereo sides (0 =
    /// left, 1 = right), or a matrix's input and output.
    pub fn channel_route(self, channel_idx: usize) -> (usize, usize) {
        match self {
            Self::Mono => (0, 0),
            Self::Stereo => (channel_idx, channel_idx),
            Self::TrueStereo => (channel_idx / 2, channel_idx % 2),
            Self::Matrix { outputs, .. } => (channel_idx / outputs, channel_idx % outputs),
            Self::Channels(_) => (channel_idx, channel_idx),
        }
    }

    /// The output channels a matrix writes; `None` for the stereo layouts, which follow the
    /// bus.
    pub fn matrix_outputs(self) -> Option<usize> {
        match self {
            Self::Matrix { outputs, .. } => Some(outputs),
            _ => None,
        }
    }

    /// Human name, as shown to users (a matrix's size: [`std::fmt::Display`]).
    pub fn name(self) -> &'static str {
        match self {
            Self::Mono => "mono",
            Self::Stereo => "stereo",
            Self::TrueStereo => "true stereo",
            Self::Matrix { .. } => "matrix",
            Self::Channels(_) => "multichannel",
        }
    }
}

impl std::fmt::Display for IrLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Matrix { inputs, outputs } => write!(f, "{inputs} x {outputs} matrix"),
            Self::Channels(num_channels) => write!(f, "{num_channels}-channel"),
            layout => f.write_str(layout.name()),
        }
    }
}

/// Why an IR could not be used. Messages are for users: one line, what is wrong and what is
/// supported.
#[derive(Debug, Error)]
pub enum IrError {
    #[error("cannot read '{path}': {reason}")]
    Unreadable { path: String, reason: String },
    #[error("cannot decode '{path}': {reason}")]
    Undecodable { path: String, reason: String },
    #[error("'{path}' is {bytes} bytes; the largest file accepted is {max} bytes")]
    FileTooLarge { path: String, bytes: u64, max: u64 },
    #[error(
        "'{path}' is truncated or damaged: its header states {expected} frames but only {found} could be decoded"
    )]
    Truncated {
        path: String,
        expected: u64,
        found: u64,
    },
    #[error(
        "one file per input needs files of one channel count and rate, input i's file holding its \
         paths to every output (true stereo: two stereo files, LL, LR then RL, RR); {0}"
    )]
    FileSet(String),
    #[error("resampling failed: {0}")]
    Resample(String),
    #[error("{0}")]
    InvalidEdit(String),
    #[error(
        "a {inputs} x {outputs} matrix is not supported; a matrix has 1 to {MAX_MATRIX_SIDE} \
         inputs and 1 to {MAX_MATRIX_SIDE} outputs"
    )]
    MatrixSize { inputs: usize, outputs: usize },
    #[error("the IR's channels differ in length")]
    UnequalChannels,
    #[error("the IR is empty (no samples)")]
    Empty,
    #[error(
        "the IR has {0} channels; supported are 1 (mono), 2 (stereo), 4 (true stereo: LL, LR, RL, RR) and up to {MAX_IR_CHANNELS} for a bus wider than stereo"
    )]
    UnsupportedChannels(usize),
    #[error(
        "the file's channel mask {mask} does not match the bus's speakers {bus}; set the \
         Channel format to Discrete to play it channel by channel"
    )]
    MaskMismatch { mask: String, bus: String },
    #[error(
        "a {ir} IR ({channels} channels) cannot play on {bus}: it needs 1, 2 or 4 channels on an \
         N -> N, 1 -> N or 2 -> N bus, as many channels as the bus has outputs (N -> N or \
         1 -> N), or inputs x outputs channels"
    )]
    Unmappable {
        ir: String,
        channels: usize,
        bus: String,
    },
    #[error(
        "{paths} paths of this IR are {path_seconds:.0} path-seconds and {megabytes:.0} MB of \
         spectra; the most an engine takes is {max_seconds:.0} path-seconds and {max_mb:.0} MB",
        max_seconds = mapping::MAX_PATH_SECONDS,
        max_mb = mapping::MAX_SPECTRA_BYTES as f64 / 1e6
    )]
    OverBudget {
        paths: usize,
        path_seconds: f64,
        megabytes: f64,
    },
    #[error("a {layout} IR has {expected} channels, not {found}")]
    LayoutChannels {
        layout: String,
        expected: usize,
        found: usize,
    },
    #[error("the IR is {seconds:.1} s long; the maximum is {max:.0} s")]
    TooLong { seconds: f64, max: f64 },
    #[error(
        "the IR contains a non-finite sample (NaN or infinity) at frame {frame}, channel {channel}"
    )]
    NonFinite { frame: usize, channel: usize },
    #[error("invalid sample rate {0} Hz; supported are 1000 Hz to 768000 Hz")]
    InvalidSampleRate(u32),
    /// One of the errors above that does not name its file, from the file at `path`.
    #[error("'{path}': {error}")]
    InFile { path: String, error: Box<IrError> },
}

impl IrError {
    /// This error, naming the file at `path` if it does not already.
    pub fn in_file(self, path: &str) -> Self {
        match self {
            Self::Unreadable { .. }
            | Self::Undecodable { .. }
            | Self::FileTooLarge { .. }
            | Self::Truncated { .. }
            | Self::FileSet(_)
            | Self::InFile { .. } => self,
            error => Self::InFile {
                path: path.to_string(),
                error: Box::new(error),
            },
        }
    }
}

/// An impulse response ready to be prepared into an engine.
#[derive(Debug, Clone, PartialEq)]
pub struct Ir {
    /// Name shown to users (file name or built-in name).
    pub name: String,
    /// Sample rate of `channels`, in Hz.
    pub sample_rate: u32,
    /// Channel layout; `channels.len() == layout.num_channels()`.
    pub layout: IrLayout,
    /// The samples, one `Vec` per channel, all of the same length.
    pub channels: Vec<Vec<f32>>,
}

impl Ir {
    /// Checks the samples and builds the IR, its layout from its channel count (1, 2 or 4).
    /// Every channel must have the same length.
    pub fn new(
        name: impl Into<String>,
        sample_rate: u32,
        channels: Vec<Vec<f32>>,
    ) -> Result<Self, IrError> {
        let layout = IrLayout::from_channel_count(channels.len())
            .ok_or(IrError::UnsupportedChannels(channels.len()))?;
        Self::with_layout(name, sample_rate, layout, channels)
    }

    /// [`Ir::new`] for a given layout: a matrix, or a stereo layout whatever the channel count
    /// would suggest. `channels.len()` must be `layout.num_channels()`.
    pub fn with_layout(
        name: impl Into<String>,
        sample_rate: u32,
        layout: IrLayout,
        channels: Vec<Vec<f32>>,
    ) -> Result<Self, IrError> {
        if channels.len() != layout.num_channels() {
            return Err(IrError::LayoutChannels {
                layout: layout.to_string(),
                expected: layout.num_channels(),
                found: channels.len(),
            });
        }
        validate_sample_rate(sample_rate)?;
        let num_frames = channels.first().map_or(0, Vec::len);
        if num_frames == 0 {
            return Err(IrError::Empty);
        }
        validate_length(num_frames, sample_rate)?;
        if channels.iter().any(|c| c.len() != num_frames) {
            return Err(IrError::UnequalChannels);
        }
        for (channel, samples) in channels.iter().enumerate() {
            if let Some(frame) = samples.iter().position(|s| !s.is_finite()) {
                return Err(IrError::NonFinite { frame, channel });
            }
        }
        Ok(Self {
            name: name.into(),
            sample_rate,
            layout,
            channels,
        })
    }

    /// Length in samples.
    pub fn len(&self) -> usize {
        self.channels.first().map_or(0, Vec::len)
    }

    /// Whether the IR has no samples (never true for an IR built by [`Ir::new`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Length in seconds.
    pub fn seconds(&self) -> f64 {
        self.len() as f64 / f64::from(self.sample_rate)
    }
}

/// Refuses sample rates no audio file should have ([`MIN_SAMPLE_RATE_HZ`] to
/// [`MAX_SAMPLE_RATE_HZ`]); sessions outside that range play the dry signal (see
/// [`crate::audio::passthrough`]).
pub fn validate_sample_rate(sample_rate: u32) -> Result<(), IrError> {
    if (MIN_SAMPLE_RATE_HZ..=MAX_SAMPLE_RATE_HZ).contains(&sample_rate) {
        Ok(())
    } else {
        Err(IrError::InvalidSampleRate(sample_rate))
    }
}

/// Refuses IRs longer than [`MAX_IR_SECONDS`].
pub fn validate_length(num_frames: usize, sample_rate: u32) -> Result<(), IrError> {
    let seconds = num_frames as f64 / f64::from(sample_rate.max(1));
    if seconds > MAX_IR_SECONDS {
        Err(IrError::TooLong {
            seconds,
            max: MAX_IR_SECONDS,
        })
    } else {
        Ok(())
    }
}

/// Limits of an IR file read.
pub const IR_LIMITS: Limits = Limits {
    max_channels: MAX_IR_CHANNELS,
    max_seconds: Some(MAX_IR_SECONDS),
};

/// Loads an IR from one file (any channel count up to [`MAX_IR_CHANNELS`]: its meaning comes
/// from the bus, see [`mapping`]) or from one file per input, each a row of the matrix with
/// one channel per output (two stereo files make true stereo: the left input's LL, LR, then
/// the right input's RL, RR; shorter files are padded with silence). Returns the IR at the
/// files' own rate and what each file's header said. Allocates and reads files; call off the
/// audio thread.
pub fn load(paths: &[&Path]) -> Result<(Ir, Vec<FileInfo>), IrError> {
    match paths {
        [path] => {
            let shown = path.display().to_string();
            let (audio, info) = decode::read(path, IR_LIMITS).map_err(|err| err.in_file(&shown))?;
            let ir = Ir::new(file_name(path), audio.sample_rate, audio.channels)
                .map_err(|err| err.in_file(&shown))?;
            Ok((ir, vec![info]))
        }
        paths => {
            check_file_count(paths.len())?;
            load_rows(paths)
        }
    }
}

/// Refuses a per-input set of other than 2 to [`MAX_MATRIX_SIDE`] files.
fn check_file_count(count: usize) -> Result<(), IrError> {
    if (2..=MAX_MATRIX_SIDE).contains(&count) {
        Ok(())
    } else {
        Err(IrError::FileSet(format!(
            "{count} files were given; one file per input takes 2 to {MAX_MATRIX_SIDE}"
        )))
    }
}

/// The channel mask of a single file as its header states it; a set of files has none (each
/// is a row, not a speaker layout).
pub fn single_file_mask(infos: &[FileInfo]) -> Option<u32> {
    match infos {
        [info] => info.channel_mask,
        _ => None,
    }
}

/// [`load`] of one file per input.
fn load_rows(paths: &[&Path]) -> Result<(Ir, Vec<FileInfo>), IrError> {
    let mut rows = Vec::with_capacity(paths.len());
    for path in paths {
        let shown = path.display().to_string();
        let row = decode::read(path, ROW_LIMITS).map_err(|err| err.in_file(&shown))?;
        rows.push((shown, file_name(path), row));
    }
    rows_to_ir(rows)
}

/// [`load`] of one file per input whose bytes are in memory, each with the name standing for
/// its path: the same checks and messages. For the mutation test and the fuzz targets.
pub fn load_bytes_set(files: &[(&[u8], &str)]) -> Result<(Ir, Vec<FileInfo>), IrError> {
    check_file_count(files.len())?;
    let mut rows = Vec::with_capacity(files.len());
    for (bytes, name) in files {
        let row = decode::read_bytes(bytes, name, ROW_LIMITS).map_err(|err| err.in_file(name))?;
        rows.push((name.to_string(), file_name(Path::new(name)), row));
    }
    rows_to_ir(rows)
}

/// Limits of one file of a per-input set: a row of at most [`MAX_MATRIX_SIDE`] outputs.
const ROW_LIMITS: Limits = Limits {
    max_channels: MAX_MATRIX_SIDE,
    ..IR_LIMITS
};

/// The matrix of decoded rows `(shown path, file name, (audio, info))`, one per input.
fn rows_to_ir(
    rows: Vec<(String, String, (decode::Audio, FileInfo))>,
) -> Result<(Ir, Vec<FileInfo>), IrError> {
    let (first_shown, _, (first, _)) = &rows[0];
    for (shown, _, (audio, _)) in &rows[1..] {
        if audio.channels.len() != first.channels.len() {
            return Err(IrError::FileSet(format!(
                "'{first_shown}' has {} channels and '{shown}' has {}",
                first.channels.len(),
                audio.channels.len()
            )));
        }
        if audio.sample_rate != first.sample_rate {
            return Err(IrError::FileSet(format!(
                "their sample rates differ ({} Hz and {} Hz: '{first_shown}' and '{shown}')",
                first.sample_rate, audio.sample_rate
            )));
        }
    }
    let (inputs, outputs) = (rows.len(), first.channels.len());
    let sample_rate = first.sample_rate;
    let num_frames = rows
        .iter()
        .map(|(_, _, (audio, _))| audio.num_frames())
        .max()
        .unwrap_or(0);
    let layout = match (inputs, outputs) {
        (2, 2) => IrLayout::TrueStereo,
        _ => IrLayout::matrix(inputs, outputs).ok_or(IrError::MatrixSize { inputs, outputs })?,
    };
    let names: Vec<&str> = rows.iter().map(|(_, name, _)| name.as_str()).collect();
    let name = names.join(" + ");
    let mut channels = Vec::with_capacity(inputs * outputs);
    let mut infos = Vec::with_capacity(inputs);
    let mut rows_shown = Vec::with_capacity(inputs);
    for (shown, _, (audio, info)) in rows {
        rows_shown.push(shown);
        infos.push(info);
        channels.extend(audio.channels.into_iter().map(|mut channel| {
            channel.resize(num_frames, 0.0);
            channel
        }));
    }
    let shown: Vec<&str> = rows_shown.iter().map(String::as_str).collect();
    let ir = Ir::with_layout(name, sample_rate, layout, channels)
        .map_err(|err| err.in_file(&shown.join(" + ")))?;
    Ok((ir, infos))
}

/// [`load`] of one file whose bytes are in memory, `name` standing for its path: the same
/// checks and messages. For the mutation test and the fuzz targets.
pub fn load_bytes(bytes: &[u8], name: &str) -> Result<(Ir, FileInfo), IrError> {
    let (audio, info) =
        decode::read_bytes(bytes, name, IR_LIMITS).map_err(|err| err.in_file(name))?;
    let ir = Ir::new(
        file_name(Path::new(name)),
        audio.sample_rate,
        audio.channels,
    )
    .map_err(|err| err.in_file(name))?;
    Ok((ir, info))
}

/// The file name of `path`, for users.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}
