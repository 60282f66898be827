//! The Capture tab: measuring the room the track plays into. The user picks the outputs that
//! play a sine sweep (one loudspeaker each, in turn), the inputs recorded (the microphones, and
//! a loopback cable if there is one), the sweep's level and length and the tail (the longest
//! IR); "Capture" hands that to the capture desk ([`crate::capture::live`]), which plays and
//! records on the audio thread and deconvolves on the preparation thread. The tab follows the
//! take (a meter of each input recorded, the first clip, the progress), then shows the IR's
//! outline and figures, with "Use" (the IR plays, through the file request of [`super::files`]:
//! compressed into the project off the GUI thread) and "Save" (into the library's first
//! folder, which the Library tab then reads again).
//!
//! The setup is the editor's state, not the project's: it lasts while the plugin is loaded.
//! Runs on the GUI thread; it only reads the desk's atomics and short locks.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use egui::{Rect, Vec2};

use super::capture_picture::{Picture, figures, outline_picture};
use super::meter_view::{MeterHold, draw_peaks};
use super::theme::Palette;
use super::{EditorApp, FileRequest};
use crate::capture::live::result::{self, Captured};
use crate::capture::live::{Phase, Setup};
use crate::capture::sweep::{MAX_SWEEP_SECONDS, MAX_TAIL_SECONDS, MIN_TAIL_SECONDS};
use crate::ir::IrLayout;

/// The tab's state on the GUI thread.
pub(super) struct CaptureView {
    /// What the next capture measures.
    setup: Setup,
    /// Why the last start was refused, until the next try.
    start_error: Option<String>,
    /// The recorded inputs' peak holds, the take they are of and when they were last updated.
    hold: MeterHold,
    held_take: Option<(Setup, u32)>,
    last_peaks: Instant,
    /// The desk's save result as last seen: a new `Ok` has the Library tab read its folders
    /// again (the standalone's `--capture` saves by itself).
    seen_saved: Option<Result<PathBuf, String>>,
    /// "Save" was pressed and the desk has not answered yet.
    saving: bool,
}

impl Default for CaptureView {
    fn default() -> Self {
        Self {
            setup: Setup::default(),
            start_error: None,
            hold: MeterHold::default(),
            held_take: None,
            last_peaks: Instant::now(),
            seen_saved: None,
            saving: false,
        }
    }
}

impl EditorApp {
    /// The Capture tab in a view `view_height` high: the setup, the buttons, where the take
    /// stands, then the input meters and the IR's picture in the height left.
    pub(super) fn capture_tab(&mut self, ui: &mut egui::Ui, view_height: f32) {
        let top = ui.cursor().top();
        let z = self.zoom;
        let phase = self.desk.phase();
        let running = matches!(
            phase,
            Phase::Waiting | Phase::Recording(_) | Phase::Analysing
        );
        let started = self.desk.started_setup();
        if running {
            ui.ctx().request_repaint();
            // The controls show the take that runs (one the standalone's --capture started too).
            if let Some((setup, _)) = &started {
                self.capture.setup.clone_from(setup);
            }
        }
        let rate = self.monitor.sample_rate.load(Relaxed);
        let num_inputs = self.monitor.num_inputs.load(Relaxed) as usize;
        let num_outputs = self.monitor.num_outputs.load(Relaxed) as usize;
        if !running && num_inputs > 0 && num_outputs > 0 {
            keep_within(&mut self.capture.setup, num_inputs, num_outputs);
        }

        let setup_rect = ui
            .add_enabled_ui(!running, |ui| {
                self.capture_setup(ui, num_inputs, num_outputs)
            })
            .response
            .rect;
        self.probe_rect("capture-setup", setup_rect);
        let check = if rate == 0 {
            Err("the plugin is not active: start the host's audio first".to_owned())
        } else {
            self.capture.setup.check(rate, num_inputs, num_outputs)
        };
        self.capture_shape(ui, &check, running);
        self.capture_buttons(ui, &phase, &check, running);
        self.capture_status(ui, &phase, started.as_ref());

        let left = view_height - (ui.cursor().top() - top) - ui.spacing().item_spacing.y;
        let height = left.max(90.0 * z);
        let width = ui.available_width();
        ui.horizontal(|ui| {
            let meter = self.capture_meter(ui, running, started.as_ref(), height);
            self.probe_rect("capture-meter", meter);
            let picture = match &phase {
                Phase::Done(captured) => Picture::Outline(captured),
                Phase::Idle => Picture::Empty("The captured IR shows here"),
                Phase::Waiting | Phase::Recording(_) => {
                    Picture::Empty("The IR shows here once the sweep has played")
                }
                Phase::Analysing => Picture::Empty("Analysing..."),
                Phase::Failed(_) | Phase::Cancelled => Picture::Empty("No IR from this take"),
            };
            let size = Vec2::new(
                (width - meter.width() - ui.spacing().item_spacing.x).max(60.0 * z),
                height,
            );
            let rect = outline_picture(ui, picture, size, z);
            self.probe_rect("capture-picture", rect);
        });
    }

