//! Parameters and persisted state.
//!
//! Parameter IDs are short and permanent: renaming one breaks saved projects and automation.
//! Values are written by the host (or the editor) and read on the audio thread through
//! nice-plug's atomics and smoothers. The IR edit parameters need a new engine when they change:
//! the audio thread sees the new values, waits until they have stayed put for
//! [`EDIT_DEBOUNCE_MS`] (a knob being turned), then asks the preparation thread, and the new
//! engine is crossfaded in.
//!
//! Persisted besides the parameters: the user IR file (`"ir-file"`, see [`crate::ir::store`]).

use std::sync::Arc;

/// Size of a new editor window, in logical pixels (persisted with the state once resized).
pub const DEFAULT_EDITOR_SIZE: (u32, u32) = (720, 480);

use std::sync::atomic::{AtomicU8, AtomicU32};

use nice_plug::prelude::*;

use crate::engine::plan::OFFLOAD_LATENCIES;
use crate::engine::{Executor, GpuPolicy, LatencyMode};
use crate::ir::builtin::BuiltinIr;
use crate::ir::edit::{DEFAULT_AUTO_TRIM_DB, EditSettings, Shelf};
use crate::ir::mapping::ChannelFormat;
use crate::ir::store::IrFileState;
use crate::preparer::IrSource;

/// How long the edit parameters must stay put before an engine is rebuilt, in milliseconds.
pub const EDIT_DEBOUNCE_MS: f32 = 150.0;
/// The auto trim parameter at or below this is "Off".
pub const AUTO_TRIM_OFF_DB: f32 = -120.0;
/// The low cut parameter at or below this is "Off".
pub const LOW_CUT_OFF_HZ: f32 = 10.0;
/// The high cut parameter at or above this is "Off".
pub const HIGH_CUT_OFF_HZ: f32 = 20_000.0;

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
    /// Zero latency, low CPU, or offload with a fixed latency.
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
    /// The Reverb tab's IR view (waveform, spectrogram or paths), saved with the project.
    #[persist = "editor-ir-view"]
    pub editor_ir_view: AtomicU8,
    /// The editor's zoom in percent (`editor::ZOOMS`), saved with the project.
    #[persist = "editor-zoom"]
    pub editor_zoom: AtomicU32,
    /// Built-in IR or the user's file.
    #[id = "irsrc"]
    pub ir_source: EnumParam<IrSourceParam>,
    /// Cut from the IR's start, in milliseconds.
    #[id = "trimstart"]
    pub trim_start_ms: FloatParam,
    /// Cut from the IR's end, in milliseconds.
    #[id = "trimend"]
    pub trim_end_ms: FloatParam,
    /// Automatic end trim threshold in dB below the peak; Off at [`AUTO_TRIM_OFF_DB`]. Files only.
    #[id = "autotrim"]
    pub auto_trim_db: FloatParam,
    /// Silence in front of the IR, in milliseconds.
    #[id = "predelay"]
    pub predelay_ms: FloatParam,
    /// Fade in, in milliseconds.
    #[id = "fadein"]
    pub fade_in_ms: FloatParam,
    /// Fade out, in milliseconds.
    #[id = "fadeout"]
    pub fade_out_ms: FloatParam,
    /// Play the IR backwards.
    #[id = "reverse"]
    pub reverse: BoolParam,
    /// Time-scale factor of the IR.
    #[id = "stretch"]
    pub stretch: FloatParam,
    /// Normalise the IR's energy (files only; the built-ins are normalised by design).
    #[id = "normalize"]
    pub normalize: BoolParam,
    /// Wet low cut in Hz; Off at [`LOW_CUT_OFF_HZ`].
    #[id = "lowcut"]
    pub low_cut_hz: FloatParam,
    /// Wet high cut in Hz; Off at [`HIGH_CUT_OFF_HZ`].
    #[id = "highcut"]
    pub high_cut_hz: FloatParam,
    /// What the channels of a bus wider than stereo are; saved with the project, not
    /// automatable (a change rebuilds the engine).
    #[id = "format"]
    pub channel_format: EnumParam<ChannelFormatParam>,
    /// Stereo width of the wet signal, 0 (mono) to 2 (the side doubled), 1 as the IR has it:
    /// mid ± width · side on stereo outputs (the `1 -> 2` and `2 -> 2` buses); no effect on
    /// other buses. Smoothed like Mix.
    #[id = "width"]
    pub width: FloatParam,
    /// Level of the IR before the crossover (early reflections), in dB; an IR edit.
    #[id = "early"]
    pub early_db: FloatParam,
    /// Level of the IR after the crossover (the tail), in dB; an IR edit.
    #[id = "tail"]
    pub tail_db: FloatParam,
    /// Where early becomes tail, in milliseconds of the IR.
    #[id = "xover"]
    pub crossover_ms: FloatParam,
    /// Low shelf corner in Hz (half the gain there); an IR edit.
    #[id = "lshelf"]
    pub low_shelf_hz: FloatParam,
    /// Low shelf gain in dB; 0 is off.
    #[id = "lshelfdb"]
    pub low_shelf_db: FloatParam,
    /// High shelf corner in Hz (half the gain there); an IR edit.
    #[id = "hshelf"]
    pub high_shelf_hz: FloatParam,
    /// High shelf gain in dB; 0 is off.
    #[id = "hshelfdb"]
    pub high_shelf_db: FloatParam,
    /// Pre-delay follows the host's tempo as [`Self::predelay_note`] (where the host gives a
    /// tempo; else the milliseconds).
    #[id = "predsync"]
    pub predelay_sync: BoolParam,
    /// The synced pre-delay's note value.
    #[id = "prednote"]
    pub predelay_note: EnumParam<NoteValue>,
    /// The user IR file, kept in the project with its samples.
    #[persist = "ir-file"]
    pub ir_file: Arc<IrFileState>,
}

