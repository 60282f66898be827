//! The editor (egui through nice-plug-egui): the IR, the mix, where the engine runs and how it
//! is doing, and the machine's thermal state.
//!
//! # Threads
//!
//! The editor runs on the host's GUI thread. It reads the audio thread's numbers from
//! [`EngineMonitor`] (atomics only) and changes parameters through the host (`ParamSetter`), so
//! nothing it does can make the audio thread wait. Slow work happens on helper threads: the IR
//! preview (waveform and spectrogram) is generated on a short-lived thread, a file dialog and
//! the decoding of the chosen file run on another, the IR library's settings file and scan on a
//! third, and the thermal probes run on the [`ThermalMonitor`] thread. The host's GUI thread never blocks on any of them while the editor
//! runs. All three end as soon as the window has closed (`window`, [`WindowThreads`]): the jobs
//! are joined, each within a bound ([`threads::Jobs`]), and the monitor is stopped and
//! joined. So no thread of the editor outlives its window. A room capture (the Capture tab)
//! plays and records on the audio thread and is deconvolved and saved on the preparation
//! thread ([`crate::capture::live`]); the tab only starts it and reads where it stands.
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
//! The window size, the zoom, the selected tab and the IR view (waveform, spectrogram or paths)
//! are persisted with the plugin's state (the `editor-*` fields of [`LongtailParams`]), so a
//! project reopens its editor as it was left. For screenshots of each (scripts/
//! editor-screenshot.sh, the `editor` test) these open the editor another way:
//! `LONGTAIL_EDITOR_TAB` (`reverb`, `shape`, `library`, `engine`, `thermal` or `capture`),
//! `LONGTAIL_EDITOR_IR_VIEW` (`waveform`, `spectrogram` or `paths`), `LONGTAIL_EDITOR_SIZE`
//! (`WxH`), `LONGTAIL_EDITOR_ZOOM` (percent), `LONGTAIL_EDITOR_DETAILS` (any value: "File & bus"
//! unfolded), `LONGTAIL_EDITOR_FORMAT` (a Channel format by name) and `LONGTAIL_EDITOR_LATENCY`
//! (a Latency value by id, `offload_2048` say), each set as a parameter change through the host
//! when the editor opens. `LONGTAIL_EDITOR_VERSION` replaces the version in
//! the header, so that the README's screenshot (`docs/images/editor.png`, from the
//! `editor` test) changes only when the editor does.
//!
//! # Size and zoom
//!
//! The window is resizable from [`MIN_SIZE`] (560 x 380: the Reverb tab's controls and a
//! picture still fit without a scroll) up; the picture and the sliders take the width and the
//! height the window gives. The zoom (75 to 200 %, in the header) scales the type and the
//! spacing inside the window, not the window: nice-plug-egui 0.6 has no zoom setter, and
//! egui's own zoom factor would make egui-baseview resize the window. The host's scale factor
//! applies on top, through nice-plug-egui.
//!
//! # Look
//!
//! One palette and one type scale ([`theme`]): a new widget takes its colours from
//! `theme::Palette` by role (text, weak text, surfaces, the IR, handles, meters, warnings) and
//! its sizes from `theme::TypeScale` times the zoom, never literal values; the palette's text
//! colours are tested for WCAG AA contrast on every surface.
//!
//! # Parts
//!
//! This file holds the editor's state ([`EditorApp`]) and the frame loop; its parts, each using
//! only what is above it or this file:
//!
//! - [`spectrogram`]: the spectrogram computation (no egui).
//! - `choice`: the persisted button rows (tab, IR view).
//! - `preview`: the IR outline made off the GUI thread ([`make_preview`]).
//! - `files`: choosing and loading IR files, or a captured IR ([`run_file_request`]).
//! - [`theme`]: the palette and the type scale.
//! - `probe`: what the tests read of a frame (`LONGTAIL_EDITOR_PROBE`).
//! - `draw`: parameter rows (with the mouse wheel), toggles, the spectrogram's colours.
//! - `meter_view`: the input and output meters and their peak hold (and the Capture tab's).
//! - `ir_picture`: the IR's waveform or spectrogram with the edits and their handles.
//! - `capture_picture`: a captured IR's outline and figures (Capture tab).
//! - `matrix_view`: the bus, the Channel format and the grid of paths (Reverb tab).
//! - `reverb_tab`, `shape_tab`, `library_tab`, `engine_tab`, `thermal_tab`: one file per tab
//!   (the Shape tab draws the Reverb tab's IR picture under its own controls);
//! - `capture_tab`: measuring a room with the capture desk ([`crate::capture::live`]); a
//!   captured IR loads through `files`, and a saved one has the Library tab rescan;
//! - `window`: the editor as nice-plug sees it, whose window ends [`WindowThreads`] once it has
//!   closed (generic over the app: it uses nothing here);
//! - [`threads`]: one-off helper threads joined within a bound, and pinning the library when
//!   one cannot be (it uses nothing of the editor).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use nice_plug::context::gui::GuiContext;
use nice_plug::prelude::*;
use nice_plug_egui::{
    EguiEditorState, EguiNiceSettings, Frame, NiceEguiApp, RepaintNotifier, create_egui_editor,
};

