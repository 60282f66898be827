//! The IR picture: the waveform (or the spectrogram) of the IR before its ends are cut, with
//! what the edits do drawn over it, and handles that change them.
//!
//! Drawn over the picture, from the parameters as they are now (so a handle follows the mouse
//! without waiting for a preview):
//!
//! - the parts the trims cut, shaded, with the trim start and trim end handles at their edges;
//! - where the automatic trim cuts (a dashed line), when it cuts before the end trim;
//! - the fades as gain curves, each with a handle at its inner end;
//! - the pre-delay as a bar in the strip above the IR, with a handle at its end;
//! - the early/late crossover as a handle at the bottom (with a dotted line and the two levels
//!   while they differ from 0 dB);
//! - the decay curve (backward-integrated energy, on the waveform's dB scale);
//! - on the spectrogram, whose height is frequency, the low and high shelves' corners as
//!   dashed lines with their gain and a handle each, dragged up and down.
//!
//! A shelf at 0 dB is off: its line is drawn faint, and still dragged.
//!
//! A drag is one parameter change between the host's begin and end gestures, so hosts record
//! it as automation and undo it as one step; a double-click on a handle resets its parameter.
//! The picture's time runs as the engine plays it (stretched, reversed), so with Reverse on the
//! trim start handle sits at the right.

use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, Vec2};
use nice_plug::prelude::*;

use super::theme::Palette;
use super::*;
use crate::ir::edit::EditSettings;

/// Height of the pre-delay strip above the IR.
const STRIP: f32 = 16.0;
/// Half the width of a trim handle's grip, and a fade handle's radius.
const GRIP: f32 = 6.0;

/// Time on the picture, in milliseconds of the played (stretched) IR, against x.
#[derive(Clone, Copy)]
struct Timeline {
    rect: Rect,
    total_ms: f64,
}

impl Timeline {
    fn x(&self, ms: f64) -> f32 {
        let at = (ms / self.total_ms.max(1e-9)).clamp(0.0, 1.0) as f32;
        self.rect.left() + at * self.rect.width()
    }

    fn ms(&self, x: f32) -> f64 {
        f64::from((x - self.rect.left()) / self.rect.width().max(1.0)) * self.total_ms
    }
}

/// Where the edits fall on the picture, in its milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct EditMarks {
    /// What the trims keep.
    pub kept: (f64, f64),
    /// What plays (the kept part, less what the automatic trim cuts).
    pub body: (f64, f64),
    /// Where the automatic trim cuts, when it does.
    pub auto_trim: Option<f64>,
    /// The fades' inner ends.
    pub fade_in_end: f64,
    pub fade_out_start: f64,
}

impl EditMarks {
    /// The marks of `edits` on a picture `total_ms` long; `auto_trim_end_ms` (file time) from
    /// the preview.
    pub fn new(edits: &EditSettings, total_ms: f64, auto_trim_end_ms: Option<f64>) -> Self {
        let s = edits.stretch;
        let start = (edits.trim_start_ms * s).min(total_ms);
        let end = (total_ms - edits.trim_end_ms * s).max(start);
        let cut = auto_trim_end_ms
            .filter(|_| edits.auto_trim_db.is_some())
            .map(|ms| ms * s)
            .filter(|&at| at < end && at > start);
        let body_end = cut.unwrap_or(end);
        // Reversed, the file's start plays last.
        let mirror = |ms: f64| total_ms - ms;
        let (kept, body, auto_trim) = if edits.reverse {
            (
                (mirror(end), mirror(start)),
                (mirror(body_end), mirror(start)),
                cut.map(mirror),
            )
        } else {
            ((start, end), (start, body_end), cut)
        };
        let fade_in_end = (body.0 + edits.fade_in_ms).min(body.1);
        let fade_out_start = (body.1 - edits.fade_out_ms).max(body.0);
        Self {
            kept,
            body,
            auto_trim,
            fade_in_end,
            fade_out_start,
        }
    }
}

