//! The JSON line of a [`BenchResult`]: the harness contract's fields of
//! `shared/bench/peers/RESULTS.md`, then Longtail's own, written by `serde_json`. Figures are
//! rounded to what the measurement can tell (microseconds to 0.01, seconds to 0.1 ms).

use serde::Serialize;

use super::result::BenchResult;

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
    cpu_process_s: Option<f64>,
    wall_s: f64,
    rtf: f64,
    rtf_main: f64,
    rtf_process: Option<f64>,
    threads: usize,
    setup_s: f64,
    warmup_blocks: usize,
    blk_med_us: f64,
    blk_p99_us: f64,
    blk_max_us: f64,
    blk_max_all_us: f64,
    oncpu_p99_us: Option<f64>,
    oncpu_max_us: Option<f64>,
    offcpu_max_us: Option<f64>,
    steal_ms: f64,
    deadline_us: f64,
    max_over_deadline: f64,
    oncpu_max_over_deadline: Option<f64>,
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
    gpu_periods: Option<GpuPeriods>,
    gpu_hub_cpu_s: Option<f64>,
    loadavg1: f64,
}

/// `[p50, p99, max]` of a duration, in microseconds.
type Spread = [f64; 3];

fn spread(trip: &longtail_gpu::RoundTrip) -> Spread {
    [
        round(trip.p50_us, 1),
        round(trip.p99_us, 1),
        round(trip.max_us, 1),
    ]
}

/// Where the GPU hub's round trips went ([`longtail_gpu::PeriodStats`]): the phases of a
/// period, how much CPU its wait burnt, and the round trips by the largest partition batched.
#[derive(Serialize)]
struct GpuPeriods {
    submit_us: Spread,
    wait_us: Spread,
    wait_cpu_share: Option<f64>,
    readback_us: Spread,
    /// Periods whose wait napped (the hub saw the driver's wait spin).
    napped: usize,
    by_largest: Vec<ByLargest>,
}

#[derive(Serialize)]
struct ByLargest {
    partition: usize,
    periods: usize,
    rt_us: Spread,
}

impl GpuPeriods {
    fn of(stats: &longtail_gpu::PeriodStats) -> Self {
        Self {
            submit_us: spread(&stats.submit),
            wait_us: spread(&stats.wait),
            wait_cpu_share: stats.wait_cpu_share.map(|share| round(share, 3)),
            readback_us: spread(&stats.readback),
            napped: stats.napped,
            by_largest: (stats.by_largest.iter())
                .map(|(partition, trip)| ByLargest {
                    partition: *partition,
                    periods: trip.count,
                    rt_us: spread(trip),
                })
                .collect(),
        }
    }
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
            cpu_process_s: self.cpu_process_s.map(|s| round(s, 4)),
            wall_s: round(self.wall_s, 4),
            rtf: round(self.rtf(), 6),
            rtf_main: round(self.cpu_main_s / self.audio_s.max(f64::MIN_POSITIVE), 6),
            rtf_process: self
                .cpu_process_s
                .map(|s| round(s / self.audio_s.max(f64::MIN_POSITIVE), 6)),
            threads: self.threads,
            setup_s: round(self.setup_s, 4),
            warmup_blocks: self.warmup_blocks,
            blk_med_us: us(self.blk_med_us),
            blk_p99_us: us(self.blk_p99_us),
            blk_max_us: us(self.blk_max_us),
            blk_max_all_us: us(self.blk_max_all_us),
            oncpu_p99_us: self.oncpu_p99_us.map(us),
            oncpu_max_us: self.oncpu_max_us.map(us),
            offcpu_max_us: self.offcpu_max_us.map(us),
            steal_ms: self.steal_ms.round(),
            deadline_us: us(self.deadline_us),
            max_over_deadline: ratio(self.blk_max_us),
            oncpu_max_over_deadline: self.oncpu_max_us.map(ratio),
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
            gpu_periods: self.gpu_periods.as_ref().map(GpuPeriods::of),
            gpu_hub_cpu_s: self.gpu_hub_cpu_s.map(|s| round(s, 4)),
            loadavg1: round(loadavg1(), 2),
        };
        serde_json::to_string(&line).expect("a struct of numbers and strings serialises")
    }
}

/// The 1-minute load average, or -1 where unknown.
fn loadavg1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(-1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use longtail_gpu::{PeriodStats, RoundTrip};

    #[test]
    fn gpu_periods_say_each_phase_and_batch() {
        let trip = |p50_us, max_us, count| RoundTrip {
            p50_us,
            p99_us: max_us,
            p999_us: max_us,
            max_us,
            count,
        };
        let stats = PeriodStats {
            submit: trip(100.04, 300.0, 10),
            wait: trip(800.0, 4000.0, 10),
            readback: trip(20.0, 50.0, 10),
            wait_cpu_share: Some(0.91234),
            by_largest: vec![
                (1024, trip(700.0, 900.0, 8)),
                (16384, trip(3000.0, 4400.0, 2)),
            ],
            napped: 3,
        };
        let json = serde_json::to_value(GpuPeriods::of(&stats)).unwrap();
        assert_eq!(json["submit_us"], serde_json::json!([100.0, 300.0, 300.0]));
        assert_eq!(json["wait_us"][2], 4000.0);
        assert_eq!(json["wait_cpu_share"], 0.912);
        assert_eq!(json["napped"], 3);
        assert_eq!(json["by_largest"][1]["partition"], 16384);
        assert_eq!(json["by_largest"][1]["periods"], 2);
        assert_eq!(
            json["by_largest"][0]["rt_us"],
            serde_json::json!([700.0, 900.0, 900.0])
        );
    }
}
