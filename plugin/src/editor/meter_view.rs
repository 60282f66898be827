//! The input and output meters, and the ducking's gain reduction beside them. The meters: a
//! bar per channel (RMS filled, the sample peak as a line, the
//! held peak as a tick), -60 to 0 dBFS, and the loudest held peak of each side in figures. The
//! Capture tab's input meters are the same without the RMS ([`draw_peaks`]).
//!
//! The levels come from [`crate::audio::meters::MeterLevels`] (atomics the audio thread publishes),
//! or as peaks from the capture desk; the hold is kept here, on the GUI thread: a peak stays
//! [`HOLD`] long, then falls.

use std::time::{Duration, Instant};

use egui::{Pos2, Rect, Sense, Stroke, Vec2};

use super::theme::Palette;
use crate::audio::ducker::MAX_DUCK_DB;
use crate::audio::meters::{MAX_METERED, MeterLevels, to_db};

/// How long a peak is held.
pub(super) const HOLD: Duration = Duration::from_millis(1500);
/// Bottom of the scale, in dBFS.
const FLOOR_DB: f32 = -60.0;

/// One side's hold state, on the GUI thread.
pub(super) struct MeterHold {
    /// Per channel: the peak shown now (linear) and since when it is held.
    held: Vec<(f32, Instant)>,
    /// Per channel: the last frame's peak (linear), falling between peaks.
    shown: Vec<f32>,
}

impl Default for MeterHold {
    fn default() -> Self {
        let now = Instant::now();
        Self {
            held: vec![(0.0, now); MAX_METERED],
            shown: vec![0.0; MAX_METERED],
        }
    }
}

impl MeterHold {
    /// Takes each channel's peak since the last frame and updates the holds.
    pub(super) fn update(&mut self, levels: &MeterLevels, now: Instant) {
        for channel in 0..levels.channels() {
            // The bar falls at about 20 dB a second between frames of a quarter second.
            self.hold(channel, levels.take_peak(channel), now, 0.3);
        }
    }

    /// Updates the holds with each channel's peak (linear) since `last`, the previous update:
    /// the bar falls as [`Self::update`]'s does between frames a quarter second apart, however
    /// often the frames come (the Capture tab repaints continuously).
    pub(super) fn update_peaks(&mut self, peaks: &[f32], last: Instant, now: Instant) {
        let fall = 0.3f32.powf(now.duration_since(last).as_secs_f32() / 0.25);
        for (channel, &peak) in peaks.iter().enumerate().take(MAX_METERED) {
            self.hold(channel, peak, now, fall);
        }
    }

    /// One channel's new `peak`: held while it is the highest for [`HOLD`]; the bar shows it,
    /// or the last one times `fall`.
    fn hold(&mut self, channel: usize, peak: f32, now: Instant, fall: f32) {
        let (held, since) = &mut self.held[channel];
        if peak >= *held || now.duration_since(*since) > HOLD {
            *held = peak;
            *since = now;
        }
        self.shown[channel] = peak.max(self.shown[channel] * fall);
    }

    /// Each of the first `channels`' held peak, linear.
    pub(super) fn held(&self, channels: usize) -> Vec<f32> {
        self.held[..channels.min(MAX_METERED)]
            .iter()
            .map(|&(peak, _)| peak)
            .collect()
    }

    /// The loudest held peak of the first `channels`, linear.
    pub(super) fn max_held(&self, channels: usize) -> f32 {
        self.held[..channels.min(MAX_METERED)]
            .iter()
            .fold(0.0f32, |m, &(p, _)| m.max(p))
    }
}

/// Where a level sits between the floor (0) and 0 dBFS (1).
fn fraction(level: f32) -> f32 {
    ((to_db(level) - FLOOR_DB) / -FLOOR_DB).clamp(0.0, 1.0)
}

/// One side's bars in `rect`, labelled `title`.
pub(super) fn draw_meter(
    ui: &mut egui::Ui,
    title: &str,
    levels: &MeterLevels,
    hold: &MeterHold,
    size: Vec2,
    zoom: f32,
) -> Rect {
    let channels = levels.channels();
    let (rect, response, painter, bars) =
        meter_frame(ui, size, zoom, title, held_figure(hold, channels));
    if channels > 0 {
        for channel in 0..channels {
            let column = column(bars, channels, channel);
            let y = |level: f32| column.bottom() - fraction(level) * column.height();
            let rms = levels.rms(channel);
            let colour = level_colour(rms);
            painter.rect_filled(
                Rect::from_min_max(Pos2::new(column.left(), y(rms)), column.max),
                0.0,
                colour,
            );
            let peak_y = y(hold.shown[channel]);
            painter.line_segment(
                [
                    Pos2::new(column.left(), peak_y),
                    Pos2::new(column.right(), peak_y),
                ],
                Stroke::new(1.0, colour),
            );
            tick(&painter, column, y(hold.held[channel].0), Palette::TEXT);
        }
    }
    marks(&painter, bars);
    response.on_hover_text(format!(
        "{title}: {channels} channels. Bars: RMS over 300 ms; line: sample peak; white tick: \
         peak held {:.1} s; figure: the loudest held peak in dBFS",
        HOLD.as_secs_f32()
    ));
    rect
}