    /// The outputs and inputs (a toggle each, numbered from 1), the loopback, and the sweep's
    /// level, length and tail.
    fn capture_setup(&mut self, ui: &mut egui::Ui, num_inputs: usize, num_outputs: usize) {
        let z = self.zoom;
        let setup = &mut self.capture.setup;
        ui.horizontal_wrapped(|ui| {
            ui.label("Outputs").on_hover_text(
                "The outputs that play the sweep, one loudspeaker each, one after another: \
                 with several, the IR is a matrix of loudspeakers x microphones",
            );
            channel_toggles(ui, &mut setup.outputs, num_outputs, "Output");
            ui.separator();
            ui.label("Inputs").on_hover_text(
                "The inputs recorded: one microphone each, and the loopback if one is chosen",
            );
            channel_toggles(ui, &mut setup.inputs, num_inputs, "Input");
            if setup.loopback.is_some_and(|l| !setup.inputs.contains(&l)) {
                setup.loopback = None;
            }
            ui.separator();
            ui.label("Loopback").on_hover_text(
                "An input cabled straight from an output that plays the sweep: the timing is \
                 measured on it, so the IR starts where the sound left the loudspeaker; it is \
                 left out of the IR. None: the IR starts with the first sound the microphones \
                 heard",
            );
            let name = |input: Option<usize>| match input {
                Some(input) => format!("Input {}", input + 1),
                None => "None".to_owned(),
            };
            egui::ComboBox::from_id_salt("capture-loopback")
                .selected_text(name(setup.loopback))
                .width(80.0 * z)
                .show_ui(ui, |ui| {
                    for choice in std::iter::once(None).chain((0..num_inputs).map(Some)) {
                        if ui
                            .selectable_label(setup.loopback == choice, name(choice))
                            .clicked()
                        {
                            setup.loopback = choice;
                            if let Some(input) = choice
                                && !setup.inputs.contains(&input)
                            {
                                setup.inputs.push(input);
                                setup.inputs.sort_unstable();
                            }
                        }
                    }
                })
                .response
                .on_hover_text("The loopback input (recorded, left out of the IR), or None");
        });
        let rects = ui
            .horizontal_wrapped(|ui| {
                [
                    number_field(
                        ui,
                        ("Level", " dBFS"),
                        &mut setup.level_db,
                        -60.0..=0.0,
                        "The sweep's peak. Leave headroom: a microphone that clips spoils the \
                         take (a red warning names it); too quiet and the tail sinks into the \
                         room's noise. Start low with the monitors down, then raise it",
                    ),
                    number_field(
                        ui,
                        ("Sweep", " s"),
                        &mut setup.sweep_seconds,
                        0.5..=MAX_SWEEP_SECONDS,
                        "The sweep's length: each doubling lifts the IR 3 dB further above the \
                         room's noise, and the take lasts that much longer",
                    ),
                    number_field(
                        ui,
                        ("Tail", " s"),
                        &mut setup.tail_seconds,
                        MIN_TAIL_SECONDS..=MAX_TAIL_SECONDS,
                        "The silence after each sweep while the room rings out: the longest IR \
                         the capture gives. Make it longer than the room's reverb",
                    ),
                ]
            })
            .inner;
        for (name, rect) in ["capture-level", "capture-sweep", "capture-tail"]
            .into_iter()
            .zip(rects)
        {
            self.probe_rect(name, rect);
        }
    }

