//! Building an engine ([`Engine::new`], [`Engine::new_mapped`]): off the audio thread, it
//! routes the IR, plans the partitions, transforms the IR into each level's spectra, opens the
//! GPU where the executor may use it, puts each level where it runs, sizes the rings and
//! builds the probe the governor and the editor watch.

use std::sync::Arc;

use rustfft::FftPlanner;

use super::Engine;
use super::config::{EngineConfig, Executor, GpuPolicy};
use super::error::EngineError;
use super::head::{Head, HeadShape};
use super::memory::rings::{InputRing, OutputRing};
use super::placement::governor;
use super::placement::gpu_placement::{
    GPU_MIN_PARTITION, gpu_fits, gpu_workload, level_goes_to_gpu, open_gpu, results_on_time,
};
use super::placement::probe::{BackendProbe, ProbeInner, ProbeLevel};
use super::plan::{CostWeights, LatencyMode, Level, PartitionPlan};
use super::realtime::pace::HostPace;
use super::routing::{self, MAX_CHANNELS, Path, route};
use super::runner::ahead::AheadLevel;
use super::runner::spread::SpreadLevel;
use super::runner::{self, LevelRunner};
use super::upols::{self, UpolsLevel};
use super::worker::{GpuHome, InputHistory, WorkerLevel};
use crate::ir::Ir;
use crate::ir::mapping::{Bus, ChannelFormat, check_budget};

/// The id of the next engine built in this process (its probe's, which the governor keys on).
static NEXT_ENGINE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Engine {
    /// Plans and builds the engine for `ir` on a plain bus (channel format Auto). Allocates and
    /// runs FFTs over the whole IR: call off the audio thread.
    pub fn new(ir: &Ir, config: EngineConfig) -> Result<Self, EngineError> {
        Self::new_mapped(ir, config, ChannelFormat::Auto)
    }

    /// [`Engine::new`] on a bus whose channels are read as `format` ([`crate::ir::mapping`]).
    pub fn new_mapped(
        ir: &Ir,
        config: EngineConfig,
        format: ChannelFormat,
    ) -> Result<Self, EngineError> {
        check_config(ir, &config)?;
        let EngineConfig {
            max_block_size,
            num_inputs,
            num_outputs,
            latency_mode,
            limits,
            executor,
        } = config;

        // The paths, and the plan for what they share.
        let bus = Bus::new(num_inputs, num_outputs, format);
        let routed = route(ir, bus).map_err(|err| EngineError::Mapping(err.to_string()))?;
        let weights = CostWeights::for_paths(num_inputs, num_outputs, routed.len());
        let limits = limits.for_executor(executor.may_use_gpu(), weights);
        let plan =
            PartitionPlan::new_weighted(ir.len(), max_block_size, latency_mode, limits, weights);
        let paths: Vec<Path> = routed.iter().map(|(path, _)| *path).collect();
        let path_taps: Vec<&[f32]> = routed.iter().map(|(_, taps)| taps.as_ref()).collect();
        let shared = routing::shared_spectra(&path_taps);
        let unique = shared.iter().enumerate().filter(|&(a, &b)| a == b).count();
        check_budget(unique, ir.len(), ir.sample_rate)
            .map_err(|err| EngineError::Mapping(err.to_string()))?;

        // The head, the GPU where the executor may use it, and each level where it runs.
        let mut planner = FftPlanner::new();
        let head_shape = HeadShape {
            num_taps: plan.head_taps,
            paths: &paths,
            path_taps: &path_taps,
            shared: &shared,
            num_inputs,
            num_outputs,
        };
        let head = Head::new(&mut planner, head_shape);
        let (gpu, build_reason) = open_gpu_for(ir, &config, &plan, paths.len(), unique);
        let worker_inputs = runner::worker_inputs(&plan, num_inputs, executor == Executor::Inline);
        let build = LevelBuild {
            ir,
            config,
            plan: &plan,
            paths: &paths,
            path_taps: &path_taps,
            shared: &shared,
            gpu: gpu.as_ref(),
            worker_inputs: worker_inputs.as_ref(),
        };
        let mut levels = Vec::with_capacity(plan.levels.len());
        for (level_idx, level) in plan.levels.iter().enumerate() {
            levels.push(build.runner(&mut planner, level_idx, level)?);
        }

        // The rings, and what other threads see of the engine.
        let rings = RingSizes::new(&plan, &head, &levels, num_inputs, num_outputs);
        let gpu = gpu.map(|(hub, _)| hub);
        let build_reason = match &gpu {
            Some(hub) => gpu_reason(hub, &levels),
            None => build_reason,
        };
        let probe = new_probe(ir, &plan, paths.len(), gpu.as_ref(), build_reason, &levels);
        // Every Auto engine with a way to the GPU is watched, small ones included: together
        // they may load the CPU ([`placement::load_policy`]). With no hub yet this costs the
        // governor's poll and nothing else: the adapters are looked up (loading the drivers) only
        // when a policy is about to send work to the GPU, and the hub opens only when the load
        // policy or a level's way there needs it.
        if executor == Executor::Gpu(GpuPolicy::Auto) && probe.can_use_gpu() {
            governor::watch(&probe);
        }
        Ok(Self {
            probe,
            gpu,
            num_paths: paths.len(),
            head,
            levels,
            input_rings: (0..rings.num_input_rings)
                .map(|_| InputRing::new(rings.history))
                .collect(),
            worker_inputs,
            output_rings: (0..rings.num_output_rings)
                .map(|_| OutputRing::new(rings.max_ahead))
                .collect(),
            time: 0,
            offline: false,
            pace: HostPace::new(ir.sample_rate),
            stagger: 0,
            plan,
            config,
        })
    }
}

