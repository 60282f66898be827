//! The Capture tab's pictures of a captured IR: its outline (the peak level over time, every
//! channel together, in dB re full scale, with the noise floor) and its figures (peak-to-noise,
//! noise floor, length, lag). Uses egui and [`super::theme`].

use egui::{Pos2, Rect, Stroke, Vec2};

use super::theme::{Palette, TypeScale};
use crate::capture::live::result::Captured;

/// The outline's scale, in dB re full scale: the top and the bottom of the picture.
const TOP_DB: f32 = 0.0;
const BOTTOM_DB: f32 = -120.0;

/// What the picture shows.
pub(super) enum Picture<'a> {
    Outline(&'a Captured),
    Empty(&'static str),
}

/// The captured IR's figures, in a row.
pub(super) fn figures(ui: &mut egui::Ui, captured: &Captured) {
    let capture = &captured.capture;
    let report = &capture.report;
    let rate = f64::from(capture.sample_rate.max(1));
    ui.horizontal_wrapped(|ui| {
        let weak = |text: String| egui::RichText::new(text).color(Palette::TEXT_WEAK);
        ui.label(&captured.name).on_hover_text(format!(
            "{} loudspeaker(s) x {} microphone(s), {} Hz",
            capture.num_speakers, capture.num_mics, capture.sample_rate
        ));
        ui.label(weak(format!(
            "peak-to-noise {:.1} dB",
            report.peak_to_noise_db
        )))
        .on_hover_text("The IR's peak over its noise floor (the lowest of its channels)");
        ui.label(weak(format!("noise floor {:.1} dB", report.noise_floor_db)))
            .on_hover_text("The noise under the IR's tail (the highest of its channels)");
        ui.label(weak(format!(
            "length {:.2} s",
            report.length_samples as f64 / rate
        )))
        .on_hover_text("Where the IR meets its noise floor");
        ui.label(weak(format!("lag {} samples", report.lag_samples)))
            .on_hover_text(if report.from_loopback {
                "The delay cut from the start, measured on the loopback input"
            } else {
                "The delay cut from the start: the audio's round trip and the sound's flight \
                 to the first microphone"
            });
    });
}

/// The IR's outline (its peak level over time, every channel together) from [`TOP_DB`] to
/// [`BOTTOM_DB`], with the noise floor as a dashed line and the seconds under it; or `Empty`'s
/// text. Returns the picture's rectangle.
pub(super) fn outline_picture(ui: &mut egui::Ui, picture: Picture, size: Vec2, zoom: f32) -> Rect {
    let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0 * zoom, Palette::PANEL);
    let font = egui::FontId::proportional(TypeScale::SMALL * zoom);
    let captured = match picture {
        Picture::Empty(text) => {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                text,
                font,
                Palette::TEXT_WEAK,
            );
            return rect;
        }
        Picture::Outline(captured) => captured,
    };
    let line_height = ui.ctx().fonts_mut(|fonts| fonts.row_height(&font));
    let plot = Rect::from_min_max(
        rect.min + Vec2::new(44.0 * zoom, 4.0 * zoom),
        rect.max - Vec2::new(8.0 * zoom, line_height + 4.0 * zoom),
    );
    let y = |db: f32| {
        plot.top() + (TOP_DB - db.clamp(BOTTOM_DB, TOP_DB)) / (TOP_DB - BOTTOM_DB) * plot.height()
    };
    // The dB grid, labelled at the left.
    for db in (0..=6).map(|step| TOP_DB - 20.0 * step as f32) {
        let at = y(db);
        painter.line_segment(
            [Pos2::new(plot.left(), at), Pos2::new(plot.right(), at)],
            Stroke::new(1.0, Palette::FIELD),
        );
        if plot.height() > 4.0 * line_height || db as i32 % 40 == 0 {
            painter.text(
                Pos2::new(plot.left() - 4.0 * zoom, at),
                egui::Align2::RIGHT_CENTER,
                format!("{db:.0} dB"),
                font.clone(),
                Palette::TEXT_WEAK,
            );
        }
    }
    // The seconds under it.
    let capture = &captured.capture;
    let seconds = capture.report.length_samples as f32 / capture.sample_rate.max(1) as f32;
    let per_label = 56.0 * zoom;
    let step = time_step(seconds, (plot.width() / per_label).max(1.0));
    let count = (seconds / step * 1.0001).floor() as usize;
    for idx in 0..=count {
        let at = idx as f32 * step;
        let x = plot.left() + at / seconds.max(f32::EPSILON) * plot.width();
        painter.line_segment(
            [Pos2::new(x, plot.top()), Pos2::new(x, plot.bottom())],
            Stroke::new(1.0, Palette::FIELD),
        );
        // The first label starts at its line, one at the right edge ends there.
        let align = if idx == 0 {
            egui::Align2::LEFT_TOP
        } else if x + per_label / 2.0 > rect.right() {
            egui::Align2::RIGHT_TOP
        } else {
            egui::Align2::CENTER_TOP
        };
        painter.text(
            Pos2::new(x, plot.bottom() + 2.0 * zoom),
            align,
            format!("{} s", trim_zeros(at, step)),
            font.clone(),
            Palette::TEXT_WEAK,
        );
    }
    // The outline: its peaks joined by a line, the area under it filled (one mesh: no seams
    // between columns).
    let columns = captured.outline_db.len().max(1);
    let width = plot.width() / columns as f32;
    let points: Vec<Pos2> = captured
        .outline_db
        .iter()
        .enumerate()
        .map(|(column, &db)| Pos2::new(plot.left() + (column as f32 + 0.5) * width, y(db)))
        .collect();
    let mut mesh = egui::Mesh::default();
    let fill = Palette::WAVE.gamma_multiply(0.35);
    for (idx, point) in points.iter().enumerate() {
        mesh.colored_vertex(*point, fill);
        mesh.colored_vertex(Pos2::new(point.x, plot.bottom()), fill);
        if idx > 0 {
            let top = 2 * idx as u32;
            mesh.add_triangle(top - 2, top - 1, top);
            mesh.add_triangle(top - 1, top + 1, top);
        }
    }
    painter.add(mesh);
    painter.add(egui::Shape::line(points, Stroke::new(1.5, Palette::WAVE)));
    // The noise floor, labelled at the right under the line (over it where the line is low),
    // on the panel's colour so the outline does not run through the text.
    let floor_db = capture.report.noise_floor_db as f32;
    let floor = y(floor_db);
    painter.add(egui::Shape::dashed_line(
        &[
            Pos2::new(plot.left(), floor),
            Pos2::new(plot.right(), floor),
        ],
        Stroke::new(1.5, Palette::HANDLE),
        5.0 * zoom,
        4.0 * zoom,
    ));
    let galley = painter.layout_no_wrap(
        format!("noise floor {floor_db:.1} dB"),
        font,
        Palette::HANDLE,
    );
    let gap = 4.0 * zoom;
    let (anchor, at) = if floor + gap + galley.size().y < plot.bottom() {
        (egui::Align2::RIGHT_TOP, floor + gap)
    } else {
        (egui::Align2::RIGHT_BOTTOM, floor - gap)
    };
    let label = anchor.anchor_size(Pos2::new(plot.right() - gap, at), galley.size());
    painter.rect_filled(label.expand(2.0 * zoom), 2.0 * zoom, Palette::PANEL);
    painter.galley(label.min, galley, Palette::HANDLE);
    rect
}

/// A step between time labels (1, 2 or 5 times a power of ten) that puts at most `labels`
/// over `seconds`.
fn time_step(seconds: f32, labels: f32) -> f32 {
    let rough = seconds / labels;
    let power = 10f32.powf(rough.max(1e-4).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&step| step >= rough)
        .unwrap_or(10.0 * power)
}

/// `at` with as many decimals as `step` needs: "0.5", "2", "0.05".
fn trim_zeros(at: f32, step: f32) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    format!("{at:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_labels_step_by_one_two_or_five() {
        let close = |a: f32, b: f32| (a - b).abs() < 1e-6 * b;
        assert!(close(time_step(2.31, 6.0), 0.5));
        assert!(close(time_step(10.0, 6.0), 2.0));
        assert!(close(time_step(0.09, 4.0), 0.05));
        assert_eq!(trim_zeros(1.5, 0.5), "1.5");
        assert_eq!(trim_zeros(4.0, 2.0), "4");
    }
}
