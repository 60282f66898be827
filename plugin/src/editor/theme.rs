//! The editor's look: one palette and one type scale, applied to egui's style once in `build`
//! and used by every drawing helper. Uses egui only.
//!
//! A new widget takes its colours from [`Palette`] by role, never as literal RGB: text from
//! `TEXT` or `TEXT_WEAK`, surfaces from `BG`, `PANEL` and `FIELD`, the IR from `WAVE`, edits
//! and handles from `HANDLE`, levels from `METER_*`, messages from `WARN` and `ERROR`. Every
//! text colour keeps at least WCAG AA contrast (4.5:1) against the surfaces it is drawn on; the
//! test below checks each pair.

use egui::{Color32, FontFamily, FontId, TextStyle};

/// The colours, by role.
pub struct Palette;

impl Palette {
    /// The window.
    pub const BG: Color32 = Color32::from_rgb(0x17, 0x19, 0x1d);
    /// Panels and the picture's backdrop.
    pub const PANEL: Color32 = Color32::from_rgb(0x20, 0x23, 0x29);
    /// Sliders, fields and buttons at rest.
    pub const FIELD: Color32 = Color32::from_rgb(0x2c, 0x30, 0x38);
    /// Lines that separate and frame.
    pub const LINE: Color32 = Color32::from_rgb(0x4a, 0x50, 0x5c);
    /// Body text.
    pub const TEXT: Color32 = Color32::from_rgb(0xe6, 0xe8, 0xec);
    /// Secondary text: units, hints, labels of lesser rank.
    pub const TEXT_WEAK: Color32 = Color32::from_rgb(0xa4, 0xaa, 0xb6);
    /// The accent: selection, active controls, the slider fill.
    pub const ACCENT: Color32 = Color32::from_rgb(0x5c, 0xb8, 0xff);
    /// The IR's waveform.
    pub const WAVE: Color32 = Color32::from_rgb(0x6f, 0xb4, 0xf5);
    /// Edits on the IR: trims, fades, pre-delay, their handles.
    pub const HANDLE: Color32 = Color32::from_rgb(0xff, 0xc8, 0x57);
    /// The decay envelope drawn over the IR.
    pub const ENVELOPE: Color32 = Color32::from_rgb(0xf0, 0x8a, 0xc8);
    /// Meter: level below -18 dBFS.
    pub const METER_LOW: Color32 = Color32::from_rgb(0x58, 0xc7, 0x7a);
    /// Meter: -18 to -6 dBFS.
    pub const METER_MID: Color32 = Color32::from_rgb(0xe8, 0xc8, 0x4a);
    /// Meter: above -6 dBFS.
    pub const METER_HIGH: Color32 = Color32::from_rgb(0xff, 0x6b, 0x5a);
    /// Warnings.
    pub const WARN: Color32 = Color32::from_rgb(0xff, 0xb8, 0x5c);
    /// Errors.
    pub const ERROR: Color32 = Color32::from_rgb(0xff, 0x7a, 0x6b);
    /// Good news (a nominal thermal state).
    pub const GOOD: Color32 = Color32::from_rgb(0x7c, 0xd6, 0x8c);
    /// Over what does not play (trimmed parts of the IR).
    pub const SHADE: Color32 = Color32::from_black_alpha(170);
    /// Grid lines over pictures.
    pub const GRID: Color32 = Color32::from_rgba_premultiplied(40, 40, 40, 40);

    /// Between `FIELD` (0) and `ACCENT` (1): a level on a dark cell.
    pub fn level(at: f32) -> Color32 {
        let at = at.clamp(0.0, 1.0);
        let mix = |a: u8, b: u8| (f32::from(a) + (f32::from(b) - f32::from(a)) * at).round() as u8;
        let (a, b) = (Self::FIELD, Self::ACCENT);
        Color32::from_rgb(mix(a.r(), b.r()), mix(a.g(), b.g()), mix(a.b(), b.b()))
    }
}

/// The type scale, in points (before the zoom).
pub struct TypeScale;

impl TypeScale {
    pub const HEADING: f32 = 17.0;
    pub const BODY: f32 = 13.5;
    pub const BUTTON: f32 = 13.5;
    pub const SMALL: f32 = 11.5;
    pub const MONO: f32 = 12.5;
}