use crate::audio::monitor::EngineMonitor;
use crate::capture::live::Desk;
use crate::guard::fence::TaskFence;
use crate::params::{IrSourceParam, LongtailParams, SecondIrParam};
use crate::preparer::Slot;
use crate::thermal::{Placement, ThermalMonitor, ThermalPolicy, ThermalProbes, ThermalSnapshot};
use threads::{Job, Jobs, Poll, ThreadEnd};

mod capture_picture;
mod capture_tab;
mod choice;
mod draw;
mod engine_tab;
mod files;
mod ir_picture;
mod library_tab;
mod matrix_view;
mod meter_view;
mod preview;
mod probe;
mod reverb_tab;
mod shape_tab;
pub mod spectrogram;
pub mod theme;
mod thermal_tab;
pub mod threads;
mod window;

use choice::{Choice, IrView, Tab};
use draw::*;
pub use files::{FileOutcome, FileRequest, order_paths, run_file_request};
use preview::PREVIEW_RANGE_DB;
pub use preview::{
    PREVIEW_COLUMNS, Picture, Preview, PreviewData, PreviewKey, SPECTROGRAM_BANDS,
    SPECTROGRAM_COLUMNS, make_blended_preview, make_preview,
};
/// The plugin's editor.
pub type Editor = window::Editor<EditorApp>;

pub use crate::params::DEFAULT_EDITOR_SIZE as DEFAULT_SIZE;
/// Smallest size the window may be resized to.
pub const MIN_SIZE: (u32, u32) = (560, 380);

/// Below this width (in points at 100 %) the header leaves out the version text.
const NARROW_HEADER: f32 = 620.0;

/// The zooms offered, in percent.
pub const ZOOMS: [u32; 6] = [75, 100, 125, 150, 175, 200];

/// How long closing the editor's owner waits for a preview still being made (bounded work: one
/// IR prepared twice and its spectrogram), before the library is pinned instead
/// ([`threads`]).
const PREVIEW_JOIN_BOUND: Duration = Duration::from_secs(5);
/// The same for a file request: a file dialog waits for the user, so only a load that is about
/// to end is waited for.
const FILE_JOIN_BOUND: Duration = Duration::from_secs(1);
/// How long closing the editor waits for the window's own thread to end once baseview let it go
/// (it closes its X connection: milliseconds).
const WINDOW_THREAD_BOUND: Duration = Duration::from_secs(2);

/// When set (the standalone's `--headless`), the plugin offers no editor.
pub static HEADLESS: AtomicBool = AtomicBool::new(false);