impl LongtailParams {
    /// The IR the parameters select: the user's file when the source is File and one is
    /// loaded, else the built-in IR. The flag says whether it is the file. Reads atomics only:
    /// safe on the audio thread.
    pub fn ir_source_now(&self) -> (IrSource, bool) {
        let file_generation = self.ir_file.generation();
        if self.ir_source.value() == IrSourceParam::File && file_generation != 0 {
            (IrSource::File(file_generation), true)
        } else {
            (IrSource::Builtin(self.ir.value()), false)
        }
    }

    /// The edit settings the parameters describe, for a file (`for_file`) or a built-in IR.
    /// The automatic trim and the normalisation apply to files only: the built-ins are designed
    /// to length and normalised already, so they play exactly as generated unless the user edits
    /// them. Reads atomics only: safe on the audio thread.
    /// `tempo`: the host's, in beats per minute, where it gives one (a synced pre-delay needs
    /// it, and falls back to its milliseconds without).
    pub fn edit_settings(&self, for_file: bool, tempo: Option<f64>) -> EditSettings {
        let auto_trim = self.auto_trim_db.value();
        let low_cut = self.low_cut_hz.value();
        let high_cut = self.high_cut_hz.value();
        EditSettings {
            trim_start_ms: f64::from(self.trim_start_ms.value()),
            trim_end_ms: f64::from(self.trim_end_ms.value()),
            auto_trim_db: (for_file && auto_trim > AUTO_TRIM_OFF_DB)
                .then_some(f64::from(auto_trim)),
            predelay_ms: self.predelay_now(tempo),
            fade_in_ms: f64::from(self.fade_in_ms.value()),
            fade_out_ms: f64::from(self.fade_out_ms.value()),
            reverse: self.reverse.value(),
            stretch: f64::from(self.stretch.value()),
            normalize: for_file && self.normalize.value(),
            low_cut_hz: (low_cut > LOW_CUT_OFF_HZ).then_some(f64::from(low_cut)),
            high_cut_hz: (high_cut < HIGH_CUT_OFF_HZ).then_some(f64::from(high_cut)),
            early_db: f64::from(self.early_db.value()),
            tail_db: f64::from(self.tail_db.value()),
            crossover_ms: f64::from(self.crossover_ms.value()),
            low_shelf: shelf(&self.low_shelf_hz, &self.low_shelf_db),
            high_shelf: shelf(&self.high_shelf_hz, &self.high_shelf_db),
        }
    }
}

impl LongtailParams {
    /// The pre-delay in milliseconds: the synced note at `tempo` when Pre-delay sync is on and
    /// the host gives a usable tempo, else the Pre-delay parameter.
    pub fn predelay_now(&self, tempo: Option<f64>) -> f64 {
        match tempo {
            Some(bpm) if self.predelay_sync.value() && bpm.is_finite() && bpm >= 1.0 => {
                self.predelay_note.value().predelay_ms(bpm)
            }
            _ => f64::from(self.predelay_ms.value()),
        }
    }
}

