//! The editor's drawing helpers: parameter rows and toggles, the thermal state label, the
//! waveform and the spectrogram. Uses egui only.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use nice_plug::prelude::*;
use nice_plug_egui::widgets;

use super::spectrogram::{self, Spectrogram};
use super::*;

pub(super) fn state_label(ui: &mut egui::Ui, state: crate::thermal::ThermalState) {
    use crate::thermal::ThermalState::*;
    let color = match state {
        Unknown => Color32::GRAY,
        Nominal => Color32::from_rgb(120, 200, 120),
        Fair => Color32::from_rgb(220, 200, 90),
        Serious => Color32::from_rgb(255, 150, 60),
        Critical => Color32::from_rgb(255, 70, 70),
    };
    ui.colored_label(color, state.name());
}

/// Sets a parameter from the editor as one host gesture.
pub(super) fn set_param<P: Param>(setter: &ParamSetter, param: &P, value: P::Plain) {
    setter.begin_set_parameter(param);
    setter.set_parameter(param, value);
    setter.end_set_parameter(param);
}

/// A labelled slider row of a grid.
pub(super) fn param_row<P: Param>(ui: &mut egui::Ui, setter: &ParamSetter, label: &str, param: &P) {
    ui.label(label);
    ui.add(widgets::ParamSlider::for_param(param, setter).with_width(260.0));
    ui.end_row();
}

/// A check box for a switch parameter.
pub(super) fn toggle(ui: &mut egui::Ui, setter: &ParamSetter, label: &str, param: &BoolParam) {
    let mut on = param.value();
    if ui.checkbox(&mut on, label).changed() {
        set_param(setter, param, on);
    }
}

/// A colour for a level from [`spectrogram::FLOOR_DB`] (dark blue-black) to 0 dB (pale
/// yellow), through violet and orange.
pub(super) fn heat_colour(db: f32) -> Color32 {
    const STOPS: [(f32, [f32; 3]); 5] = [
        (0.0, [8.0, 8.0, 24.0]),
        (0.35, [70.0, 20.0, 110.0]),
        (0.6, [180.0, 50.0, 90.0]),
        (0.82, [250.0, 140.0, 40.0]),
        (1.0, [255.0, 245.0, 170.0]),
    ];
    let t = ((db - spectrogram::FLOOR_DB) / -spectrogram::FLOOR_DB).clamp(0.0, 1.0);
    let upper = STOPS
        .iter()
        .position(|&(at, _)| at >= t)
        .unwrap_or(4)
        .max(1);
    let (t0, c0) = STOPS[upper - 1];
    let (t1, c1) = STOPS[upper];
    let f = ((t - t0) / (t1 - t0).max(1e-6)).clamp(0.0, 1.0);
    let mix = |i: usize| (c0[i] + (c1[i] - c0[i]) * f).round() as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// The spectrogram as an image: time left to right, frequency bottom to top.
pub(super) fn spectrogram_image(s: &Spectrogram) -> egui::ColorImage {
    let mut pixels = Vec::with_capacity(s.columns * s.bands);
    for row in 0..s.bands {
        let band = s.bands - 1 - row;
        pixels.extend((0..s.columns).map(|column| heat_colour(s.at(column, band))));
    }
    egui::ColorImage::new([s.columns, s.bands], pixels)
}

pub(super) fn draw_spectrogram(
    ui: &mut egui::Ui,
    preview: &PreviewData,
    texture: &egui::TextureHandle,
) {
    let width = ui.available_width().max(100.0);
    let height = 160.0;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.image(
        texture.id(),
        rect,
        Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
        Color32::WHITE,
    );
    // Frequency grid: 100 Hz, 1 kHz, 10 kHz where they fall inside.
    let s = &preview.spectrogram;
    let (low, high) = (s.edges_hz[0].ln(), s.edges_hz[s.bands].ln());
    for (hz, label) in [
        (100.0f32, "100 Hz"),
        (1000.0, "1 kHz"),
        (10_000.0, "10 kHz"),
    ] {
        let at = (hz.ln() - low) / (high - low);
        if !(0.0..1.0).contains(&at) {
            continue;
        }
        let y = rect.bottom() - at * rect.height();
        painter.line_segment(
            [Pos2::new(rect.left(), y), Pos2::new(rect.right(), y)],
            Stroke::new(1.0, Color32::from_white_alpha(40)),
        );
        painter.text(
            Pos2::new(rect.left() + 4.0, y - 2.0),
            egui::Align2::LEFT_BOTTOM,
            label,
            egui::FontId::proportional(11.0),
            Color32::from_white_alpha(160),
        );
    }
    painter.text(
        Pos2::new(rect.right() - 4.0, rect.bottom() - 2.0),
        egui::Align2::RIGHT_BOTTOM,
        format!("{:.2} s", preview.seconds),
        egui::FontId::proportional(11.0),
        Color32::from_white_alpha(160),
    );
    painter.rect_stroke(
        rect,
        4.0,
        Stroke::new(1.0, Color32::from_gray(60)),
        egui::StrokeKind::Inside,
    );
}

pub(super) fn draw_waveform(ui: &mut egui::Ui, preview: &PreviewData) {
    let width = ui.available_width().max(100.0);
    let lane_height = 48.0;
    let height = lane_height * preview.columns.len() as f32;
    let (rect, _) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, Color32::from_gray(24));
    let peak = preview
        .columns
        .iter()
        .flatten()
        .fold(1e-9f32, |acc, &(lo, hi)| acc.max(-lo).max(hi));
    // A reverb tail spans orders of magnitude: draw the envelope in dB over PREVIEW_RANGE_DB.
    let stroke = Stroke::new(1.0, Color32::from_rgb(110, 180, 255));
    for (lane, columns) in preview.columns.iter().enumerate() {
        let top = rect.top() + lane as f32 * lane_height;
        let middle = top + lane_height / 2.0;
        let half = lane_height / 2.0 - 2.0;
        for (col, &(lo, hi)) in columns.iter().enumerate() {
            let level = (-lo).max(hi) / peak;
            let db = 20.0 * level.max(1e-9).log10();
            let extent = ((db + PREVIEW_RANGE_DB) / PREVIEW_RANGE_DB).clamp(0.0, 1.0) * half;
            if extent <= 0.0 {
                continue;
            }
            let x = rect.left() + (col as f32 + 0.5) * width / columns.len() as f32;
            painter.line_segment(
                [Pos2::new(x, middle - extent), Pos2::new(x, middle + extent)],
                stroke,
            );
        }
    }
    painter.rect_stroke(
        Rect::from_min_size(rect.min, rect.size()),
        4.0,
        Stroke::new(1.0, Color32::from_gray(60)),
        egui::StrokeKind::Inside,
    );
}
