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
//!
//! Here: the parameters, their defaults and the edit settings they describe; `choices`: the
//! enums among them; `ranges`: the shapes of the numeric ones.

use std::sync::Arc;

/// Size of a new editor window, in logical pixels (persisted with the state once resized).
pub const DEFAULT_EDITOR_SIZE: (u32, u32) = (720, 480);

use std::sync::atomic::{AtomicU8, AtomicU32};

use nice_plug::prelude::*;

use crate::audio::ducker::{DuckSettings, MAX_DUCK_DB};
use crate::ir::builtin::BuiltinIr;
use crate::ir::decay::{BandScale, DecaySettings, MULTIPLIER_RANGE, RATIO_RANGE};
use crate::ir::edit::{DEFAULT_AUTO_TRIM_DB, EditSettings, Shelf};
use crate::ir::store::IrFileState;
use crate::preparer::IrSource;

mod choices;
mod ranges;

pub use choices::{
    BackendParam, ChannelFormatParam, DuckKeyParam, IrSourceParam, LatencyModeParam,
    MAX_PREDELAY_MS, NoteValue, SecondIrParam,
};
use ranges::{
    corner, decibels, decibels_in, milliseconds, ratio, share, skewed, time_ms, with_off,
};

/// How long the edit parameters must stay put before an engine is rebuilt, in milliseconds.
pub const EDIT_DEBOUNCE_MS: f32 = 150.0;
/// The auto trim parameter at or below this is "Off".
pub const AUTO_TRIM_OFF_DB: f32 = -120.0;
/// The low cut parameter at or below this is "Off".
pub const LOW_CUT_OFF_HZ: f32 = 10.0;
/// The high cut parameter at or above this is "Off".
pub const HIGH_CUT_OFF_HZ: f32 = 20_000.0;

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
    /// The decay time's ratio to the IR's own (0.25 to 2; 1 as recorded); an IR edit.
    #[id = "decay"]
    pub decay: FloatParam,
    /// Corner of the decay's low multiplier, in Hz.
    #[id = "decaylhz"]
    pub decay_low_hz: FloatParam,
    /// The decay time's multiplier below [`Self::decay_low_hz`] (0.5 to 2; 1 is off).
    #[id = "decaylow"]
    pub decay_low: FloatParam,
    /// Corner of the decay's high multiplier, in Hz.
    #[id = "decayhhz"]
    pub decay_high_hz: FloatParam,
    /// The decay time's multiplier above [`Self::decay_high_hz`] (0.5 to 2; 1 is off).
    #[id = "decayhigh"]
    pub decay_high: FloatParam,
    /// Ducking: the wet signal's reduction while the key plays, 0 to 24 dB; 0 is off. Run-time,
    /// not an IR edit.
    #[id = "duck"]
    pub duck_db: FloatParam,
    /// The key's level (sample peak) that starts the ducking, in dBFS.
    #[id = "duckthr"]
    pub duck_threshold_db: FloatParam,
    /// Time to duck by the whole amount, in milliseconds.
    #[id = "duckatk"]
    pub duck_attack_ms: FloatParam,
    /// Time from the key falling under the threshold to the wet signal within 1 dB of unity.
    #[id = "duckrel"]
    pub duck_release_ms: FloatParam,
    /// What the ducking listens to: the input or the sidechain.
    #[id = "duckkey"]
    pub duck_key: EnumParam<DuckKeyParam>,
    /// Where the second IR comes from (slot B); Off by default.
    #[id = "irbsrc"]
    pub ir_b_source: EnumParam<SecondIrParam>,
    /// Slot B's built-in IR.
    #[id = "irb"]
    pub ir_b: EnumParam<BuiltinIr>,
    /// The second IR's share of the wet signal, 0 to 1: `(1 - blend) A + blend B`. Smoothed.
    #[id = "blend"]
    pub blend: FloatParam,
    /// Slot B's IR file, kept in the project like the first.
    #[persist = "ir-file-b"]
    pub ir_file_b: Arc<IrFileState>,
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

    /// The second IR the parameters select (slot B), `None` while it is Off: its file where
    /// the source is File and one is loaded, else its built-in IR. The flag says whether it is
    /// the file. Reads atomics only: safe on the audio thread.
    pub fn ir_b_source_now(&self) -> Option<(IrSource, bool)> {
        let file_generation = self.ir_file_b.generation();
        match self.ir_b_source.value() {
            SecondIrParam::Off => None,
            SecondIrParam::File if file_generation != 0 => {
                Some((IrSource::File(file_generation), true))
            }
            SecondIrParam::Builtin | SecondIrParam::File => {
                Some((IrSource::Builtin(self.ir_b.value()), false))
            }
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
            decay: DecaySettings {
                ratio: f64::from(self.decay.value()),
                low: band_scale(&self.decay_low_hz, &self.decay_low),
                high: band_scale(&self.decay_high_hz, &self.decay_high),
            },
        }
    }
}

