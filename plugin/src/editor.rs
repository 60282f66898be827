//! The editor (egui through nice-plug-egui): the IR, the mix, where the engine runs and how it
//! is doing, and the machine's thermal state.
//!
//! # Threads
//!
//! The editor runs on the host's GUI thread. It reads the audio thread's numbers from
//! [`EngineMonitor`] (atomics only) and changes parameters through the host (`ParamSetter`), so
//! nothing it does can make the audio thread wait. Slow work happens on helper threads: the IR
//! preview (waveform) is generated on a short-lived thread, and the thermal probes run on the
//! [`ThermalMonitor`] thread, which lives while the editor is open.
//!
//! # State
//!
//! The window size and the selected tab are persisted with the plugin's state (the `editor-*`
//! fields of [`LongtailParams`]), so a project reopens its editor as it was left.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use nice_plug::context::gui::GuiContext;
use nice_plug::prelude::*;
use nice_plug_egui::{
    EguiEditor, EguiEditorState, EguiNiceSettings, Frame, NiceEguiApp, RepaintNotifier,
    create_egui_editor, widgets,
};

use crate::engine::plan::{LatencyMode, PartitionPlan, PlanLimits};
use crate::ir::builtin::BuiltinIr;
use crate::monitor::EngineMonitor;
use crate::params::{BackendParam, LongtailParams};
use crate::thermal::{Action, GpuStatus, Placement, ThermalMonitor, ThermalPolicy, ThermalProbes};

/// Size of a new editor window, in logical pixels.
pub const DEFAULT_SIZE: (u32, u32) = (720, 480);
/// Smallest size the window may be resized to.
pub const MIN_SIZE: (u32, u32) = (560, 380);

/// When set (the standalone's `--headless`), the plugin offers no editor.
pub static HEADLESS: AtomicBool = AtomicBool::new(false);

/// The editor's tabs, persisted by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tab {
    Reverb,
    Engine,
    Thermal,
}

impl Tab {
    const ALL: [Tab; 3] = [Tab::Reverb, Tab::Engine, Tab::Thermal];

    fn from_index(idx: u8) -> Self {
        Self::ALL.get(idx as usize).copied().unwrap_or(Tab::Reverb)
    }

    fn index(self) -> u8 {
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0) as u8
    }

    fn name(self) -> &'static str {
        match self {
            Tab::Reverb => "Reverb",
            Tab::Engine => "Engine",
            Tab::Thermal => "Thermal",
        }
    }
}

/// A waveform preview of the selected IR, made off the GUI thread.
struct Preview {
    ir: BuiltinIr,
    sample_rate: u32,
    seconds: f64,
    layout: &'static str,
    num_channels: usize,
    /// Per channel, `(min, max)` per column.
    columns: Vec<Vec<(f32, f32)>>,
}

/// Dynamic range of the waveform preview, in dB below the IR's peak.
const PREVIEW_RANGE_DB: f32 = 72.0;
/// Columns of the waveform preview.
const PREVIEW_COLUMNS: usize = 600;

fn make_preview(ir: BuiltinIr, sample_rate: u32) -> Preview {
    let generated = ir.generate(sample_rate);
    let len = generated.len().max(1);
    let columns = generated
        .channels
        .iter()
        .map(|samples| {
            (0..PREVIEW_COLUMNS)
                .map(|col| {
                    let start = col * len / PREVIEW_COLUMNS;
                    let end = ((col + 1) * len / PREVIEW_COLUMNS).max(start + 1).min(len);
                    samples[start..end]
                        .iter()
                        .fold((0.0f32, 0.0f32), |(lo, hi), &s| (lo.min(s), hi.max(s)))
                })
                .collect()
        })
        .collect();
    Preview {
        ir,
        sample_rate,
        seconds: generated.seconds(),
        layout: generated.layout.name(),
        num_channels: generated.channels.len(),
        columns,
    }
}

/// The editor's state on the GUI thread.
pub struct EditorApp {
    params: Arc<LongtailParams>,
    monitor: Arc<EngineMonitor>,
    egui_state: Arc<EguiEditorState>,
    gui: Option<GuiContext>,
    thermal: Option<ThermalMonitor>,
    policy: ThermalPolicy,
    preview: Option<Preview>,
    preview_job: Option<Receiver<Preview>>,
    /// Worker CPU share, from the busy-time counter's growth between frames.
    worker_load: (Instant, u64, f32),
    /// Messages the user has dismissed (by text).
    dismissed: Vec<String>,
}