/// A shelf from its corner and gain parameters; `None` at 0 dB.
fn shelf(hz: &FloatParam, db: &FloatParam) -> Option<Shelf> {
    (db.value() != 0.0).then(|| Shelf {
        hz: f64::from(hz.value()),
        db: f64::from(db.value()),
    })
}

/// A level in dB from -24 to +24, 0 by default, in 0.1 dB steps.
fn decibels(name: &str) -> FloatParam {
    let max = crate::ir::edit::MAX_SHAPE_DB as f32;
    FloatParam::new(name, 0.0, FloatRange::Linear { min: -max, max })
        .with_step_size(0.1)
        .with_unit(" dB")
}

/// A corner frequency from `min` to `max` Hz, skewed towards the low end.
fn corner(name: &str, default: f32, min: f32, max: f32) -> FloatParam {
    FloatParam::new(
        name,
        default,
        FloatRange::Skewed {
            min,
            max,
            factor: FloatRange::skew_factor(-1.5),
        },
    )
    .with_step_size(1.0)
    .with_unit(" Hz")
    .with_value_to_string(Arc::new(|value| format!("{value:.0}")))
}

fn milliseconds(name: &str, max: f32) -> FloatParam {
    FloatParam::new(
        name,
        0.0,
        FloatRange::Skewed {
            min: 0.0,
            max,
            factor: FloatRange::skew_factor(-1.5),
        },
    )
    .with_unit(" ms")
    .with_step_size(0.1)
}