    /// The IR the setup gives and how long the take lasts, or why it cannot run.
    fn capture_shape(&mut self, ui: &mut egui::Ui, check: &Result<(), String>, running: bool) {
        let setup = &self.capture.setup;
        ui.horizontal_wrapped(|ui| {
            ui.label(shape_text(setup));
            ui.label(
                egui::RichText::new(format!("a {:.1} s take", setup.take_seconds()))
                    .color(Palette::TEXT_WEAK),
            )
            .on_hover_text(
                "How long the take plays: each loudspeaker's sweep and tail, one after \
                 another, and half a second for the audio's round trip",
            );
            if let (Err(why), false) = (check, running) {
                ui.add(egui::Label::new(egui::RichText::new(why).color(Palette::WARN)).wrap());
            }
        });
    }

    /// Capture and Cancel; Use and Save once a take gave an IR, with where it was saved.
    fn capture_buttons(
        &mut self,
        ui: &mut egui::Ui,
        phase: &Phase,
        check: &Result<(), String>,
        running: bool,
    ) {
        ui.horizontal_wrapped(|ui| {
            let refused = if running {
                Some("A capture is running: cancel it first")
            } else {
                check.as_ref().err().map(String::as_str)
            };
            let capture = ui
                .add_enabled(refused.is_none(), egui::Button::new("Capture"))
                .on_hover_text(
                    "Play the sweep from the outputs chosen, in place of the plugin's output, \
                     and record the inputs; the IR playing now plays on afterwards. Turn the \
                     monitors down for the first take",
                )
                .on_disabled_hover_text(refused.unwrap_or_default());
            self.probe_rect("capture-start", capture.rect);
            if capture.clicked() {
                self.start_capture();
            }
            if running {
                let cancel = ui
                    .button("Cancel")
                    .on_hover_text("Stop the take: the plugin's own output comes back");
                self.probe_rect("capture-cancel", cancel.rect);
                if cancel.clicked() {
                    self.desk.cancel();
                }
            }
            if let Phase::Done(captured) = phase {
                self.use_and_save(ui, captured);
            }
            if let Some(why) = &self.capture.start_error {
                ui.add(egui::Label::new(egui::RichText::new(why).color(Palette::ERROR)).wrap());
            }
        });
    }

    /// Starts a take of the setup at the activation's rate and bus.
    fn start_capture(&mut self) {
        // The standalone's --capture saves its take by itself; one started here is saved when
        // the user says so.
        self.desk.set_autosave(false);
        let monitor = &self.monitor;
        let started = self.desk.start(
            self.capture.setup.clone(),
            monitor.sample_rate.load(Relaxed),
            monitor.num_inputs.load(Relaxed) as usize,
            monitor.num_outputs.load(Relaxed) as usize,
        );
        self.capture.start_error = started.err();
        self.capture.saving = false;
        // The meters start afresh (a take of the same setup as the last one included).
        self.capture.hold = MeterHold::default();
    }

