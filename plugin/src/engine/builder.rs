//! Building an engine ([`Engine::new`], [`Engine::new_mapped`]): off the audio thread, it
//! routes the IR, plans the partitions, transforms the IR into each level's spectra, opens the
//! GPU where the executor may use it, puts each level where it runs, sizes the rings and
//! builds the probe the governor and the editor watch.

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
use super::plan::{CostWeights, LatencyMode, PartitionPlan};
use super::realtime::pace::HostPace;
use super::routing::{self, MAX_CHANNELS, Path, route};
use super::runner::ahead::AheadLevel;
use super::runner::spread::SpreadLevel;
use super::runner::{self, LevelRunner};
use super::upols::{self, UpolsLevel};
use super::worker::{GpuHome, WorkerLevel};
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
        let EngineConfig {
            max_block_size,
            num_inputs,
            num_outputs,
            latency_mode,
            limits,
            executor,
        } = config;
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
        let (gpu, mut build_reason) = match executor {
            Executor::Gpu(policy) if plan.levels.len() > 1 || plan.offloads() => {
                let workload = gpu_workload(&plan, num_inputs, num_outputs, unique);
                match open_gpu(policy, paths.len() * ir.len(), workload) {
                    Ok(opened) => (Some(opened), String::new()),
                    Err(reason) => (None, reason),
                }
            }
            Executor::Gpu(_) => (None, "CPU: the IR is too short for worker levels".into()),
            Executor::Workers => (None, "CPU: the Backend parameter".into()),
            Executor::Inline => (None, "CPU: inline executor".into()),
        };
        let worker_inputs = runner::worker_inputs(&plan, num_inputs, executor == Executor::Inline);
        let mut levels = Vec::with_capacity(plan.levels.len());
        for (level_idx, level) in plan.levels.iter().enumerate() {
            let upols = UpolsLevel::new(
                &mut planner,
                upols::LevelShape {
                    partition_size: level.partition_size,
                    span: level.span,
                    num_partitions: level.num_partitions,
                    ir_offset: level.ir_offset,
                    output_delay: plan.output_delay(level),
                    num_inputs,
                    num_outputs,
                },
                &paths,
                &path_taps,
                &shared,
            );
            // Level 0 has no slack (its result is due as its chunk completes, but in the
            // offload mode): it stays inline, and in zero-latency mode it can take over the
            // head's taps for whole quanta.
            let mut upols = upols;
            if level_idx == 0 && latency_mode == LatencyMode::Zero {
                upols.enable_fused_head(&path_taps);
            }
            let slack = plan.output_delay(level) - level.partition_size;
            // Forced: every level big enough; Auto: only where the measured round trip fits.
            let on_gpu = gpu.as_ref().filter(|(hub, _)| match executor {
                Executor::Gpu(policy) => level_goes_to_gpu(
                    policy,
                    &hub.calibration(),
                    level.partition_size,
                    slack,
                    max_block_size,
                    ir.sample_rate,
                ),
                _ => false,
            });
            // Level 0 runs whole as its chunk completes; a later level due then, summed ahead.
            let inline = level_idx == 0 && plan.on_audio_thread(0);
            let runner = if inline || executor == Executor::Inline {
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
                let inputs = worker_inputs.as_ref().expect("made for every worker level");
                let mut worker = match (on_gpu, executor) {
                    (Some((hub, options)), Executor::Gpu(policy)) => {
                        let partition_size = level.partition_size;
                        let rate = ir.sample_rate;
                        let home = GpuHome {
                            options: *options,
                            fits: std::sync::Arc::new(move |round_trip| {
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
                    (None, Executor::Gpu(GpuPolicy::Auto))
                        if level.partition_size >= GPU_MIN_PARTITION =>
                    {
                        let rate = ir.sample_rate;
                        let home = GpuHome {
                            options: longtail_gpu::OpenOptions::from_env(),
                            fits: std::sync::Arc::new(move |round_trip| {
                                results_on_time(round_trip, slack, rate)
                            }),
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
                LevelRunner::Worker(worker)
            };
            levels.push(runner);
        }

        // The input rings hold what the audio thread's readers need, and no more, so that the
        // rings it writes every call stay in its caches: the levels' windows, and the head's
        // behind a piece of up to a quantum written before it runs. The workers and the GPU
        // read the input history; where nothing else runs (offload), there are no rings.
        let history = levels
            .iter()
            .map(|level| level.history(plan.quantum))
            .fold(head.history() + plan.quantum, usize::max);
        let rings_read = plan.head_taps > 0 || !levels.iter().all(LevelRunner::is_worker);
        let num_rings = if rings_read { num_inputs } else { 0 };
        // The output rings take the head's, the audio thread's levels' and the small worker
        // results; the big ones play from their slots ([`worker::player`]).
        let max_ahead = plan
            .levels
            .iter()
            .zip(&levels)
            .filter(|(_, runner)| runner.adds_to_rings())
            .map(|(level, _)| plan.output_delay(level))
            .fold(head.max_ahead(), usize::max);
        let rings_added = plan.head_taps > 0 || levels.iter().any(LevelRunner::adds_to_rings);
        let num_output_rings = if rings_added { num_outputs } else { 0 };
        let gpu = gpu.map(|(hub, _)| hub);
        if let Some(hub) = &gpu {
            let workers = levels
                .iter()
                .filter(|l| matches!(l, LevelRunner::Worker(_)));
            let on_gpu = workers
                .clone()
                .filter(|l| matches!(l, LevelRunner::Worker(w) if w.on_gpu()))
                .count();
            build_reason = format!(
                "GPU: {on_gpu} of {} worker levels on {} (levels under {GPU_MIN_PARTITION} \
                 samples, or with slack under 4 x p99.9 round trip {:.0} us + one host \
                 period, stay on the CPU)",
                workers.count(),
                hub.adapter(),
                hub.calibration().round_trip.p999_us
            );
        }
        let probe = BackendProbe(std::sync::Arc::new(ProbeInner {
            engine_id: NEXT_ENGINE_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            thermal: std::sync::Mutex::new(None),
            load: std::sync::Mutex::new(None),
            num_paths: paths.len(),
            sample_rate: ir.sample_rate,
            adapter: gpu.as_ref().map(|hub| hub.adapter().to_string()),
            hub: gpu.as_ref().map(std::sync::Arc::downgrade),
            engine_dropped: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
            build_reason,
            levels: plan
                .levels
                .iter()
                .zip(&levels)
                .map(|(level, runner)| ProbeLevel {
                    partition_size: level.partition_size,
                    num_partitions: level.num_partitions,
                    slack_samples: plan.slack_samples(level),
                    worker: runner.worker().map(WorkerLevel::probe),
                    started_on_gpu: matches!(runner, LevelRunner::Worker(w) if w.started_on_gpu()),
                })
                .collect(),
        }));
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
            input_rings: (0..num_rings).map(|_| InputRing::new(history)).collect(),
            worker_inputs,
            output_rings: (0..num_output_rings)
                .map(|_| OutputRing::new(max_ahead))
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
