//! `longtail-cli status`: what this machine offers Longtail and what it would do with it.
//!
//! One report: the executors (CPU workers; the GPU is not opened here: `longtail-cli bench
//! --backend gpu` opens and calibrates it), the
//! partition plan and where each level would run for a given IR length and block size, the
//! thermal readings with their normalised states, and the thermal policy's decision. Printed
//! as text, or as one JSON object with `--json`.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::engine::plan::{LatencyMode, PartitionPlan, PlanLimits};
use crate::thermal::{GpuStatus, Placement, ThermalPolicy, ThermalProbes, ThermalSnapshot};

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
}

/// Reads the probes once and plans.
pub fn gather(request: StatusRequest) -> StatusReport {
    let ir_len = ((request.ir_seconds * f64::from(request.rate)).round() as usize).max(1);
    let plan = PartitionPlan::new(
        ir_len,
        request.block,
        request.latency_mode,
        PlanLimits::default(),
    );
    let mut probes = ThermalProbes::new(request.thermal_root.clone(), true);
    let thermal = probes.poll();
    // Status does not open the GPU (opening and calibrating take a second); the plan below is
    // the CPU one, as Auto places a small engine.
    let gpu = GpuStatus {
        available: false,
        slack_allows: false,
    };
    let decision = ThermalPolicy::new(Placement::Cpu).update(&thermal, gpu);
    StatusReport {
        request,
        plan,
        thermal,
        decision,
        cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl StatusReport {
    /// Where level `idx` of the plan runs.
    fn level_runner(idx: usize) -> &'static str {
        if idx == 0 {
            "audio thread"
        } else {
            "cpu worker"
        }
    }

    /// One JSON object.
    pub fn to_json(&self) -> String {
        let levels: Vec<String> = self
            .plan
            .levels
            .iter()
            .enumerate()
            .map(|(idx, level)| {
                format!(
                    "{{\"partition_size\":{},\"partitions\":{},\"ir_offset\":{},\"slack_samples\":{},\"runs_on\":{}}}",
                    level.partition_size,
                    level.num_partitions,
                    level.ir_offset,
                    self.plan.slack_samples(level),
                    json_string(Self::level_runner(idx)),
                )
            })
            .collect();
        let readings: Vec<String> = self
            .thermal
            .readings
            .iter()
            .map(|r| {
                format!(
                    "{{\"source\":{},\"device\":{},\"celsius\":{:.1},\"state\":{},\"throttling\":{}}}",
                    json_string(&r.source),
                    json_string(r.device.name()),
                    r.celsius,
                    json_string(r.state().name()),
                    r.throttling
                )
            })
            .collect();
        format!(
            "{{\"version\":{},\"cpu_threads\":{},\"backend\":\"cpu\",\"gpu\":{{\"available\":false,\"reason\":\"not opened by status; bench --backend gpu opens and calibrates it\"}},\
\"plan\":{{\"ir_taps\":{},\"block\":{},\"rate\":{},\"quantum\":{},\"latency_samples\":{},\"head_taps\":{},\"describe\":{},\"levels\":[{}]}},\
\"thermal\":{{\"sources\":{},\"cpu\":{},\"gpu\":{},\"gpu_throttling\":{},\"readings\":[{}]}},\
\"policy\":{{\"placement\":{},\"action\":{},\"reason\":{}}}}}",
            json_string(env!("CARGO_PKG_VERSION")),
            self.cpu_threads,
            self.plan.ir_len,
            self.request.block,
            self.request.rate,
            self.plan.quantum,
            self.plan.latency_samples(),
            self.plan.head_taps,
            json_string(&self.plan.describe()),
            levels.join(","),
            json_string(&self.thermal.sources),
            json_string(self.thermal.cpu.name()),
            json_string(self.thermal.gpu.name()),
            self.thermal.gpu_throttling,
            readings.join(","),
            json_string(&format!("{:?}", self.decision.placement).to_lowercase()),
            json_string(&format!("{:?}", self.decision.action)),
            json_string(self.decision.reason),
        )
    }

    /// Text for humans.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "Longtail {}", env!("CARGO_PKG_VERSION"));
        let _ = writeln!(
            text,
            "executors: cpu workers ({} hardware threads); gpu: not opened by status (bench --backend gpu opens and calibrates it)",
            self.cpu_threads
        );
        let _ = writeln!(
            text,
            "plan for a {:.2} s IR ({} taps) at block {} / {} Hz: {}",
            self.request.ir_seconds,
            self.plan.ir_len,
            self.request.block,
            self.request.rate,
            self.plan.describe()
        );
        for (idx, level) in self.plan.levels.iter().enumerate() {
            let _ = writeln!(
                text,
                "  level {idx}: {} x {} at tap {}, slack {} samples, runs on the {}",
                level.partition_size,
                level.num_partitions,
                level.ir_offset,
                self.plan.slack_samples(level),
                Self::level_runner(idx)
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
                "  {}: {} {:.1} °C, {}",
                r.source,
                r.device.name(),
                r.celsius,
                r.state().name()
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
