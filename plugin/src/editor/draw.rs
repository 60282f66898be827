//! The editor's drawing helpers: parameter rows (with the mouse wheel) and toggles, the
//! thermal state label, the spectrogram's colours. Uses egui and [`super::theme`].

use egui::Color32;
use nice_plug::prelude::*;
use nice_plug_egui::widgets;

use super::spectrogram::{self, Spectrogram};
use super::theme::Palette;
use super::*;

/// Normalized change of one wheel notch over a slider (a tenth of it with Shift).
const WHEEL_STEP: f32 = 0.01;

pub(super) fn state_label(ui: &mut egui::Ui, state: crate::thermal::ThermalState) {
    use crate::thermal::ThermalState::*;
    let color = match state {
        Unknown => Palette::TEXT_WEAK,
        Nominal => Palette::GOOD,
        Fair => Palette::METER_MID,
        Serious => Palette::WARN,
        Critical => Palette::ERROR,
    };
    ui.colored_label(color, state.name());
}

/// Sets a parameter from the editor as one host gesture.
pub(super) fn set_param<P: Param>(setter: &ParamSetter, param: &P, value: P::Plain) {
    setter.begin_set_parameter(param);
    setter.set_parameter(param, value);
    setter.end_set_parameter(param);
}

impl EditorApp {
    /// A labelled slider row of a grid: nice-plug-egui's slider (double-click resets, Shift
    /// drags finely, a click on the value types one) plus the mouse wheel, with `tip` and the
    /// value on hover.
    pub(super) fn param_row<P: Param>(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        label: &str,
        param: &P,
        width: f32,
        tip: &str,
    ) {
        self.param_row_unless(ui, setter, (label, param), width, tip, None);
    }

    /// [`Self::param_row`], greyed out and inert with `disabled`'s reason on hover when it is
    /// given (a control that has no effect on this bus).
    pub(super) fn param_row_unless<P: Param>(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        (label, param): (&str, &P),
        width: f32,
        tip: &str,
        disabled: Option<&str>,
    ) {
        let enabled = disabled.is_none();
        ui.add_enabled(enabled, egui::Label::new(label))
            .on_hover_text(tip)
            .on_disabled_hover_text(disabled.unwrap_or(tip));
        let response = ui.add_enabled(
            enabled,
            widgets::ParamSlider::for_param(param, setter).with_width(width),
        );
        self.probe_rect(param.name(), response.rect);
        if enabled {
            wheel(ui, setter, param, &response);
        }
        response
            .on_hover_text(format!(
                "{tip}. Now {param}. Double-click resets; Shift drags finely; the wheel steps"
            ))
            .on_disabled_hover_text(disabled.unwrap_or(tip));
        ui.end_row();
    }

    /// Two parameters in one row of a grid, side by side (a corner and its amount, say), each
    /// with its own tip; `tip` is the label's. The pair takes the room of one row's slider and
    /// value (`width` is that slider's): each slider shows its value on itself.
    pub(super) fn pair_row<P: Param, Q: Param>(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        label: &str,
        (first, first_tip): (&P, &str),
        (second, second_tip): (&Q, &str),
        (width, value_width, tip): (f32, f32, &str),
    ) {
        ui.label(label).on_hover_text(tip);
        ui.horizontal(|ui| {
            let half = ((width + value_width - ui.spacing().item_spacing.x) / 2.0).max(24.0);
            self.labelled_slider(ui, setter, first, half, first_tip);
            self.labelled_slider(ui, setter, second, half, second_tip);
        });
        ui.end_row();
    }

    /// One slider with its value written over it, the wheel, its probe rectangle and its hover
    /// text.
    fn labelled_slider<P: Param>(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        param: &P,
        width: f32,
        tip: &str,
    ) {
        let response = ui.add(
            widgets::ParamSlider::for_param(param, setter)
                .without_value()
                .with_width(width),
        );
        ui.painter().text(
            response.rect.center(),
            egui::Align2::CENTER_CENTER,
            param.to_string(),
            egui::FontId::proportional(12.0 * self.zoom),
            Palette::TEXT,
        );
        self.probe_rect(param.name(), response.rect);
        wheel(ui, setter, param, &response);
        response.on_hover_text(format!(
            "{tip}. Now {param}. Double-click resets; Shift drags finely; the wheel steps"
        ));
    }
}

/// Steps `param` by [`WHEEL_STEP`] per wheel notch while the pointer is over `response`, each
/// notch one host gesture, and keeps the wheel from scrolling anything else.
fn wheel<P: Param>(ui: &egui::Ui, setter: &ParamSetter, param: &P, response: &egui::Response) {
    if !response.hovered() {
        return;
    }
    let (notches, fine) = ui.input_mut(|input| {
        let mut notches = 0.0f32;
        for event in &input.events {
            if let egui::Event::MouseWheel { delta, .. } = event {
                notches += delta.y.signum();
            }
        }
        if notches != 0.0 {
            input.smooth_scroll_delta = egui::Vec2::ZERO;
        }
        (notches, input.modifiers.shift)
    });
    if notches == 0.0 {
        return;
    }
    let step = if fine { WHEEL_STEP / 10.0 } else { WHEEL_STEP };
    let normalized = (param.unmodulated_normalized_value() + notches * step).clamp(0.0, 1.0);
    setter.begin_set_parameter(param);
    setter.set_parameter_normalized(param, normalized);
    setter.end_set_parameter(param);
}

/// A check box for a switch parameter.
pub(super) fn toggle(
    ui: &mut egui::Ui,
    setter: &ParamSetter,
    label: &str,
    param: &BoolParam,
) -> egui::Response {
    let mut on = param.value();
    let response = ui.checkbox(&mut on, label);
    if response.changed() {
        set_param(setter, param, on);
    }
    response
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
