//! The editor (egui through nice-plug-egui): the IR, the mix, where the engine runs and how it
//! is doing, and the machine's thermal state.
//!
//! # Threads
//!
//! The editor runs on the host's GUI thread. It reads the audio thread's numbers from
//! [`EngineMonitor`] (atomics only) and changes parameters through the host (`ParamSetter`), so
//! nothing it does can make the audio thread wait. Slow work happens on helper threads: the IR
//! preview (waveform and spectrogram) is generated on a short-lived thread, a file dialog and the decoding of
//! the chosen file run on another, and the thermal probes run on the [`ThermalMonitor`] thread,
//! which lives while the editor is open. The host's GUI thread never blocks on any of them.
//!
//! # Loading IR files
//!
//! "Open file..." shows the desktop's file dialog (rfd: the XDG desktop portal, or zenity where
//! no portal runs) on a helper thread; the path field loads a typed or pasted path the same way
//! for machines with neither. "Open true-stereo pair..." takes two stereo files (the left
//! input's, then the right input's, ordered by name). A file that cannot be used leaves the
//! current IR playing and shows why, as a dismissable message.
//!
//! Dropping a file onto the window is not offered: baseview reports X11 drops, but egui-baseview
//! 0.9 (under nice-plug-egui) neither accepts them nor passes them to egui.
//!
//! # State
//!
//! The window size, the selected tab and the IR view (waveform or spectrogram) are persisted
//! with the plugin's state (the `editor-*` fields of [`LongtailParams`]), so a project reopens
//! its editor as it was left. `LONGTAIL_EDITOR_TAB` (`reverb`, `engine` or `thermal`) and
//! `LONGTAIL_EDITOR_IR_VIEW` (`waveform` or `spectrogram`) open the editor that way instead, for
//! screenshots of each (`scripts/editor-screenshot.sh`, the `editor` test).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU8};
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
use crate::engine::{BackendProbe, RunsOn};
use crate::ir::builtin::BuiltinIr;
use crate::ir::edit::EditSettings;
use crate::ir::store::IrFileState;
use crate::monitor::EngineMonitor;
use crate::params::{BackendParam, IrSourceParam, LongtailParams};
use crate::preparer::{IrSource, prepare_ir};
use crate::spectrogram::{self, Spectrogram, spectrogram};
use crate::thermal::{Action, GpuStatus, Placement, ThermalMonitor, ThermalPolicy, ThermalProbes};

/// Size of a new editor window, in logical pixels.
pub const DEFAULT_SIZE: (u32, u32) = (720, 480);
/// Smallest size the window may be resized to.
pub const MIN_SIZE: (u32, u32) = (560, 380);

/// When set (the standalone's `--headless`), the plugin offers no editor.
pub static HEADLESS: AtomicBool = AtomicBool::new(false);

/// A choice the editor shows as a row of buttons, persists by its position in `ALL` and can
/// take from an environment variable by name (case-insensitive), for screenshots.
trait Choice: Copy + PartialEq + 'static {
    /// Every choice, the default first.
    const ALL: &'static [Self];
    /// The variable naming the choice to open with.
    const ENV: &'static str;

    fn name(self) -> &'static str;

    fn from_index(idx: u8) -> Self {
        Self::ALL.get(idx as usize).copied().unwrap_or(Self::ALL[0])
    }

    fn index(self) -> u8 {
        Self::ALL.iter().position(|c| *c == self).unwrap_or(0) as u8
    }

    fn from_env() -> Option<Self> {
        let name = std::env::var(Self::ENV).ok()?;
        Self::ALL
            .iter()
            .copied()
            .find(|choice| choice.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The buttons, selecting into the persisted `slot`.
    fn buttons(ui: &mut egui::Ui, slot: &AtomicU8) {
        let mut current = Self::from_index(slot.load(Relaxed));
        for &candidate in Self::ALL {
            ui.selectable_value(&mut current, candidate, candidate.name());
        }
        slot.store(current.index(), Relaxed);
    }
}

/// The editor's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tab {
    Reverb,
    Engine,
    Thermal,
}

impl Choice for Tab {
    const ALL: &'static [Self] = &[Tab::Reverb, Tab::Engine, Tab::Thermal];
    const ENV: &'static str = "LONGTAIL_EDITOR_TAB";

    fn name(self) -> &'static str {
        match self {
            Tab::Reverb => "Reverb",
            Tab::Engine => "Engine",
            Tab::Thermal => "Thermal",
        }
    }
}

/// How the Reverb tab draws the IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IrView {
    Waveform,
    Spectrogram,
}

