//! The IR edits of `render` on the command line, one flag per edit, each applying only when
//! given, and their parsers (the ranges are checked with the library's, in
//! [`EditSettings::validate`]); and the ducking of its wet signal.

use std::path::PathBuf;

use longtail::audio::ducker::{DuckSettings, MAX_DUCK_DB};
use longtail::ir::decay::{BandScale, DecaySettings};
use longtail::ir::edit::{EditSettings, Shelf};
use longtail::params::NoteValue;

/// IR edits of `render`; each applies only when its flag is given.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EditArgs {
    /// Cut this many milliseconds from the start of the IR (file time).
    #[arg(long, value_name = "MS")]
    trim_start_ms: Option<f64>,
    /// Cut this many milliseconds from the end of the IR (file time).
    #[arg(long, value_name = "MS")]
    trim_end_ms: Option<f64>,
    /// Cut the end where the IR stays below this level relative to its peak (the plugin uses
    /// -80).
    #[arg(long, value_name = "DB", allow_hyphen_values = true)]
    auto_trim_db: Option<f64>,
    /// Silence in front of the IR, in milliseconds.
    #[arg(long, value_name = "MS")]
    predelay_ms: Option<f64>,
    /// Raised-cosine fade in over this many milliseconds.
    #[arg(long, value_name = "MS")]
    fade_in_ms: Option<f64>,
    /// Raised-cosine fade out over the last milliseconds.
    #[arg(long, value_name = "MS")]
    fade_out_ms: Option<f64>,
    /// Play the IR backwards.
    #[arg(long)]
    reverse: bool,
    /// Time-scale the IR (0.5 to 2; 2 is twice as long), through the resampler.
    #[arg(long, value_name = "FACTOR")]
    stretch: Option<f64>,
    /// Scale the IR to unit energy per output (as the plugin does by default).
    #[arg(long)]
    normalize: bool,
    /// Wet low cut: 12 dB/octave high-pass at this frequency.
    #[arg(long, value_name = "HZ")]
    low_cut_hz: Option<f64>,
    /// Wet high cut: 12 dB/octave low-pass at this frequency.
    #[arg(long, value_name = "HZ")]
    high_cut_hz: Option<f64>,
    /// Level of the IR before the crossover (early reflections), -24 to +24 dB.
    #[arg(long, value_name = "DB", allow_hyphen_values = true)]
    early: Option<f64>,
    /// Level of the IR after the crossover (the tail), -24 to +24 dB.
    #[arg(long, value_name = "DB", allow_hyphen_values = true)]
    tail: Option<f64>,
    /// Where early becomes tail, in milliseconds of the IR (default 80), with a crossfade of
    /// 10 ms each side (at most half of it).
    #[arg(long, value_name = "MS")]
    crossover: Option<f64>,
    /// Low shelf: corner frequency (half the gain there) and gain, e.g. `200:-6`.
    #[arg(long, value_name = "HZ:DB", value_parser = parse_shelf, allow_hyphen_values = true)]
    low_shelf: Option<Shelf>,
    /// High shelf: corner frequency (half the gain there) and gain, e.g. `6000:3`.
    #[arg(long, value_name = "HZ:DB", value_parser = parse_shelf, allow_hyphen_values = true)]
    high_shelf: Option<Shelf>,
    /// Decay time, 25 to 200 % of the IR's own, per band (100: as recorded); a lengthened
    /// band ends where the recording met its noise floor.
    #[arg(long, value_name = "PCT")]
    decay: Option<f64>,
    /// The decay time's multiplier (0.5 to 2) below a corner frequency, e.g. `500:1.5`: the
    /// lows ring longer. Fades in over the octave around the corner.
    #[arg(long, value_name = "HZ:X", value_parser = parse_band_scale)]
    decay_low: Option<BandScale>,
    /// The decay time's multiplier (0.5 to 2) above a corner frequency, e.g. `2000:0.5`: the
    /// highs die sooner.
    #[arg(long, value_name = "HZ:X", value_parser = parse_band_scale)]
    decay_high: Option<BandScale>,
    /// The host's tempo in beats per minute, for --predelay-note.
    #[arg(long, value_name = "BPM", value_parser = parse_tempo)]
    tempo: Option<f64>,
    /// Pre-delay as a note value at --tempo, as the plugin's Pre-delay sync: 1/64 to 1/2,
    /// dotted with `.` (`1/16.`) or triplet with `t` (`1/4t`); at most 500 ms. Replaces
    /// --predelay-ms.
    #[arg(long, value_name = "NOTE", value_parser = parse_note, requires = "tempo")]
    predelay_note: Option<NoteValue>,
}

fn parse_tempo(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(bpm) if (1.0..=999.0).contains(&bpm) => Ok(bpm),
        _ => Err(format!(
            "'{text}' is not a tempo: use beats per minute from 1 to 999"
        )),
    }
}

fn parse_note(text: &str) -> Result<NoteValue, String> {
    NoteValue::parse(text).ok_or_else(|| {
        let names: Vec<&str> = NoteValue::ALL.iter().map(|note| note.name()).collect();
        format!(
            "'{text}' is not a note value: use one of {}",
            names.join(", ")
        )
    })
}

/// `HZ:DB`, e.g. `200:-6`; the ranges are checked with the other edits.
fn parse_shelf(text: &str) -> Result<Shelf, String> {
    let parsed = text.split_once(':').and_then(|(hz, db)| {
        let hz = hz.trim().trim_end_matches("Hz").trim().parse().ok()?;
        let db = db.trim().trim_end_matches("dB").trim().parse().ok()?;
        Some(Shelf { hz, db })
    });
    parsed.ok_or_else(|| format!("'{text}' is not a shelf: use HZ:DB, e.g. 200:-6"))
}

