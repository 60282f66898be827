//! `longtail-cli status`: what this machine offers Longtail and what it would do with it.
//!
//! One report: the executors (CPU workers, the GPU adapters found and the one the backend
//! would use, opened and calibrated as an engine would open it), the partition plan and where
//! each level would run for a given IR length, path count, block size and backend, the thermal
//! readings with their normalised states, the thermal policy's decision, and Auto's rule for the
//! whole process ([`crate::engine::placement::load_policy`]) with whether this machine's GPU pays
//! for it. Printed as text, or as one JSON object with `--json`.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::engine::plan::{CostWeights, LatencyMode, PartitionPlan, PlanLimits};
use crate::engine::{
    CostSplit, Executor, GpuPolicy, Workload, cpu_costs, cpu_partition_cost_ns, gpu_workload,
    level_goes_to_gpu, open_gpu,
};
use crate::thermal::{GpuStatus, Placement, ThermalPolicy, ThermalProbes, ThermalSnapshot};

use serde_json::{Value, json};

/// What to report on.
#[derive(Debug, Clone)]
pub struct StatusRequest {
    /// IR length the plan is made for, in seconds.
    pub ir_seconds: f64,
    /// Host block size.
    pub block: usize,
    /// Sample rate, in Hz.
    pub rate: u32,
    /// Latency mode of the plan.
    pub latency_mode: LatencyMode,
    /// Paths (input-output pairs) of the engine: 2 for a stereo IR on a stereo track, 4 for
    /// true stereo. With the IR length, decides whether Auto considers the GPU.
    pub paths: usize,
    /// A dense matrix's inputs and outputs (`paths` is then their product): the plan weighs
    /// its shared transforms ([`crate::engine::CostWeights`]).
    pub matrix: Option<(usize, usize)>,
    /// The backend asked for.
    pub executor: Executor,
    /// Fake sysfs root for the thermal probes (tests), else the system's.
    pub thermal_root: Option<PathBuf>,
}

/// The gathered report.
#[derive(Debug, Clone)]
pub struct StatusReport {
    pub request: StatusRequest,
    pub plan: PartitionPlan,
    pub thermal: ThermalSnapshot,
    pub decision: crate::thermal::Decision,
    pub cpu_threads: usize,
    /// Where each level of the plan runs: "audio thread", "cpu worker" or "gpu".
    pub runs_on: Vec<&'static str>,
    pub gpu: GpuSection,
    /// The CPU's cost of one path-partition of 4096 samples (see
    /// [`crate::engine::cpu_partition_cost_ns`]).
    pub cpu_partition_ns: f64,
    /// Auto for the whole process: the GPU the load policy would open (`true` for a real
    /// one) and its calibrated costs; `None` without one, or when the backend is not Auto.
    pub process_gpu: Option<(bool, CostSplit)>,
    /// The CPU's costs, the transforms and the MACs apart.
    pub cpu_costs: CostSplit,
    /// What this engine's big levels ask for: Auto weighs both sides' costs with it.
    pub workload: Workload,
}

/// What status found of the GPU.
#[derive(Debug, Clone, Default)]
pub struct GpuSection {
    /// Every usable adapter.
    pub adapters: Vec<longtail_gpu::AdapterSummary>,
    /// The adapter the backend would run on, when it opened one.
    pub chosen: Option<longtail_gpu::AdapterSummary>,
    /// Its calibration.
    pub calibration: Option<longtail_gpu::Calibration>,
    /// Why the GPU is used or not, in one line.
    pub reason: String,
}