/// The editor's state on the GUI thread.
pub struct EditorApp {
    params: Arc<LongtailParams>,
    monitor: Arc<EngineMonitor>,
    egui_state: Arc<EguiEditorState>,
    gui: Option<GuiContext>,
    policy: ThermalPolicy,
    preview: Option<Preview>,
    preview_job: Option<Job<Preview>>,
    /// A file dialog or load in progress.
    file_job: Option<Job<FileOutcome>>,
    /// The IR slot the file job loads into.
    file_job_slot: Slot,
    /// The threads of the two jobs above and the thermal monitor, ended when the window closes.
    window_threads: Arc<WindowThreads>,
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
    /// The zoom as a factor, and the one the style was last built for.
    zoom: f32,
    styled_zoom: f32,
    /// "File & bus" is unfolded.
    show_details: bool,
    /// The Reverb tab's controls' height at a zoom, as laid out last frame.
    controls_height: Option<(f32, f32)>,
    /// The input and output meters' peak holds.
    meter_holds: [meter_view::MeterHold; 2],
    /// The tests' record of each frame, when `LONGTAIL_EDITOR_PROBE` is set.
    probe: Option<probe::Probe>,
    /// The capture desk (the Capture tab: [`crate::capture::live`]).
    desk: Arc<Desk>,
    /// The Capture tab: the setup, the meters' holds ([`capture_tab`]).
    capture: capture_tab::CaptureView,
    /// The Library tab: the settings, the scan, the search ([`library_tab`]).
    library: library_tab::LibraryView,
    /// The header's version text: the version (the commit is on hover, where it does not
    /// take the header's width), or `LONGTAIL_EDITOR_VERSION`.
    version_text: String,
}

/// Builds the editor for the plugin's shared state.
///
/// `fence` posts through nice-plug's task queue: opening and closing the window park its thread
/// with it (`window::QueueHold`).
pub fn create(
    params: Arc<LongtailParams>,
    monitor: Arc<EngineMonitor>,
    desk: Arc<Desk>,
    fence: Option<Arc<TaskFence>>,
) -> Option<Editor> {
    if let Some(tab) = Tab::from_env() {
        params.editor_tab.store(tab.index(), Relaxed);
    }
    if let Some(view) = IrView::from_env() {
        params.editor_ir_view.store(view.index(), Relaxed);
    }
    if let Some((width, height)) = std::env::var("LONGTAIL_EDITOR_SIZE").ok().and_then(|size| {
        let (w, h) = size.trim().split_once('x')?;
        Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?))
    }) {
        params.editor_width.store(width, Relaxed);
        params.editor_height.store(height, Relaxed);
    }
    if let Some(zoom) = std::env::var("LONGTAIL_EDITOR_ZOOM")
        .ok()
        .and_then(|z| z.trim().trim_end_matches('%').parse::<u32>().ok())
    {
        params.editor_zoom.store(zoom, Relaxed);
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
    let window_threads = Arc::new(WindowThreads::default());
    let app = EditorApp {
        params,
        monitor,
        egui_state: Arc::clone(&egui_state),
        gui: None,
        policy: ThermalPolicy::new(Placement::Cpu),
        preview: None,
        preview_job: None,
        file_job: None,
        file_job_slot: Slot::A,
        window_threads: Arc::clone(&window_threads),
        path_text: String::new(),
        file_error: None,
        worker_load: (Instant::now(), 0, 0.0),
        dismissed: Vec::new(),
        spectrogram_texture: None,
        zoom: 1.0,
        styled_zoom: 0.0,
        show_details: std::env::var_os("LONGTAIL_EDITOR_DETAILS").is_some(),
        controls_height: None,
        meter_holds: Default::default(),
        probe: probe::Probe::from_env(),
        desk,
        capture: Default::default(),
        library: library_tab::LibraryView::new(Arc::clone(&window_threads.library_stop)),
        version_text: std::env::var("LONGTAIL_EDITOR_VERSION")
            .unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_owned()),
    };
    create_egui_editor(egui_state, RepaintNotifier::new(), settings, app)
        .map(|egui| Editor::new(egui, Arc::new(move || window_threads.end()), fence))
}