/// Builds the editor for the plugin's shared state.
pub fn create(
    params: Arc<LongtailParams>,
    monitor: Arc<EngineMonitor>,
) -> Option<EguiEditor<EditorApp>> {
    let width = params.editor_width.load(Relaxed).max(MIN_SIZE.0);
    let height = params.editor_height.load(Relaxed).max(MIN_SIZE.1);
    let egui_state = EguiEditorState::from_size(
        nice_plug::editor::dpi::LogicalSize::new(f64::from(width), f64::from(height)),
        1.0,
    );
    let settings = EguiNiceSettings::new()
        .with_tile("Longtail")
        .with_resize_hint(ResizeHint::RESIZABLE.with_min_logical_size(
            nice_plug::editor::dpi::LogicalSize::new(MIN_SIZE.0 as f32, MIN_SIZE.1 as f32),
        ));
    let app = EditorApp {
        params,
        monitor,
        egui_state: Arc::clone(&egui_state),
        gui: None,
        thermal: None,
        policy: ThermalPolicy::new(Placement::Cpu),
        preview: None,
        preview_job: None,
        worker_load: (Instant::now(), 0, 0.0),
        dismissed: Vec::new(),
    };
    create_egui_editor(egui_state, RepaintNotifier::new(), settings, app)
}

impl NiceEguiApp for EditorApp {
    fn build(
        &mut self,
        egui_ctx: egui::Context,
        nice_gui_ctx: GuiContext,
        _frame: &mut Frame,
    ) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        egui_ctx.set_visuals(egui::Visuals::dark());
        self.gui = Some(nice_gui_ctx);
        if self.thermal.is_none() {
            self.thermal = ThermalMonitor::spawn(ThermalProbes::new(None, true)).ok();
        }
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut Frame) {
        let Some(gui) = self.gui.clone() else {
            return;
        };
        let setter = gui.param_setter();
        self.poll_preview();
        ui.ctx().request_repaint_after(Duration::from_millis(250));

        egui::Panel::top("header").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("Longtail");
                ui.label(format!("convolution reverb {}", env!("CARGO_PKG_VERSION")));
                ui.separator();
                let mut tab = Tab::from_index(self.params.editor_tab.load(Relaxed));
                for candidate in Tab::ALL {
                    ui.selectable_value(&mut tab, candidate, candidate.name());
                }
                self.params.editor_tab.store(tab.index(), Relaxed);
            });
            self.messages(ui);
        });
        egui::CentralPanel::default().show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                match Tab::from_index(self.params.editor_tab.load(Relaxed)) {
                    Tab::Reverb => self.reverb_tab(ui, &setter),
                    Tab::Engine => self.engine_tab(ui, &setter),
                    Tab::Thermal => self.thermal_tab(ui),
                }
            });
        });
    }

    fn resized(&mut self, _new_size: nice_plug_egui::baseview::WindowSize) {
        let size = self.egui_state.logical_size();
        self.params
            .editor_width
            .store(size.width.round() as u32, Relaxed);
        self.params
            .editor_height
            .store(size.height.round() as u32, Relaxed);
    }

    fn editor_closed(&mut self) {
        // Stops the thermal thread; the next open starts a fresh one.
        self.thermal = None;
        self.gui = None;
    }
}

impl EditorApp {
    fn sample_rate(&self) -> u32 {
        match self.monitor.sample_rate.load(Relaxed) {
            0 => 48_000,
            rate => rate,
        }
    }

