//! The choices among the parameters (enums), each with its permanent ids, and how each maps
//! to the engine's types.

use nice_plug::prelude::*;

use crate::engine::plan::OFFLOAD_LATENCIES;
use crate::engine::{Executor, GpuPolicy, LatencyMode};
use crate::ir::mapping::ChannelFormat;

/// Where the IR comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum IrSourceParam {
    /// The built-in IR chosen by the "Impulse response" parameter.
    #[id = "builtin"]
    #[name = "Built-in"]
    Builtin,
    /// The user's IR file (see [`crate::ir::store`]); the built-in one while none is loaded.
    #[id = "file"]
    #[name = "File"]
    File,
}

/// Latency mode as the user picks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum LatencyModeParam {
    /// No latency: a direct-form head computes the first quantum.
    #[id = "zero"]
    #[name = "Zero latency"]
    Zero,
    /// One quantum of latency (64 samples at most host settings), less CPU.
    #[id = "low"]
    #[name = "Low CPU"]
    LowCpu,
    /// Offload: nothing convolves on the audio thread, every level runs on the GPU or the CPU
    /// workers, and the host compensates a fixed latency of (at least) this many samples
    /// ([`crate::engine::plan::offload_shape`]). New values go at the end: saved by id.
    #[id = "offload_512"]
    #[name = "Offload 512"]
    Offload512,
    #[id = "offload_1024"]
    #[name = "Offload 1024"]
    Offload1024,
    #[id = "offload_2048"]
    #[name = "Offload 2048"]
    Offload2048,
    #[id = "offload_4096"]
    #[name = "Offload 4096"]
    Offload4096,
}

impl LatencyModeParam {
    /// The latency the offload mode asks for, in samples; `None` in the other modes.
    pub fn offload_latency(self) -> Option<usize> {
        match LatencyMode::from(self) {
            LatencyMode::Offload(samples) => Some(samples),
            LatencyMode::Zero | LatencyMode::LowCpu => None,
        }
    }

    /// Every value, in the parameter's order.
    pub const ALL: [Self; 6] = [
        Self::Zero,
        Self::LowCpu,
        Self::Offload512,
        Self::Offload1024,
        Self::Offload2048,
        Self::Offload4096,
    ];
}

/// Pre-delay as a note value at the host's tempo: plain, dotted (`.`) and triplet (`T`), from
/// 1/64 to 1/2, shortest first. Saved by its id; new values go at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum NoteValue {
    #[id = "1_64"]
    #[name = "1/64"]
    N64,
    #[id = "1_32t"]
    #[name = "1/32T"]
    N32T,
    #[id = "1_64d"]
    #[name = "1/64."]
    N64D,
    #[id = "1_32"]
    #[name = "1/32"]
    N32,
    #[id = "1_16t"]
    #[name = "1/16T"]
    N16T,
    #[id = "1_32d"]
    #[name = "1/32."]
    N32D,
    #[id = "1_16"]
    #[name = "1/16"]
    N16,
    #[id = "1_8t"]
    #[name = "1/8T"]
    N8T,
    #[id = "1_16d"]
    #[name = "1/16."]
    N16D,
    #[id = "1_8"]
    #[name = "1/8"]
    N8,
    #[id = "1_4t"]
    #[name = "1/4T"]
    N4T,
    #[id = "1_8d"]
    #[name = "1/8."]
    N8D,
    #[id = "1_4"]
    #[name = "1/4"]
    N4,
    #[id = "1_2t"]
    #[name = "1/2T"]
    N2T,
    #[id = "1_4d"]
    #[name = "1/4."]
    N4D,
    #[id = "1_2"]
    #[name = "1/2"]
    N2,
}

impl NoteValue {
    /// Every value, shortest first.
    pub const ALL: [Self; 16] = [
        Self::N64,
        Self::N32T,
        Self::N64D,
        Self::N32,
        Self::N16T,
        Self::N32D,
        Self::N16,
        Self::N8T,
        Self::N16D,
        Self::N8,
        Self::N4T,
        Self::N8D,
        Self::N4,
        Self::N2T,
        Self::N4D,
        Self::N2,
    ];

    /// Length in beats (quarter notes).
    pub fn beats(self) -> f64 {
        match self {
            Self::N64 => 4.0 / 64.0,
            Self::N32T => 4.0 / 32.0 * 2.0 / 3.0,
            Self::N64D => 4.0 / 64.0 * 1.5,
            Self::N32 => 4.0 / 32.0,
            Self::N16T => 4.0 / 16.0 * 2.0 / 3.0,
            Self::N32D => 4.0 / 32.0 * 1.5,
            Self::N16 => 4.0 / 16.0,
            Self::N8T => 4.0 / 8.0 * 2.0 / 3.0,
            Self::N16D => 4.0 / 16.0 * 1.5,
            Self::N8 => 4.0 / 8.0,
            Self::N4T => 2.0 / 3.0,
            Self::N8D => 4.0 / 8.0 * 1.5,
            Self::N4 => 1.0,
            Self::N2T => 4.0 / 2.0 * 2.0 / 3.0,
            Self::N4D => 1.5,
            Self::N2 => 4.0 / 2.0,
        }
    }

