//! For the editor tests: where the editor put things and what the parameters hold, written as
//! JSON to the file `LONGTAIL_EDITOR_PROBE` names, whenever it changes. Off unless that variable
//! is set. Uses egui and serde_json.
//!
//! The tests (`scripts/editor-interact.sh`, `scripts/editor-screenshot.sh`) read it to find a
//! handle or a slider on the screen, to check a parameter after a drag or a click, and to check
//! that no laid-out text runs past the window: `overflow` is how far the widest and the tallest
//! content reach past the window's right and bottom edges (0 when everything fits),
//! `scroll_overflow` how far a scroll area's content is wider than its view (text that does not
//! wrap), and `scroll_overflow_y` how much taller (the tab scrolls). `meters` holds what the
//! meters show: each channel's held peak and RMS in dBFS (the CLAP host's editor test).
//! `slowest_frame_ms` is the longest time the editor's frame code took so far after the first
//! frame (layout and drawing commands, on the GUI thread; not the GPU's rendering), in 0.1 ms
//! steps, and `frames`
//! how many frames it drew, in hundreds (so the file is not rewritten every frame).

use std::collections::BTreeMap;
use std::path::PathBuf;

use egui::Rect;
use nice_plug::prelude::*;

use crate::params::LongtailParams;

/// What one frame laid out.
pub(super) struct Probe {
    path: PathBuf,
    rects: BTreeMap<String, [f32; 4]>,
    /// The rightmost and lowest edges of content outside scroll areas.
    reach: (f32, f32),
    /// How far a scroll area's content was wider and taller than its view.
    scroll_overflow: (f32, f32),
    /// The meters as drawn: per side, each channel's held peak and RMS in dBFS.
    meters: BTreeMap<&'static str, serde_json::Value>,
    /// When this frame's code began, the slowest frame so far and the frames drawn.
    frame_start: std::time::Instant,
    slowest_frame: std::time::Duration,
    frames: u64,
    last: String,
}

impl Probe {
    pub(super) fn from_env() -> Option<Self> {
        let path = std::env::var_os("LONGTAIL_EDITOR_PROBE")?;
        Some(Self {
            path: PathBuf::from(path),
            rects: BTreeMap::new(),
            reach: (0.0, 0.0),
            scroll_overflow: (0.0, 0.0),
            meters: BTreeMap::new(),
            frame_start: std::time::Instant::now(),
            slowest_frame: std::time::Duration::ZERO,
            frames: 0,
            last: String::new(),
        })
    }

    pub(super) fn begin_frame(&mut self) {
        self.frame_start = std::time::Instant::now();
        self.rects.clear();
        self.reach = (0.0, 0.0);
        self.scroll_overflow = (0.0, 0.0);
    }

    pub(super) fn rect(&mut self, name: &str, rect: Rect) {
        self.rects.insert(
            name.to_owned(),
            [rect.left(), rect.top(), rect.right(), rect.bottom()],
        );
    }

    /// Content laid out outside a scroll area reached `rect`.
    pub(super) fn reach(&mut self, rect: Rect) {
        self.reach = (
            self.reach.0.max(rect.right()),
            self.reach.1.max(rect.bottom()),
        );
    }

    /// The meter of `side` showed these held peaks and RMS levels (linear).
    pub(super) fn meter(&mut self, side: &'static str, held: &[f32], rms: &[f32]) {
        let db = |levels: &[f32]| -> Vec<f32> {
            levels
                .iter()
                .map(|&l| crate::audio::meters::to_db(l))
                .collect()
        };
        self.meters.insert(
            side,
            serde_json::json!({ "peak_db": db(held), "rms_db": db(rms) }),
        );
    }

    /// A scroll area showed `content` in a view of `view`.
    pub(super) fn scrolled(&mut self, content: egui::Vec2, view: egui::Vec2) {
        self.scroll_overflow = (
            self.scroll_overflow.0.max(content.x - view.x),
            self.scroll_overflow.1.max(content.y - view.y),
        );
    }

    /// Writes the frame's record when it differs from the last one written.
    pub(super) fn finish(&mut self, window: Rect, zoom: f32, tab: &str, params: &LongtailParams) {
        // The first frame builds the fonts and the style: not what a user waits for later.
        if self.frames > 0 {
            self.slowest_frame = self.slowest_frame.max(self.frame_start.elapsed());
        }
        self.frames += 1;
        let mut values = BTreeMap::new();
        let mut add = |param: &dyn ParamValue| {
            values.insert(param.name().to_owned(), param.value_json());
        };
        add(&params.mix);
        add(&params.width);
        add(&params.output_gain);
        add(&params.predelay_ms);
        add(&params.low_cut_hz);
        add(&params.high_cut_hz);
        add(&params.trim_start_ms);
        add(&params.trim_end_ms);
        add(&params.auto_trim_db);
        add(&params.fade_in_ms);
        add(&params.fade_out_ms);
        add(&params.stretch);
        add(&params.early_db);
        add(&params.tail_db);
        add(&params.crossover_ms);
        add(&params.low_shelf_hz);
        add(&params.low_shelf_db);
        add(&params.high_shelf_hz);
        add(&params.high_shelf_db);
        add(&params.decay);
        add(&params.decay_low_hz);
        add(&params.decay_low);
        add(&params.decay_high_hz);
        add(&params.decay_high);
        add(&params.duck_db);
        add(&params.duck_threshold_db);
        add(&params.duck_attack_ms);
        add(&params.duck_release_ms);
        let record = serde_json::json!({
            "window": [window.width(), window.height()],
            "zoom": zoom,
            "tab": tab,
            "overflow": [
                (self.reach.0 - window.right()).max(0.0),
                (self.reach.1 - window.bottom()).max(0.0),
            ],
            "scroll_overflow": self.scroll_overflow.0.max(0.0),
            "scroll_overflow_y": self.scroll_overflow.1.max(0.0),
            "rects": self.rects,
            "meters": self.meters,
            "params": values,
            "slowest_frame_ms": (self.slowest_frame.as_secs_f64() * 1e4).round() / 10.0,
            "frames": self.frames / 100 * 100,
        })
        .to_string();
        if record != self.last {
            // Written whole, then renamed, so a reader never sees half a file.
            let temporary = self.path.with_extension("tmp");
            if std::fs::write(&temporary, &record).is_ok() {
                let _ = std::fs::rename(&temporary, &self.path);
            }
            self.last = record;
        }
    }
}

/// A parameter as the probe writes it: its name, normalized value, plain value and text.
trait ParamValue {
    fn name(&self) -> &str;
    fn value_json(&self) -> serde_json::Value;
}

impl ParamValue for FloatParam {
    fn name(&self) -> &str {
        Param::name(self)
    }

    fn value_json(&self) -> serde_json::Value {
        serde_json::json!({
            "normalized": self.unmodulated_normalized_value(),
            "plain": self.unmodulated_plain_value(),
            "default": self.default_plain_value(),
            "text": self.to_string(),
        })
    }
}