impl LongtailParams {
    /// The ducking's settings now. Reads atomics only: safe on the audio thread.
    pub fn duck_settings(&self) -> DuckSettings {
        DuckSettings {
            amount_db: self.duck_db.value(),
            threshold_db: self.duck_threshold_db.value(),
            attack_ms: self.duck_attack_ms.value(),
            release_ms: self.duck_release_ms.value(),
        }
    }

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

/// A decay multiplier from its corner and factor parameters; `None` at 1.
fn band_scale(hz: &FloatParam, factor: &FloatParam) -> Option<BandScale> {
    (factor.value() != 1.0).then(|| BandScale {
        hz: f64::from(hz.value()),
        factor: f64::from(factor.value()),
    })
}

/// Default wet share when the plugin is inserted.
pub const DEFAULT_MIX: f32 = 0.35;

impl Default for LongtailParams {
    fn default() -> Self {
        Self {
            mix: share("Mix", DEFAULT_MIX, 20.0),
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
                skewed("Low cut", LOW_CUT_OFF_HZ, (LOW_CUT_OFF_HZ, 1_000.0), -2.0)
                    .with_step_size(1.0),
                LOW_CUT_OFF_HZ,
                |v| v <= LOW_CUT_OFF_HZ,
                " Hz",
            ),
            high_cut_hz: with_off(
                skewed(
                    "High cut",
                    HIGH_CUT_OFF_HZ,
                    (1_000.0, HIGH_CUT_OFF_HZ),
                    -1.0,
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
            crossover_ms: skewed(
                "Crossover",
                crate::ir::edit::DEFAULT_CROSSOVER_MS as f32,
                (10.0, 200.0),
                -1.0,
            )
            .with_step_size(0.1)
            .with_unit(" ms"),
            low_shelf_hz: corner("Low shelf", 200.0, 20.0, 1_000.0),
            low_shelf_db: decibels("Low shelf gain"),
            high_shelf_hz: corner("High shelf", 6_000.0, 1_000.0, 20_000.0),
            high_shelf_db: decibels("High shelf gain"),
            decay: ratio("Decay", RATIO_RANGE, true),
            decay_low_hz: corner("Decay low corner", 250.0, 20.0, 2_000.0),
            decay_low: ratio("Decay low", MULTIPLIER_RANGE, false),
            decay_high_hz: corner("Decay high corner", 4_000.0, 1_000.0, 20_000.0),
            decay_high: ratio("Decay high", MULTIPLIER_RANGE, false),
            predelay_sync: BoolParam::new("Pre-delay sync", false),
            predelay_note: EnumParam::new("Pre-delay note", NoteValue::N8),
            duck_db: decibels_in("Duck", 0.0, (0.0, MAX_DUCK_DB)),
            duck_threshold_db: decibels_in(
                "Duck threshold",
                DuckSettings::OFF.threshold_db,
                (-60.0, 0.0),
            ),
            duck_attack_ms: time_ms("Duck attack", DuckSettings::OFF.attack_ms, 1.0, 500.0),
            duck_release_ms: time_ms("Duck release", DuckSettings::OFF.release_ms, 20.0, 5_000.0),
            duck_key: EnumParam::new("Duck key", DuckKeyParam::Input),
            ir_b_source: EnumParam::new("IR B source", SecondIrParam::Off),
            ir_b: EnumParam::new("Impulse response B", BuiltinIr::Plate),
            blend: share("Blend", 0.0, 50.0),
            ir_file_b: Arc::new(IrFileState::default()),
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