/// Reads the probes once, opens the GPU as an engine with this backend would, and plans.
pub fn gather(request: StatusRequest) -> StatusReport {
    let ir_len = ((request.ir_seconds * f64::from(request.rate)).round() as usize).max(1);
    let weights = request
        .matrix
        .map_or(CostWeights::STEREO, |(inputs, outputs)| {
            CostWeights::for_paths(inputs, outputs, inputs * outputs)
        });
    let plan = PartitionPlan::new_weighted(
        ir_len,
        request.block,
        request.latency_mode,
        PlanLimits::default().for_executor(request.executor.may_use_gpu(), weights),
        weights,
    );
    let (inputs, outputs) = request.matrix.unwrap_or((2, 2));
    let workload = gpu_workload(&plan, inputs, outputs, request.paths.max(1));
    let mut probes = ThermalProbes::new(request.thermal_root.clone(), true);
    let thermal = probes.poll();
    let mut gpu = GpuSection {
        adapters: longtail_gpu::list_adapters(),
        ..GpuSection::default()
    };
    let mut runs_on: Vec<&'static str> = plan
        .levels
        .iter()
        .enumerate()
        .map(|(idx, _)| match idx {
            _ if !plan.on_audio_thread(idx) => "cpu worker",
            0 => "audio thread",
            _ if plan.runs_ahead(idx) => "audio thread, summed ahead of its chunk",
            _ => "audio thread, spread over its period",
        })
        .collect();
    let num_workers = (0..plan.levels.len())
        .filter(|&idx| !plan.on_audio_thread(idx))
        .count();
    match request.executor {
        Executor::Gpu(policy) => match open_gpu(policy, request.paths.max(1) * ir_len, workload) {
            Ok((hub, _)) => {
                let calibration = hub.calibration();
                for (idx, level) in plan.levels.iter().enumerate() {
                    if !plan.on_audio_thread(idx)
                        && level_goes_to_gpu(
                            policy,
                            &calibration,
                            level.partition_size,
                            plan.slack_samples(level),
                            request.block,
                            request.rate,
                        )
                    {
                        runs_on[idx] = "gpu";
                    }
                }
                let on_gpu = runs_on.iter().filter(|r| **r == "gpu").count();
                gpu.reason = match policy {
                    GpuPolicy::Auto => format!(
                        "GPU: {on_gpu} of {} worker levels (Auto: slack for 4 x p99.9 round \
                         trip + one block, partitions of 1024+)",
                        num_workers
                    ),
                    GpuPolicy::Forced { .. } => format!(
                        "GPU: {on_gpu} of {num_workers} worker levels (forced: partitions of 1024+)"
                    ),
                };
                gpu.chosen = Some(hub.adapter().clone());
                gpu.calibration = Some(calibration);
            }
            Err(reason) => gpu.reason = reason,
        },
        Executor::Workers | Executor::Inline => gpu.reason = "CPU: the backend asked for".into(),
    }
    let on_gpu = runs_on.contains(&"gpu");
    let decision = ThermalPolicy::new(if on_gpu {
        Placement::Gpu
    } else {
        Placement::Cpu
    })
    .update(
        &thermal,
        GpuStatus {
            available: gpu.chosen.is_some(),
            slack_allows: on_gpu,
        },
    );
    // The hub the load policy would open (the one above when it opened, else the process's).
    let process_gpu = match request.executor {
        Executor::Gpu(GpuPolicy::Auto) => match (&gpu.chosen, gpu.calibration) {
            (Some(chosen), Some(calibration)) => Some((
                chosen.kind != longtail_gpu::AdapterKind::Cpu,
                CostSplit::of_gpu(&calibration),
            )),
            _ => longtail_gpu::shared(longtail_gpu::OpenOptions::from_env())
                .ok()
                .map(|hub| {
                    (
                        hub.adapter().kind != longtail_gpu::AdapterKind::Cpu,
                        CostSplit::of_gpu(&hub.calibration()),
                    )
                }),
        },
        _ => None,
    };
    StatusReport {
        request,
        plan,
        thermal,
        decision,
        cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        runs_on,
        gpu,
        cpu_partition_ns: cpu_partition_cost_ns(),
        process_gpu,
        cpu_costs: cpu_costs(),
        workload,
    }
}

impl StatusReport {
    /// Whether the load policy would send levels to the GPU under load: a real GPU cheaper per
    /// path-partition than the CPU. `None` when the backend is not Auto or there is no GPU.
    pub fn process_gpu_pays(&self) -> Option<bool> {
        self.process_gpu
            .map(|(real, gpu)| real && gpu.per_stereo_partition() < self.cpu_partition_ns)
    }

    /// This engine's big levels on each side, in nanoseconds per 4096 samples: `(CPU, GPU)`,
    /// the GPU's `None` without one. Auto sends them to the GPU when it is cheaper.
    pub fn engine_costs(&self) -> (f64, Option<f64>) {
        (
            self.cpu_costs.cost_ns(self.workload),
            self.process_gpu.map(|(_, gpu)| gpu.cost_ns(self.workload)),
        )
    }

    fn auto_process_json(&self) -> Value {
        use crate::engine::placement::load_policy::{
            LOAD_HIGH, LOAD_LOW, MOVE_AFTER_POLLS, RETURN_AFTER_POLLS,
        };
        json!({
            "load_high": round(LOAD_HIGH, 2),
            "load_low": round(LOAD_LOW, 2),
            "move_after_polls": MOVE_AFTER_POLLS,
            "return_after_polls": RETURN_AFTER_POLLS,
            "gpu_partition_ns": self.process_gpu.map(|(_, gpu)| round(gpu.per_stereo_partition(), 1)),
            "gpu_pays": self.process_gpu_pays(),
        })
    }