/// A draggable handle: its parameter, and the parameter's value for a pointer at `ms`.
struct Handle<'a> {
    name: &'static str,
    param: &'a FloatParam,
    at_ms: f64,
    grip: Rect,
    value_at: Box<dyn Fn(f64) -> f64 + 'a>,
}

impl EditorApp {
    /// Draws the picture of `data` into `size` with the edits and their handles.
    pub(super) fn ir_picture(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        data: &PreviewData,
        key: &PreviewKey,
        size: Vec2,
    ) {
        let (outer, _) = ui.allocate_exact_size(size, Sense::hover());
        let painter = ui.painter_at(outer);
        painter.rect_filled(outer, 4.0, Palette::PANEL);
        let rect = Rect::from_min_max(outer.min + Vec2::new(0.0, STRIP), outer.max);
        let rate = f64::from(key.sample_rate);
        let timeline = Timeline {
            rect,
            total_ms: data.picture.frames as f64 * 1e3 / rate,
        };
        // With a second IR, the decay curve is the blend's.
        let decay_db = data.picture.blended_decay_db(self.params.blend.value());
        match IrView::from_index(self.params.editor_ir_view.load(Relaxed)) {
            IrView::Waveform | IrView::Paths => draw_envelope(&painter, rect, data, &decay_db),
            IrView::Spectrogram => {
                let texture = self.spectrogram_texture(ui, &data.picture);
                draw_spectrogram(&painter, rect, data, &texture, self.zoom);
                draw_decay(&painter, rect, &decay_db);
            }
        }

        let (_, use_file) = self.params.ir_source_now();
        let edits = self
            .params
            .edit_settings(use_file, self.monitor.host_tempo());
        let marks = EditMarks::new(&edits, timeline.total_ms, data.auto_trim_end_ms);
        draw_marks(&painter, timeline, &marks, &edits, outer, self.zoom);
        painter.text(
            Pos2::new(rect.right() - 4.0, rect.bottom() - 2.0),
            egui::Align2::RIGHT_BOTTOM,
            format!("{:.2} s plays", data.seconds),
            egui::FontId::proportional(11.0 * self.zoom),
            Palette::TEXT_WEAK,
        );

        let params = Arc::clone(&self.params);
        let s = edits.stretch;
        let total = timeline.total_ms;
        let reverse = edits.reverse;
        let body = marks.body;
        let full_height = |x: f32| {
            Rect::from_min_max(
                Pos2::new(x - GRIP, rect.top()),
                Pos2::new(x + GRIP, rect.bottom()),
            )
        };
        let knob =
            |x: f32, y: f32| Rect::from_center_size(Pos2::new(x, y), Vec2::splat(2.0 * GRIP));
        let (trim_start_at, trim_end_at) = if reverse {
            (marks.kept.1, marks.kept.0)
        } else {
            marks.kept
        };
        let handles = [
            Handle {
                name: "trim-start",
                param: &params.trim_start_ms,
                at_ms: trim_start_at,
                grip: full_height(timeline.x(trim_start_at)),
                value_at: Box::new(move |ms| if reverse { total - ms } else { ms } / s),
            },
            Handle {
                name: "trim-end",
                param: &params.trim_end_ms,
                at_ms: trim_end_at,
                grip: full_height(timeline.x(trim_end_at)),
                value_at: Box::new(move |ms| if reverse { ms } else { total - ms } / s),
            },
            Handle {
                name: "fade-in",
                param: &params.fade_in_ms,
                at_ms: marks.fade_in_end,
                grip: knob(timeline.x(marks.fade_in_end), rect.top() + GRIP + 2.0),
                value_at: Box::new(move |ms| ms - body.0),
            },
            Handle {
                name: "fade-out",
                param: &params.fade_out_ms,
                at_ms: marks.fade_out_start,
                grip: knob(timeline.x(marks.fade_out_start), rect.top() + GRIP + 2.0),
                value_at: Box::new(move |ms| body.1 - ms),
            },
            Handle {
                name: "crossover",
                param: &params.crossover_ms,
                at_ms: body.0 + edits.crossover_ms,
                grip: knob(
                    timeline.x(body.0 + edits.crossover_ms),
                    rect.bottom() - GRIP - 2.0,
                ),
                value_at: Box::new(move |ms| ms - body.0),
            },
            Handle {
                name: "pre-delay",
                param: &params.predelay_ms,
                at_ms: body.0 + edits.predelay_ms,
                grip: knob(
                    timeline.x(body.0 + edits.predelay_ms),
                    outer.top() + STRIP / 2.0,
                ),
                value_at: Box::new(move |ms| ms - body.0),
            },
        ];
        for handle in &handles {
            self.drive_handle(ui, setter, timeline, handle);
        }
        if IrView::from_index(self.params.editor_ir_view.load(Relaxed)) == IrView::Spectrogram {
            let s = &data.picture.spectrogram;
            let axis = FrequencyAxis {
                rect,
                low: s.edges_hz[0].ln(),
                high: s.edges_hz[s.bands].ln(),
            };
            let shelves = [
                (
                    "low-shelf",
                    &params.low_shelf_hz,
                    &params.low_shelf_db,
                    0.25,
                ),
                (
                    "high-shelf",
                    &params.high_shelf_hz,
                    &params.high_shelf_db,
                    0.75,
                ),
            ];
            for (name, hz, db, along) in shelves {
                self.drive_shelf(ui, setter, axis, (name, hz, db), along);
            }
        }
    }