/// Refuses what no engine is built for: channel counts outside 1 to [`MAX_CHANNELS`], a matrix
/// IR whose channels do not fit the bus, an empty IR, or a block size of 0.
fn check_config(ir: &Ir, config: &EngineConfig) -> Result<(), EngineError> {
    let EngineConfig {
        max_block_size,
        num_inputs,
        num_outputs,
        ..
    } = *config;
    if !(1..=MAX_CHANNELS).contains(&num_inputs) || !(1..=MAX_CHANNELS).contains(&num_outputs) {
        return Err(EngineError::UnsupportedChannels {
            num_inputs,
            num_outputs,
        });
    }
    if let crate::ir::IrLayout::Matrix { inputs, outputs } = ir.layout
        && !routing::matrix_fits(ir, num_inputs, num_outputs)
    {
        return Err(EngineError::MatrixMismatch {
            inputs,
            outputs,
            num_inputs,
            num_outputs,
        });
    }
    if ir.is_empty() {
        return Err(EngineError::EmptyIr);
    }
    if max_block_size == 0 {
        return Err(EngineError::ZeroBlockSize);
    }
    Ok(())
}

/// The GPU hub and the options it was opened with, where the executor may use the GPU and the
/// plan has levels for it; else why the engine stays on the CPU. Opening and calibrating take
/// a moment ([`open_gpu`]).
fn open_gpu_for(
    ir: &Ir,
    config: &EngineConfig,
    plan: &PartitionPlan,
    num_paths: usize,
    unique: usize,
) -> (Option<OpenedGpu>, String) {
    match config.executor {
        Executor::Gpu(policy) if plan.levels.len() > 1 || plan.offloads() => {
            let workload = gpu_workload(plan, config.num_inputs, config.num_outputs, unique);
            match open_gpu(policy, num_paths * ir.len(), workload) {
                Ok(opened) => (Some(opened), String::new()),
                Err(reason) => (None, reason),
            }
        }
        Executor::Gpu(_) => (None, "CPU: the IR is too short for worker levels".into()),
        Executor::Workers => (None, "CPU: the Backend parameter".into()),
        Executor::Inline => (None, "CPU: inline executor".into()),
    }
}

/// A GPU hub opened for an engine, and the options it was opened with.
type OpenedGpu = (Arc<longtail_gpu::Hub>, longtail_gpu::OpenOptions);

/// What each level of an engine is built from.
struct LevelBuild<'a> {
    ir: &'a Ir,
    config: EngineConfig,
    plan: &'a PartitionPlan,
    paths: &'a [Path],
    /// Each path's taps, and per path the first path with the same taps.
    path_taps: &'a [&'a [f32]],
    shared: &'a [usize],
    /// The hub the engine opened, if any.
    gpu: Option<&'a OpenedGpu>,
    /// The input history the worker levels read (made where any level may run on one).
    worker_inputs: Option<&'a Arc<InputHistory>>,
}