    /// "Use" (the IR plays: from its file once saved, so the project refers to it, else from
    /// the project's own copy) and "Save", with where it went or why not.
    fn use_and_save(&mut self, ui: &mut egui::Ui, captured: &Arc<Captured>) {
        let saved = self.desk.saved();
        let playing = self.plays(captured, saved.as_ref().and_then(|s| s.as_ref().ok()));
        let idle = self.file_job.is_none();
        let use_ir = ui
            .add_enabled(idle && !playing, egui::Button::new("Use"))
            .on_hover_text(
                "Play this IR (crossfaded in): the project keeps a copy, or refers to its file \
                 once saved",
            )
            .on_disabled_hover_text(if playing {
                "This IR is playing"
            } else {
                "An IR is loading"
            });
        self.probe_rect("capture-use", use_ir.rect);
        if use_ir.clicked() {
            let request = match &saved {
                Some(Ok(path)) => FileRequest::Paths(vec![path.clone()]),
                _ => FileRequest::Captured(Arc::clone(captured)),
            };
            self.start_file_request(request);
        }
        let done = matches!(saved, Some(Ok(_)));
        let save = ui
            .add_enabled(!done && !self.capture.saving, egui::Button::new("Save"))
            .on_hover_text(format!(
                "Write the IR into the library's first folder as \"{}\" (32-bit float WAV)",
                captured.file_name
            ))
            .on_disabled_hover_text(if done { "Saved" } else { "Saving..." });
        self.probe_rect("capture-save", save.rect);
        if save.clicked() {
            self.capture.saving = true;
            self.desk.save();
        }
        if playing {
            ui.label(egui::RichText::new("playing").color(Palette::GOOD));
        }
        match &saved {
            Some(Ok(path)) => {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("saved to {}", path.display()))
                            .color(Palette::TEXT_WEAK),
                    )
                    .truncate(),
                )
                .on_hover_text(path.display().to_string());
            }
            Some(Err(why)) => {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("not saved: {why}")).color(Palette::ERROR),
                    )
                    .wrap(),
                );
            }
            None if self.capture.saving => {
                ui.label(egui::RichText::new("saving...").color(Palette::TEXT_WEAK));
            }
            None => {}
        }
    }

    /// Whether the IR playing is `captured`: its copy, or the file it was saved to.
    fn plays(&self, captured: &Captured, saved: Option<&PathBuf>) -> bool {
        if self.params.ir_source.value() != crate::params::IrSourceParam::File {
            return false;
        }
        self.params
            .ir_file
            .current()
            .is_some_and(|(file, _)| match (file.paths.first(), saved) {
                (Some(path), Some(saved)) => path == saved,
                (None, _) => file.ir.name == captured.name,
                _ => false,
            })
    }

    /// Has the Library tab read its folders again once a save has ended well (every frame,
    /// whichever tab shows).
    pub(super) fn follow_capture_save(&mut self) {
        let saved = self.desk.saved();
        if saved.is_some() {
            self.capture.saving = false;
        }
        if saved != self.capture.seen_saved {
            if matches!(saved, Some(Ok(_))) {
                self.rescan_library();
            }
            self.capture.seen_saved = saved;
        }
    }

    /// Where the take stands: waiting, the progress, analysing, the IR's figures, why it
    /// failed; and the first clip.
    fn capture_status(&mut self, ui: &mut egui::Ui, phase: &Phase, started: Option<&(Setup, u32)>) {
        match phase {
            Phase::Idle => {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(
                            "Cable the outputs chosen to loudspeakers in the room and the \
                             inputs to microphones, then Capture.",
                        )
                        .color(Palette::TEXT_WEAK),
                    )
                    .wrap(),
                );
            }
            Phase::Waiting => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Waiting for the host to process audio");
                });
            }
            Phase::Recording(share) => {
                let total = started.map_or(0.0, |(setup, _)| setup.take_seconds());
                let text = format!(
                    "Recording: {:.1} s of {total:.1} s",
                    f64::from(*share) * total
                );
                let bar = ui.scope(|ui| {
                    // The bar's track in a field's colour: in the panel's it would not show.
                    ui.visuals_mut().extreme_bg_color = Palette::FIELD;
                    let width = ui.available_width();
                    ui.add(
                        egui::ProgressBar::new(*share)
                            .desired_width(width)
                            .text(text),
                    )
                    .on_hover_text("The sweep plays from the outputs chosen, one after another")
                });
                self.probe_rect("capture-progress", bar.inner.rect);
            }
            Phase::Analysing => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Analysing...");
                });
            }
            Phase::Done(captured) => figures(ui, captured),
            Phase::Failed(why) => {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(format!("No IR: {why}")).color(Palette::WARN),
                    )
                    .wrap(),
                );
            }
            Phase::Cancelled => {
                ui.label("Cancelled: the IR that was playing plays on.");
            }
        }
        let clipped = match phase {
            Phase::Idle | Phase::Cancelled => None,
            _ => self.desk.clipped(),
        };
        if let (Some((input_idx, frame)), Some((setup, rate))) = (clipped, started) {
            let input = setup.inputs.get(input_idx).map_or(input_idx, |&i| i) + 1;
            let seconds = frame as f64 / f64::from((*rate).max(1));
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!(
                        "Input {input} clipped at {seconds:.2} s: lower the level or the \
                         microphone's gain, and capture again"
                    ))
                    .color(Palette::ERROR),
                )
                .wrap(),
            );
        }
    }

    /// A meter of each input the take records, `height` high; empty before the first take.
    fn capture_meter(
        &mut self,
        ui: &mut egui::Ui,
        running: bool,
        started: Option<&(Setup, u32)>,
        height: f32,
    ) -> Rect {
        let view = &mut self.capture;
        let now = Instant::now();
        if view.held_take.as_ref() != started {
            // A new take: its own holds.
            view.hold = MeterHold::default();
            view.held_take = started.cloned();
        }
        let setup = started.map_or(&view.setup, |(setup, _)| setup);
        let names: Vec<String> = setup
            .inputs
            .iter()
            .map(|&input| match setup.loopback {
                Some(loopback) if loopback == input => format!("Input {} (loopback)", input + 1),
                _ => format!("Input {}", input + 1),
            })
            .collect();
        let peaks = if running {
            self.desk.take_peaks(names.len())
        } else {
            vec![0.0; names.len()]
        };
        view.hold.update_peaks(&peaks, view.last_peaks, now);
        view.last_peaks = now;
        let width = (names.len() as f32 * 12.0).clamp(36.0, 90.0) * self.zoom;
        draw_peaks(
            ui,
            "In",
            &view.hold,
            &names,
            Vec2::new(width, height),
            self.zoom,
        )
    }
}

