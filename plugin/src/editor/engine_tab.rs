//! The Engine tab: the backend, where each level of the playing engine runs and why (read
//! from its probe, never from the audio thread's objects), the GPU round trips and the loads.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use nice_plug::prelude::*;
use nice_plug_egui::widgets;

use super::*;
use crate::engine::plan::{CostWeights, PartitionPlan, PlanLimits};
use crate::engine::{BackendProbe, LevelStatus, RunsOn};
use crate::params::BackendParam;

impl EditorApp {
    /// Where the playing engine's levels run now: its probe, never the audio thread's objects.
    pub(super) fn playing_backend(&self) -> Option<BackendProbe> {
        self.monitor
            .active
            .load(Relaxed)
            .then(|| self.monitor.playing_backend())
            .flatten()
    }

    /// The Engine tab: the backend and its rule, then, while the plugin convolves, the
    /// partition plan with where each level runs, and the health of the audio thread and the
    /// workers.
    pub(super) fn engine_tab(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        let backend = self.playing_backend();
        self.backend_section(ui, setter, backend.as_ref());
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
        self.plan_section(ui, backend.as_ref());
        self.health_section(ui);
    }

    /// The Backend parameter, its rule, and what the playing engine's probe says of it now.
    fn backend_section(
        &self,
        ui: &mut egui::Ui,
        setter: &ParamSetter,
        backend: Option<&BackendProbe>,
    ) {
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
                         round trip fits and it is faster per partition; small ones move there \
                         together when the process's Auto engines load the CPU; else the CPU"
                    }
                    BackendParam::Cpu => {
                        "CPU: forced by the Backend parameter; levels of a few blocks stay on \
                         the audio thread, where a worker's hand-over would cost more"
                    }
                    BackendParam::Gpu => {
                        "GPU: big levels on the GPU; each falls back to its CPU standby on failure"
                    }
                };
                ui.add(egui::Label::new(rule).wrap());
                ui.end_row();
                if let Some(probe) = backend {
                    let report = probe.report();
                    ui.label("Now");
                    ui.add(egui::Label::new(&report.reason).wrap());
                    ui.end_row();
                    if let Some(stats) = probe.gpu_stats() {
                        ui.label("GPU round trip");
                        ui.add(egui::Label::new(format!(
                            "p50 {:.2} ms, p99 {:.2} ms over {} periods; {} levels left for the \
                             CPU, {} went back",
                            stats.round_trip.p50_us / 1e3,
                            stats.round_trip.p99_us / 1e3,
                            stats.periods,
                            stats.levels_failed_over,
                            report.gpu_returns
                        ))
                        .wrap());
                        ui.end_row();
                    }
                }
            });
    }

    /// The partition plan for the session (the IR length, the host's block and the latency
    /// mode the monitor last saw), one row per level: its partitions, where its IR starts,
    /// where it runs now and its lates.
    fn plan_section(&self, ui: &mut egui::Ui, backend: Option<&BackendProbe>) {
        let monitor = &self.monitor;
        let ir_len = monitor.ir_len.load(Relaxed).max(1) as usize;
        let max_block = monitor.max_block_size.load(Relaxed).max(1) as usize;
        let mode = monitor.latency_mode();
        let may_use_gpu = self.params.backend.value().executor().may_use_gpu();
        let limits = PlanLimits::default().for_executor(may_use_gpu, CostWeights::STEREO);
        let plan = PartitionPlan::new(ir_len, max_block, mode, limits);
        ui.add_space(8.0);
        ui.heading("Partition plan");
        ui.label(format!(
            "quantum {} samples, head {} taps, host block up to {}",
            plan.quantum, plan.head_taps, max_block
        ));
        let levels = backend.map(BackendProbe::levels);
        let adapter = backend
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
                    ui.label(if level.span > 1 {
                        format!(
                            "{} x {} (hop {})",
                            level.num_partitions,
                            level.partition_taps(),
                            level.partition_size
                        )
                    } else {
                        format!("{} x {}", level.num_partitions, level.partition_size)
                    });
                    ui.label(format!("{:.1} ms", level.ir_offset as f64 * 1000.0 / rate));
                    let slack_ms = plan.slack_samples(level) as f64 * 1000.0 / rate;
                    let runs_on = runs_on_text(&plan, idx, status, adapter.as_deref(), slack_ms);
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
    }

    /// The audio thread's load, the workers' share of a core (updated once a second from the
    /// growth of their busy time), their lates and the waits while the host ran ahead.
    fn health_section(&mut self, ui: &mut egui::Ui) {
        let monitor = &self.monitor;
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
                // A host ahead of real time (anticipative processing, a bounce in real-time
                // mode) leaves time: results are waited for instead of dropped.
                ui.label("Waited for results");
                ui.label(format!(
                    "{} times while the host ran ahead (longest {:.1} ms)",
                    monitor.waits.load(Relaxed),
                    monitor.wait_max_ns.load(Relaxed) as f64 / 1e6
                ));
                ui.end_row();
            });
    }
}

/// Where level `idx` of `plan` runs, in words: the plan's rule for the audio thread's levels,
/// the probe's `status` for the others (on the GPU `adapter`, or a CPU worker), with their slack.
fn runs_on_text(
    plan: &PartitionPlan,
    idx: usize,
    status: Option<&LevelStatus>,
    adapter: Option<&str>,
    slack_ms: f64,
) -> String {
    let level = &plan.levels[idx];
    match status.map(|s| s.runs_on) {
        _ if idx == 0 && plan.on_audio_thread(0) => "audio thread (with the head)".to_owned(),
        Some(RunsOn::Gpu) => format!("GPU: {}, {slack_ms:.1} ms of slack", adapter.unwrap_or("?")),
        _ if plan.runs_ahead(idx) => "audio thread, summed ahead".to_owned(),
        _ if plan.on_audio_thread(idx) => format!(
            "audio thread, spread over {} blocks",
            level.partition_size / plan.quantum
        ),
        Some(RunsOn::AudioThread) => "audio thread (inline)".to_owned(),
        _ => format!("CPU worker, {slack_ms:.1} ms of slack"),
    }
}