    fn engine_costs_json(&self) -> Value {
        let split = |c: CostSplit| {
            json!({
                "transform_ns": round(c.transform_ns, 1),
                "partition_ns": round(c.partition_ns, 1),
            })
        };
        let (cpu_ns, gpu_ns) = self.engine_costs();
        json!({
            "transforms": round(self.workload.transforms, 2),
            "path_partitions": round(self.workload.path_partitions, 2),
            "cpu": split(self.cpu_costs),
            "gpu": self.process_gpu.map(|(_, gpu)| split(gpu)),
            "cpu_us": round(cpu_ns / 1e3, 1),
            "gpu_us": gpu_ns.map(|ns| round(ns / 1e3, 1)),
        })
    }

    fn backend_name(&self) -> &'static str {
        match self.request.executor {
            Executor::Gpu(GpuPolicy::Auto) => "auto",
            Executor::Gpu(GpuPolicy::Forced { .. }) => "gpu",
            Executor::Workers | Executor::Inline => "cpu",
        }
    }

    fn gpu_json(&self) -> Value {
        let adapter = |a: &longtail_gpu::AdapterSummary| {
            json!({
                "name": a.name,
                "backend": a.backend,
                "kind": a.kind.name(),
                "driver": a.driver,
            })
        };
        let adapters: Vec<Value> = self.gpu.adapters.iter().map(adapter).collect();
        let calibration = self.gpu.calibration.map(|c| {
            json!({
                "partition_size": c.partition_size,
                "paths": c.paths,
                "rt_p50_us": round(c.round_trip.p50_us, 1),
                "rt_p99_us": round(c.round_trip.p99_us, 1),
                "rt_p999_us": round(c.round_trip.p999_us, 1),
                "rt_max_us": round(c.round_trip.max_us, 1),
                "heavy_p50_us": round(c.heavy_round_trip.p50_us, 1),
                "gpu_partition_ns": round(c.partition_cost_ns, 1),
                "gpu_transform_ns": round(c.transform_cost_ns, 1),
                "wide_p50_us": round(c.wide_round_trip.p50_us, 1),
            })
        });
        json!({
            "available": self.gpu.chosen.is_some(),
            "adapters": adapters,
            "chosen": self.gpu.chosen.as_ref().map(adapter),
            "calibration": calibration,
            "reason": self.gpu.reason,
        })
    }

    /// One JSON object, written by `serde_json`.
    pub fn to_json(&self) -> String {
        let levels: Vec<Value> = self
            .plan
            .levels
            .iter()
            .enumerate()
            .map(|(idx, level)| {
                json!({
                    "partition_size": level.partition_size,
                    "partitions": level.num_partitions,
                    "ir_offset": level.ir_offset,
                    "slack_samples": self.plan.slack_samples(level),
                    "runs_on": self.runs_on[idx],
                })
            })
            .collect();
        let readings: Vec<Value> = self
            .thermal
            .readings
            .iter()
            .map(|r| {
                json!({
                    "source": r.source,
                    "device": r.device.name(),
                    "celsius": r.celsius.map(|celsius| round(f64::from(celsius), 1)),
                    "state": r.state().name(),
                    "throttling": r.throttling,
                })
            })
            .collect();
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "commit": crate::COMMIT,
            "cpu_threads": self.cpu_threads,
            "backend": self.backend_name(),
            "cpu_partition_ns": round(self.cpu_partition_ns, 1),
            "gpu": self.gpu_json(),
            "matrix": {
                "inputs": self.request.matrix.map(|(inputs, _)| inputs),
                "outputs": self.request.matrix.map(|(_, outputs)| outputs),
            },
            "plan": {
                "ir_taps": self.plan.ir_len,
                "block": self.request.block,
                "rate": self.request.rate,
                "quantum": self.plan.quantum,
                "latency_samples": self.plan.latency_samples(),
                "head_taps": self.plan.head_taps,
                "describe": self.plan.describe(),
                "levels": levels,
            },
            "thermal": {
                "sources": self.thermal.sources,
                "cpu": self.thermal.cpu.name(),
                "gpu": self.thermal.gpu.name(),
                "gpu_throttling": self.thermal.gpu_throttling,
                "readings": readings,
            },
            "policy": {
                "placement": format!("{:?}", self.decision.placement).to_lowercase(),
                "action": format!("{:?}", self.decision.action),
                "reason": self.decision.reason,
            },
            "auto_process": self.auto_process_json(),
            "auto_engine": self.engine_costs_json(),
        })
        .to_string()
    }

    /// Text for humans.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "Longtail {}", crate::VERSION_TEXT);
        let _ = writeln!(
            text,
            "executors: cpu workers ({} hardware threads, {:.0} ns per path-partition of 4096)",
            self.cpu_threads, self.cpu_partition_ns
        );
        if self.gpu.adapters.is_empty() {
            let _ = writeln!(text, "gpu adapters: none found");
        }
        for adapter in &self.gpu.adapters {
            let chosen = self.gpu.chosen.as_ref() == Some(adapter);
            let _ = writeln!(
                text,
                "gpu adapter: {adapter}{}",
                if chosen { ", chosen" } else { "" }
            );
        }
        if let Some(c) = &self.gpu.calibration {
            let _ = writeln!(
                text,
                "gpu calibration ({} paths of {} x 4): round trip p50 {:.0} us, p99 {:.0} us, \
                 p99.9 {:.0} us, max {:.0} us; {:.0} ns per path-partition",
                c.paths,
                c.partition_size,
                c.round_trip.p50_us,
                c.round_trip.p99_us,
                c.round_trip.p999_us,
                c.round_trip.max_us,
                c.partition_cost_ns
            );
        }
        let _ = writeln!(text, "backend {}: {}", self.backend_name(), self.gpu.reason);
        let _ = writeln!(
            text,
            "plan for a {:.2} s IR ({} taps, {} paths) at block {} / {} Hz: {}",
            self.request.ir_seconds,
            self.plan.ir_len,
            self.request.paths,
            self.request.block,
            self.request.rate,
            self.plan.describe()
        );
        for (idx, level) in self.plan.levels.iter().enumerate() {
            let _ = writeln!(
                text,
                "  level {idx}: {} x {}{} at tap {}, slack {} samples, runs on the {}",
                level.partition_size,
                level.num_partitions,
                if level.span > 1 {
                    format!(
                        " (partitions of {} taps, FFTs of {})",
                        level.partition_taps(),
                        level.fft_size()
                    )
                } else {
                    String::new()
                },
                level.ir_offset,
                self.plan.slack_samples(level),
                self.runs_on[idx]
            );
        }
        let _ = writeln!(
            text,
            "thermal ({}): cpu {}, gpu {}{}",
            self.thermal.sources,
            self.thermal.cpu.name(),
            self.thermal.gpu.name(),
            if self.thermal.gpu_throttling {
                " (throttling)"
            } else {
                ""
            }
        );
        for r in &self.thermal.readings {
            let _ = writeln!(
                text,
                "  {}: {} {}, {}",
                r.source,
                r.device.name(),
                r.temperature_text(),
                r.state().name()
            );
        }
        if self.request.executor == Executor::Gpu(GpuPolicy::Auto) {
            use crate::engine::placement::load_policy::{
                LOAD_HIGH, LOAD_LOW, MOVE_AFTER_POLLS, RETURN_AFTER_POLLS,
            };
            let gpu = match (self.process_gpu, self.process_gpu_pays()) {
                (Some((_, gpu)), Some(true)) => format!(
                    "the GPU pays ({:.0} ns per path-partition)",
                    gpu.per_stereo_partition()
                ),
                (Some((true, gpu)), _) => format!(
                    "the GPU costs more ({:.0} ns per path-partition): never",
                    gpu.per_stereo_partition()
                ),
                (Some((false, _)), _) => "the GPU is a CPU adapter: never".into(),
                (None, _) => "no GPU: never".into(),
            };
            let (cpu_ns, gpu_ns) = self.engine_costs();
            let c = self.cpu_costs;
            let _ = writeln!(
                text,
                "auto for this engine: its levels of 1024 and more are {:.1} transforms and \
                 {:.0} path-partitions per 4096 samples; the CPU takes {:.0} us ({:.0} ns a \
                 transform, {:.0} ns a path-partition){}",
                self.workload.transforms,
                self.workload.path_partitions,
                cpu_ns / 1e3,
                c.transform_ns,
                c.partition_ns,
                match (self.process_gpu, gpu_ns) {
                    (Some((_, g)), Some(ns)) => format!(
                        ", the GPU {:.0} us ({:.0} ns a transform, {:.0} ns a path-partition): \
                         {}",
                        ns / 1e3,
                        g.transform_ns,
                        g.partition_ns,
                        if ns < cpu_ns {
                            "the GPU pays"
                        } else {
                            "the CPU is cheaper"
                        }
                    ),
                    _ => ", no GPU to compare".into(),
                }
            );
            let _ = writeln!(
                text,
                "auto for the process: the big levels of Auto engines kept on the CPU go to the \
                 GPU after {MOVE_AFTER_POLLS} s at {:.0} % or more of the {} threads, back \
                 after {RETURN_AFTER_POLLS} s at {:.0} % or less; {gpu}",
                100.0 * LOAD_HIGH,
                self.cpu_threads,
                100.0 * LOAD_LOW
            );
        }
        let _ = writeln!(
            text,
            "policy: {:?} on {:?} ({})",
            self.decision.action, self.decision.placement, self.decision.reason
        );
        text
    }
}

/// `value` rounded to `digits` decimals, as the text report prints it.
fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}
