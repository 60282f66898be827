//! The bus and its paths, on the Reverb tab: the bus the host chose, the Channel format
//! setting, the rule that maps the IR onto the bus ([`crate::ir::mapping`]) and a grid of
//! inputs (rows) by outputs (columns), each path's cell lit by its level, its IR channels on
//! hover. Uses `draw` and the preview.

use std::sync::atomic::Ordering::Relaxed;

use egui::{Sense, Stroke, StrokeKind, pos2, vec2};
use nice_plug::prelude::*;

use super::draw::set_param;
use super::preview::PreviewData;
use super::theme::Palette;
use crate::audio::monitor::EngineMonitor;
use crate::ir::IrError;
use crate::ir::mapping::{Bus, MappedPath, Mapping};
use crate::params::{ChannelFormatParam, LongtailParams};

/// Largest cell of the grid, in points.
const MAX_CELL: f32 = 22.0;
/// Level at which a cell is dark, in dB.
const FLOOR_DB: f32 = -60.0;

/// Sets the Channel format named by `LONGTAIL_EDITOR_FORMAT` (`auto`, `speakers`,
/// `ambisonics`, `discrete`), as a parameter change through the host: for screenshots.
pub(super) fn format_from_env(params: &LongtailParams, setter: &ParamSetter) {
    let Ok(name) = std::env::var("LONGTAIL_EDITOR_FORMAT") else {
        return;
    };
    let format = match name.trim().to_ascii_lowercase().as_str() {
        "auto" => ChannelFormatParam::Auto,
        "speakers" => ChannelFormatParam::Speakers,
        "ambisonics" => ChannelFormatParam::Ambisonics,
        "discrete" => ChannelFormatParam::Discrete,
        _ => return,
    };
    set_param(setter, &params.channel_format, format);
}

/// The bus the host chose, read as the Channel format says.
pub(super) fn current_bus(monitor: &EngineMonitor, params: &LongtailParams) -> Bus {
    let inputs = monitor.num_inputs.load(Relaxed).max(1) as usize;
    let outputs = monitor.num_outputs.load(Relaxed).max(1) as usize;
    Bus::new(inputs, outputs, params.channel_format.value().into())
}

/// The Bus rows (inside the IR grid) : the bus, the setting, the rule.
pub(super) fn bus_rows(
    ui: &mut egui::Ui,
    setter: &ParamSetter,
    params: &LongtailParams,
    bus: Bus,
    mapped: Option<(&PreviewData, &Result<Mapping, IrError>)>,
) {
    ui.label("Bus");
    ui.label(bus.to_string());
    ui.end_row();
    if bus.is_wide() {
        ui.label("Channel format");
        let current = params.channel_format.value();
        let name = |format: ChannelFormatParam| match format {
            ChannelFormatParam::Auto => "Auto (by width)",
            ChannelFormatParam::Speakers => "Speakers",
            ChannelFormatParam::Ambisonics => "Ambisonics (ACN, SN3D)",
            ChannelFormatParam::Discrete => "Discrete",
        };
        egui::ComboBox::from_id_salt("channel-format")
            .selected_text(name(current))
            .show_ui(ui, |ui| {
                for format in [
                    ChannelFormatParam::Auto,
                    ChannelFormatParam::Speakers,
                    ChannelFormatParam::Ambisonics,
                    ChannelFormatParam::Discrete,
                ] {
                    if ui
                        .selectable_label(format == current, name(format))
                        .clicked()
                    {
                        set_param(setter, &params.channel_format, format);
                    }
                }
            })
            .response
            .on_hover_text(
                "What the bus's channels are: hosts give a channel count only, and quad and \
                 first-order Ambisonics are both four channels. Saved with the project.",
            );
        ui.end_row();
    }
    if let Some((data, mapped)) = mapped {
        ui.label("Paths");
        match mapped {
            Ok(mapping) => {
                let silent = mapping.paths.iter().filter(|p| is_silent(p, data)).count();
                let mut summary = mapping.summary(data.ir_layout);
                if silent > 0 {
                    summary.push_str(&format!(
                        " ({silent} of them silent in the IR: no path, no cost)"
                    ));
                }
                ui.add(egui::Label::new(summary).wrap())
            }
            Err(err) => ui.colored_label(Palette::ERROR, err.to_string()),
        };
        ui.end_row();
    }
}

