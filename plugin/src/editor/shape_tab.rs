//! The Shape tab, the Reverb tab's companion view, one screen at every size: the early/late
//! balance, the pre-delay's sync, the tone shelves and the decay time (IR edits like the Reverb
//! tab's), and the ducking of the wet signal (run-time), above the IR picture, which shows what
//! the edits do.

use std::sync::Arc;

use egui::Vec2;
use nice_plug::prelude::*;

use super::draw::{set_param, toggle};
use super::meter_view::reduction_text;
use super::reverb_tab::{LABEL_WIDTH, MIN_SLIDER, VALUE_WIDTH};
use super::theme::Palette;
use super::*;
use crate::ir::builtin::BuiltinIr;
use crate::params::{DuckKeyParam, NoteValue, SecondIrParam};
use crate::preparer::Slot;

impl EditorApp {
    /// The Shape tab in a view `view_height` high: the balance and the shelves in two columns
    /// (one above the other where a big zoom leaves too little width), then the IR picture in
    /// the height they leave.
    pub(super) fn shape_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter, view_height: f32) {
        let z = self.zoom;
        let top = ui.cursor().top();
        let column = LABEL_WIDTH * z + VALUE_WIDTH * z + MIN_SLIDER * z;
        if ui.available_width() >= 2.0 * column + 2.0 * ui.spacing().item_spacing.x {
            ui.columns(2, |columns| {
                self.balance_controls(&mut columns[0], setter);
                self.duck_controls(&mut columns[0], setter);
                self.tone_controls(&mut columns[1], setter);
            });
        } else {
            self.balance_controls(ui, setter);
            self.duck_controls(ui, setter);
            self.tone_controls(ui, setter);
        }
        ui.add_space(4.0 * z);
        let (_, mapped) = self.mapped_preview();
        let left = view_height - (ui.cursor().top() - top) - ui.spacing().item_spacing.y - 4.0 * z;
        let size = Vec2::new(ui.available_width(), left.max(60.0 * z));
        self.picture_area(ui, setter, size, mapped.as_ref());
    }

    fn balance_controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        ui.label(egui::RichText::new("Early and tail").strong());
        let width = self.slider_width(ui);
        egui::Grid::new("balance-grid")
            .num_columns(2)
            .min_col_width(LABEL_WIDTH * self.zoom)
            .show(ui, |ui| {
                let rows: [(&str, &FloatParam, &str); 3] = [
                    ("Early", &params.early_db, "Level of the IR before the crossover: the early reflections"),
                    ("Tail", &params.tail_db, "Level of the IR after the crossover: the reverb's tail"),
                    ("Crossover", &params.crossover_ms, "Where early becomes tail, in ms of the IR, with a 10 ms crossfade each side (at most half of it)"),
                ];
                for (label, param, tip) in rows {
                    self.param_row(ui, setter, label, param, width, tip);
                }
            });
        self.predelay_sync_row(ui, setter);
    }

    /// Pre-delay sync: the toggle, the note value, and what it gives at the host's tempo, in
    /// one row that wraps where the column is narrow.
    fn predelay_sync_row(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        let tempo = self.monitor.host_tempo();
        ui.horizontal_wrapped(|ui| {
            ui.label("Pre-delay").on_hover_text(
                "The pre-delay as a note value at the host's tempo (the Reverb tab's Pre-delay \
                 where the host gives none)",
            );
            toggle(ui, setter, "Sync", &params.predelay_sync).on_hover_text(
                "Follow the host's tempo; the IR is rebuilt once a tempo change holds",
            );
            let current = params.predelay_note.value();
            egui::ComboBox::from_id_salt("predelay-note")
                .selected_text(current.name())
                .width(64.0 * self.zoom)
                .show_ui(ui, |ui| {
                    for note in NoteValue::ALL {
                        if ui.selectable_label(note == current, note.name()).clicked() {
                            set_param(setter, &params.predelay_note, note);
                        }
                    }
                })
                .response
                .on_hover_text("The note value: plain, dotted (.) or triplet (T)");
            let text = match tempo {
                Some(bpm) => format!("{:.1} ms at {bpm:.1} BPM", current.predelay_ms(bpm)),
                None => "no tempo from the host".to_owned(),
            };
            ui.label(egui::RichText::new(text).color(Palette::TEXT_WEAK));
        });
    }

    fn tone_controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        ui.label(egui::RichText::new("Tone and decay").strong());
        let width = (self.slider_width(ui), VALUE_WIDTH * self.zoom);
        egui::Grid::new("tone-grid")
            .num_columns(2)
            .min_col_width(LABEL_WIDTH * self.zoom)
            .show(ui, |ui| {
                self.pair_row(ui, setter, "Low shelf",
                    (&params.low_shelf_hz, "Corner of the low shelf on the reverb: half its gain there, all of it an octave below"),
                    (&params.low_shelf_db, "Boost or cut of the reverb's lows (0 dB: off)"),
                    (width.0, width.1, "The reverb's lows: the shelf's corner and its gain"));
                self.pair_row(ui, setter, "High shelf",
                    (&params.high_shelf_hz, "Corner of the high shelf on the reverb: half its gain there, all of it an octave above"),
                    (&params.high_shelf_db, "Boost or cut of the reverb's highs (0 dB: off)"),
                    (width.0, width.1, "The reverb's highs: the shelf's corner and its gain"));
                self.param_row(ui, setter, "Decay", &params.decay, width.0,
                    "How long the room rings, band by band, against the IR's own (100 %: as recorded); a longer decay ends where the recording met its noise floor, and the IR keeps its length");
                self.pair_row(ui, setter, "Decay lows",
                    (&params.decay_low_hz, "Corner of the lows' decay multiplier: half its effect there, all of it half an octave below"),
                    (&params.decay_low, "The lows ring this many times as long as Decay says (1 x: off)"),
                    (width.0, width.1, "How long the lows ring: a corner and a multiplier of the decay time below it"));
                self.pair_row(ui, setter, "Decay highs",
                    (&params.decay_high_hz, "Corner of the highs' decay multiplier: half its effect there, all of it half an octave above"),
                    (&params.decay_high, "The highs ring this many times as long as Decay says (1 x: off)"),
                    (width.0, width.1, "How long the highs ring: a corner and a multiplier of the decay time above it"));
                self.second_ir_row(ui, setter);
                self.param_row(ui, setter, "Blend", &params.blend, width.0,
                    "The second IR's share of the reverb: 0 % the first IR alone, 100 % the second alone; both play between, and the silent one rests");
            });
    }

    /// The second IR (slot B): Off, a built-in, or its file, in one menu with "Open file...".
    fn second_ir_row(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        ui.label("IR B").on_hover_text(
            "A second IR that Blend mixes with the first; every edit applies to both",
        );
        let source = params.ir_b_source.value();
        let file = params.ir_file_b.current();
        let file_name = file.as_ref().map(|(file, _)| file.ir.name.clone());
        let selected = match (source, &file_name) {
            (SecondIrParam::Off, _) => "Off".to_owned(),
            (SecondIrParam::File, Some(name)) => name.clone(),
            _ => params.ir_b.value().name().to_owned(),
        };
        let mut open = false;
        egui::ComboBox::from_id_salt("ir-b")
            .selected_text(selected)
            .width(self.slider_width(ui) + VALUE_WIDTH * self.zoom)
            .show_ui(ui, |ui| {
                if ui
                    .selectable_label(source == SecondIrParam::Off, "Off")
                    .clicked()
                {
                    set_param(setter, &params.ir_b_source, SecondIrParam::Off);
                }
                for ir in BuiltinIr::ALL {
                    let chosen = source == SecondIrParam::Builtin && params.ir_b.value() == ir;
                    if ui.selectable_label(chosen, ir.name()).clicked() {
                        set_param(setter, &params.ir_b, ir);
                        set_param(setter, &params.ir_b_source, SecondIrParam::Builtin);
                    }
                }
                ui.separator();
                if let Some(name) = &file_name
                    && ui
                        .selectable_label(source == SecondIrParam::File, name)
                        .clicked()
                {
                    set_param(setter, &params.ir_b_source, SecondIrParam::File);
                }
                open = ui.button("Open file...").clicked();
            })
            .response
            .on_hover_text(
                "The second IR: a built-in room or a file (the Library tab's menu loads one too)",
            );
        ui.end_row();
        if open {
            self.start_file_request_into(FileRequest::Dialog, Slot::B);
        }
    }

    /// The ducking: its key and the reduction now on one line, then the amount with the
    /// threshold and the two times, paired.
    fn duck_controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("Ducking").strong())
                .on_hover_text(
                    "Lower the reverb while the key plays, so it stays out of the dry signal's way",
                );
            let current = params.duck_key.value();
            egui::ComboBox::from_id_salt("duck-key")
                .selected_text(match current {
                    DuckKeyParam::Input => "Input",
                    DuckKeyParam::Sidechain => "Sidechain",
                })
                .width(84.0 * self.zoom)
                .show_ui(ui, |ui| {
                    for (key, name) in [
                        (DuckKeyParam::Input, "Input"),
                        (DuckKeyParam::Sidechain, "Sidechain"),
                    ] {
                        if ui.selectable_label(key == current, name).clicked() {
                            set_param(setter, &params.duck_key, key);
                        }
                    }
                })
                .response
                .on_hover_text(
                    "What the ducking listens to: the plugin's input, or the sidechain input \
                     where the host feeds one (CLAP; the VST3 build has no sidechain, and the \
                     standalone on ALSA neither: there the input keys it)",
                );
            let reduction = self.monitor.duck_reduction_db();
            ui.label(
                egui::RichText::new(format!("{} dB now", reduction_text(reduction)))
                    .color(Palette::TEXT_WEAK),
            )
            .on_hover_text("The ducking's reduction of the reverb now");
        });
        let width = (self.slider_width(ui), VALUE_WIDTH * self.zoom);
        egui::Grid::new("duck-grid")
            .num_columns(2)
            .min_col_width(LABEL_WIDTH * self.zoom)
            .show(ui, |ui| {
                self.pair_row(ui, setter, "Duck",
                    (&params.duck_db, "How far the reverb goes down while the key plays (0 dB: off)"),
                    (&params.duck_threshold_db, "The key's level (sample peak) that starts the ducking"),
                    (width.0, width.1, "The ducking's depth and the key's threshold"));
                self.pair_row(ui, setter, "Times",
                    (&params.duck_attack_ms, "Time to duck by the whole amount"),
                    (&params.duck_release_ms, "Time from the key falling under the threshold to the reverb within 1 dB of its level"),
                    (width.0, width.1, "How fast the reverb goes down, and comes back"));
            });
    }
}
