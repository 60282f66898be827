//! The JSON line of a [`BenchResult`]: the harness contract's fields of
//! `shared/bench/peers/RESULTS.md`, then Longtail's own, written by `serde_json`. Figures are
//! rounded to what the measurement can tell (microseconds to 0.01, seconds to 0.1 ms).

use serde::Serialize;

use super::{BenchResult, loadavg1};

/// `value` rounded to `digits` decimals (what the line prints).
fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// One line, in the contract's order.
#[derive(Serialize)]
struct PerfLine<'a> {
    kind: &'static str,
    engine: &'static str,
    variant: &'a str,
    lib: String,
    backend: &'static str,
    block: usize,
    rate: u32,
    channels: usize,
    outputs: usize,
    paths: usize,
    ir_taps: usize,
    instances: usize,
    audio_s: f64,
    n_blocks: usize,
    cpu_s: f64,
    cpu_main_s: f64,
    wall_s: f64,
    rtf: f64,
    rtf_main: f64,
    threads: usize,
    setup_s: f64,
    warmup_blocks: usize,
    blk_med_us: f64,
    blk_p99_us: f64,
    blk_max_us: f64,
    blk_max_all_us: f64,
    oncpu_p99_us: f64,
    oncpu_max_us: f64,
    offcpu_max_us: f64,
    steal_ms: f64,
    deadline_us: f64,
    max_over_deadline: f64,
    oncpu_max_over_deadline: f64,
    p99_over_deadline: f64,
    latency_samples: usize,
    late_blocks: u64,
    dropped_chunks: u64,
    waits: u64,
    wait_max_us: f64,
    wakes_per_s: f64,
    layout: &'a str,
    paced: bool,
    pace: String,
    snr_vs_offline_db: Option<f64>,
    audio_priority: u32,
    rss_kb: u64,
    mem_per_instance_kb: u64,
    host_threads: usize,
    host_thread: Option<usize>,
    gpu_adapter: Option<&'a str>,
    gpu_rt_p50_us: f64,
    gpu_rt_p99_us: f64,
    gpu_rt_max_us: f64,
    loadavg1: f64,
}

impl BenchResult {
    /// Whole-process CPU seconds per second of audio.
    pub fn rtf(&self) -> f64 {
        self.cpu_s / self.audio_s.max(f64::MIN_POSITIVE)
    }

    /// The harness contract's JSON line (plus Longtail's own fields).
    pub fn to_json(&self) -> String {
        let us = |value: f64| round(value, 2);
        let ratio = |value: f64| round(value / self.deadline_us, 4);
        let line = PerfLine {
            kind: "perf",
            engine: self.engine,
            variant: &self.variant,
            lib: format!("longtail {}", env!("CARGO_PKG_VERSION")),
            backend: self.backend,
            block: self.block,
            rate: self.rate,
            channels: self.channels,
            outputs: self.outputs,
            paths: self.paths,
            ir_taps: self.ir_taps,
            instances: self.instances,
            audio_s: round(self.audio_s, 3),
            n_blocks: self.n_blocks,
            cpu_s: round(self.cpu_s, 4),
            cpu_main_s: round(self.cpu_main_s, 4),
            wall_s: round(self.wall_s, 4),
            rtf: round(self.rtf(), 6),
            rtf_main: round(self.cpu_main_s / self.audio_s.max(f64::MIN_POSITIVE), 6),
            threads: self.threads,
            setup_s: round(self.setup_s, 4),
            warmup_blocks: self.warmup_blocks,
            blk_med_us: us(self.blk_med_us),
            blk_p99_us: us(self.blk_p99_us),
            blk_max_us: us(self.blk_max_us),
            blk_max_all_us: us(self.blk_max_all_us),
            oncpu_p99_us: us(self.oncpu_p99_us),
            oncpu_max_us: us(self.oncpu_max_us),
            offcpu_max_us: us(self.offcpu_max_us),
            steal_ms: self.steal_ms.round(),
            deadline_us: us(self.deadline_us),
            max_over_deadline: ratio(self.blk_max_us),
            oncpu_max_over_deadline: ratio(self.oncpu_max_us),
            p99_over_deadline: ratio(self.blk_p99_us),
            latency_samples: self.latency_samples,
            late_blocks: self.late_blocks,
            dropped_chunks: self.dropped_chunks,
            waits: self.waits,
            wait_max_us: round(self.wait_max_us, 1),
            wakes_per_s: round(self.wakes_per_s, 1),
            layout: &self.layout,
            paced: self.paced,
            pace: self.pace.name(),
            snr_vs_offline_db: self.snr_vs_offline_db.map(|db| round(db, 1)),
            audio_priority: self.audio_priority,
            rss_kb: self.rss_kb,
            mem_per_instance_kb: self.mem_per_instance_kb,
            host_threads: self.host_threads,
            host_thread: self.host_thread,
            gpu_adapter: self.gpu_adapter.as_deref(),
            gpu_rt_p50_us: round(self.gpu_rt_us[0], 1),
            gpu_rt_p99_us: round(self.gpu_rt_us[1], 1),
            gpu_rt_max_us: round(self.gpu_rt_us[2], 1),
            loadavg1: round(loadavg1(), 2),
        };
        serde_json::to_string(&line).expect("a struct of numbers and strings serialises")
    }
}