/// The threads the editor's state starts that end with its window: the preview and file jobs,
/// and the thermal monitor. The window ends them once it has closed ([`window`]): nice-plug
/// keeps the editor's state from one opening to the next, and may drop it with the plugin on a
/// thread of its own after the host has destroyed the instance, which is too late.
///
/// The window's own thread too, where the windowing library starts one (X11): baseview's drop
/// joins it only when the thread has not yet left its event loop, and a thread still closing
/// its X connection when the host exits crashed `clap_editor` (SIGSEGV in an exit handler while
/// the window thread was in `XCloseDisplay`).
#[derive(Default)]
struct WindowThreads {
    jobs: Jobs,
    thermal: std::sync::Mutex<Option<ThermalMonitor>>,
    /// The end of the thread the open window runs on.
    window_thread: std::sync::Mutex<Option<Arc<ThreadEnd>>>,
    /// Set on closing, so that a library scan still running ends before its join.
    library_stop: Arc<AtomicBool>,
}

impl WindowThreads {
    /// Waits for the window's thread (within [`WINDOW_THREAD_BOUND`]), joins the jobs (each
    /// within its bound) and stops the thermal monitor.
    fn end(&self) {
        let window_thread = self
            .window_thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(end) = window_thread {
            end.wait(WINDOW_THREAD_BOUND);
        }
        self.library_stop.store(true, Relaxed);
        self.jobs.join_all();
        drop(self.thermal_monitor().take());
    }

    /// Called on the window's thread when it opens.
    fn opened_on_this_thread(&self) {
        *self.window_thread.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(ThreadEnd::of_current_thread());
    }

    fn thermal_monitor(&self) -> std::sync::MutexGuard<'_, Option<ThermalMonitor>> {
        self.thermal.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the thermal monitor unless it runs.
    fn start_thermal(&self) {
        let mut thermal = self.thermal_monitor();
        if thermal.is_none() {
            *thermal = ThermalMonitor::spawn(ThermalProbes::new(None, true)).ok();
        }
    }

    /// The thermal monitor's latest snapshot; `None` when it could not start.
    fn thermal_snapshot(&self) -> Option<ThermalSnapshot> {
        self.thermal_monitor()
            .as_ref()
            .map(ThermalMonitor::snapshot)
    }
}

impl NiceEguiApp for EditorApp {
    fn build(
        &mut self,
        _egui_ctx: egui::Context,
        nice_gui_ctx: GuiContext,
        _frame: &mut Frame,
    ) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        self.styled_zoom = 0.0;
        matrix_view::format_from_env(&self.params, &nice_gui_ctx.param_setter());
        reverb_tab::latency_from_env(&self.params, &nice_gui_ctx.param_setter());
        self.gui = Some(nice_gui_ctx);
        self.window_threads.opened_on_this_thread();
        self.window_threads.start_thermal();
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut Frame) {
        let Some(gui) = self.gui.clone() else {
            return;
        };
        let setter = gui.param_setter();
        self.poll_file_job(&setter);
        self.poll_preview();
        self.follow_capture_save();
        ui.ctx().request_repaint_after(Duration::from_millis(250));
        self.zoom = zoom_factor(self.params.editor_zoom.load(Relaxed));
        if self.zoom != self.styled_zoom {
            theme::apply(ui.ctx(), self.zoom);
            self.styled_zoom = self.zoom;
        }
        if let Some(probe) = &mut self.probe {
            probe.begin_frame();
        }
        let window = ui.ctx().content_rect();

        let header = egui::Panel::top("header").show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                // In a narrow window (the smallest at 100 %) the version goes into the
                // heading's hover and the row closes up, so that the tabs and the zoom keep to
                // one row.
                let narrow = ui.available_width() < NARROW_HEADER * self.zoom;
                if narrow {
                    ui.spacing_mut().item_spacing.x *= 0.5;
                }
                let about = format!("Longtail convolution reverb {}", crate::VERSION_TEXT);
                let heading = ui.heading("Longtail");
                if narrow {
                    heading.on_hover_text(about);
                } else {
                    ui.label(
                        egui::RichText::new(&self.version_text)
                            .small()
                            .color(theme::Palette::TEXT_WEAK),
                    )
                    .on_hover_text(about);
                }
                ui.separator();
                Tab::buttons(ui, &self.params.editor_tab);
                ui.separator();
                self.zoom_choice(ui);
            });
            self.messages(ui);
        });
        self.probe_reach(header.response.rect);
        let tab = Tab::from_index(self.params.editor_tab.load(Relaxed));
        egui::CentralPanel::default().show(ui, |ui| {
            // The Reverb tab is one screen: its picture takes the height the controls leave in
            // the view. It scrolls only where a big zoom in a small window leaves too little.
            let view_height = ui.available_height();
            let output = egui::ScrollArea::vertical().show(ui, |ui| match tab {
                Tab::Reverb => self.reverb_tab(ui, &setter, view_height),
                Tab::Engine => self.engine_tab(ui, &setter),
                Tab::Thermal => self.thermal_tab(ui),
                Tab::Shape => self.shape_tab(ui, &setter, view_height),
                Tab::Library => self.library_tab(ui, view_height),
                Tab::Capture => self.capture_tab(ui, view_height),
            });
            if let Some(probe) = &mut self.probe {
                probe.scrolled(output.content_size, output.inner_rect.size());
            }
        });
        if let Some(probe) = &mut self.probe {
            probe.finish(window, self.zoom, tab.name(), &self.params);
        }
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
        // (nice-plug-egui 0.6 never calls this: the window ends the threads, see `window`.)
        self.window_threads.end();
        self.gui = None;
    }
}