/// One toggle per channel (`count` of them, numbered from 1) selecting into `chosen`, kept in
/// order; the last one chosen stays on.
fn channel_toggles(ui: &mut egui::Ui, chosen: &mut Vec<usize>, count: usize, what: &str) {
    if count == 0 {
        ui.label(egui::RichText::new("none (not active)").color(Palette::TEXT_WEAK));
        return;
    }
    for channel in 0..count {
        let mut on = chosen.contains(&channel);
        let response = ui
            .toggle_value(&mut on, (channel + 1).to_string())
            .on_hover_text(format!("{what} {}", channel + 1));
        if response.changed() {
            if on {
                chosen.push(channel);
                chosen.sort_unstable();
            } else if chosen.len() > 1 {
                chosen.retain(|&c| c != channel);
            }
        }
    }
}

/// A labelled number (`label` and its `unit`) that drags within `range` or takes a typed value,
/// with `tip` on hover. Returns the field's rectangle.
fn number_field(
    ui: &mut egui::Ui,
    (label, unit): (&str, &str),
    value: &mut f64,
    range: std::ops::RangeInclusive<f64>,
    tip: &str,
) -> Rect {
    ui.label(label).on_hover_text(tip);
    ui.add(
        egui::DragValue::new(value)
            .range(range)
            .speed(0.1)
            .fixed_decimals(1)
            .suffix(unit),
    )
    .on_hover_text(format!("{tip}. Drag, or click to type"))
    .rect
}

/// Drops the channels the bus no longer has (a smaller bus at the last activation), keeping
/// the first of each side.
fn keep_within(setup: &mut Setup, num_inputs: usize, num_outputs: usize) {
    for (chosen, count) in [
        (&mut setup.outputs, num_outputs),
        (&mut setup.inputs, num_inputs),
    ] {
        chosen.retain(|&c| c < count);
        if chosen.is_empty() {
            chosen.push(0);
        }
    }
    if setup.loopback.is_some_and(|l| l >= num_inputs) {
        setup.loopback = None;
    }
}

/// The IR a setup gives: "1 loudspeaker x 2 microphones: a stereo IR", "4 loudspeakers x 2
/// microphones: a 4 x 2 matrix" (as [`Captured::to_ir`] lays it out).
fn shape_text(setup: &Setup) -> String {
    let (speakers, mics) = (setup.outputs.len(), setup.num_mics());
    let count = |n: usize, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    let ir = match result::layout(speakers, mics) {
        Some(layout @ IrLayout::Matrix { .. }) => format!("a {layout}"),
        Some(layout) => format!("a {layout} IR"),
        None => "no IR".to_owned(),
    };
    format!(
        "{} x {}: {ir}",
        count(speakers, "loudspeaker"),
        count(mics, "microphone")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_names_the_ir_the_capture_gives() {
        let mut setup = Setup {
            inputs: vec![0, 1],
            ..Setup::default()
        };
        assert_eq!(
            shape_text(&setup),
            "1 loudspeaker x 2 microphones: a stereo IR"
        );
        setup.loopback = Some(1);
        assert_eq!(
            shape_text(&setup),
            "1 loudspeaker x 1 microphone: a mono IR"
        );
        setup.outputs = vec![0, 1, 2, 3];
        setup.inputs = vec![0, 1, 2];
        assert_eq!(
            shape_text(&setup),
            "4 loudspeakers x 2 microphones: a 4 x 2 matrix"
        );
    }

    #[test]
    fn a_smaller_bus_keeps_the_channels_it_has() {
        let mut setup = Setup {
            outputs: vec![0, 3],
            inputs: vec![2, 5],
            loopback: Some(5),
            ..Setup::default()
        };
        keep_within(&mut setup, 2, 2);
        assert_eq!(setup.outputs, [0]);
        assert_eq!(setup.inputs, [0]);
        assert_eq!(setup.loopback, None);
    }
}