    /// The name as the editor and the CLI write it: `1/8`, `1/16.` (dotted), `1/4T` (triplet).
    pub fn name(self) -> &'static str {
        Self::variants()[self.to_index()]
    }

    /// Reads a name, the triplet's `T` in either case.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|note| note.name().eq_ignore_ascii_case(text))
    }

    /// Its length at `bpm` in milliseconds, at most [`MAX_PREDELAY_MS`] and rounded to 0.1 us
    /// (so a tempo that wobbles in its last digits does not rebuild the IR).
    pub fn predelay_ms(self, bpm: f64) -> f64 {
        let ms = (self.beats() * 60_000.0 / bpm).min(MAX_PREDELAY_MS);
        (ms * 1e4).round() / 1e4
    }
}

/// The longest pre-delay, in milliseconds (the parameter's range; a synced note past it is
/// held there).
pub const MAX_PREDELAY_MS: f64 = 500.0;

impl From<LatencyModeParam> for LatencyMode {
    fn from(mode: LatencyModeParam) -> Self {
        match mode {
            LatencyModeParam::Zero => LatencyMode::Zero,
            LatencyModeParam::LowCpu => LatencyMode::LowCpu,
            LatencyModeParam::Offload512 => LatencyMode::Offload(OFFLOAD_LATENCIES[0]),
            LatencyModeParam::Offload1024 => LatencyMode::Offload(OFFLOAD_LATENCIES[1]),
            LatencyModeParam::Offload2048 => LatencyMode::Offload(OFFLOAD_LATENCIES[2]),
            LatencyModeParam::Offload4096 => LatencyMode::Offload(OFFLOAD_LATENCIES[3]),
        }
    }
}

/// How a bus wider than stereo reads its channels (see [`crate::ir::mapping`]): hosts give
/// only a channel count, and quad and first-order Ambisonics are both four channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum ChannelFormatParam {
    /// The speaker set of the width, else Ambisonics where the width is a square, else
    /// discrete.
    #[id = "auto"]
    #[name = "Auto"]
    Auto,
    /// Speakers (quad, 5.0, 5.1, 7.0, 7.1, 7.1.2 / 5.1.4, 7.1.4, 9.1.6).
    #[id = "speakers"]
    #[name = "Speakers"]
    Speakers,
    /// Ambisonics, ACN order and SN3D.
    #[id = "ambisonics"]
    #[name = "Ambisonics"]
    Ambisonics,
    /// Numbered channels, odd ones left, even ones right.
    #[id = "discrete"]
    #[name = "Discrete"]
    Discrete,
}

impl From<ChannelFormatParam> for ChannelFormat {
    fn from(format: ChannelFormatParam) -> Self {
        match format {
            ChannelFormatParam::Auto => ChannelFormat::Auto,
            ChannelFormatParam::Speakers => ChannelFormat::Speakers,
            ChannelFormatParam::Ambisonics => ChannelFormat::Ambisonics,
            ChannelFormatParam::Discrete => ChannelFormat::Discrete,
        }
    }
}

/// Where the tail is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum BackendParam {
    /// The GPU takes the big levels when it pays (a real GPU, a big engine, a round trip that
    /// fits the slack); else the CPU. See [`GpuPolicy::Auto`].
    #[id = "auto"]
    #[name = "Auto"]
    Auto,
    /// Always on the CPU.
    #[id = "cpu"]
    #[name = "CPU"]
    Cpu,
    /// The big levels on the GPU whenever one opens; they still fall back to the CPU when it
    /// fails or is late. `LONGTAIL_GPU_ALLOW_CPU=1` accepts a CPU adapter (lavapipe).
    #[id = "gpu"]
    #[name = "GPU"]
    Gpu,
}

impl BackendParam {
    /// The engine executor for this choice.
    pub fn executor(self) -> Executor {
        match self {
            Self::Auto => Executor::Gpu(GpuPolicy::Auto),
            Self::Cpu => Executor::Workers,
            // `LONGTAIL_GPU_ALLOW_CPU` is read when the engine is built, off the audio thread.
            Self::Gpu => Executor::Gpu(GpuPolicy::Forced {
                allow_cpu_adapter: false,
            }),
        }
    }
}

/// What the ducking listens to. Saved by its id; new values go at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum DuckKeyParam {
    /// The plugin's own input.
    #[id = "input"]
    #[name = "Input"]
    Input,
    /// The sidechain input (CLAP and the standalone), where the host feeds one; in the
    /// standalone the input until the sidechain carries a sample. The VST3 build has no
    /// sidechain (see `crate::layouts`): the input keys it there.
    #[id = "sidechain"]
    #[name = "Sidechain"]
    Sidechain,
}

/// Where the second IR (slot B, which Blend mixes in) comes from. Saved by its id; new values go
/// at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum SecondIrParam {
    /// No second IR: nothing is built for it, and Blend does nothing.
    #[id = "off"]
    #[name = "Off"]
    Off,
    /// The built-in IR chosen by "Impulse response B".
    #[id = "builtin"]
    #[name = "Built-in"]
    Builtin,
    /// Slot B's IR file; the built-in one while none is loaded.
    #[id = "file"]
    #[name = "File"]
    File,
}
