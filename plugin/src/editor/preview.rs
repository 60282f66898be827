//! The IR preview, made off the GUI thread. Uses the preparer and [`super::spectrogram`].
//!
//! Two preparations of the selected IR, both exactly as the preparation thread makes them:
//!
//! - the **played** IR (every edit), whose figures (length, channels, layout, the paths on
//!   the bus) the editor shows;
//! - the **picture**: the same IR with the edits that cut or shape its ends left out (trims,
//!   automatic trim, fades, pre-delay), outlined as a waveform, a decay curve and a spectrogram.
//!   The editor draws those edits over it as handles ([`super::ir_picture`]), so what is cut
//!   stays visible. The picture depends on the picture's edits alone, so a preview keeps the
//!   last one ([`Picture`]) while only a trim, a fade or the pre-delay moves.

use std::sync::Arc;

use super::spectrogram::{Spectrogram, spectrogram};
use crate::ir::IrLayout;
use crate::ir::edit::EditSettings;
use crate::ir::mapping::Bus;
use crate::ir::store::IrFileState;
use crate::preparer::{IrSource, prepare_ir_for};

/// What a preview shows: the IR as the engine plays it, edits applied, at the session rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewKey {
    /// Built-in IR or the user's file (by generation).
    pub source: IrSource,
    /// The edit parameters.
    pub edits: EditSettings,
    /// The session rate.
    pub sample_rate: u32,
    /// The bus (a built-in IR has a room per speaker past stereo).
    pub bus: Bus,
    /// The second IR (slot B) and its edits, where one is on: the picture's decay curve then
    /// follows the Blend.
    pub second: Option<(IrSource, EditSettings)>,
}

/// A preview of the selected IR (waveform and spectrogram), made off the GUI thread.
#[derive(Debug)]
pub struct Preview {
    /// What it shows.
    pub key: PreviewKey,
    /// The prepared IR's outline, or why it could not be prepared.
    pub result: Result<PreviewData, String>,
}

/// The outline of a prepared IR.
#[derive(Debug)]
pub struct PreviewData {
    /// The IR's name.
    pub name: String,
    /// Length in seconds at the session rate.
    pub seconds: f64,
    /// Length in samples at the session rate.
    pub num_frames: usize,
    /// The layout's name ("stereo", "true stereo", ...).
    pub layout: &'static str,
    /// Channels of the IR.
    pub num_channels: usize,
    /// The layout itself, for the paths on the bus ([`crate::ir::mapping`]).
    pub ir_layout: IrLayout,
    /// Peak of each channel, in dBFS.
    pub channel_peaks_db: Vec<f32>,
    /// Where the automatic trim ends the IR, in milliseconds of the file's time, when it cuts
    /// before the end trim does.
    pub auto_trim_end_ms: Option<f64>,
    /// The picture, shared with the previous preview where its key is the same.
    pub picture: Arc<Picture>,
}

/// The IR with the edits drawn as handles left out ([`picture_edits`]), outlined.
#[derive(Debug)]
pub struct Picture {
    /// What it shows: the preview's key with the picture's edits.
    pub key: PreviewKey,
    /// Its length in samples at the session rate (stretched, not cut).
    pub frames: usize,
    /// Per channel, `(min, max)` per column.
    pub columns: Vec<Vec<(f32, f32)>>,
    /// The energy still to come (backward-integrated energy of every channel) at the start of
    /// each column, the IR's and the second IR's (on the same time axis; `None` without one):
    /// the decay curve, [`Picture::blended_decay_db`].
    pub remaining: (Vec<f64>, Option<Vec<f64>>),
    /// Power over time and frequency, all channels together.
    pub spectrogram: Spectrogram,
}

/// The edits the picture leaves out: the ones drawn over it as handles.
pub fn picture_edits(edits: &EditSettings) -> EditSettings {
    EditSettings {
        reverse: edits.reverse,
        stretch: edits.stretch,
        normalize: edits.normalize,
        low_cut_hz: edits.low_cut_hz,
        high_cut_hz: edits.high_cut_hz,
        early_db: edits.early_db,
        tail_db: edits.tail_db,
        crossover_ms: edits.crossover_ms,
        low_shelf: edits.low_shelf,
        high_shelf: edits.high_shelf,
        decay: edits.decay,
        ..EditSettings::NONE
    }
}

impl Picture {
    /// The energy decay curve, in dB under the total, per column: the IR's own, or with a
    /// second IR the two blended at `blend` (the second's share). Their reverbs are
    /// uncorrelated, so the energies add, each weighted by its share squared.
    pub fn blended_decay_db(&self, blend: f32) -> Vec<f32> {
        let (a, b) = &self.remaining;
        let (wa, wb) = match b {
            Some(_) => ((1.0 - f64::from(blend)).powi(2), f64::from(blend).powi(2)),
            None => (1.0, 0.0),
        };
        let energy = |col: usize| {
            wa * a.get(col).copied().unwrap_or(0.0)
                + wb * b.as_ref().and_then(|b| b.get(col)).copied().unwrap_or(0.0)
        };
        let total = energy(0).max(1e-30);
        (0..a.len())
            .map(|col| (10.0 * (energy(col) / total).max(1e-12).log10()) as f32)
            .collect()
    }
}