/// A parameter with an "Off" end (`is_off`; `off_value` is that end): shows "Off" there,
/// without the unit, and the value with `unit` elsewhere, and reads either back ("off",
/// "250", "250 Hz").
fn with_off(
    param: FloatParam,
    off_value: f32,
    is_off: fn(f32) -> bool,
    unit: &'static str,
) -> FloatParam {
    param
        .with_value_to_string(Arc::new(move |value| {
            if is_off(value) {
                "Off".to_string()
            } else {
                format!("{value:.0}{unit}")
            }
        }))
        .with_string_to_value(Arc::new(move |text| {
            let text = text.trim();
            if text.eq_ignore_ascii_case("off") {
                Some(off_value)
            } else {
                text.trim_end_matches(unit.trim()).trim().parse().ok()
            }
        }))
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
            editor_width: AtomicU32::new(DEFAULT_EDITOR_SIZE.0),
            editor_height: AtomicU32::new(DEFAULT_EDITOR_SIZE.1),
            editor_tab: AtomicU8::new(0),
            editor_ir_view: AtomicU8::new(0),
            editor_zoom: AtomicU32::new(100),
            ir_source: EnumParam::new("IR source", IrSourceParam::Builtin),
            trim_start_ms: milliseconds("Trim start", 2_000.0),
            trim_end_ms: milliseconds("Trim end", 30_000.0),
            auto_trim_db: with_off(
                FloatParam::new(
                    "Auto trim",
                    DEFAULT_AUTO_TRIM_DB as f32,
                    FloatRange::Linear {
                        min: AUTO_TRIM_OFF_DB,
                        max: -40.0,
                    },
                )
                .with_step_size(1.0),
                AUTO_TRIM_OFF_DB,
                |v| v <= AUTO_TRIM_OFF_DB,
                " dB",
            ),
            predelay_ms: milliseconds("Pre-delay", MAX_PREDELAY_MS as f32),
            fade_in_ms: milliseconds("Fade in", 1_000.0),
            fade_out_ms: milliseconds("Fade out", 10_000.0),
            reverse: BoolParam::new("Reverse", false),
            stretch: FloatParam::new(
                "Stretch",
                1.0,
                FloatRange::SymmetricalSkewed {
                    min: crate::ir::resample::MIN_STRETCH as f32,
                    max: crate::ir::resample::MAX_STRETCH as f32,
                    factor: FloatRange::skew_factor(-1.0),
                    center: 1.0,
                },
            )
            .with_step_size(0.001)
            .with_unit(" x"),
            normalize: BoolParam::new("Normalize", true),
            low_cut_hz: with_off(
                FloatParam::new(
                    "Low cut",
                    LOW_CUT_OFF_HZ,
                    FloatRange::Skewed {
                        min: LOW_CUT_OFF_HZ,
                        max: 1_000.0,
                        factor: FloatRange::skew_factor(-2.0),
                    },
                )
                .with_step_size(1.0),
                LOW_CUT_OFF_HZ,
                |v| v <= LOW_CUT_OFF_HZ,
                " Hz",
            ),
            high_cut_hz: with_off(
                FloatParam::new(
                    "High cut",
                    HIGH_CUT_OFF_HZ,
                    FloatRange::Skewed {
                        min: 1_000.0,
                        max: HIGH_CUT_OFF_HZ,
                        factor: FloatRange::skew_factor(-1.0),
                    },
                )
                .with_step_size(10.0),
                HIGH_CUT_OFF_HZ,
                |v| v >= HIGH_CUT_OFF_HZ,
                " Hz",
            ),
            channel_format: EnumParam::new("Channel format", ChannelFormatParam::Auto)
                .non_automatable(),
            width: FloatParam::new("Width", 1.0, FloatRange::Linear { min: 0.0, max: 2.0 })
                .with_smoother(SmoothingStyle::Linear(20.0))
                .with_unit("%")
                .with_value_to_string(formatters::v2s_f32_percentage(0))
                .with_string_to_value(formatters::s2v_f32_percentage()),
            early_db: decibels("Early level"),
            tail_db: decibels("Tail level"),
            crossover_ms: FloatParam::new(
                "Crossover",
                crate::ir::edit::DEFAULT_CROSSOVER_MS as f32,
                FloatRange::Skewed {
                    min: 10.0,
                    max: 200.0,
                    factor: FloatRange::skew_factor(-1.0),
                },
            )
            .with_step_size(0.1)
            .with_unit(" ms"),
            low_shelf_hz: corner("Low shelf", 200.0, 20.0, 1_000.0),
            low_shelf_db: decibels("Low shelf gain"),
            high_shelf_hz: corner("High shelf", 6_000.0, 1_000.0, 20_000.0),
            high_shelf_db: decibels("High shelf gain"),
            predelay_sync: BoolParam::new("Pre-delay sync", false),
            predelay_note: EnumParam::new("Pre-delay note", NoteValue::N8),
            ir_file: Arc::new(IrFileState::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An eighth at 120 and 93.5 BPM is 250 ms and 320.86 ms; a note past the range holds at
    /// its end; names read back, the triplet's T in either case.
    #[test]
    fn note_values_give_their_length_at_the_tempo() {
        assert_eq!(NoteValue::N8.predelay_ms(120.0), 250.0);
        assert!((NoteValue::N8.predelay_ms(93.5) - 320.855_6).abs() < 1e-3);
        assert_eq!(NoteValue::N2.predelay_ms(60.0), MAX_PREDELAY_MS);
        assert!((NoteValue::N16D.beats() - 0.375).abs() < 1e-12);
        assert!((NoteValue::N4T.beats() - 2.0 / 3.0).abs() < 1e-12);
        for note in NoteValue::ALL {
            assert_eq!(NoteValue::parse(note.name()), Some(note));
        }
        assert_eq!(NoteValue::parse("1/4t"), Some(NoteValue::N4T));
        assert_eq!(NoteValue::parse("1/3"), None);
        assert!(
            NoteValue::ALL
                .windows(2)
                .all(|w| w[0].beats() < w[1].beats())
        );
        let params = LongtailParams::default();
        assert_eq!(
            params.predelay_now(Some(120.0)),
            0.0,
            "sync is off by default"
        );
    }

    #[test]
    fn off_ends_show_off_and_read_back() {
        let params = LongtailParams::default();
        let low_cut = &params.low_cut_hz;
        assert_eq!(low_cut.normalized_value_to_string(0.0, true), "Off");
        let normalized = low_cut.preview_normalized(250.0);
        assert_eq!(
            low_cut.normalized_value_to_string(normalized, true),
            "250 Hz"
        );
        for text in ["250", "250 Hz", " 250Hz "] {
            let parsed = low_cut.string_to_normalized_value(text).expect(text);
            assert!(
                (low_cut.preview_plain(parsed) - 250.0).abs() < 0.5,
                "{text}"
            );
        }
        let off = low_cut.string_to_normalized_value("OFF").expect("off");
        assert!(low_cut.preview_plain(off) <= LOW_CUT_OFF_HZ);
        let high_cut = &params.high_cut_hz;
        assert_eq!(high_cut.normalized_value_to_string(1.0, true), "Off");
        let trim = &params.auto_trim_db;
        assert_eq!(
            trim.normalized_value_to_string(trim.preview_normalized(-80.0), true),
            "-80 dB"
        );
    }
}