    /// Starts or collects the preview for the selected IR.
    fn poll_preview(&mut self) {
        if let Some(job) = &self.preview_job {
            match job.try_recv() {
                Ok(preview) => {
                    self.preview = Some(preview);
                    self.preview_job = None;
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => self.preview_job = None,
            }
        }
        let ir = self.params.ir.value();
        let sample_rate = self.sample_rate();
        let current = self
            .preview
            .as_ref()
            .is_some_and(|p| p.ir == ir && p.sample_rate == sample_rate);
        if !current {
            let (sender, receiver) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("longtail-preview".to_owned())
                .spawn(move || {
                    let _ = sender.send(make_preview(ir, sample_rate));
                });
            if spawned.is_ok() {
                self.preview_job = Some(receiver);
            }
        }
    }

    /// Warnings and errors, each dismissable; never a modal.
    fn messages(&mut self, ui: &mut egui::Ui) {
        let mut messages = Vec::new();
        if let Ok(errors) = self.monitor.errors.lock() {
            messages.extend(errors.iter().cloned());
        }
        if self.monitor.degraded.load(Relaxed) {
            messages.push(
                "Some results of the background workers are late: the tail may drop out. A \
                 larger host buffer or the Low CPU latency mode helps."
                    .to_owned(),
            );
        }
        for message in messages {
            if self.dismissed.contains(&message) {
                continue;
            }
            ui.horizontal(|ui| {
                ui.colored_label(Color32::from_rgb(255, 180, 80), &message);
                if ui.small_button("Dismiss").clicked() {
                    self.dismissed.push(message.clone());
                }
            });
        }
    }

    fn reverb_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.heading("Impulse response");
        egui::Grid::new("ir-grid").num_columns(2).show(ui, |ui| {
            ui.label("Built-in");
            let current = self.params.ir.value();
            egui::ComboBox::from_id_salt("ir-choice")
                .selected_text(current.name())
                .show_ui(ui, |ui| {
                    for ir in BuiltinIr::ALL {
                        if ui.selectable_label(ir == current, ir.name()).clicked() && ir != current
                        {
                            setter.begin_set_parameter(&self.params.ir);
                            setter.set_parameter(&self.params.ir, ir);
                            setter.end_set_parameter(&self.params.ir);
                        }
                    }
                });
            ui.end_row();
            if let Some(preview) = &self.preview {
                ui.label("Length");
                ui.label(format!(
                    "{:.2} s at {} Hz ({} samples)",
                    preview.seconds,
                    preview.sample_rate,
                    (preview.seconds * f64::from(preview.sample_rate)).round()
                ));
                ui.end_row();
                ui.label("Channels");
                ui.label(format!("{} ({})", preview.num_channels, preview.layout));
                ui.end_row();
            }
        });
        match &self.preview {
            Some(preview) => draw_waveform(ui, preview),
            None => {
                ui.label("Preparing the preview...");
            }
        }

        ui.add_space(8.0);
        ui.heading("Mix");
        egui::Grid::new("mix-grid").num_columns(2).show(ui, |ui| {
            ui.label("Dry/wet");
            ui.add(widgets::ParamSlider::for_param(&self.params.mix, setter).with_width(260.0));
            ui.end_row();
            ui.label("Output gain");
            ui.add(
                widgets::ParamSlider::for_param(&self.params.output_gain, setter).with_width(260.0),
            );
            ui.end_row();
            ui.label("Latency");
            ui.add(
                widgets::ParamSlider::for_param(&self.params.latency_mode, setter)
                    .with_width(260.0),
            );
            ui.end_row();
            ui.label("Reported latency");
            let latency = self.monitor.latency_samples.load(Relaxed);
            ui.label(format!(
                "{latency} samples ({:.2} ms)",
                f64::from(latency) * 1000.0 / f64::from(self.sample_rate())
            ));
            ui.end_row();
        });
    }

