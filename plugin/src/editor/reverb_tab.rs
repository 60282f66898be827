//! The Reverb tab: the IR (source, built-in choice, file, its outline) and every parameter of
//! the mix and the IR edits.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use egui::Color32;
use nice_plug::prelude::*;

use super::*;
use crate::ir::builtin::BuiltinIr;
use crate::ir::mapping::map;
use crate::params::IrSourceParam;

impl EditorApp {
    pub(super) fn reverb_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.heading("Impulse response");
        let file = self.params.ir_file.current();
        let bus = matrix_view::current_bus(&self.monitor, &self.params);
        // The IR on the bus, mapped once a frame for the rows and the grid.
        let mapped = match &self.preview {
            Some(Preview {
                result: Ok(data), ..
            }) => Some(map(data.ir_layout, bus)),
            _ => None,
        };
        egui::Grid::new("ir-grid").num_columns(2).show(ui, |ui| {
            ui.label("Source");
            ui.horizontal(|ui| {
                let mut source = self.params.ir_source.value();
                ui.selectable_value(&mut source, IrSourceParam::Builtin, "Built-in");
                ui.selectable_value(&mut source, IrSourceParam::File, "File");
                if source != self.params.ir_source.value() {
                    set_param(setter, &self.params.ir_source, source);
                }
            });
            ui.end_row();

            ui.label("Built-in");
            let current = self.params.ir.value();
            egui::ComboBox::from_id_salt("ir-choice")
                .selected_text(current.name())
                .show_ui(ui, |ui| {
                    for ir in BuiltinIr::ALL {
                        if ui.selectable_label(ir == current, ir.name()).clicked() {
                            set_param(setter, &self.params.ir, ir);
                            set_param(setter, &self.params.ir_source, IrSourceParam::Builtin);
                        }
                    }
                });
            ui.end_row();

            ui.label("File");
            ui.vertical(|ui| {
                match &file {
                    Some((file, _)) => {
                        let paths: Vec<String> =
                            file.paths.iter().map(|p| p.display().to_string()).collect();
                        ui.label(&file.ir.name).on_hover_text(paths.join("\n"));
                    }
                    None => {
                        ui.weak("none loaded");
                    }
                }
                ui.horizontal(|ui| {
                    let idle = self.file_job.is_none();
                    if ui
                        .add_enabled(idle, egui::Button::new("Open file..."))
                        .clicked()
                    {
                        self.start_file_request(FileRequest::Dialog);
                    }
                    if ui
                        .add_enabled(idle, egui::Button::new("Open true-stereo pair..."))
                        .on_hover_text(
                            "Two stereo files: the left input's (LL, LR) and the right \
                             input's (RL, RR), ordered by name",
                        )
                        .clicked()
                    {
                        self.start_file_request(FileRequest::DialogPair);
                    }
                    if ui
                        .add_enabled(idle && file.is_some(), egui::Button::new("Forget"))
                        .on_hover_text("Drop the file from the project; the built-in IR plays")
                        .clicked()
                    {
                        self.params.ir_file.clear();
                        set_param(setter, &self.params.ir_source, IrSourceParam::Builtin);
                    }
                    if !idle {
                        ui.spinner();
                    }
                });
                ui.horizontal(|ui| {
                    ui.add(
                        egui::TextEdit::singleline(&mut self.path_text)
                            .hint_text("or a path: /path/to/ir.wav")
                            .desired_width(300.0),
                    );
                    let path = self.path_text.trim();
                    if ui
                        .add_enabled(
                            self.file_job.is_none() && !path.is_empty(),
                            egui::Button::new("Load"),
                        )
                        .clicked()
                    {
                        let request = FileRequest::Paths(vec![PathBuf::from(path)]);
                        self.start_file_request(request);
                    }
                });
                let status = self.params.ir_file.status();
                if !status.is_empty() {
                    ui.weak(status);
                }
            });
            ui.end_row();

            if let Some(Preview {
                result: Ok(data),
                key,
            }) = &self.preview
            {
                ui.label("Playing");
                ui.label(&data.name);
                ui.end_row();
                ui.label("Length");
                ui.label(format!(
                    "{:.2} s at {} Hz ({} samples)",
                    data.seconds, key.sample_rate, data.num_frames
                ));
                ui.end_row();
                ui.label("Channels");
                ui.label(format!("{} ({})", data.num_channels, data.layout));
                ui.end_row();
            }
            let data = match &self.preview {
                Some(Preview {
                    result: Ok(data), ..
                }) => Some(data),
                _ => None,
            };
            let shown = data.zip(mapped.as_ref());
            matrix_view::bus_rows(ui, setter, &self.params, bus, shown);
        });
        if let (
            true,
            Some(Preview {
                result: Ok(data), ..
            }),
            Some(Ok(mapping)),
        ) = (bus.is_wide(), &self.preview, &mapped)
        {
            matrix_view::path_grid(ui, data, mapping);
        }
        ui.horizontal(|ui| IrView::buttons(ui, &self.params.editor_ir_view));
        let view = IrView::from_index(self.params.editor_ir_view.load(Relaxed));
        match &self.preview {
            Some(Preview {
                result: Ok(data),
                key,
            }) => match view {
                IrView::Waveform => draw_waveform(ui, data),
                IrView::Spectrogram => {
                    let texture = match &self.spectrogram_texture {
                        Some((shown, texture)) if shown == key => texture.clone(),
                        _ => {
                            let texture = ui.ctx().load_texture(
                                "ir-spectrogram",
                                spectrogram_image(&data.spectrogram),
                                egui::TextureOptions::LINEAR,
                            );
                            self.spectrogram_texture = Some((*key, texture.clone()));
                            texture
                        }
                    };
                    draw_spectrogram(ui, data, &texture);
                }
            },
            Some(Preview {
                result: Err(err), ..
            }) => {
                ui.colored_label(
                    Color32::from_rgb(255, 110, 90),
                    format!("Not playable: {err}"),
                );
            }
            None => {
                ui.label("Preparing the preview...");
            }
        }