impl Choice for IrView {
    const ALL: &'static [Self] = &[IrView::Waveform, IrView::Spectrogram];
    const ENV: &'static str = "LONGTAIL_EDITOR_IR_VIEW";

    fn name(self) -> &'static str {
        match self {
            IrView::Waveform => "Waveform",
            IrView::Spectrogram => "Spectrogram",
        }
    }
}

/// What a preview shows: the IR as the engine plays it, edits applied, at the session rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewKey {
    /// Built-in IR or the user's file (by generation).
    pub source: IrSource,
    /// The edit parameters.
    pub edits: EditSettings,
    /// The session rate.
    pub sample_rate: u32,
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
    /// Per channel, `(min, max)` per column.
    pub columns: Vec<Vec<(f32, f32)>>,
    /// Power over time and frequency, all channels together.
    pub spectrogram: Spectrogram,
}

/// Dynamic range of the waveform preview, in dB below the IR's peak.
const PREVIEW_RANGE_DB: f32 = 72.0;
/// Columns of the waveform preview.
pub const PREVIEW_COLUMNS: usize = 600;
/// Time columns of the spectrogram.
pub const SPECTROGRAM_COLUMNS: usize = 300;
/// Frequency bands of the spectrogram (logarithmic, 20 Hz to Nyquist).
pub const SPECTROGRAM_BANDS: usize = 72;

/// Prepares the IR `key` describes exactly as the preparation thread does for the engine, and
/// outlines it. Allocates and may take a while (resampling, filters): off the GUI thread.
pub fn make_preview(key: PreviewKey, files: &IrFileState) -> Preview {
    let result = prepare_ir(key.source, &key.edits, key.sample_rate, files)
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

/// How the user asked for a file.
#[derive(Debug, Clone)]
pub enum FileRequest {
    /// One file from the file dialog.
    Dialog,
    /// Two stereo files from the file dialog, making a true-stereo IR.
    DialogPair,
    /// Paths given directly (the path field).
    Paths(Vec<PathBuf>),
}

/// What came of a [`FileRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// The dialog was closed without a choice (or no dialog could be shown).
    Cancelled,
    /// The file is the current file now.
    Loaded,
    /// Nothing changed, for this reason.
    Failed(String),
}

/// Orders the chosen files for [`IrFileState::load_paths`]: one file, or two stereo files
/// sorted by name (so `hall_L.wav` comes before `hall_R.wav`: the left input's first).
pub fn order_paths(mut paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    match paths.len() {
        1 => Ok(paths),
        2 => {
            paths.sort();
            Ok(paths)
        }
        count => Err(format!(
            "{count} files were chosen: choose one IR file, or two stereo files (left input's, \
             right input's) for true stereo"
        )),
    }
}