/// Puts the palette and the type scale, times `zoom`, into egui's style.
pub fn apply(ctx: &egui::Context, zoom: f32) {
    let mut visuals = egui::Visuals::dark();
    visuals.override_text_color = Some(Palette::TEXT);
    visuals.panel_fill = Palette::BG;
    visuals.window_fill = Palette::PANEL;
    visuals.extreme_bg_color = Palette::PANEL;
    visuals.faint_bg_color = Palette::PANEL;
    visuals.selection.bg_fill = Palette::ACCENT.gamma_multiply(0.55);
    visuals.selection.stroke.color = Palette::ACCENT;
    visuals.hyperlink_color = Palette::ACCENT;
    visuals.warn_fg_color = Palette::WARN;
    visuals.error_fg_color = Palette::ERROR;
    visuals.widgets.noninteractive.bg_stroke.color = Palette::LINE;
    visuals.widgets.noninteractive.fg_stroke.color = Palette::TEXT;
    for widget in [
        &mut visuals.widgets.inactive,
        &mut visuals.widgets.hovered,
        &mut visuals.widgets.active,
        &mut visuals.widgets.open,
    ] {
        widget.fg_stroke.color = Palette::TEXT;
    }
    visuals.widgets.inactive.bg_fill = Palette::FIELD;
    visuals.widgets.inactive.weak_bg_fill = Palette::FIELD;
    ctx.set_visuals(visuals);
    ctx.all_styles_mut(|style| {
        let base = egui::Style::default();
        let size = |points: f32| points * zoom;
        style.text_styles = [
            (
                TextStyle::Heading,
                FontId::new(size(TypeScale::HEADING), FontFamily::Proportional),
            ),
            (
                TextStyle::Body,
                FontId::new(size(TypeScale::BODY), FontFamily::Proportional),
            ),
            (
                TextStyle::Button,
                FontId::new(size(TypeScale::BUTTON), FontFamily::Proportional),
            ),
            (
                TextStyle::Small,
                FontId::new(size(TypeScale::SMALL), FontFamily::Proportional),
            ),
            (
                TextStyle::Monospace,
                FontId::new(size(TypeScale::MONO), FontFamily::Monospace),
            ),
        ]
        .into();
        let spacing = &mut style.spacing;
        spacing.item_spacing = egui::vec2(8.0, 5.0) * zoom;
        spacing.button_padding = base.spacing.button_padding * zoom;
        spacing.interact_size = base.spacing.interact_size * zoom;
        spacing.icon_width = base.spacing.icon_width * zoom;
        spacing.icon_width_inner = base.spacing.icon_width_inner * zoom;
        spacing.icon_spacing = base.spacing.icon_spacing * zoom;
        spacing.combo_width = base.spacing.combo_width * zoom;
        spacing.slider_width = base.spacing.slider_width * zoom;
        spacing.window_margin = egui::Margin::same((8.0 * zoom).round() as i8);
    });
}

/// WCAG 2 contrast ratio of two opaque colours (1 to 21).
pub fn contrast(a: Color32, b: Color32) -> f32 {
    fn luminance(c: Color32) -> f32 {
        let channel = |v: u8| {
            let v = f32::from(v) / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * channel(c.r()) + 0.7152 * channel(c.g()) + 0.0722 * channel(c.b())
    }
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_text_colour_meets_wcag_aa_on_every_surface() {
        let texts = [
            ("TEXT", Palette::TEXT),
            ("TEXT_WEAK", Palette::TEXT_WEAK),
            ("ACCENT", Palette::ACCENT),
            ("HANDLE", Palette::HANDLE),
            ("WARN", Palette::WARN),
            ("ERROR", Palette::ERROR),
            ("GOOD", Palette::GOOD),
        ];
        let surfaces = [
            ("BG", Palette::BG),
            ("PANEL", Palette::PANEL),
            ("FIELD", Palette::FIELD),
        ];
        for (text_name, text) in texts {
            for (surface_name, surface) in surfaces {
                let ratio = contrast(text, surface);
                assert!(
                    ratio >= 4.5,
                    "{text_name} on {surface_name}: {ratio:.2}:1, under WCAG AA's 4.5:1"
                );
            }
        }
        // The formula: black on white is 21:1.
        assert!((contrast(Color32::BLACK, Color32::WHITE) - 21.0).abs() < 0.01);
    }
}