/// The zoom factor of a persisted percentage, within [`ZOOMS`].
fn zoom_factor(percent: u32) -> f32 {
    percent.clamp(ZOOMS[0], ZOOMS[ZOOMS.len() - 1]) as f32 / 100.0
}

impl EditorApp {
    /// The zoom menu of the header.
    fn zoom_choice(&mut self, ui: &mut egui::Ui) {
        let current = self.params.editor_zoom.load(Relaxed);
        egui::ComboBox::from_id_salt("zoom")
            .selected_text(format!("{}%", (self.zoom * 100.0).round()))
            .width(64.0 * self.zoom)
            .show_ui(ui, |ui| {
                for zoom in ZOOMS {
                    if ui
                        .selectable_label(zoom == current, format!("{zoom}%"))
                        .clicked()
                    {
                        self.params.editor_zoom.store(zoom, Relaxed);
                    }
                }
            })
            .response
            .on_hover_text("Zoom: the size of the text and the controls, saved with the project");
    }

    /// Records a named rectangle for the tests.
    fn probe_rect(&mut self, name: &str, rect: egui::Rect) {
        if let Some(probe) = &mut self.probe {
            probe.rect(name, rect);
        }
    }

    /// Records how far content outside a scroll area reached, for the tests.
    fn probe_reach(&mut self, rect: egui::Rect) {
        if let Some(probe) = &mut self.probe {
            probe.reach(rect);
        }
    }

    /// The spectrogram of `picture` as a texture, uploaded once per picture.
    fn spectrogram_texture(&mut self, ui: &egui::Ui, picture: &Picture) -> egui::TextureHandle {
        match &self.spectrogram_texture {
            Some((shown, texture)) if *shown == picture.key => texture.clone(),
            _ => {
                let texture = ui.ctx().load_texture(
                    "ir-spectrogram",
                    spectrogram_image(&picture.spectrogram),
                    egui::TextureOptions::LINEAR,
                );
                self.spectrogram_texture = Some((picture.key, texture.clone()));
                texture
            }
        }
    }

    fn sample_rate(&self) -> u32 {
        match self.monitor.sample_rate.load(Relaxed) {
            0 => 48_000,
            rate => rate,
        }
    }

    /// The preview the parameters ask for now.
    fn preview_key(&self) -> PreviewKey {
        let (source, use_file) = self.params.ir_source_now();
        let tempo = self.monitor.host_tempo();
        PreviewKey {
            source,
            edits: self.params.edit_settings(use_file, tempo),
            sample_rate: self.sample_rate(),
            bus: matrix_view::current_bus(&self.monitor, &self.params),
            second: self
                .params
                .ir_b_source_now()
                .map(|(source, use_file)| (source, self.params.edit_settings(use_file, tempo))),
        }
    }