        ui.add_space(8.0);
        ui.heading("Mix");
        egui::Grid::new("mix-grid").num_columns(2).show(ui, |ui| {
            let params = &self.params;
            param_row(ui, setter, "Dry/wet", &params.mix);
            param_row(ui, setter, "Output gain", &params.output_gain);
            param_row(ui, setter, "Pre-delay", &params.predelay_ms);
            param_row(ui, setter, "Low cut (wet)", &params.low_cut_hz);
            param_row(ui, setter, "High cut (wet)", &params.high_cut_hz);
            param_row(ui, setter, "Latency", &params.latency_mode);
            ui.label("Reported latency");
            let latency = self.monitor.latency_samples.load(Relaxed);
            ui.label(format!(
                "{latency} samples ({:.2} ms)",
                f64::from(latency) * 1000.0 / f64::from(self.sample_rate())
            ));
            ui.end_row();
        });

        ui.add_space(8.0);
        egui::CollapsingHeader::new("Edit the IR")
            .id_salt("edit-ir")
            .default_open(true)
            .show(ui, |ui| {
                ui.weak(
                    "Applied when the engine is rebuilt, off the audio thread, and crossfaded \
                     in. Automatic trim and normalisation apply to files.",
                );
                egui::Grid::new("edit-grid").num_columns(2).show(ui, |ui| {
                    let params = &self.params;
                    param_row(ui, setter, "Trim start", &params.trim_start_ms);
                    param_row(ui, setter, "Trim end", &params.trim_end_ms);
                    param_row(ui, setter, "Auto trim below peak", &params.auto_trim_db);
                    param_row(ui, setter, "Fade in", &params.fade_in_ms);
                    param_row(ui, setter, "Fade out", &params.fade_out_ms);
                    param_row(ui, setter, "Stretch", &params.stretch);
                    ui.label("");
                    ui.horizontal(|ui| {
                        toggle(ui, setter, "Reverse", &params.reverse);
                        toggle(ui, setter, "Normalize", &params.normalize);
                    });
                    ui.end_row();
                });
            });
    }
}
