//! Parameters and persisted state.
//!
//! Parameter IDs are short and permanent: renaming one breaks saved projects and automation.
//! Values are written by the host (or the editor) and read on the audio thread through
//! nice-plug's atomics and smoothers.

use std::sync::atomic::{AtomicU8, AtomicU32};

use nice_plug::prelude::*;

use crate::engine::LatencyMode;
use crate::ir::builtin::BuiltinIr;

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
}

impl From<LatencyModeParam> for LatencyMode {
    fn from(mode: LatencyModeParam) -> Self {
        match mode {
            LatencyModeParam::Zero => LatencyMode::Zero,
            LatencyModeParam::LowCpu => LatencyMode::LowCpu,
        }
    }
}

/// Where the tail is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
pub enum BackendParam {
    /// Let Longtail choose; the CPU in this version (the GPU executor is not built yet).
    #[id = "auto"]
    #[name = "Auto"]
    Auto,
    /// Always on the CPU.
    #[id = "cpu"]
    #[name = "CPU"]
    Cpu,
}

/// Every parameter of the plugin.
#[derive(Params)]
pub struct LongtailParams {
    /// Wet share, 0 (dry) to 1 (wet). The dry path is delayed by the engine's latency.
    #[id = "mix"]
    pub mix: FloatParam,
    /// Output gain, linear (shown in dB).
    #[id = "gain"]
    pub output_gain: FloatParam,
    /// The built-in impulse response.
    #[id = "ir"]
    pub ir: EnumParam<BuiltinIr>,
    /// Zero latency or low CPU.
    #[id = "latency"]
    pub latency_mode: EnumParam<LatencyModeParam>,
    /// Where the tail runs.
    #[id = "backend"]
    pub backend: EnumParam<BackendParam>,
    /// Editor width in logical pixels, saved with the project.
    #[persist = "editor-width"]
    pub editor_width: AtomicU32,
    /// Editor height in logical pixels, saved with the project.
    #[persist = "editor-height"]
    pub editor_height: AtomicU32,
    /// The editor's selected tab, saved with the project.
    #[persist = "editor-tab"]
    pub editor_tab: AtomicU8,
}

/// Default wet share when the plugin is inserted.
pub const DEFAULT_MIX: f32 = 0.35;

impl Default for LongtailParams {
    fn default() -> Self {
        Self {
            mix: FloatParam::new(
                "Mix",
                DEFAULT_MIX,
                FloatRange::Linear { min: 0.0, max: 1.0 },
            )
            .with_smoother(SmoothingStyle::Linear(20.0))
            .with_unit("%")
            .with_value_to_string(formatters::v2s_f32_percentage(0))
            .with_string_to_value(formatters::s2v_f32_percentage()),
            output_gain: FloatParam::new(
                "Output gain",
                util::db_to_gain(0.0),
                FloatRange::Skewed {
                    min: util::db_to_gain(-36.0),
                    max: util::db_to_gain(12.0),
                    factor: FloatRange::gain_skew_factor(-36.0, 12.0),
                },
            )
            .with_smoother(SmoothingStyle::Logarithmic(20.0))
            .with_unit(" dB")
            .with_value_to_string(formatters::v2s_f32_gain_to_db(1))
            .with_string_to_value(formatters::s2v_f32_gain_to_db()),
            ir: EnumParam::new("Impulse response", BuiltinIr::Hall),
            latency_mode: EnumParam::new("Latency", LatencyModeParam::Zero),
            backend: EnumParam::new("Backend", BackendParam::Auto),
            editor_width: AtomicU32::new(crate::editor::DEFAULT_SIZE.0),
            editor_height: AtomicU32::new(crate::editor::DEFAULT_SIZE.1),
            editor_tab: AtomicU8::new(0),
        }
    }
}
