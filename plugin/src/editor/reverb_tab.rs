//! The Reverb tab, one screen at the default size: the IR bar (source, file, view), the IR
//! picture with its edit handles beside the meters, and below them every control of the mix
//! and the IR edits in two columns. The file options, the bus and the playing IR's figures fold
//! away under "File & bus". The picture takes the height the controls leave, so it grows with
//! the window.
//!
//! The Shape tab (`shape_tab`) shows the same picture under its own controls, through
//! [`EditorApp::picture_area`] and the row widths here.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use egui::Vec2;
use nice_plug::prelude::*;

use super::meter_view::{REDUCTION_WIDTH, draw_meter, draw_reduction};
use super::theme::Palette;
use super::*;
use crate::engine::plan::DEFAULT_MIN_WORKER_SLACK;
use crate::ir::IrError;
use crate::ir::builtin::BuiltinIr;
use crate::ir::mapping::{Bus, Mapping, map};
use crate::params::{IrSourceParam, LatencyModeParam};

/// Rows of each control column, its heading included.
const CONTROL_ROWS: f32 = 7.0;
/// A control row's label column, its value box and its narrowest slider, in points at 100 %.
pub(super) const LABEL_WIDTH: f32 = 78.0;
pub(super) const VALUE_WIDTH: f32 = 72.0;
pub(super) const MIN_SLIDER: f32 = 100.0;