impl LevelBuild<'_> {
    /// Level `level_idx` of the plan, transformed, and where it runs: whole on the audio
    /// thread, summed ahead, spread over its slack, or on a worker (or the GPU).
    fn runner(
        &self,
        planner: &mut FftPlanner<f32>,
        level_idx: usize,
        level: &Level,
    ) -> Result<LevelRunner, EngineError> {
        let EngineConfig {
            num_inputs,
            num_outputs,
            latency_mode,
            executor,
            ..
        } = self.config;
        let plan = self.plan;
        let mut upols = UpolsLevel::new(
            planner,
            upols::LevelShape {
                partition_size: level.partition_size,
                span: level.span,
                num_partitions: level.num_partitions,
                ir_offset: level.ir_offset,
                output_delay: plan.output_delay(level),
                num_inputs,
                num_outputs,
            },
            self.paths,
            self.path_taps,
            self.shared,
        );
        // Level 0 has no slack (its result is due as its chunk completes, but in the
        // offload mode): it stays inline, and in zero-latency mode it can take over the
        // head's taps for whole quanta.
        if level_idx == 0 && latency_mode == LatencyMode::Zero {
            upols.enable_fused_head(self.path_taps);
        }
        // Level 0 runs whole as its chunk completes; a later level due then, summed ahead.
        let inline = level_idx == 0 && plan.on_audio_thread(0);
        Ok(if inline || executor == Executor::Inline {
            upols.prefault();
            LevelRunner::Inline(Box::new(upols))
        } else if plan.runs_ahead(level_idx) {
            let mut level = AheadLevel::new(upols, num_inputs, plan.quantum);
            level.prefault();
            LevelRunner::Ahead(Box::new(level))
        } else if plan.on_audio_thread(level_idx) {
            upols.prefault();
            LevelRunner::Spread(Box::new(SpreadLevel::new(upols, num_inputs, plan.quantum)))
        } else {
            LevelRunner::Worker(self.worker(upols, level_idx, level)?)
        })
    }

    /// The worker of a level that runs on one: on the GPU where the engine's hub takes it, on
    /// the CPU with a way to the GPU where Auto may send it there later, else on the CPU.
    fn worker(
        &self,
        upols: UpolsLevel,
        level_idx: usize,
        level: &Level,
    ) -> Result<WorkerLevel, EngineError> {
        let EngineConfig {
            max_block_size,
            executor,
            ..
        } = self.config;
        let rate = self.ir.sample_rate;
        let slack = self.plan.output_delay(level) - level.partition_size;
        // Forced: every level big enough; Auto: only where the measured round trip fits.
        let on_gpu = self.gpu.filter(|(hub, _)| match executor {
            Executor::Gpu(policy) => level_goes_to_gpu(
                policy,
                &hub.calibration(),
                level.partition_size,
                slack,
                max_block_size,
                rate,
            ),
            _ => false,
        });
        let inputs = self.worker_inputs.expect("made for every worker level");
        let mut worker = match (on_gpu, executor) {
            (Some((hub, options)), Executor::Gpu(policy)) => {
                let partition_size = level.partition_size;
                let home = GpuHome {
                    options: *options,
                    fits: Arc::new(move |round_trip| {
                        gpu_fits(
                            policy,
                            round_trip,
                            partition_size,
                            slack,
                            max_block_size,
                            rate,
                        )
                    }),
                };
                WorkerLevel::spawn_gpu(upols, inputs, level_idx, hub, home)
            }
            // Auto, a level the GPU could take but does not now: on the CPU, with a
            // way to the GPU for when the thermal policy finds the CPU hot, or the load
            // policy finds the process's Auto engines loading it (it must then only be
            // on time: the policies' hysteresis and the late failover guard the move).
            // The way opens the process's hub only when taken: a small engine alone
            // never opens a device.
            (None, Executor::Gpu(GpuPolicy::Auto)) if level.partition_size >= GPU_MIN_PARTITION => {
                let home = GpuHome {
                    options: longtail_gpu::OpenOptions::from_env(),
                    fits: Arc::new(move |round_trip| results_on_time(round_trip, slack, rate)),
                };
                WorkerLevel::spawn_held(upols, inputs, level_idx, home)
            }
            _ => WorkerLevel::spawn(upols, inputs, level_idx),
        }
        .map_err(|err| EngineError::Thread(err.to_string()))?;
        if level.ir_offset == 0 {
            // The offload mode's level 0: a late result is a hole in the wet signal.
            worker.degrade_at_first_late();
        }
        Ok(worker)
    }
}