    /// A shelf's corner on the spectrogram: a dashed line with its gain, and a handle at
    /// `along` of the width that drags the corner frequency up and down (one gesture; a
    /// double-click resets it).
    fn drive_shelf(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        axis: FrequencyAxis,
        (name, hz, db): (&'static str, &FloatParam, &FloatParam),
        along: f32,
    ) {
        let rect = axis.rect;
        let y = axis.y(hz.value());
        let x = rect.left() + along * rect.width();
        let grip = Rect::from_center_size(Pos2::new(x, y), Vec2::splat(2.0 * GRIP));
        let id = ui.make_persistent_id(("ir-handle", name));
        let response = ui
            .interact(grip, id, Sense::click_and_drag())
            .on_hover_cursor(egui::CursorIcon::ResizeVertical)
            .on_hover_text(format!(
                "{}: {} Hz, {} (drag; double-click resets)",
                hz.name(),
                hz,
                db
            ));
        self.probe_rect(name, grip);
        drag_param(setter, hz, &response, |pointer| axis.hz(pointer.y));
        let active = response.hovered() || response.dragged();
        let colour = match (active, db.value() == 0.0) {
            (true, _) => Palette::TEXT,
            (false, false) => Palette::HANDLE,
            (false, true) => Palette::HANDLE.gamma_multiply(0.45),
        };
        let painter = ui.painter_at(rect);
        painter.add(Shape::dashed_line(
            &[Pos2::new(rect.left(), y), Pos2::new(rect.right(), y)],
            Stroke::new(1.2, colour),
            6.0,
            4.0,
        ));
        painter.circle_filled(grip.center(), GRIP - 1.0, colour);
        painter.text(
            Pos2::new(x + GRIP + 4.0, y - 2.0),
            egui::Align2::LEFT_BOTTOM,
            format!("{} {:+.1} dB", hz.name().to_lowercase(), db.value()),
            egui::FontId::proportional(11.0 * self.zoom),
            colour,
        );
    }
}

/// A handle's gestures on `param`: a drag is one host gesture setting the value `wanted` gives
/// for the pointer (within the parameter's range), a double-click resets it.
fn drag_param(
    setter: &ParamSetter,
    param: &FloatParam,
    response: &egui::Response,
    wanted: impl FnOnce(Pos2) -> f32,
) {
    if response.drag_started() {
        setter.begin_set_parameter(param);
    }
    if response.dragged()
        && let Some(pointer) = response.interact_pointer_pos()
    {
        let value = param.preview_plain(param.preview_normalized(wanted(pointer)));
        setter.set_parameter(param, value);
    }
    if response.drag_stopped() {
        setter.end_set_parameter(param);
    }
    if response.double_clicked() {
        set_param(setter, param, param.default_plain_value());
    }
}

/// Frequency on the spectrogram, logarithmic from the bottom of `rect` to its top.
#[derive(Clone, Copy)]
struct FrequencyAxis {
    rect: Rect,
    /// The natural logarithms of the lowest and the highest frequency drawn.
    low: f32,
    high: f32,
}

impl FrequencyAxis {
    fn y(&self, hz: f32) -> f32 {
        let at = ((hz.max(1.0).ln() - self.low) / (self.high - self.low)).clamp(0.0, 1.0);
        self.rect.bottom() - at * self.rect.height()
    }