/// The outline of `channels`: `(min, max)` of each of [`PREVIEW_COLUMNS`] columns.
fn outline(channels: &[Vec<f32>]) -> Vec<Vec<(f32, f32)>> {
    let len = channels.first().map_or(0, Vec::len).max(1);
    channels
        .iter()
        .map(|samples| {
            (0..PREVIEW_COLUMNS)
                .map(|col| {
                    let start = col * len / PREVIEW_COLUMNS;
                    let end = ((col + 1) * len / PREVIEW_COLUMNS).max(start + 1).min(len);
                    samples
                        .get(start..end)
                        .unwrap_or_default()
                        .iter()
                        .fold((0.0f32, 0.0f32), |(lo, hi), &s| (lo.min(s), hi.max(s)))
                })
                .collect()
        })
        .collect()
}

/// The energy of all channels from the start of each of [`PREVIEW_COLUMNS`] columns of a
/// picture `frames` long to their end (zero past it).
fn remaining_energy(channels: &[Vec<f32>], frames: usize) -> Vec<f64> {
    let len = channels.first().map_or(0, Vec::len);
    let mut remaining = vec![0.0f64; len + 1];
    for n in (0..len).rev() {
        let energy: f64 = channels.iter().map(|c| f64::from(c[n]).powi(2)).sum();
        remaining[n] = remaining[n + 1] + energy;
    }
    (0..PREVIEW_COLUMNS)
        .map(|col| remaining[(col * frames / PREVIEW_COLUMNS).min(len)])
        .collect()
}

/// Dynamic range of the waveform preview, in dB below the IR's peak.
pub(super) const PREVIEW_RANGE_DB: f32 = 72.0;
/// Columns of the waveform preview.
pub const PREVIEW_COLUMNS: usize = 600;
/// Time columns of the spectrogram.
pub const SPECTROGRAM_COLUMNS: usize = 300;
/// Frequency bands of the spectrogram (logarithmic, 20 Hz to Nyquist).
pub const SPECTROGRAM_BANDS: usize = 72;

/// Prepares the IR `key` describes exactly as the preparation thread does for the engine, and
/// outlines it; the picture is `last`'s where that shows the same. Allocates and may take a
/// while (resampling, filters): off the GUI thread.
pub fn make_preview(key: PreviewKey, files: &IrFileState, last: Option<Arc<Picture>>) -> Preview {
    make_blended_preview(key, [files, &IrFileState::default()], last)
}

/// [`make_preview`] with each slot's user file, the first IR's first: the picture's decay curve
/// has the second IR's too, for the Blend.
pub fn make_blended_preview(
    key: PreviewKey,
    [files, files_b]: [&IrFileState; 2],
    last: Option<Arc<Picture>>,
) -> Preview {
    let prepare = |edits: &EditSettings| {
        prepare_ir_for(key.source, edits, key.sample_rate, files, key.bus)
            .map_err(|err| err.to_string())
    };
    let picture_key = PreviewKey {
        edits: picture_edits(&key.edits),
        ..key
    };
    let result = prepare(&key.edits).and_then(|played| {
        let picture = match last {
            Some(last) if last.key == picture_key => last,
            _ => {
                let ir = prepare(&picture_key.edits)?;
                // The second IR with the picture's edits too; where it cannot be prepared,
                // the picture is the first IR's alone.
                let second = key.second.and_then(|(source, edits)| {
                    let edits = picture_edits(&edits);
                    prepare_ir_for(source, &edits, key.sample_rate, files_b, key.bus).ok()
                });
                let frames = ir.len();
                let remaining = (
                    remaining_energy(&ir.channels, frames),
                    second.map(|second| remaining_energy(&second.channels, frames)),
                );
                Arc::new(Picture {
                    remaining,
                    key: picture_key,
                    frames: ir.len(),
                    columns: outline(&ir.channels),
                    spectrogram: spectrogram(
                        &ir.channels,
                        ir.sample_rate,
                        SPECTROGRAM_COLUMNS,
                        SPECTROGRAM_BANDS,
                    ),
                })
            }
        };
        let edits = &key.edits;
        let rate = f64::from(key.sample_rate);
        let predelay = (edits.predelay_ms * 1e-3 * rate).round() as usize;
        // The played IR's body (without its pre-delay) in the file's time, against what the
        // manual trims keep: where it is shorter, the automatic trim cut it.
        let body_ms = played.len().saturating_sub(predelay) as f64 * 1e3 / rate / edits.stretch;
        let picture_ms = picture.frames as f64 * 1e3 / rate / edits.stretch;
        let kept_ms = picture_ms - edits.trim_start_ms - edits.trim_end_ms;
        let auto_trim_end_ms = (edits.auto_trim_db.is_some() && body_ms < kept_ms - 0.5)
            .then_some(edits.trim_start_ms + body_ms);
        Ok(PreviewData {
            name: played.name.clone(),
            seconds: played.seconds(),
            num_frames: played.len(),
            layout: played.layout.name(),
            num_channels: played.channels.len(),
            ir_layout: played.layout,
            channel_peaks_db: played
                .channels
                .iter()
                .map(|c| {
                    let peak = c.iter().fold(0.0f32, |p, s| p.max(s.abs()));
                    20.0 * peak.max(1e-9).log10()
                })
                .collect(),
            auto_trim_end_ms,
            picture,
        })
    });
    Preview { key, result }
}