/// How many rings an engine needs, and how long.
struct RingSizes {
    /// Samples of input history per input ring.
    history: usize,
    /// Input rings: one per input, or none where nothing on the audio thread reads them.
    num_input_rings: usize,
    /// Samples ahead of now an output ring takes.
    max_ahead: usize,
    /// Output rings: one per output, or none where nothing adds to them.
    num_output_rings: usize,
}

impl RingSizes {
    fn new(
        plan: &PartitionPlan,
        head: &Head,
        levels: &[LevelRunner],
        num_inputs: usize,
        num_outputs: usize,
    ) -> Self {
        // The input rings hold what the audio thread's readers need, and no more, so that the
        // rings it writes every call stay in its caches: the levels' windows, and the head's
        // behind a piece of up to a quantum written before it runs. The workers and the GPU
        // read the input history; where nothing else runs (offload), there are no rings.
        let history = levels
            .iter()
            .map(|level| level.history(plan.quantum))
            .fold(head.history() + plan.quantum, usize::max);
        let rings_read = plan.head_taps > 0 || !levels.iter().all(LevelRunner::is_worker);
        // The output rings take the head's, the audio thread's levels' and the small worker
        // results; the big ones play from their slots ([`worker::player`]).
        let max_ahead = plan
            .levels
            .iter()
            .zip(levels)
            .filter(|(_, runner)| runner.adds_to_rings())
            .map(|(level, _)| plan.output_delay(level))
            .fold(head.max_ahead(), usize::max);
        let rings_added = plan.head_taps > 0 || levels.iter().any(LevelRunner::adds_to_rings);
        Self {
            history,
            num_input_rings: if rings_read { num_inputs } else { 0 },
            max_ahead,
            num_output_rings: if rings_added { num_outputs } else { 0 },
        }
    }
}

/// Why the levels of an engine with a GPU hub run where they do.
fn gpu_reason(hub: &longtail_gpu::Hub, levels: &[LevelRunner]) -> String {
    let workers = levels
        .iter()
        .filter(|l| matches!(l, LevelRunner::Worker(_)));
    let on_gpu = workers
        .clone()
        .filter(|l| matches!(l, LevelRunner::Worker(w) if w.on_gpu()))
        .count();
    format!(
        "GPU: {on_gpu} of {} worker levels on {} (levels under {GPU_MIN_PARTITION} \
         samples, or with slack under 4 x p99.9 round trip {:.0} us + one host \
         period, stay on the CPU)",
        workers.count(),
        hub.adapter(),
        hub.calibration().round_trip.p999_us
    )
}

/// The probe of a new engine, with the next engine id of the process.
fn new_probe(
    ir: &Ir,
    plan: &PartitionPlan,
    num_paths: usize,
    gpu: Option<&Arc<longtail_gpu::Hub>>,
    build_reason: String,
    levels: &[LevelRunner],
) -> BackendProbe {
    BackendProbe(Arc::new(ProbeInner {
        engine_id: NEXT_ENGINE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        thermal: std::sync::Mutex::new(None),
        load: std::sync::Mutex::new(None),
        num_paths,
        sample_rate: ir.sample_rate,
        adapter: gpu.map(|hub| hub.adapter().to_string()),
        hub: gpu.map(Arc::downgrade),
        engine_dropped: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        build_reason,
        levels: plan
            .levels
            .iter()
            .zip(levels)
            .map(|(level, runner)| ProbeLevel {
                partition_size: level.partition_size,
                num_partitions: level.num_partitions,
                slack_samples: plan.slack_samples(level),
                worker: runner.worker().map(WorkerLevel::probe),
                started_on_gpu: matches!(runner, LevelRunner::Worker(w) if w.started_on_gpu()),
            })
            .collect(),
    }))
}