/// Runs `request` (dialog, decoding) to the end. Blocks: call it on a helper thread.
pub fn run_file_request(
    request: FileRequest,
    files: &IrFileState,
    start_dir: Option<PathBuf>,
) -> FileOutcome {
    let chosen = match request {
        FileRequest::Paths(paths) => paths,
        FileRequest::Dialog | FileRequest::DialogPair => {
            let mut dialog = rfd::FileDialog::new()
                .add_filter("Impulse responses", crate::ir::decode::EXTENSIONS)
                .add_filter("All files", &["*"]);
            if let Some(dir) = start_dir {
                dialog = dialog.set_directory(dir);
            }
            let picked = if matches!(request, FileRequest::DialogPair) {
                dialog
                    .set_title("Longtail: two stereo IR files (true stereo)")
                    .pick_files()
            } else {
                dialog
                    .set_title("Longtail: impulse response")
                    .pick_file()
                    .map(|path| vec![path])
            };
            match picked {
                Some(paths) if !paths.is_empty() => paths,
                _ => return FileOutcome::Cancelled,
            }
        }
    };
    let paths = match order_paths(chosen) {
        Ok(paths) => paths,
        Err(message) => return FileOutcome::Failed(message),
    };
    let refs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    match files.load_paths(&refs) {
        Ok(()) => FileOutcome::Loaded,
        Err(err) => FileOutcome::Failed(format!("{err}; the current IR keeps playing")),
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
    /// A file dialog or load in progress.
    file_job: Option<Receiver<FileOutcome>>,
    /// The path field's text.
    path_text: String,
    /// The last file load's error, until dismissed.
    file_error: Option<String>,
    /// Worker CPU share, from the busy-time counter's growth between frames.
    worker_load: (Instant, u64, f32),
    /// Messages the user has dismissed (by text).
    dismissed: Vec<String>,
    /// The spectrogram of the preview with this key, uploaded as a texture.
    spectrogram_texture: Option<(PreviewKey, egui::TextureHandle)>,
}

/// Builds the editor for the plugin's shared state.
pub fn create(
    params: Arc<LongtailParams>,
    monitor: Arc<EngineMonitor>,
) -> Option<EguiEditor<EditorApp>> {
    if let Some(tab) = Tab::from_env() {
        params.editor_tab.store(tab.index(), Relaxed);
    }
    if let Some(view) = IrView::from_env() {
        params.editor_ir_view.store(view.index(), Relaxed);
    }
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
        file_job: None,
        path_text: String::new(),
        file_error: None,
        worker_load: (Instant::now(), 0, 0.0),
        dismissed: Vec::new(),
        spectrogram_texture: None,
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
        self.poll_file_job(&setter);
        self.poll_preview();
        ui.ctx().request_repaint_after(Duration::from_millis(250));

        egui::Panel::top("header").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.heading("Longtail");
                ui.label(format!("convolution reverb {}", env!("CARGO_PKG_VERSION")));
                ui.separator();
                Tab::buttons(ui, &self.params.editor_tab);
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

    /// The preview the parameters ask for now.
    fn preview_key(&self) -> PreviewKey {
        let (source, use_file) = self.params.ir_source_now();
        PreviewKey {
            source,
            edits: self.params.edit_settings(use_file),
            sample_rate: self.sample_rate(),
        }
    }

    /// Starts or collects the preview for the selected IR. One job at a time: while a knob
    /// moves, the next job starts from wherever it is when the last one ends.
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
        let key = self.preview_key();
        if self.preview.as_ref().is_some_and(|p| p.key == key) {
            return;
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let files = Arc::clone(&self.params.ir_file);
        let spawned = std::thread::Builder::new()
            .name("longtail-preview".to_owned())
            .spawn(move || {
                let _ = sender.send(make_preview(key, &files));
            });
        if spawned.is_ok() {
            self.preview_job = Some(receiver);
        }
    }

    /// Starts a file request on a helper thread, unless one runs already.
    fn start_file_request(&mut self, request: FileRequest) {
        if self.file_job.is_some() {
            return;
        }
        let files = Arc::clone(&self.params.ir_file);
        let start_dir = files
            .current()
            .and_then(|(file, _)| file.paths.first()?.parent().map(PathBuf::from));
        let (sender, receiver) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("longtail-open-ir".to_owned())
            .spawn(move || {
                let _ = sender.send(run_file_request(request, &files, start_dir));
            });
        match spawned {
            Ok(_) => self.file_job = Some(receiver),
            Err(err) => self.file_error = Some(format!("cannot open a file: {err}")),
        }
    }

    /// Collects a finished file request; a loaded file becomes the IR source.
    fn poll_file_job(&mut self, setter: &ParamSetter) {
        let Some(job) = &self.file_job else {
            return;
        };
        let outcome = match job.try_recv() {
            Ok(outcome) => outcome,
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => {
                FileOutcome::Failed("the file loader stopped".into())
            }
        };
        self.file_job = None;
        match outcome {
            FileOutcome::Cancelled => {}
            FileOutcome::Loaded => {
                self.file_error = None;
                set_param(setter, &self.params.ir_source, IrSourceParam::File);
            }
            FileOutcome::Failed(message) => self.file_error = Some(message),
        }
    }

    /// Warnings and errors, each dismissable; never a modal.
    fn messages(&mut self, ui: &mut egui::Ui) {
        if let Some(error) = self.file_error.clone() {
            ui.horizontal(|ui| {
                ui.colored_label(Color32::from_rgb(255, 110, 90), &error);
                if ui.small_button("Dismiss").clicked() {
                    self.file_error = None;
                }
            });
        }
        let mut messages = Vec::new();
        if let Some(reason) = self.monitor.pass_through() {
            messages.push(reason);
        }
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
        let file = self.params.ir_file.current();
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
        });
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

    /// Where the playing engine's levels run now: its probe, never the audio thread's objects.
    fn playing_backend(&self) -> Option<BackendProbe> {
        self.monitor
            .active
            .load(Relaxed)
            .then(|| self.monitor.playing_backend())
            .flatten()
    }

    fn engine_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let backend = self.playing_backend();
        ui.heading("Backend");
        egui::Grid::new("backend-grid")
            .num_columns(2)
            .show(ui, |ui| {
                ui.label("Backend");
                ui.add(
                    widgets::ParamSlider::for_param(&self.params.backend, setter).with_width(200.0),
                );
                ui.end_row();
                ui.label("Rule");
                let rule = match self.params.backend.value() {
                    BackendParam::Auto => {
                        "Auto: big engines put their big levels on a real GPU when its measured \
                         round trip fits and it is faster per partition; else the CPU"
                    }
                    BackendParam::Cpu => "CPU: forced by the Backend parameter",
                    BackendParam::Gpu => {
                        "GPU: big levels on the GPU; each falls back to its CPU standby on failure"
                    }
                };
                ui.label(rule);
                ui.end_row();
                if let Some(probe) = &backend {
                    let report = probe.report();
                    ui.label("Now");
                    ui.label(&report.reason);
                    ui.end_row();
                    if let Some(stats) = probe.gpu_stats() {
                        ui.label("GPU round trip");
                        ui.label(format!(
                            "p50 {:.2} ms, p99 {:.2} ms over {} periods; {} levels left for the \
                             CPU, {} went back",
                            stats.round_trip.p50_us / 1e3,
                            stats.round_trip.p99_us / 1e3,
                            stats.periods,
                            stats.levels_failed_over,
                            report.gpu_returns
                        ));
                        ui.end_row();
                    }
                }
            });

        let monitor = &self.monitor;
        if !monitor.active.load(Relaxed) {
            ui.label("Not processing yet: the host has not activated the plugin.");
            return;
        }
        if let Some(reason) = monitor.pass_through() {
            ui.add_space(8.0);
            ui.heading("Passing through");
            ui.label(format!("No convolution: {reason}."));
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
        let levels = backend.as_ref().map(BackendProbe::levels);
        let adapter = backend
            .as_ref()
            .and_then(|b| b.gpu_stats())
            .map(|stats| stats.adapter.to_string());
        let rate = f64::from(self.sample_rate());
        egui::Grid::new("levels-grid")
            .num_columns(5)
            .striped(true)
            .show(ui, |ui| {
                ui.strong("level");
                ui.strong("partitions");
                ui.strong("IR from");
                ui.strong("runs on");
                ui.strong("late");
                ui.end_row();
                for (idx, level) in plan.levels.iter().enumerate() {
                    let status = levels.as_ref().and_then(|l| l.get(idx));
                    ui.label(idx.to_string());
                    ui.label(format!(
                        "{} x {}",
                        level.num_partitions, level.partition_size
                    ));
                    ui.label(format!("{:.1} ms", level.ir_offset as f64 * 1000.0 / rate));
                    let slack_ms = plan.slack_samples(level) as f64 * 1000.0 / rate;
                    let runs_on = match status.map(|s| s.runs_on) {
                        _ if idx == 0 => "audio thread (with the head)".to_owned(),
                        Some(RunsOn::Gpu) => format!(
                            "GPU: {}, {slack_ms:.1} ms of slack",
                            adapter.as_deref().unwrap_or("?")
                        ),
                        Some(RunsOn::AudioThread) => "audio thread (inline)".to_owned(),
                        _ => format!("CPU worker, {slack_ms:.1} ms of slack"),
                    };
                    let label = ui.label(runs_on);
                    if let Some(left) = status.and_then(|s| s.left_gpu.as_ref()) {
                        label.on_hover_text(format!("left the GPU: {left}"));
                    }
                    ui.label(status.map_or(String::new(), |s| {
                        format!("{} / {} dropped", s.late_results, s.dropped_chunks)
                    }));
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
        // The GPU as the playing engine sees it: a hub that serves, and levels it runs.
        let backend = self.playing_backend();
        let gpu = GpuStatus {
            available: backend
                .as_ref()
                .and_then(BackendProbe::gpu_stats)
                .is_some_and(|stats| stats.broken.is_none()),
            slack_allows: backend
                .as_ref()
                .is_some_and(|b| b.levels().iter().any(|l| l.runs_on == RunsOn::Gpu)),
        };
        // The governor's decision for the playing engine when it watches it (it acts on it);
        // else what the policy would decide.
        let local = self.policy.update(&snapshot, gpu);
        let decision = backend
            .as_ref()
            .and_then(BackendProbe::thermal_decision)
            .unwrap_or(local);
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
                        ui.label(reading.temperature_text());
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

/// Sets a parameter from the editor as one host gesture.
fn set_param<P: Param>(setter: &ParamSetter, param: &P, value: P::Plain) {
    setter.begin_set_parameter(param);
    setter.set_parameter(param, value);
    setter.end_set_parameter(param);
}

/// A labelled slider row of a grid.
fn param_row<P: Param>(ui: &mut egui::Ui, setter: &ParamSetter, label: &str, param: &P) {
    ui.label(label);
    ui.add(widgets::ParamSlider::for_param(param, setter).with_width(260.0));
    ui.end_row();
}

/// A check box for a switch parameter.
fn toggle(ui: &mut egui::Ui, setter: &ParamSetter, label: &str, param: &BoolParam) {
    let mut on = param.value();
    if ui.checkbox(&mut on, label).changed() {
        set_param(setter, param, on);
    }
}

/// A colour for a level from [`spectrogram::FLOOR_DB`] (dark blue-black) to 0 dB (pale
/// yellow), through violet and orange.
fn heat_colour(db: f32) -> Color32 {
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
fn spectrogram_image(s: &Spectrogram) -> egui::ColorImage {
    let mut pixels = Vec::with_capacity(s.columns * s.bands);
    for row in 0..s.bands {
        let band = s.bands - 1 - row;
        pixels.extend((0..s.columns).map(|column| heat_colour(s.at(column, band))));
    }
    egui::ColorImage::new([s.columns, s.bands], pixels)
}

fn draw_spectrogram(ui: &mut egui::Ui, preview: &PreviewData, texture: &egui::TextureHandle) {
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

fn draw_waveform(ui: &mut egui::Ui, preview: &PreviewData) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name)
    }

    fn builtin_key(edits: EditSettings) -> PreviewKey {
        PreviewKey {
            source: IrSource::Builtin(BuiltinIr::SmallRoom),
            edits,
            sample_rate: 48_000,
        }
    }

    #[test]
    fn preview_outlines_the_ir_the_engine_plays() {
        let files = IrFileState::default();
        let plain = make_preview(builtin_key(EditSettings::NONE), &files);
        let data = plain.result.as_ref().expect("built-in prepares");
        let generated = BuiltinIr::SmallRoom.generate(48_000);
        assert_eq!(data.num_frames, generated.len());
        assert_eq!(data.num_channels, generated.channels.len());
        assert!(data.columns.iter().all(|c| c.len() == PREVIEW_COLUMNS));

        // A reversed IR's loudest column moves from the start to the end.
        let reversed = make_preview(
            builtin_key(EditSettings {
                reverse: true,
                ..EditSettings::NONE
            }),
            &files,
        );
        let loudest = |data: &PreviewData| {
            let column = &data.columns[0];
            (0..column.len())
                .max_by(|&a, &b| {
                    let level = |i: usize| (-column[i].0).max(column[i].1);
                    level(a).total_cmp(&level(b))
                })
                .expect("columns")
        };
        let reversed = reversed.result.expect("reverse prepares");
        assert!(loudest(data) < PREVIEW_COLUMNS / 4);
        assert!(loudest(&reversed) > PREVIEW_COLUMNS * 3 / 4);
    }

    #[test]
    fn a_loaded_file_is_previewed_and_a_bad_one_keeps_it() {
        let files = IrFileState::default();
        let outcome =
            run_file_request(FileRequest::Paths(vec![fixture("ir-16.wav")]), &files, None);
        assert_eq!(outcome, FileOutcome::Loaded);
        let (_, generation) = files.current().expect("loaded");
        let key = PreviewKey {
            source: IrSource::File(generation),
            edits: EditSettings::NONE,
            sample_rate: 44_100,
        };
        let preview = make_preview(key, &files);
        let data = preview.result.expect("file prepares");
        assert_eq!(data.name, "ir-16.wav");

        // A file that is not audio: refused with the reason, the loaded file stays.
        let outcome =
            run_file_request(FileRequest::Paths(vec![fixture("README.md")]), &files, None);
        match outcome {
            FileOutcome::Failed(message) => {
                assert!(message.contains("current IR keeps playing"), "{message}")
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        assert_eq!(files.current().map(|(_, g)| g), Some(generation));

        // A preview of a file generation that is gone says so instead of showing another IR.
        files.clear();
        assert!(make_preview(key, &files).result.is_err());
    }

    #[test]
    fn chosen_files_are_one_or_an_ordered_pair() {
        let one = order_paths(vec![PathBuf::from("/a/hall.wav")]).expect("one file");
        assert_eq!(one, vec![PathBuf::from("/a/hall.wav")]);
        let pair = order_paths(vec![
            PathBuf::from("/a/hall_R.wav"),
            PathBuf::from("/a/hall_L.wav"),
        ])
        .expect("a pair");
        assert_eq!(
            pair,
            vec![
                PathBuf::from("/a/hall_L.wav"),
                PathBuf::from("/a/hall_R.wav")
            ]
        );
        let three = vec![PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c")];
        assert!(order_paths(three).unwrap_err().contains("3 files"));
        assert!(order_paths(Vec::new()).is_err());
    }
}