/// Whether every IR channel of `path` is silent: the engine makes no path of it.
fn is_silent(path: &MappedPath, data: &PreviewData) -> bool {
    path.terms.iter().all(|&(channel, _)| {
        data.channel_peaks_db
            .get(channel)
            .is_none_or(|&db| db <= SILENT_DB)
    })
}

/// The peak of a silent channel in the preview (`20 log10` of its floor, 1e-9).
const SILENT_DB: f32 = -179.0;

/// The grid of `mapping`'s paths, for buses wider than stereo.
pub(super) fn path_grid(ui: &mut egui::Ui, data: &PreviewData, mapping: &Mapping) {
    let bus = mapping.bus;
    let (inputs, outputs) = (bus.inputs, bus.outputs);
    let (in_format, out_format) = (bus.input_format(), bus.output_format());
    let width = ui.available_width().min(720.0);
    let label_w = 44.0;
    let cell = ((width - label_w) / outputs as f32).clamp(6.0, MAX_CELL);
    let size = vec2(
        label_w + cell * outputs as f32,
        label_w + cell * inputs as f32,
    );
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect);
    let origin = rect.min + vec2(label_w, label_w);
    let text = ui.visuals().text_color();
    let font = egui::FontId::proportional((cell * 0.5).clamp(7.0, 11.0));
    let label_every = if cell < 14.0 { 4 } else { 1 };
    for output in (0..outputs).step_by(label_every) {
        let at = origin + vec2((output as f32 + 0.5) * cell, -4.0);
        let label = out_format.short_label(output, outputs);
        painter.text(at, egui::Align2::CENTER_BOTTOM, label, font.clone(), text);
    }
    for input in (0..inputs).step_by(label_every) {
        let at = origin + vec2(-4.0, (input as f32 + 0.5) * cell);
        let label = in_format.label(input, inputs);
        painter.text(at, egui::Align2::RIGHT_CENTER, label, font.clone(), text);
    }
    let mut hovered = None;
    for path in mapping.paths.iter().filter(|p| !is_silent(p, data)) {
        // The loudest of its IR channels, with its weight.
        let level_db = path
            .terms
            .iter()
            .map(|&(channel, w)| {
                data.channel_peaks_db
                    .get(channel)
                    .copied()
                    .unwrap_or(FLOOR_DB)
                    + 20.0 * w.log10()
            })
            .fold(FLOOR_DB, f32::max);
        let lit = ((level_db - FLOOR_DB) / -FLOOR_DB).clamp(0.0, 1.0);
        let min = origin + vec2(path.output as f32 * cell, path.input as f32 * cell);
        let cell_rect = egui::Rect::from_min_size(min, vec2(cell, cell)).shrink(0.5);
        let colour = Palette::level(0.15 + 0.85 * lit);
        painter.rect_filled(cell_rect, 1.0, colour);
        if response
            .hover_pos()
            .is_some_and(|pos| cell_rect.contains(pos))
        {
            hovered = Some((path, level_db));
            painter.rect_stroke(cell_rect, 1.0, Stroke::new(1.0, text), StrokeKind::Inside);
        }
    }
    let frame =
        egui::Rect::from_min_size(origin, vec2(cell * outputs as f32, cell * inputs as f32));
    painter.rect_stroke(
        frame,
        0.0,
        Stroke::new(1.0, Palette::LINE),
        StrokeKind::Outside,
    );
    painter.text(
        pos2(rect.min.x, rect.min.y),
        egui::Align2::LEFT_TOP,
        "in \\ out",
        font,
        text,
    );
    if let Some((path, level_db)) = hovered {
        let terms: Vec<String> = path
            .terms
            .iter()
            .map(|&(channel, w)| format!("{w} x IR channel {}", channel + 1))
            .collect();
        response.on_hover_text(format!(
            "{} -> {}: {} (peak {level_db:.1} dB)",
            in_format.label(path.input, inputs),
            out_format.label(path.output, outputs),
            terms.join(" + ")
        ));
    }
}