/// `HZ:X`, e.g. `500:1.5`; the ranges are checked with the other edits.
fn parse_band_scale(text: &str) -> Result<BandScale, String> {
    let parsed = text.split_once(':').and_then(|(hz, factor)| {
        let hz = hz.trim().trim_end_matches("Hz").trim().parse().ok()?;
        let factor = factor.trim().trim_end_matches('x').trim().parse().ok()?;
        Some(BandScale { hz, factor })
    });
    parsed.ok_or_else(|| format!("'{text}' is not a corner and multiplier: use HZ:X, e.g. 500:1.5"))
}

impl EditArgs {
    pub(crate) fn settings(&self) -> EditSettings {
        let none = EditSettings::NONE;
        EditSettings {
            trim_start_ms: self.trim_start_ms.unwrap_or(none.trim_start_ms),
            trim_end_ms: self.trim_end_ms.unwrap_or(none.trim_end_ms),
            auto_trim_db: self.auto_trim_db,
            predelay_ms: match (self.predelay_note, self.tempo) {
                (Some(note), Some(bpm)) => note.predelay_ms(bpm),
                _ => self.predelay_ms.unwrap_or(none.predelay_ms),
            },
            fade_in_ms: self.fade_in_ms.unwrap_or(none.fade_in_ms),
            fade_out_ms: self.fade_out_ms.unwrap_or(none.fade_out_ms),
            reverse: self.reverse,
            stretch: self.stretch.unwrap_or(none.stretch),
            normalize: self.normalize,
            low_cut_hz: self.low_cut_hz,
            high_cut_hz: self.high_cut_hz,
            early_db: self.early.unwrap_or(none.early_db),
            tail_db: self.tail.unwrap_or(none.tail_db),
            crossover_ms: self.crossover.unwrap_or(none.crossover_ms),
            low_shelf: self.low_shelf,
            high_shelf: self.high_shelf,
            decay: DecaySettings {
                ratio: self.decay.map_or(1.0, |pct| pct / 100.0),
                low: self.decay_low,
                high: self.decay_high,
            },
        }
    }
}

/// Ducking of `render`'s wet signal: off unless --duck is given.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DuckArgs {
    /// Lower the wet signal by this many dB (0 to 24) while the key (the input, or --key)
    /// is at or over --duck-threshold.
    #[arg(long, value_name = "DB", value_parser = parse_duck)]
    duck: Option<f32>,
    /// The key's level (sample peak, dBFS) that starts the ducking.
    #[arg(long, value_name = "DB", allow_hyphen_values = true,
          default_value_t = DuckSettings::OFF.threshold_db, value_parser = parse_threshold)]
    duck_threshold: f32,
    /// Milliseconds to duck by the whole amount (1 to 500).
    #[arg(long, value_name = "MS", default_value_t = DuckSettings::OFF.attack_ms,
          value_parser = parse_attack)]
    duck_attack: f32,
    /// Milliseconds from the key falling under the threshold to the wet signal within 1 dB of
    /// unity (20 to 5000).
    #[arg(long, value_name = "MS", default_value_t = DuckSettings::OFF.release_ms,
          value_parser = parse_release)]
    duck_release: f32,
    /// A sidechain: this audio file (at the input's rate, any channel count up to 64) keys the
    /// ducking instead of the input.
    #[arg(long, value_name = "FILE", requires = "duck")]
    pub(crate) key: Option<PathBuf>,
}

impl DuckArgs {
    pub(crate) fn settings(&self) -> DuckSettings {
        DuckSettings {
            amount_db: self.duck.unwrap_or(0.0),
            threshold_db: self.duck_threshold,
            attack_ms: self.duck_attack,
            release_ms: self.duck_release,
        }
    }
}

/// A number within `low..=high`, or a message naming `what` and `unit`.
fn bounded(text: &str, (low, high): (f32, f32), what: &str, unit: &str) -> Result<f32, String> {
    match text.trim().trim_end_matches(unit).trim().parse::<f32>() {
        Ok(value) if (low..=high).contains(&value) => Ok(value),
        _ => Err(format!(
            "'{text}' is not {what}: use {low} to {high} {unit}"
        )),
    }
}

fn parse_duck(text: &str) -> Result<f32, String> {
    bounded(text, (0.0, MAX_DUCK_DB), "a ducking amount", "dB")
}

fn parse_threshold(text: &str) -> Result<f32, String> {
    bounded(text, (-60.0, 0.0), "a threshold", "dB")
}

fn parse_attack(text: &str) -> Result<f32, String> {
    bounded(text, (1.0, 500.0), "an attack time", "ms")
}

fn parse_release(text: &str) -> Result<f32, String> {
    bounded(text, (20.0, 5_000.0), "a release time", "ms")
}

/// A second IR blended with the first (render's Blend): off unless --ir-b is given.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BlendArgs {
    /// A second impulse response (one file, or one per input, as for --ir), played beside the
    /// first: the output's wet signal is (1 - blend) x A + blend x B. Every IR edit applies to
    /// both.
    #[arg(long, num_args = 1..=64, value_name = "FILE")]
    pub(crate) ir_b: Vec<PathBuf>,
    /// The second IR's share of the wet signal, in percent, 0 to 100.
    #[arg(long, value_name = "PCT", default_value_t = 50.0, value_parser = parse_blend,
          requires = "ir_b")]
    pub(crate) blend: f32,
}

fn parse_blend(text: &str) -> Result<f32, String> {
    bounded(text, (0.0, 100.0), "a blend", "%")
}