impl EditorApp {
    /// The tab in a view `view_height` high.
    pub(super) fn reverb_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter, view_height: f32) {
        let z = self.zoom;
        let top = ui.cursor().top();
        self.ir_bar(ui, setter);
        // The bus and how the previewed IR maps onto it, once a frame for the details and the
        // paths view.
        let (bus, mapped) = self.mapped_preview();
        let mapped = mapped.as_ref();
        if self.show_details {
            let max_height = (view_height * 0.45).max(60.0);
            egui::ScrollArea::vertical()
                .id_salt("details")
                .max_height(max_height)
                .show(ui, |ui| self.details(ui, setter, bus, mapped));
            ui.separator();
        }

        // The controls' height as laid out last frame (an estimate on the first).
        let row = ui.spacing().interact_size.y
            + 2.0 * ui.spacing().button_padding.y
            + ui.spacing().item_spacing.y;
        let controls_height = match self.controls_height {
            Some((zoom, height)) if zoom == z => height,
            _ => CONTROL_ROWS * row,
        } + ui.spacing().item_spacing.y
            + 4.0 * z;
        let left = view_height - (ui.cursor().top() - top);
        let picture_height = (left - controls_height).max(60.0 * z);
        let meter_width = 2.0 * self.meter_side_width() + REDUCTION_WIDTH * z;
        ui.horizontal(|ui| {
            let width =
                (ui.available_width() - meter_width - 3.0 * ui.spacing().item_spacing.x).max(120.0);
            let size = Vec2::new(width, picture_height);
            self.picture_area(ui, setter, size, mapped);
            self.meters(ui, picture_height);
        });
        ui.add_space(4.0 * z);
        let controls_top = ui.cursor().top();
        self.controls(ui, setter);
        self.controls_height = Some((z, ui.min_rect().bottom() - controls_top));
    }

    /// The bus and how the previewed IR maps onto it.
    pub(super) fn mapped_preview(&self) -> (Bus, Option<Result<Mapping, IrError>>) {
        let bus = matrix_view::current_bus(&self.monitor, &self.params);
        let mapped = match &self.preview {
            Some(Preview {
                result: Ok(data), ..
            }) => Some(map(data.ir_layout, bus)),
            _ => None,
        };
        (bus, mapped)
    }

    /// Source, the built-in choice or the file, loading, the view: one wrapped row.
    fn ir_bar(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.horizontal_wrapped(|ui| {
            let mut source = self.params.ir_source.value();
            ui.selectable_value(&mut source, IrSourceParam::Builtin, "Built-in")
                .on_hover_text("Play one of the built-in rooms");
            ui.selectable_value(&mut source, IrSourceParam::File, "File")
                .on_hover_text("Play the IR file loaded into the project");
            if source != self.params.ir_source.value() {
                set_param(setter, &self.params.ir_source, source);
            }
            ui.separator();
            if source == IrSourceParam::Builtin {
                let current = self.params.ir.value();
                egui::ComboBox::from_id_salt("ir-choice")
                    .selected_text(current.name())
                    .width(96.0 * self.zoom)
                    .show_ui(ui, |ui| {
                        for ir in BuiltinIr::ALL {
                            if ui.selectable_label(ir == current, ir.name()).clicked() {
                                set_param(setter, &self.params.ir, ir);
                            }
                        }
                    })
                    .response
                    .on_hover_text("The built-in room");
            } else {
                match self.params.ir_file.current() {
                    Some((file, _)) => {
                        let paths: Vec<String> =
                            file.paths.iter().map(|p| p.display().to_string()).collect();
                        ui.label(&file.ir.name).on_hover_text(paths.join("\n"));
                    }
                    None => {
                        ui.label(egui::RichText::new("no file loaded").color(Palette::TEXT_WEAK));
                    }
                }
            }
            let idle = self.file_job.is_none();
            if ui
                .add_enabled(idle, egui::Button::new("Open file..."))
                .on_hover_text("Load a WAV, FLAC, AIFF or other audio file as the IR")
                .clicked()
            {
                self.start_file_request(FileRequest::Dialog);
            }
            if !idle {
                ui.spinner();
            }
            ui.toggle_value(&mut self.show_details, "File & bus")
                .on_hover_text(
                    "More ways to load (a true-stereo pair, a typed path), forget the file, \
                     the bus and how the IR maps onto it, the playing IR's figures",
                );
            IrView::menu(ui, "ir-view", &self.params.editor_ir_view).on_hover_text(
                "The IR as a waveform (level in dB with the decay curve), a spectrogram, or the \
                 bus's paths",
            );
        });
    }

    /// What folds away: the file options, the bus (`bus`, and how the previewed IR maps onto
    /// it), the playing IR's figures.
    fn details(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        bus: Bus,
        mapped: Option<&Result<Mapping, IrError>>,
    ) {
        let file = self.params.ir_file.current();
        ui.horizontal_wrapped(|ui| {
            let idle = self.file_job.is_none();
            if ui
                .add_enabled(idle, egui::Button::new("Open true-stereo pair..."))
                .on_hover_text(
                    "Two stereo files: the left input's (LL, LR) and the right input's (RL, \
                     RR), ordered by name",
                )
                .clicked()
            {
                self.start_file_request(FileRequest::DialogPair);
            }
            if ui
                .add_enabled(idle && file.is_some(), egui::Button::new("Forget file"))
                .on_hover_text("Drop the file from the project; the built-in IR plays")
                .clicked()
            {
                self.params.ir_file.clear();
                set_param(setter, &self.params.ir_source, IrSourceParam::Builtin);
            }
            ui.add(
                egui::TextEdit::singleline(&mut self.path_text)
                    .hint_text("or a path: /path/to/ir.wav")
                    .desired_width(220.0 * self.zoom),
            );
            let path = self.path_text.trim();
            if ui
                .add_enabled(idle && !path.is_empty(), egui::Button::new("Load"))
                .clicked()
            {
                let request = FileRequest::Paths(vec![PathBuf::from(path)]);
                self.start_file_request(request);
            }
        });
        let status = self.params.ir_file.status();
        if !status.is_empty() {
            ui.add(egui::Label::new(egui::RichText::new(status).color(Palette::TEXT_WEAK)).wrap());
        }
        egui::Grid::new("ir-grid").num_columns(2).show(ui, |ui| {
            let data = match &self.preview {
                Some(Preview {
                    result: Ok(data),
                    key,
                }) => {
                    ui.label("Playing");
                    ui.add(
                        egui::Label::new(format!(
                            "{}: {:.2} s at {} Hz ({} samples), {} channels ({})",
                            data.name,
                            data.seconds,
                            key.sample_rate,
                            data.num_frames,
                            data.num_channels,
                            data.layout
                        ))
                        .wrap(),
                    );
                    ui.end_row();
                    Some(data)
                }
                _ => None,
            };
            let shown = data.zip(mapped);
            matrix_view::bus_rows(ui, setter, &self.params, bus, shown);
        });
    }

    /// The picture (waveform, spectrogram or the paths, from `mapped`) of `size`.
    pub(super) fn picture_area(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        size: Vec2,
        mapped: Option<&Result<Mapping, IrError>>,
    ) {
        let view = IrView::from_index(self.params.editor_ir_view.load(Relaxed));
        let top_down = egui::Layout::top_down(egui::Align::Min);
        let preview = self.preview.take();
        match &preview {
            Some(Preview {
                result: Ok(data),
                key,
            }) => {
                if view == IrView::Paths
                    && let Some(mapped) = mapped
                {
                    ui.allocate_ui_with_layout(size, top_down, |ui| {
                        ui.set_min_size(size);
                        egui::ScrollArea::vertical()
                            .id_salt("paths")
                            .max_height(size.y)
                            .show(ui, |ui| match mapped {
                                Ok(mapping) => {
                                    ui.add(
                                        egui::Label::new(mapping.summary(data.ir_layout)).wrap(),
                                    );
                                    matrix_view::path_grid(ui, data, mapping);
                                }
                                Err(err) => {
                                    ui.colored_label(Palette::ERROR, err.to_string());
                                }
                            });
                    });
                } else {
                    self.ir_picture(ui, setter, data, key, size);
                }
            }
            Some(Preview {
                result: Err(err), ..
            }) => {
                ui.allocate_ui_with_layout(size, top_down, |ui| {
                    ui.set_min_size(size);
                    ui.add(
                        egui::Label::new(
                            egui::RichText::new(format!("Not playable: {err}"))
                                .color(Palette::ERROR),
                        )
                        .wrap(),
                    );
                });
            }
            None => {
                ui.allocate_ui_with_layout(size, top_down, |ui| {
                    ui.set_min_size(size);
                    ui.label("Preparing the preview...");
                });
            }
        }
        self.preview = preview;
    }

    /// Width of one side's meter: wider buses get thinner bars.
    fn meter_side_width(&self) -> f32 {
        let channels = self.monitor.num_outputs.load(Relaxed).max(1) as f32;
        (channels * 9.0).clamp(30.0, 90.0) * self.zoom
    }

    /// The input and output meters and the ducking's reduction, side by side, `height` high.
    fn meters(&mut self, ui: &mut egui::Ui, height: f32) {
        let now = Instant::now();
        let size = Vec2::new(self.meter_side_width(), height);
        let monitor = Arc::clone(&self.monitor);
        let sides = [
            ("In", "meter-in", "in", &monitor.input_levels),
            ("Out", "meter-out", "out", &monitor.output_levels),
        ];
        for (side, (title, rect_name, probe_name, levels)) in sides.into_iter().enumerate() {
            let hold = &mut self.meter_holds[side];
            hold.update(levels, now);
            let rect = draw_meter(ui, title, levels, hold, size, self.zoom);
            if let Some(probe) = &mut self.probe {
                let channels = levels.channels();
                let rms: Vec<f32> = (0..channels).map(|c| levels.rms(c)).collect();
                probe.meter(probe_name, &hold.held(channels), &rms);
                probe.rect(rect_name, rect);
            }
        }
        let rect = draw_reduction(ui, monitor.duck_reduction_db(), height, self.zoom);
        self.probe_rect("meter-gr", rect);
    }

    /// The mix and the IR edits: two columns of sliders that share the width, or one above the
    /// other where a big zoom leaves too little width for two.
    fn controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let z = self.zoom;
        let column = LABEL_WIDTH * z + VALUE_WIDTH * z + MIN_SLIDER * z;
        if ui.available_width() >= 2.0 * column + 2.0 * ui.spacing().item_spacing.x {
            ui.columns(2, |columns| {
                self.mix_controls(&mut columns[0], setter);
                self.edit_controls(&mut columns[1], setter);
            });
        } else {
            self.mix_controls(ui, setter);
            self.edit_controls(ui, setter);
        }
    }

    /// The slider's width in `ui`: what the label and the value box leave.
    pub(super) fn slider_width(&self, ui: &egui::Ui) -> f32 {
        let z = self.zoom;
        (ui.available_width()
            - LABEL_WIDTH * z
            - VALUE_WIDTH * z
            - 2.0 * ui.spacing().item_spacing.x)
            .max(MIN_SLIDER * z)
    }

    fn mix_controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        let latency = self.monitor.latency_samples.load(Relaxed);
        let latency_ms = f64::from(latency) * 1000.0 / f64::from(self.sample_rate());
        ui.label(egui::RichText::new("Mix").strong());
        let width = self.slider_width(ui);
        egui::Grid::new("mix-grid")
            .num_columns(2)
            .min_col_width(LABEL_WIDTH * self.zoom)
            .show(ui, |ui| {
                let synced = params.predelay_sync.value()
                    .then(|| self.monitor.host_tempo())
                    .flatten()
                    .map(|bpm| {
                        let note = params.predelay_note.value();
                        format!(
                            "Pre-delay follows the tempo (the Shape tab): {} = {:.1} ms at {bpm:.1} BPM",
                            note.name(),
                            note.predelay_ms(bpm)
                        )
                    });
                let rows: [(&str, &FloatParam, &str); 4] = [
                    (
                        "Dry/wet",
                        &params.mix,
                        "How much of the reverb is heard: 0 % dry only, 100 % wet only",
                    ),
                    ("Output", &params.output_gain, "Gain after the mix"),
                    (
                        "Low cut",
                        &params.low_cut_hz,
                        "High-pass on the reverb only (12 dB per octave)",
                    ),
                    (
                        "High cut",
                        &params.high_cut_hz,
                        "Low-pass on the reverb only (12 dB per octave)",
                    ),
                ];
                for (label, param, tip) in rows {
                    if label == "Low cut" {
                        self.param_row_unless(
                            ui,
                            setter,
                            ("Pre-delay", &params.predelay_ms),
                            width,
                            "Silence before the reverb starts; also the bar above the IR",
                            synced.as_deref(),
                        );
                    }
                    self.param_row(ui, setter, label, param, width, tip);
                }
                let outputs = self.monitor.num_outputs.load(Relaxed) as usize;
                let off_bus = (!crate::audio::processor::width_applies(outputs)).then(|| {
                    format!(
                        "Width acts on stereo outputs only (1 -> 2 and 2 -> 2 buses): mid and \
                         side have no one meaning on this bus's {outputs} outputs"
                    )
                });
                self.param_row_unless(
                    ui,
                    setter,
                    ("Width", &params.width),
                    width,
                    "Stereo width of the reverb: 0 % mono, 100 % as the IR has it, 200 % the \
                     side doubled",
                    off_bus.as_deref(),
                );
                ui.label("Latency");
                let current = params.latency_mode.value();
                let selected = if current.offload_latency().is_some() {
                    format!("Offload {latency} ({latency_ms:.0} ms)")
                } else {
                    latency_name(current)
                };
                egui::ComboBox::from_id_salt("latency-mode")
                    .selected_text(selected)
                    .show_ui(ui, |ui| {
                        for mode in LatencyModeParam::ALL {
                            if ui
                                .selectable_label(current == mode, latency_name(mode))
                                .clicked()
                                && current != mode
                            {
                                set_param(setter, &params.latency_mode, mode);
                            }
                        }
                    })
                    .response
                    .on_hover_text(offload_hover(
                        current.offload_latency(),
                        latency,
                        latency_ms,
                        self.monitor.max_block_size.load(Relaxed),
                    ));
                ui.end_row();
            });
    }

    fn edit_controls(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let params = Arc::clone(&self.params);
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new("IR edits").strong());
            toggle(ui, setter, "Reverse", &params.reverse).on_hover_text("Play the IR backwards");
            toggle(ui, setter, "Normalize", &params.normalize)
                .on_hover_text("Scale a file to the built-ins' loudness");
        });
        let width = self.slider_width(ui);
        egui::Grid::new("edit-grid")
            .num_columns(2)
            .min_col_width(LABEL_WIDTH * self.zoom)
            .show(ui, |ui| {
                let rows: [(&str, &FloatParam, &str); 6] = [
                    ("Trim start", &params.trim_start_ms, "Cut from the IR's start (the left handle on the IR)"),
                    ("Trim end", &params.trim_end_ms, "Cut from the IR's end (the right handle on the IR)"),
                    ("Auto trim", &params.auto_trim_db, "Files: cut the tail once it stays this far under the peak (the dashed line)"),
                    ("Fade in", &params.fade_in_ms, "Raised-cosine fade at the start (the curve on the IR)"),
                    ("Fade out", &params.fade_out_ms, "Raised-cosine fade at the end (the curve on the IR)"),
                    ("Stretch", &params.stretch, "Play the IR longer or shorter (pitch follows)"),
                ];
                for (label, param, tip) in rows {
                    self.param_row(ui, setter, label, param, width, tip);
                }
            });
    }
}

