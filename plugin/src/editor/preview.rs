//! The IR preview: the IR exactly as the preparation thread prepares it for the engine (edits
//! applied, at the session rate), outlined as a waveform and a spectrogram, made off the GUI
//! thread. Uses the preparer and [`super::spectrogram`].

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
    /// Per channel, `(min, max)` per column.
    pub columns: Vec<Vec<(f32, f32)>>,
    /// Power over time and frequency, all channels together.
    pub spectrogram: Spectrogram,
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
/// outlines it. Allocates and may take a while (resampling, filters): off the GUI thread.
pub fn make_preview(key: PreviewKey, files: &IrFileState) -> Preview {
    let result = prepare_ir_for(key.source, &key.edits, key.sample_rate, files, key.bus)
        .map_err(|err| err.to_string())
        .map(|ir| {
            let len = ir.len().max(1);
            let columns = ir
                .channels
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
                .collect();
            PreviewData {
                name: ir.name.clone(),
                seconds: ir.seconds(),
                num_frames: ir.len(),
                layout: ir.layout.name(),
                num_channels: ir.channels.len(),
                ir_layout: ir.layout,
                channel_peaks_db: ir
                    .channels
                    .iter()
                    .map(|c| {
                        let peak = c.iter().fold(0.0f32, |p, s| p.max(s.abs()));
                        20.0 * peak.max(1e-9).log10()
                    })
                    .collect(),
                columns,
                spectrogram: spectrogram(
                    &ir.channels,
                    ir.sample_rate,
                    SPECTROGRAM_COLUMNS,
                    SPECTROGRAM_BANDS,
                ),
            }
        });
    Preview { key, result }
}
