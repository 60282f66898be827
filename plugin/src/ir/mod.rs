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
//! (the left input's file gives LL, LR; the right input's RL, RR); see [`load`].
//!
//! Submodules: [`decode`] (symphonia), [`resample`] (rubato), [`edit`] (trim, fades, filters,
//! normalisation: the pure preparation step), [`store`] (the plugin's user file and its place in
//! the project state), [`wav`] (writing renders), [`builtin`].

pub mod builtin;
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
        "true stereo from two files needs two stereo files (left input: LL, LR; right input: RL, RR); {0}"
    )]
    TwoFileLayout(String),
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
    fn in_file(self, path: &str) -> Self {
        match self {
            Self::Unreadable { .. }
            | Self::Undecodable { .. }
            | Self::FileTooLarge { .. }
            | Self::Truncated { .. }
            | Self::TwoFileLayout(_)
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
/// [`crate::passthrough`]).
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

/// Loads an IR from one file (1, 2 or 4 channels) or from two stereo files making a true-stereo
/// IR (the first file is the left input's: LL, LR; the second the right input's: RL, RR; the
/// shorter is padded with silence). Returns the IR at the file's own rate and what each file's
/// header said. Allocates and reads files; call off the audio thread.
pub fn load(paths: &[&Path]) -> Result<(Ir, Vec<FileInfo>), IrError> {
    match paths {
        [path] => {
            let shown = path.display().to_string();
            let (audio, info) = decode::read(path, IR_LIMITS).map_err(|err| err.in_file(&shown))?;
            let ir = Ir::new(file_name(path), audio.sample_rate, audio.channels)
                .map_err(|err| err.in_file(&shown))?;
            Ok((ir, vec![info]))
        }
        [left_path, right_path] => {
            let (left, left_info) = decode::read(left_path, IR_LIMITS)
                .map_err(|err| err.in_file(&left_path.display().to_string()))?;
            let (right, right_info) = decode::read(right_path, IR_LIMITS)
                .map_err(|err| err.in_file(&right_path.display().to_string()))?;
            for (path, audio) in [(left_path, &left), (right_path, &right)] {
                if audio.channels.len() != 2 {
                    return Err(IrError::TwoFileLayout(format!(
                        "'{}' has {} channels",
                        path.display(),
                        audio.channels.len()
                    )));
                }
            }
            if left.sample_rate != right.sample_rate {
                return Err(IrError::TwoFileLayout(format!(
                    "their sample rates differ ({} Hz and {} Hz)",
                    left.sample_rate, right.sample_rate
                )));
            }
            let num_frames = left.num_frames().max(right.num_frames());
            let channels = left
                .channels
                .into_iter()
                .chain(right.channels)
                .map(|mut channel| {
                    channel.resize(num_frames, 0.0);
                    channel
                })
                .collect();
            let name = format!("{} + {}", file_name(left_path), file_name(right_path));
            let ir = Ir::new(name, left.sample_rate, channels)?;
            Ok((ir, vec![left_info, right_info]))
        }
        _ => Err(IrError::TwoFileLayout(format!(
            "{} files were given",
            paths.len()
        ))),
    }
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