    fn hz(&self, y: f32) -> f32 {
        let at = (self.rect.bottom() - y) / self.rect.height().max(1.0);
        (self.low + at * (self.high - self.low)).exp()
    }
}

impl EditorApp {
    /// Lets `handle` be dragged (one gesture) and double-clicked (reset), and draws its grip.
    fn drive_handle(
        &mut self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        timeline: Timeline,
        handle: &Handle,
    ) {
        let id = ui.make_persistent_id(("ir-handle", handle.name));
        let response = ui
            .interact(handle.grip, id, Sense::click_and_drag())
            .on_hover_cursor(egui::CursorIcon::ResizeHorizontal)
            .on_hover_text(format!(
                "{}: {} (drag; double-click resets)",
                handle.param.name(),
                handle.param
            ));
        self.probe_rect(handle.name, handle.grip);
        drag_param(setter, handle.param, &response, |pointer| {
            (handle.value_at)(timeline.ms(pointer.x)).max(0.0) as f32
        });
        let active = response.hovered() || response.dragged();
        let colour = if active {
            Palette::TEXT
        } else {
            Palette::HANDLE
        };
        let painter = ui.painter();
        let x = timeline.x(handle.at_ms);
        if handle.grip.height() > 2.0 * GRIP + 1.0 {
            painter.line_segment(
                [
                    Pos2::new(x, handle.grip.top()),
                    Pos2::new(x, handle.grip.bottom()),
                ],
                Stroke::new(if active { 2.5 } else { 1.5 }, colour),
            );
            let tab = Rect::from_center_size(
                Pos2::new(x, handle.grip.top() + 10.0),
                Vec2::new(8.0, 18.0),
            );
            painter.rect_filled(tab, 2.0, colour);
        } else {
            painter.circle_filled(handle.grip.center(), GRIP - 1.0, colour);
        }
    }
}

/// Each channel's level (dB under the IR's peak, over [`PREVIEW_RANGE_DB`]) from the bottom
/// of its lane; more than two channels share one lane with their loudest.
fn draw_envelope(painter: &egui::Painter, rect: Rect, data: &PreviewData, decay_db: &[f32]) {
    let columns_of = &data.picture.columns;
    let peak = columns_of
        .iter()
        .flatten()
        .fold(1e-9f32, |acc, &(lo, hi)| acc.max(-lo).max(hi));
    let lanes = if columns_of.len() <= 2 {
        columns_of.len().max(1)
    } else {
        1
    };
    let lane_height = rect.height() / lanes as f32;
    let columns = columns_of.first().map_or(0, Vec::len).max(1);
    let step = rect.width() / columns as f32;
    for lane in 0..lanes {
        let bottom = rect.top() + (lane + 1) as f32 * lane_height;
        let channels: Vec<&Vec<(f32, f32)>> = if lanes == 1 {
            columns_of.iter().collect()
        } else {
            vec![&columns_of[lane]]
        };
        for col in 0..columns {
            let level = channels
                .iter()
                .filter_map(|c| c.get(col))
                .fold(0.0f32, |acc, &(lo, hi)| acc.max(-lo).max(hi))
                / peak;
            let db = 20.0 * level.max(1e-9).log10();
            let extent = ((db + PREVIEW_RANGE_DB) / PREVIEW_RANGE_DB).clamp(0.0, 1.0);
            if extent <= 0.0 {
                continue;
            }
            let x = rect.left() + col as f32 * step;
            let bar = Rect::from_min_max(
                Pos2::new(x, bottom - extent * (lane_height - 2.0)),
                Pos2::new(x + step.max(1.0), bottom),
            );
            painter.rect_filled(bar, 0.0, Palette::WAVE.gamma_multiply(0.85));
        }
        let lane_rect = Rect::from_min_max(
            Pos2::new(rect.left(), bottom - lane_height),
            Pos2::new(rect.right(), bottom),
        );
        draw_decay(painter, lane_rect, decay_db);
    }
}

/// The decay curve on the waveform's scale (0 dB at the top, [`PREVIEW_RANGE_DB`] down at the
/// bottom).
fn draw_decay(painter: &egui::Painter, rect: Rect, decay_db: &[f32]) {
    let n = decay_db.len().max(1);
    let points: Vec<Pos2> = decay_db
        .iter()
        .enumerate()
        .map(|(col, &db)| {
            let depth = (-db / PREVIEW_RANGE_DB).clamp(0.0, 1.0);
            Pos2::new(
                rect.left() + col as f32 * rect.width() / n as f32,
                rect.top() + depth * rect.height(),
            )
        })
        .collect();
    painter.add(Shape::line(points, Stroke::new(1.5, Palette::ENVELOPE)));
}

/// Shades what does not play, draws the fades' gain curves, the automatic trim and the
/// pre-delay bar.
fn draw_marks(
    painter: &egui::Painter,
    timeline: Timeline,
    marks: &EditMarks,
    edits: &EditSettings,
    outer: Rect,
    zoom: f32,
) {
    let rect = timeline.rect;
    let shade = Palette::SHADE;
    let (left, right) = (timeline.x(marks.body.0), timeline.x(marks.body.1));
    painter.rect_filled(
        Rect::from_min_max(rect.min, Pos2::new(left, rect.bottom())),
        0.0,
        shade,
    );
    painter.rect_filled(
        Rect::from_min_max(Pos2::new(right, rect.top()), rect.max),
        0.0,
        shade,
    );
    // The fades' gain (sin², as applied), from the bottom (0) to the top (1).
    let curve = |from: f64, to: f64, rising: bool| {
        let points: Vec<Pos2> = (0..=32)
            .map(|i| {
                let t = f64::from(i) / 32.0;
                let gain = (t * std::f64::consts::FRAC_PI_2).sin().powi(2);
                let gain = if rising { gain } else { 1.0 - gain } as f32;
                Pos2::new(
                    timeline.x(from + (to - from) * t),
                    rect.bottom() - gain * rect.height(),
                )
            })
            .collect();
        Shape::line(points, Stroke::new(1.5, Palette::HANDLE))
    };
    if marks.fade_in_end > marks.body.0 {
        painter.add(curve(marks.body.0, marks.fade_in_end, true));
    }
    if marks.fade_out_start < marks.body.1 {
        painter.add(curve(marks.fade_out_start, marks.body.1, false));
    }
    if let Some(at) = marks.auto_trim {
        let x = timeline.x(at);
        painter.add(Shape::dashed_line(
            &[Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
            Stroke::new(1.5, Palette::HANDLE),
            5.0,
            4.0,
        ));
        if let Some(db) = edits.auto_trim_db {
            painter.text(
                Pos2::new(x - 4.0, rect.bottom() - 16.0),
                egui::Align2::RIGHT_BOTTOM,
                format!("auto trim {db:.0} dB"),
                egui::FontId::proportional(11.0 * zoom),
                Palette::HANDLE,
            );
        }
    }
    // The early/late crossover, while the two levels differ from 0 dB.
    if edits.early_db != 0.0 || edits.tail_db != 0.0 {
        let x = timeline.x(marks.body.0 + edits.crossover_ms);
        painter.add(Shape::dashed_line(
            &[Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
            Stroke::new(1.0, Palette::HANDLE),
            2.0,
            3.0,
        ));
        painter.text(
            Pos2::new(x + GRIP + 2.0, rect.bottom() - 2.0),
            egui::Align2::LEFT_BOTTOM,
            format!(
                "early {:+.1} dB | tail {:+.1} dB",
                edits.early_db, edits.tail_db
            ),
            egui::FontId::proportional(11.0 * zoom),
            Palette::HANDLE,
        );
    }
    // The pre-delay strip: the silence before the IR, to scale.
    let strip = Rect::from_min_max(outer.min, Pos2::new(outer.right(), rect.top()));
    let bar_end = timeline.x(marks.body.0 + edits.predelay_ms);
    painter.rect_filled(
        Rect::from_min_max(
            Pos2::new(left, strip.top() + 4.0),
            Pos2::new(bar_end.max(left + 1.0), strip.bottom() - 4.0),
        ),
        2.0,
        Palette::HANDLE.gamma_multiply(0.5),
    );
    painter.text(
        Pos2::new(bar_end + GRIP + 4.0, strip.center().y),
        egui::Align2::LEFT_CENTER,
        format!("pre-delay {:.0} ms", edits.predelay_ms),
        egui::FontId::proportional(11.0 * zoom),
        Palette::TEXT_WEAK,
    );
}

/// The spectrogram texture stretched over `rect`, with the 100 Hz, 1 kHz and 10 kHz lines.
fn draw_spectrogram(
    painter: &egui::Painter,
    rect: Rect,
    preview: &PreviewData,
    texture: &egui::TextureHandle,
    zoom: f32,
) {
    painter.image(
        texture.id(),
        rect,
        Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
        Color32::WHITE,
    );
    let s = &preview.picture.spectrogram;
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
            Stroke::new(1.0, Palette::GRID),
        );
        painter.text(
            Pos2::new(rect.left() + 4.0, y - 2.0),
            egui::Align2::LEFT_BOTTOM,
            label,
            egui::FontId::proportional(11.0 * zoom),
            Palette::TEXT_WEAK,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_follow_trims_fades_reverse_and_the_auto_trim() {
        let edits = EditSettings {
            trim_start_ms: 100.0,
            trim_end_ms: 200.0,
            fade_in_ms: 50.0,
            fade_out_ms: 300.0,
            auto_trim_db: Some(-60.0),
            ..EditSettings::NONE
        };
        // A 2 s picture; the automatic trim cut at 1.5 s of the file.
        let marks = EditMarks::new(&edits, 2000.0, Some(1500.0));
        assert_eq!(marks.kept, (100.0, 1800.0));
        assert_eq!(marks.body, (100.0, 1500.0));
        assert_eq!(marks.auto_trim, Some(1500.0));
        assert_eq!((marks.fade_in_end, marks.fade_out_start), (150.0, 1200.0));

        // Stretched twice as long, every mark of the file's time doubles.
        let stretched = EditSettings {
            stretch: 2.0,
            ..edits
        };
        let marks = EditMarks::new(&stretched, 4000.0, Some(1500.0));
        assert_eq!(marks.kept, (200.0, 3600.0));
        assert_eq!(marks.body, (200.0, 3000.0));

        // Reversed, the file's start plays last: the cuts swap sides.
        let reversed = EditSettings {
            reverse: true,
            ..edits
        };
        let marks = EditMarks::new(&reversed, 2000.0, Some(1500.0));
        assert_eq!(marks.kept, (200.0, 1900.0));
        assert_eq!(marks.body, (500.0, 1900.0));
        assert_eq!(marks.auto_trim, Some(500.0));
        assert_eq!(marks.fade_in_end, 550.0);

        // With the automatic trim off, or cutting after the end trim, the body is what is kept.
        let off = EditSettings {
            auto_trim_db: None,
            ..edits
        };
        assert_eq!(EditMarks::new(&off, 2000.0, Some(1500.0)).auto_trim, None);
        assert_eq!(EditMarks::new(&edits, 2000.0, Some(1900.0)).body.1, 1800.0);
    }
}