/// A Latency value's name in the editor: "Zero", "Low CPU", "Offload 2048".
fn latency_name(mode: LatencyModeParam) -> String {
    match mode.offload_latency() {
        Some(samples) => format!("Offload {samples}"),
        None if mode == LatencyModeParam::LowCpu => "Low CPU".to_owned(),
        None => "Zero".to_owned(),
    }
}

/// The Latency control's hover text: what each mode does, what is reported now, and, where
/// the offload mode took more than it was asked for, why.
fn offload_hover(asked: Option<usize>, latency: u32, latency_ms: f64, max_block: u32) -> String {
    let mut text = format!(
        "Zero: no added latency. Low CPU: one quantum of latency for less CPU. Offload: \
         nothing convolves on the audio thread (the GPU or the CPU workers take it all) for a \
         fixed latency the host compensates, in samples at any rate. Reported now: {latency} \
         samples ({latency_ms:.2} ms)."
    );
    if let Some(asked) = asked
        && latency as usize > asked
    {
        text.push_str(&format!(
            "\nOffload {asked} reports {latency}: a CPU worker (and the GPU's CPU standby) \
             needs {DEFAULT_MIN_WORKER_SLACK} samples of slack after a host block of up to \
             {max_block} samples and level 0's partition."
        ));
    }
    text
}

/// Sets the Latency value whose id `LONGTAIL_EDITOR_LATENCY` names (`zero`, `low`,
/// `offload_512` to `offload_4096`), as a parameter change through the host: for screenshots.
pub(super) fn latency_from_env(params: &LongtailParams, setter: &ParamSetter) {
    let Ok(id) = std::env::var("LONGTAIL_EDITOR_LATENCY") else {
        return;
    };
    let wanted = id.trim().to_ascii_lowercase();
    let ids = LatencyModeParam::ids().unwrap_or_default();
    let found = LatencyModeParam::ALL
        .into_iter()
        .find(|&mode| ids.get(mode.to_index()) == Some(&wanted.as_str()));
    if let Some(mode) = found {
        set_param(setter, &params.latency_mode, mode);
    }
}