/// The first `channels` peaks of `hold` as bars (the peak filled, the held peak as a tick), in
/// a meter's frame of `size` titled `title`; `names` are the channels' names for the hover
/// text (the inputs recorded).
pub(super) fn draw_peaks(
    ui: &mut egui::Ui,
    title: &str,
    hold: &MeterHold,
    names: &[String],
    size: Vec2,
    zoom: f32,
) -> Rect {
    let channels = names.len().min(MAX_METERED);
    let (rect, response, painter, bars) =
        meter_frame(ui, size, zoom, title, held_figure(hold, channels));
    for channel in 0..channels {
        let column = column(bars, channels, channel);
        let y = |level: f32| column.bottom() - fraction(level) * column.height();
        let peak = hold.shown[channel];
        painter.rect_filled(
            Rect::from_min_max(Pos2::new(column.left(), y(peak)), column.max),
            0.0,
            level_colour(peak),
        );
        tick(&painter, column, y(hold.held[channel].0), Palette::TEXT);
    }
    marks(&painter, bars);
    let held: Vec<String> = (0..channels)
        .map(|channel| {
            let db = db_text(to_db(hold.held[channel].0));
            format!("{}: {db} dBFS", names[channel])
        })
        .collect();
    response.on_hover_text(format!(
        "{title}: the sample peak of each input recorded; white tick: peak held {:.1} s; \
         figure: the loudest held peak in dBFS. Held now: {}",
        HOLD.as_secs_f32(),
        held.join(", ")
    ));
    rect
}

/// A level in dB as the meters write it: one decimal, or `-inf` at the floor.
fn db_text(db: f32) -> String {
    if db <= FLOOR_DB {
        "-inf".to_owned()
    } else {
        format!("{db:.1}")
    }
}

/// The figure over a meter: the loudest held peak of its first `channels`, and its colour
/// (the high colour within 0.1 dB of full scale).
fn held_figure(hold: &MeterHold, channels: usize) -> (String, egui::Color32) {
    let held_db = to_db(hold.max_held(channels));
    let colour = if held_db > -0.1 {
        Palette::METER_HIGH
    } else {
        Palette::TEXT
    };
    (db_text(held_db), colour)
}

/// The bar of `channel` of `channels` across a meter's `bars`, half a point in from each side.
fn column(bars: Rect, channels: usize, channel: usize) -> Rect {
    let width = bars.width() / channels.max(1) as f32;
    let left = bars.left() + channel as f32 * width;
    Rect::from_min_max(
        Pos2::new(left + 0.5, bars.top()),
        Pos2::new(left + width - 0.5, bars.bottom()),
    )
}

/// The held peak's tick across `column` at `y`.
fn tick(painter: &egui::Painter, column: Rect, y: f32, colour: egui::Color32) {
    painter.line_segment(
        [Pos2::new(column.left(), y), Pos2::new(column.right(), y)],
        Stroke::new(2.0, colour),
    );
}

/// The colour of a bar at `level` (linear): low, mid or high.
fn level_colour(level: f32) -> egui::Color32 {
    match to_db(level) {
        db if db > -6.0 => Palette::METER_HIGH,
        db if db > -18.0 => Palette::METER_MID,
        _ => Palette::METER_LOW,
    }
}

/// The -6, -18 and -40 dB marks across a meter's `bars`.
fn marks(painter: &egui::Painter, bars: Rect) {
    for db in [-6.0f32, -18.0, -40.0] {
        let y = bars.bottom() - (db - FLOOR_DB) / -FLOOR_DB * bars.height();
        painter.line_segment(
            [Pos2::new(bars.left(), y), Pos2::new(bars.right(), y)],
            Stroke::new(1.0, Palette::LINE),
        );
    }
}

/// A meter's frame of `size`: `title` above, `figure` (text and colour) below, the panel
/// between. Returns the frame, its response, its painter and the panel.
fn meter_frame(
    ui: &mut egui::Ui,
    size: Vec2,
    zoom: f32,
    title: &str,
    (figure, colour): (String, egui::Color32),
) -> (Rect, egui::Response, egui::Painter, Rect) {
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect);
    let font = egui::FontId::proportional(11.0 * zoom);
    let label_height = 16.0 * zoom;
    let top = Pos2::new(rect.center().x, rect.top());
    painter.text(
        top,
        egui::Align2::CENTER_TOP,
        title,
        font.clone(),
        Palette::TEXT_WEAK,
    );
    let bottom = Pos2::new(rect.center().x, rect.bottom());
    painter.text(bottom, egui::Align2::CENTER_BOTTOM, figure, font, colour);
    let panel = Rect::from_min_max(
        rect.min + Vec2::new(2.0, label_height),
        rect.max - Vec2::new(2.0, label_height),
    );
    painter.rect_filled(panel, 2.0, Palette::PANEL);
    (rect, response, painter, panel)
}

/// Width of the gain reduction bar, in points at 100 %.
pub(super) const REDUCTION_WIDTH: f32 = 26.0;

/// The ducking's gain reduction, `db` (0 or more), as a bar falling from the top over the
/// ducking's range, with the figure under it.
pub(super) fn draw_reduction(ui: &mut egui::Ui, db: f32, height: f32, zoom: f32) -> Rect {
    let size = Vec2::new(REDUCTION_WIDTH * zoom, height);
    let figure = (reduction_text(db), Palette::TEXT);
    let (rect, response, painter, bar) = meter_frame(ui, size, zoom, "GR", figure);
    let depth = (db / MAX_DUCK_DB).clamp(0.0, 1.0) * bar.height();
    painter.rect_filled(
        Rect::from_min_max(bar.min, Pos2::new(bar.right(), bar.top() + depth)),
        0.0,
        Palette::METER_MID,
    );
    response.on_hover_text(format!(
        "Ducking: the reverb is {db:.1} dB down now (the bar spans {MAX_DUCK_DB:.0} dB)"
    ));
    rect
}

/// A reduction as the meter and the Shape tab write it: "0.0" at rest, else "-3.2".
pub(super) fn reduction_text(db: f32) -> String {
    if db < 0.05 {
        "0.0".to_owned()
    } else {
        format!("-{db:.1}")
    }
}