    fn engine_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.heading("Backend");
        egui::Grid::new("backend-grid")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("Backend");
                ui.add(
                    widgets::ParamSlider::for_param(&self.params.backend, setter).with_width(200.0),
                );
                ui.end_row();
                ui.label("Runs on");
                let reason = match self.params.backend.value() {
                    BackendParam::Auto => "CPU: Auto chose it (no GPU executor in this version)",
                    BackendParam::Cpu => "CPU: forced by the Backend parameter",
                };
                ui.label(reason);
                ui.end_row();
            });

        let monitor = &self.monitor;
        if !monitor.active.load(Relaxed) {
            ui.label("Not processing yet: the host has not activated the plugin.");
            return;
        }
        let ir_len = monitor.ir_len.load(Relaxed).max(1) as usize;
        let max_block = monitor.max_block_size.load(Relaxed).max(1) as usize;
        let mode = if monitor.low_cpu.load(Relaxed) {
            LatencyMode::LowCpu
        } else {
            LatencyMode::Zero
        };
        let plan = PartitionPlan::new(ir_len, max_block, mode, PlanLimits::default());
        ui.add_space(8.0);
        ui.heading("Partition plan");
        ui.label(format!(
            "quantum {} samples, head {} taps, host block up to {}",
            plan.quantum, plan.head_taps, max_block
        ));
        egui::Grid::new("levels-grid")
            .num_columns(4)
            .striped(true)
            .show(ui, |ui| {
                ui.strong("level");
                ui.strong("partitions");
                ui.strong("IR from");
                ui.strong("runs on");
                ui.end_row();
                for (idx, level) in plan.levels.iter().enumerate() {
                    ui.label(idx.to_string());
                    ui.label(format!(
                        "{} x {}",
                        level.num_partitions, level.partition_size
                    ));
                    ui.label(format!(
                        "{:.1} ms",
                        level.ir_offset as f64 * 1000.0 / f64::from(self.sample_rate())
                    ));
                    ui.label(if idx == 0 {
                        "audio thread (with the head)".to_owned()
                    } else {
                        format!(
                            "CPU worker, {:.1} ms of slack",
                            plan.slack_samples(level) as f64 * 1000.0
                                / f64::from(self.sample_rate())
                        )
                    });
                    ui.end_row();
                }
            });

        // Worker CPU share from the growth of their busy time.
        let busy = monitor.worker_busy_ns.load(Relaxed);
        let (since, last_busy, share) = self.worker_load;
        let elapsed = since.elapsed();
        if elapsed >= Duration::from_secs(1) {
            let grown = busy.saturating_sub(last_busy) as f64;
            self.worker_load = (
                Instant::now(),
                busy,
                (grown / elapsed.as_nanos() as f64) as f32,
            );
        } else {
            self.worker_load = (since, last_busy, share);
        }

        ui.add_space(8.0);
        ui.heading("Health");
        egui::Grid::new("health-grid")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("Audio-thread load");
                ui.label(format!(
                    "p99 {:.1} %, max {:.1} % of the deadline (last second)",
                    monitor.load_p99_permille.load(Relaxed) as f32 / 10.0,
                    monitor.load_max_permille.load(Relaxed) as f32 / 10.0
                ));
                ui.end_row();
                ui.label("Workers");
                ui.label(format!(
                    "{} threads, {:.1} % of one core",
                    monitor.worker_threads.load(Relaxed),
                    self.worker_load.2 * 100.0
                ));
                ui.end_row();
                ui.label("Late results");
                ui.label(format!(
                    "{} late, {} dropped{}",
                    monitor.late_results.load(Relaxed),
                    monitor.dropped_chunks.load(Relaxed),
                    if monitor.degraded.load(Relaxed) {
                        " (degraded)"
                    } else {
                        ""
                    }
                ));
                ui.end_row();
            });
    }

    fn thermal_tab(&mut self, ui: &mut egui::Ui) {
        let Some(thermal) = &self.thermal else {
            ui.label("The thermal monitor could not start.");
            return;
        };
        let snapshot = thermal.snapshot();
        let gpu = GpuStatus {
            available: false,
            slack_allows: false,
        };
        let decision = self.policy.update(&snapshot, gpu);
        ui.heading("Thermal state");
        egui::Grid::new("thermal-grid")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("CPU");
                state_label(ui, snapshot.cpu);
                ui.end_row();
                ui.label("GPU");
                ui.horizontal(|ui| {
                    state_label(ui, snapshot.gpu);
                    if snapshot.gpu_throttling {
                        ui.colored_label(Color32::from_rgb(255, 120, 80), "throttling");
                    }
                });
                ui.end_row();
                ui.label("Sources");
                ui.label(&snapshot.sources);
                ui.end_row();
            });
        if snapshot.readings.is_empty() {
            ui.label("No temperature sensor is readable on this machine (state Unknown).");
        } else {
            egui::Grid::new("readings-grid")
                .num_columns(4)
                .striped(true)
                .show(ui, |ui| {
                    for reading in &snapshot.readings {
                        ui.label(&reading.source);
                        ui.label(reading.device.name());
                        ui.label(format!("{:.1} °C", reading.celsius));
                        state_label(ui, reading.state());
                        ui.end_row();
                    }
                });
        }
        ui.add_space(8.0);
        ui.heading("Policy");
        let action = match decision.action {
            Action::Stay => "no change",
            Action::MoveToCpu => "moved the GPU levels to the CPU",
            Action::MoveToGpu => "moved the big levels to the GPU",
            Action::SuggestLargerBuffer => "suggests a larger host buffer",
        };
        ui.label(format!(
            "Work runs on the {}: {action}, because {}.",
            match decision.placement {
                Placement::Cpu => "CPU",
                Placement::Gpu => "GPU",
            },
            decision.reason
        ));
    }
}

fn state_label(ui: &mut egui::Ui, state: crate::thermal::ThermalState) {
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

fn draw_waveform(ui: &mut egui::Ui, preview: &Preview) {
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