    /// Starts or collects the preview for the selected IR. One job at a time: while a knob
    /// moves, the next job starts from wherever it is when the last one ends.
    fn poll_preview(&mut self) {
        if let Some(job) = &self.preview_job {
            match job.poll() {
                Poll::Ready(preview) => {
                    self.preview = Some(preview);
                    self.preview_job = None;
                }
                Poll::Pending => return,
                Poll::Lost => self.preview_job = None,
            }
        }
        let key = self.preview_key();
        if self.preview.as_ref().is_some_and(|p| p.key == key) {
            return;
        }
        let files = Arc::clone(&self.params.ir_file);
        let files_b = Arc::clone(&self.params.ir_file_b);
        let last = match &self.preview {
            Some(Preview {
                result: Ok(data), ..
            }) => Some(Arc::clone(&data.picture)),
            _ => None,
        };
        self.preview_job = self
            .window_threads
            .jobs
            .spawn("longtail-preview", PREVIEW_JOIN_BOUND, move || {
                make_blended_preview(key, [&files, &files_b], last)
            })
            .ok();
    }

    /// Starts a file request on a helper thread, unless one runs already.
    fn start_file_request(&mut self, request: FileRequest) {
        self.start_file_request_into(request, Slot::A);
    }

    /// [`Self::start_file_request`] for `slot`'s file: the first IR's, or the second's.
    fn start_file_request_into(&mut self, request: FileRequest, slot: Slot) {
        if self.file_job.is_some() {
            return;
        }
        self.file_job_slot = slot;
        let files = Arc::clone(match slot {
            Slot::A => &self.params.ir_file,
            Slot::B => &self.params.ir_file_b,
        });
        let start_dir = files
            .current()
            .and_then(|(file, _)| file.paths.first()?.parent().map(PathBuf::from));
        let spawned =
            self.window_threads
                .jobs
                .spawn("longtail-open-ir", FILE_JOIN_BOUND, move || {
                    run_file_request(request, &files, start_dir)
                });
        match spawned {
            Ok(job) => self.file_job = Some(job),
            Err(err) => self.file_error = Some(format!("cannot open a file: {err}")),
        }
    }

    /// Collects a finished file request; a loaded file becomes the IR source.
    fn poll_file_job(&mut self, setter: &ParamSetter) {
        let Some(job) = &self.file_job else {
            return;
        };
        let outcome = match job.poll() {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => return,
            Poll::Lost => FileOutcome::Failed("the file loader stopped".into()),
        };
        self.file_job = None;
        match outcome {
            FileOutcome::Cancelled => {}
            FileOutcome::Loaded => {
                self.file_error = None;
                match self.file_job_slot {
                    Slot::A => set_param(setter, &self.params.ir_source, IrSourceParam::File),
                    Slot::B => set_param(setter, &self.params.ir_b_source, SecondIrParam::File),
                }
            }
            FileOutcome::Failed(message) => self.file_error = Some(message),
        }
    }

    /// Warnings and errors, each dismissable; never a modal.
    fn messages(&mut self, ui: &mut egui::Ui) {
        if let Some(error) = self.file_error.clone() {
            ui.horizontal(|ui| {
                ui.add(
                    egui::Label::new(egui::RichText::new(&error).color(theme::Palette::ERROR))
                        .wrap(),
                );
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
        if self.monitor.faulted.load(Relaxed) {
            messages.push(
                "Longtail met an internal error while playing and is silent until the host \
                 activates it again (switch the plugin off and on, or reload the project)."
                    .to_owned(),
            );
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
                ui.add(
                    egui::Label::new(egui::RichText::new(&message).color(theme::Palette::WARN))
                        .wrap(),
                );
                if ui.small_button("Dismiss").clicked() {
                    self.dismissed.push(message.clone());
                }
            });
        }
    }
}

#[cfg(test)]
mod tests;
