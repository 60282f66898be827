//! The convolution engine: the partition plan, the zero-latency head and the FFT levels.
//!
//! # Threads and allocation
//!
//! [`Engine::new`] runs off the audio thread: it plans the partitions, transforms the IR into
//! per-level spectra, allocates every ring and scratch buffer at its final size and, with
//! [`Executor::Workers`], starts one worker thread per level after the first; with
//! [`Executor::Gpu`], the levels the GPU can take go to the process's GPU hub instead, each
//! with its worker thread as a CPU standby.
//! [`Engine::process`] and [`Engine::reset`] run on the audio thread and never allocate, lock or
//! wait (offline mode waits for worker results by design). Level 0 and the head always run
//! inside `process()`; later levels run on their workers, which get the plan's `D - P` samples
//! of slack as their deadline, with the late policy of [`worker`]. With [`Executor::Inline`]
//! every level runs inside `process()` when its chunk completes (the reference executor).

//! # Signal flow
//!
//! Input samples go into one mirrored history ring per input channel ([`rings::InputRing`]).
//! Each output sample is the sum of the head (direct-form FIR over taps `[0, q)`, zero-latency
//! mode only) and whatever the levels have added for that time to the output channel's
//! accumulator ([`rings::OutputRing`]). Every `q` samples, each level whose partition size divides
//! the current time runs ([`upols::UpolsLevel::run`], or its chunk goes to its worker) and adds
//! its block `D + latency` samples after its input; worker results are added when they fall due.
//!
//! In zero-latency mode, level 0 also holds the spectrum of the head taps (the *fused head*,
//! [`upols::UpolsLevel::run_fused`]). A quantum that one call delivers whole is then computed
//! at its end in the frequency domain, head included, and written straight to the output; a
//! quantum that arrives in pieces plays level 0's prepared sum through the rings and runs the
//! direct-form head on each piece. Both give the same signal, so calls of any size may mix.
//!
//! # Paths
//!
//! A path is one input channel convolved into one output channel. The IR layout and the host's
//! channel counts decide the paths (see [`route`]): a mono input feeds both stereo sides of the
//! IR, a mono output receives the average of both sides, and IR channels that land on the same
//! (input, output) pair are summed before transformation.

pub mod direct;
pub mod plan;
pub mod rings;
pub mod upols;
pub mod worker;

use realfft::RealFftPlanner;
use thiserror::Error;

use crate::ir::Ir;
use direct::DirectHead;
pub use plan::{LatencyMode, PartitionPlan, PlanLimits};
use rings::{InputRing, OutputRing};
use upols::UpolsLevel;
use worker::{GpuHome, WorkerLevel};

/// Most input or output channels the engine handles.
pub const MAX_CHANNELS: usize = 2;

/// One input channel convolved into one output channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// Input channel index.
    pub input_idx: usize,
    /// Output channel index.
    pub output_idx: usize,
}

/// What an engine is built for besides its IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Largest number of samples one `process()` call may carry.
    pub max_block_size: usize,
    /// Input channels (1 or 2).
    pub num_inputs: usize,
    /// Output channels (1 or 2).
    pub num_outputs: usize,
    /// Zero latency (head FIR) or low CPU (one quantum of latency).
    pub latency_mode: LatencyMode,
    /// Limits from the executors.
    pub limits: PlanLimits,
    /// Where levels after the first run.
    pub executor: Executor,
}

/// Where the levels after the first one run. Level 0 and the head always run on the audio
/// thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Executor {
    /// Inside `process()`, when their chunk completes (no threads; spikes at big partitions).
    Inline,
    /// One worker thread per level, with the late policy of [`worker`].
    Workers,
    /// Worker threads, and the levels the GPU can take on the process's GPU hub, each with its
    /// worker thread as a warm CPU standby (see [`worker`], "On the GPU").
    Gpu(GpuPolicy),
}

/// When the GPU takes levels ([`Executor::Gpu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuPolicy {
    /// Only when it pays: a real GPU (not a CPU adapter such as lavapipe) that opened and
    /// calibrated, and an engine with at least [`AUTO_MIN_WORK`] path-samples of IR.
    Auto,
    /// Every level of at least [`GPU_MIN_PARTITION`] samples on the GPU whenever one can be
    /// opened, whatever the calibration says; `allow_cpu_adapter` accepts lavapipe (tests, or
    /// `LONGTAIL_GPU_ALLOW_CPU=1`). Levels still fall back to the CPU when it fails or is late.
    Forced {
        /// Accept a CPU adapter.
        allow_cpu_adapter: bool,
    },
}

/// Smallest partition the GPU takes: below it, dispatch and transfer overhead outweigh the
/// FFT work (the DESIGN's GPU threshold; the calibration decides the slack side).
pub const GPU_MIN_PARTITION: usize = 1024;
/// [`GpuPolicy::Auto`] uses the GPU from this many path-samples of IR (paths times IR
/// length): a true-stereo 8 s IR at 48 kHz; a single stereo 10 s reverb stays on the CPU.
pub const AUTO_MIN_WORK: usize = 1_500_000;

/// Where an engine's worker levels run, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendReport {
    /// Worker levels on the GPU now.
    pub gpu_levels: usize,
    /// Worker levels on CPU threads now.
    pub cpu_levels: usize,
    /// Times levels went back to the GPU after leaving it (see [`worker`], "Moving back").
    pub gpu_returns: u64,
    /// The GPU adapter, when one was opened for this engine.
    pub adapter: Option<String>,
    /// Why, in one line (e.g. "CPU: the Backend parameter", "GPU: 3 of 4 levels on ...").
    pub reason: String,
}

static NEXT_ENGINE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Where a level of the plan runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
    /// Level 0 (with the head), or every level with the inline executor.
    AudioThread,
    /// A worker thread.
    CpuWorker,
    /// The GPU hub (its worker thread the standby).
    Gpu,
}

/// One level as a [`BackendProbe`] sees it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelStatus {
    pub partition_size: usize,
    pub num_partitions: usize,
    /// Samples between the level's chunk completing and its result being due.
    pub slack_samples: usize,
    pub runs_on: RunsOn,
    pub late_results: u64,
    pub dropped_chunks: u64,
    /// Why it left the GPU, when it did and has not gone back.
    pub left_gpu: Option<String>,
}

/// What other threads may see of an engine: where each level runs now, why, and the GPU's
/// round trips. Reads atomics and the levels' notes; keeps the engine's shared memory (and its
/// GPU hub) alive, not its threads. Cheap to clone.
#[derive(Clone)]
pub struct BackendProbe(std::sync::Arc<ProbeInner>);

struct ProbeInner {
    engine_id: u64,
    /// The thermal policy's last decision for this engine ([`crate::governor`]).
    thermal: std::sync::Mutex<Option<crate::thermal::Decision>>,
    adapter: Option<String>,
    /// Weak: a probe kept after its engine is gone holds no device.
    hub: Option<std::sync::Weak<longtail_gpu::Hub>>,
    build_reason: String,
    levels: Vec<ProbeLevel>,
    /// Set when the engine is dropped: the governor stops watching it.
    engine_dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

struct ProbeLevel {
    partition_size: usize,
    num_partitions: usize,
    slack_samples: usize,
    worker: Option<worker::LevelProbe>,
    /// Placed on the GPU when the engine was built.
    started_on_gpu: bool,
}

impl std::fmt::Debug for BackendProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendProbe")
            .field("engine_id", &self.0.engine_id)
            .field("report", &self.report())
            .finish()
    }
}

impl BackendProbe {
    /// The engine's [`Engine::id`].
    pub fn engine_id(&self) -> u64 {
        self.0.engine_id
    }

    /// Every level of the plan, level 0 first.
    pub fn levels(&self) -> Vec<LevelStatus> {
        self.0
            .levels
            .iter()
            .map(|level| {
                let (runs_on, late_results, dropped_chunks, left_gpu) = match &level.worker {
                    Some(worker) => {
                        let (late, dropped) = worker.lates();
                        (
                            if worker.on_gpu() {
                                RunsOn::Gpu
                            } else {
                                RunsOn::CpuWorker
                            },
                            late,
                            dropped,
                            worker.gpu_exit(),
                        )
                    }
                    None => (RunsOn::AudioThread, 0, 0, None),
                };
                LevelStatus {
                    partition_size: level.partition_size,
                    num_partitions: level.num_partitions,
                    slack_samples: level.slack_samples,
                    runs_on,
                    late_results,
                    dropped_chunks,
                    left_gpu,
                }
            })
            .collect()
    }

    /// Where the worker levels run now and why. A level that left the GPU says why.
    pub fn report(&self) -> BackendReport {
        let mut report = BackendReport {
            adapter: self.0.adapter.clone(),
            reason: self.0.build_reason.clone(),
            ..BackendReport::default()
        };
        for level in &self.0.levels {
            let Some(worker) = &level.worker else {
                continue;
            };
            report.gpu_returns += worker.gpu_returns();
            if worker.on_gpu() {
                report.gpu_levels += 1;
            } else {
                report.cpu_levels += 1;
                if let Some(exit) = worker.gpu_exit() {
                    report.reason = format!("CPU: left the GPU: {exit}");
                }
            }
        }
        if report.gpu_levels > 0 && !self.has_gpu_levels() {
            report.reason = format!(
                "GPU: {} of {} worker levels sent there by the thermal policy (the CPU is hot)",
                report.gpu_levels,
                report.gpu_levels + report.cpu_levels
            );
        }
        report
    }

    /// The GPU hub's counters and round trips, when the engine uses it.
    pub fn gpu_stats(&self) -> Option<longtail_gpu::HubStats> {
        self.0.hub.as_ref()?.upgrade().map(|hub| hub.stats())
    }

    /// Whether levels were placed on the GPU when the engine was built (they may have left).
    pub fn has_gpu_levels(&self) -> bool {
        self.0.levels.iter().any(|l| l.started_on_gpu)
    }

    /// Whether some level has a way to the GPU (it started there, or the thermal policy may
    /// send it there).
    pub fn can_use_gpu(&self) -> bool {
        self.0.levels.iter().any(|l| {
            l.worker
                .as_ref()
                .is_some_and(worker::LevelProbe::has_gpu_home)
        })
    }

    /// Whether a GPU could serve this engine: its hub still serves, or, with none, a usable
    /// adapter exists (looked up once per process).
    pub fn gpu_available(&self) -> bool {
        static ADAPTER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        match &self.0.hub {
            Some(hub) => hub.upgrade().is_some_and(|hub| hub.broken().is_none()),
            None => *ADAPTER.get_or_init(|| {
                let allow_cpu = longtail_gpu::OpenOptions::from_env().allow_cpu_adapter;
                longtail_gpu::list_adapters()
                    .iter()
                    .any(|a| allow_cpu || a.kind != longtail_gpu::AdapterKind::Cpu)
            }),
        }
    }

    /// The thermal policy's lever. [`Placement::Cpu`](crate::thermal::Placement): every level
    /// on the CPU (those on the GPU move, as after a fault). `Gpu`: levels placed on the GPU
    /// go back; an engine Auto kept on the CPU sends its big levels to the GPU. Levels Auto
    /// kept off the GPU of an engine that uses it stay on the CPU either way.
    pub fn place(&self, placement: crate::thermal::Placement) {
        let to_cpu = placement == crate::thermal::Placement::Cpu;
        let engine_on_gpu = self.has_gpu_levels();
        for level in &self.0.levels {
            if let Some(worker) = &level.worker {
                if level.started_on_gpu {
                    worker.hold_gpu(to_cpu);
                } else if worker.has_gpu_home() {
                    worker.hold_gpu(to_cpu || engine_on_gpu);
                }
            }
        }
    }

    /// The thermal policy's last decision for this engine, when it watches it.
    pub fn thermal_decision(&self) -> Option<crate::thermal::Decision> {
        *self.0.thermal.lock().ok()?
    }

    pub(crate) fn set_thermal_decision(&self, decision: crate::thermal::Decision) {
        if let Ok(mut thermal) = self.0.thermal.lock() {
            *thermal = Some(decision);
        }
    }

    pub(crate) fn downgrade(&self) -> WeakProbe {
        WeakProbe {
            inner: std::sync::Arc::downgrade(&self.0),
            engine_dropped: std::sync::Arc::clone(&self.0.engine_dropped),
        }
    }
}

/// A [`BackendProbe`] that does not keep the engine's memory alive.
pub(crate) struct WeakProbe {
    inner: std::sync::Weak<ProbeInner>,
    engine_dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl WeakProbe {
    pub(crate) fn upgrade(&self) -> Option<BackendProbe> {
        self.inner.upgrade().map(BackendProbe)
    }

    /// Whether the engine still lives (its probe may outlive it, in the editor's monitor).
    pub(crate) fn is_alive(&self) -> bool {
        !self
            .engine_dropped
            .load(std::sync::atomic::Ordering::Acquire)
    }
}

/// One level and where it runs.
enum LevelRunner {
    Inline(Box<UpolsLevel>),
    Worker(WorkerLevel),
}

impl LevelRunner {
    fn partition_size(&self) -> usize {
        match self {
            Self::Inline(level) => level.partition_size(),
            Self::Worker(level) => level.partition_size(),
        }
    }
}

/// Lateness counters of an engine's worker levels, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LateStats {
    /// Results that were not complete when due.
    pub late_results: u64,
    /// Chunks that could not be handed to a worker.
    pub dropped_chunks: u64,
    /// Whether any level has had several lates in a row.
    pub degraded: bool,
}

/// Why an engine could not be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("{num_inputs} in / {num_outputs} out is not supported; use mono or stereo")]
    UnsupportedChannels {
        num_inputs: usize,
        num_outputs: usize,
    },
    #[error("the IR is empty")]
    EmptyIr,
    #[error("the maximum block size must be at least 1")]
    ZeroBlockSize,
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
}

/// A stagger phase for the `instance_idx`-th engine of a process: spread over the largest
/// partition size by the golden ratio, so any number of instances stays evenly spread.
pub fn stagger_phase(instance_idx: u64, max_partition_size: usize) -> u64 {
    // 0.618... in 32-bit fixed point.
    const GOLDEN: u64 = 2_654_435_769;
    let fraction = instance_idx.wrapping_mul(GOLDEN) & 0xFFFF_FFFF;
    (fraction * max_partition_size as u64) >> 32
}

/// The paths for `ir` with `num_inputs` inputs and `num_outputs` outputs, each with its summed
/// taps. Allocates.
pub fn route(ir: &Ir, num_inputs: usize, num_outputs: usize) -> Vec<(Path, Vec<f32>)> {
    let mut paths: Vec<(Path, Vec<f32>)> = Vec::new();
    for (&(source, destination), taps) in ir.layout.channel_routes().iter().zip(&ir.channels) {
        // Mono IRs act on both sides, each input to its own output.
        let sides: &[(usize, usize)] = if ir.layout == crate::ir::IrLayout::Mono {
            &[(0, 0), (1, 1)]
        } else {
            &[(source, destination)]
        };
        for &(source, destination) in sides {
            let path = Path {
                input_idx: source.min(num_inputs - 1),
                output_idx: destination.min(num_outputs - 1),
            };
            // A mono output is the average of the two sides.
            let weight = if num_outputs == 1 { 0.5 } else { 1.0 };
            match paths.iter_mut().find(|(p, _)| *p == path) {
                Some((_, summed)) => {
                    summed
                        .iter_mut()
                        .zip(taps)
                        .for_each(|(s, t)| *s += weight * t);
                }
                None => paths.push((path, taps.iter().map(|t| weight * t).collect())),
            }
        }
    }
    paths
}

/// Opens the GPU hub for `policy` and an engine of `work` path-samples of IR (with the options
/// it was opened with), or says why the engine stays on the CPU: Auto and a small engine, no
/// adapter, a CPU adapter that was not allowed, or (Auto) a GPU whose calibrated cost per
/// path-partition is not below the CPU's. Opening and calibrating take a moment: call off the
/// audio thread.
pub fn open_gpu(
    policy: GpuPolicy,
    work: usize,
) -> Result<(std::sync::Arc<longtail_gpu::Hub>, longtail_gpu::OpenOptions), String> {
    let allow_cpu_adapter = match policy {
        GpuPolicy::Auto if work < AUTO_MIN_WORK => {
            return Err(format!(
                "CPU: Auto keeps a small engine on the CPU ({work} path-samples of IR, the GPU \
                 pays from {AUTO_MIN_WORK})"
            ));
        }
        GpuPolicy::Auto => false,
        GpuPolicy::Forced { allow_cpu_adapter } => {
            allow_cpu_adapter || longtail_gpu::OpenOptions::from_env().allow_cpu_adapter
        }
    };
    let options = longtail_gpu::OpenOptions { allow_cpu_adapter };
    let hub = longtail_gpu::shared(options).map_err(|err| format!("CPU: {err}"))?;
    if !allow_cpu_adapter && hub.adapter().kind == longtail_gpu::AdapterKind::Cpu {
        return Err(format!(
            "CPU: {} is a CPU adapter, slower than our own CPU code",
            hub.adapter()
        ));
    }
    if policy == GpuPolicy::Auto {
        let gpu_ns = hub.calibration().partition_cost_ns;
        let cpu_ns = cpu_partition_cost_ns();
        if gpu_ns >= cpu_ns {
            return Err(format!(
                "CPU: the GPU costs {gpu_ns:.0} ns per path-partition of {}, the CPU {cpu_ns:.0}",
                hub.calibration().partition_size
            ));
        }
    }
    Ok((hub, options))
}

/// Whether the GPU can take a level: big enough partitions, and slack for four times the
/// round trip's 99.9th percentile (calibrated, or recent) plus one host period.
pub fn gpu_can_take(
    round_trip: &longtail_gpu::RoundTrip,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    partition_size >= GPU_MIN_PARTITION
        && slack_samples as f64
            >= 4.0 * round_trip_samples(round_trip, sample_rate) + max_block_size as f64
}

/// The round trip's 99.9th percentile, in samples at `sample_rate`.
fn round_trip_samples(round_trip: &longtail_gpu::RoundTrip, sample_rate: u32) -> f64 {
    round_trip.p999_us * 1e-6 * f64::from(sample_rate.max(1))
}

/// Whether results would come back within the slack (the rule for levels placed without the
/// four-fold margin: forced ones, and those the thermal policy sends).
fn results_on_time(
    round_trip: &longtail_gpu::RoundTrip,
    slack_samples: usize,
    sample_rate: u32,
) -> bool {
    round_trip_samples(round_trip, sample_rate) < slack_samples as f64
}

/// Whether a level goes on the GPU when the engine is built: Forced takes every level of at
/// least [`GPU_MIN_PARTITION`] samples, Auto only where the calibrated round trip fits
/// ([`gpu_can_take`]).
pub fn level_goes_to_gpu(
    policy: GpuPolicy,
    calibration: &longtail_gpu::Calibration,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    match policy {
        GpuPolicy::Forced { .. } => partition_size >= GPU_MIN_PARTITION,
        GpuPolicy::Auto => gpu_can_take(
            &calibration.round_trip,
            partition_size,
            slack_samples,
            max_block_size,
            sample_rate,
        ),
    }
}

/// Whether a level that left the GPU may go back to a hub with these recent round trips:
/// Auto asks what it asked when it placed the level ([`gpu_can_take`]); Forced placed it
/// without asking, and asks only that results would come back within the slack.
fn gpu_fits(
    policy: GpuPolicy,
    round_trip: &longtail_gpu::RoundTrip,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    match policy {
        GpuPolicy::Auto => gpu_can_take(
            round_trip,
            partition_size,
            slack_samples,
            max_block_size,
            sample_rate,
        ),
        GpuPolicy::Forced { .. } => results_on_time(round_trip, slack_samples, sample_rate),
    }
}

/// The CPU's cost of one path-partition of the GPU calibration's partition size (4096): a
/// true-stereo level of 16 partitions run through [`UpolsLevel::compute`], its time per job
/// divided by its 64 path-partitions (the MAC plus a share of the transforms). Measured once
/// per process (a few milliseconds), the median of 9 jobs after 3 to warm up.
pub fn cpu_partition_cost_ns() -> f64 {
    static COST: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *COST.get_or_init(|| {
        const P: usize = 4096;
        const N: usize = 16;
        let paths: Vec<Path> = (0..2)
            .flat_map(|input_idx| {
                (0..2).map(move |output_idx| Path {
                    input_idx,
                    output_idx,
                })
            })
            .collect();
        let mut rng = crate::rng::Rng::new(7);
        let taps: Vec<Vec<f32>> = paths
            .iter()
            .map(|_| (0..P * N).map(|_| 0.5 * rng.bipolar()).collect())
            .collect();
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let mut level = UpolsLevel::new(
            &mut RealFftPlanner::new(),
            upols::LevelShape {
                partition_size: P,
                num_partitions: N,
                ir_offset: 0,
                output_delay: P,
                num_inputs: 2,
                num_outputs: 2,
            },
            &paths,
            &tap_refs,
        );
        let windows: Vec<Vec<f32>> = (0..2)
            .map(|_| (0..2 * P).map(|_| 0.5 * rng.bipolar()).collect())
            .collect();
        let mut results = vec![vec![0.0f32; P]; 2];
        let mut times = Vec::new();
        for job in 0..12 {
            let started = std::time::Instant::now();
            let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
            let mut result_refs: Vec<&mut [f32]> =
                results.iter_mut().map(Vec::as_mut_slice).collect();
            level.compute(&window_refs, &mut result_refs);
            if job >= 3 {
                times.push(started.elapsed().as_secs_f64());
            }
        }
        times.sort_by(f64::total_cmp);
        times[times.len() / 2] * 1e9 / (paths.len() * N) as f64
    })
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Its probe may live on (the editor's): the governor lets it go now.
        self.probe
            .0
            .engine_dropped
            .store(true, std::sync::atomic::Ordering::Release);
        crate::governor::release();
    }
}

/// A built convolution engine for one IR and one channel configuration.
pub struct Engine {
    plan: PartitionPlan,
    /// What other threads may see of this engine ([`Engine::backend_probe`]).
    probe: BackendProbe,
    /// The GPU hub this engine's GPU levels run on.
    gpu: Option<std::sync::Arc<longtail_gpu::Hub>>,
    config: EngineConfig,
    /// Number of paths after routing.
    num_paths: usize,
    head: DirectHead,
    levels: Vec<LevelRunner>,
    /// Offline rendering: wait for worker results instead of applying the late policy.
    offline: bool,
    /// Absolute time the engine starts from after `new()` and `reset()`: a multiple of the
    /// quantum that shifts where the big levels' chunk boundaries fall, so instances started
    /// together do not all run their big partitions on the same callback.
    stagger: u64,
    /// History per input channel, long enough for the largest level's `2P` window.
    input_rings: Vec<InputRing>,
    /// Pending level output per output channel.
    output_rings: Vec<OutputRing>,
    /// Samples processed since the last reset (the absolute time of the next input sample).
    time: u64,
}

impl Engine {
    /// Plans and builds the engine for `ir`. Allocates and runs FFTs over the whole IR: call off
    /// the audio thread.
    pub fn new(ir: &Ir, config: EngineConfig) -> Result<Self, EngineError> {
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
        if ir.is_empty() {
            return Err(EngineError::EmptyIr);
        }
        if max_block_size == 0 {
            return Err(EngineError::ZeroBlockSize);
        }

        let plan = PartitionPlan::new(ir.len(), max_block_size, latency_mode, limits);
        let routed = route(ir, num_inputs, num_outputs);
        let paths: Vec<Path> = routed.iter().map(|(path, _)| *path).collect();
        let path_taps: Vec<&[f32]> = routed.iter().map(|(_, taps)| taps.as_slice()).collect();

        let head = DirectHead::new(plan.head_taps, &paths, &path_taps);
        let (gpu, mut build_reason) = match executor {
            Executor::Gpu(policy) if plan.levels.len() > 1 => {
                match open_gpu(policy, paths.len() * ir.len()) {
                    Ok(opened) => (Some(opened), String::new()),
                    Err(reason) => (None, reason),
                }
            }
            Executor::Gpu(_) => (None, "CPU: the IR is too short for worker levels".into()),
            Executor::Workers => (None, "CPU: the Backend parameter".into()),
            Executor::Inline => (None, "CPU: inline executor".into()),
        };
        let mut planner = RealFftPlanner::new();
        let mut levels = Vec::with_capacity(plan.levels.len());
        for (level_idx, level) in plan.levels.iter().enumerate() {
            let upols = UpolsLevel::new(
                &mut planner,
                upols::LevelShape {
                    partition_size: level.partition_size,
                    num_partitions: level.num_partitions,
                    ir_offset: level.ir_offset,
                    output_delay: plan.output_delay(level),
                    num_inputs,
                    num_outputs,
                },
                &paths,
                &path_taps,
            );
            // Level 0 has no slack (its result is due as its chunk completes): it stays inline,
            // and in zero-latency mode it can take over the head's taps for whole quanta.
            let mut upols = upols;
            if level_idx == 0 && latency_mode == LatencyMode::Zero {
                upols.enable_fused_head(&mut planner, &path_taps);
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
            let runner = if level_idx > 0 && executor != Executor::Inline {
                let worker = match (on_gpu, executor) {
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
                        WorkerLevel::spawn_gpu(upols, num_inputs, level_idx, hub, home)
                    }
                    // Auto, a level the GPU could take but does not now: on the CPU, with a
                    // way to the GPU for when the thermal policy finds the CPU hot (it must
                    // then only be on time: the policy's hysteresis and the late failover
                    // guard the move).
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
                        WorkerLevel::spawn_held(upols, num_inputs, level_idx, home)
                    }
                    _ => WorkerLevel::spawn(upols, num_inputs, level_idx),
                }
                .map_err(|err| EngineError::Thread(err.to_string()))?;
                LevelRunner::Worker(worker)
            } else {
                LevelRunner::Inline(Box::new(upols))
            };
            levels.push(runner);
        }

        let history = (2 * plan.max_partition_size()).max(plan.quantum);
        let max_ahead = plan
            .levels
            .iter()
            .map(|level| plan.output_delay(level))
            .max()
            .unwrap_or(0);
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
                    worker: match runner {
                        LevelRunner::Worker(worker) => Some(worker.probe()),
                        LevelRunner::Inline(_) => None,
                    },
                    started_on_gpu: matches!(runner, LevelRunner::Worker(w) if w.started_on_gpu()),
                })
                .collect(),
        }));
        if executor == Executor::Gpu(GpuPolicy::Auto)
            && probe.can_use_gpu()
            && probe.gpu_available()
        {
            crate::governor::watch(&probe);
        }
        Ok(Self {
            probe,
            gpu,
            num_paths: paths.len(),
            head,
            levels,
            input_rings: (0..num_inputs).map(|_| InputRing::new(history)).collect(),
            output_rings: (0..num_outputs)
                .map(|_| OutputRing::new(max_ahead))
                .collect(),
            time: 0,
            offline: false,
            stagger: 0,
            plan,
            config,
        })
    }

    /// The partition plan this engine runs.
    pub fn plan(&self) -> &PartitionPlan {
        &self.plan
    }

    /// The configuration this engine was built for.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Number of paths (input-to-output convolutions) after routing.
    pub fn num_paths(&self) -> usize {
        self.num_paths
    }

    /// Latency to report to the host, in samples.
    pub fn latency_samples(&self) -> usize {
        self.plan.latency_samples()
    }

    /// Samples of output that follow the last non-silent input: IR length - 1 + latency.
    pub fn tail_samples(&self) -> usize {
        self.plan.ir_len - 1 + self.latency_samples()
    }

    /// Sets the phase of the big levels: the engine restarts its clock at `phase` rounded down
    /// to a multiple of the quantum (see [`stagger_phase`]), and resets. The output is the same
    /// signal; only the callbacks on which partitions complete move. Does not allocate.
    pub fn set_stagger(&mut self, phase: u64) {
        let quantum = self.plan.quantum as u64;
        self.stagger = phase - phase % quantum;
        self.reset();
    }

    /// Offline mode waits for worker results (deterministic bounces); real-time mode applies
    /// the late policy instead. Does not allocate.
    pub fn set_offline(&mut self, offline: bool) {
        self.offline = offline;
    }

    /// Lateness of the worker levels so far.
    pub fn late_stats(&self) -> LateStats {
        use std::sync::atomic::Ordering::Relaxed;
        let mut stats = LateStats::default();
        for level in &self.levels {
            if let LevelRunner::Worker(worker) = level {
                let counters = worker.stats();
                stats.late_results += counters.late_results.load(Relaxed);
                stats.dropped_chunks += counters.dropped_chunks.load(Relaxed);
                stats.degraded |= counters.degraded.load(Relaxed);
            }
        }
        stats
    }

    /// Counters per worker level: `(partition size, late results, dropped chunks, wakes)`.
    pub fn late_stats_per_level(&self) -> Vec<(usize, u64, u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        self.levels
            .iter()
            .filter_map(|level| match level {
                LevelRunner::Worker(worker) => Some((
                    worker.partition_size(),
                    worker.stats().late_results.load(Relaxed),
                    worker.stats().dropped_chunks.load(Relaxed),
                    worker.stats().wakes.load(Relaxed),
                )),
                LevelRunner::Inline(_) => None,
            })
            .collect()
    }

    /// Where the worker levels run now and why. A level that left the GPU says why.
    pub fn backend_report(&self) -> BackendReport {
        self.probe.report()
    }

    /// A handle other threads (the editor) may keep to see where this engine's levels run.
    pub fn backend_probe(&self) -> BackendProbe {
        self.probe.clone()
    }

    /// A number no other engine of this process has.
    pub fn id(&self) -> u64 {
        self.probe.engine_id()
    }

    /// The GPU hub's counters and round trips, when this engine uses it.
    pub fn gpu_stats(&self) -> Option<longtail_gpu::HubStats> {
        self.gpu.as_ref().map(|hub| hub.stats())
    }

    /// Test hook: levels that leave the GPU try to go back after `wait` instead of
    /// [`worker::GPU_RETRY_AFTER`].
    #[doc(hidden)]
    pub fn set_gpu_retry_after(&self, wait: std::time::Duration) {
        for level in &self.levels {
            if let LevelRunner::Worker(worker) = level {
                worker.set_gpu_retry_after(wait);
            }
        }
    }

    /// Test hook: the thermal policy watches this engine whatever its backend (it watches
    /// Auto engines with GPU levels by itself).
    #[doc(hidden)]
    pub fn watch_thermal(&self) {
        crate::governor::watch(&self.probe);
    }

    /// Test hook: the GPU hub this engine uses, for fault injection.
    #[doc(hidden)]
    pub fn gpu_hub(&self) -> Option<&std::sync::Arc<longtail_gpu::Hub>> {
        self.gpu.as_ref()
    }

    /// Time the worker threads have spent computing, in nanoseconds.
    pub fn worker_busy_ns(&self) -> u64 {
        self.sum_worker_stats(|stats| &stats.busy_ns)
    }

    /// Times the audio thread has woken a worker or the GPU hub in real-time mode.
    pub fn worker_wakes(&self) -> u64 {
        self.sum_worker_stats(|stats| &stats.wakes)
    }

    fn sum_worker_stats(
        &self,
        counter: impl Fn(&worker::LevelStats) -> &std::sync::atomic::AtomicU64,
    ) -> u64 {
        self.levels
            .iter()
            .map(|level| match level {
                LevelRunner::Worker(worker) => {
                    counter(worker.stats()).load(std::sync::atomic::Ordering::Relaxed)
                }
                LevelRunner::Inline(_) => 0,
            })
            .sum()
    }

    /// Number of worker threads this engine runs.
    pub fn num_workers(&self) -> usize {
        self.levels
            .iter()
            .filter(|level| matches!(level, LevelRunner::Worker(_)))
            .count()
    }

    /// Test hook: stalls (`true`) or releases every worker, as a fault-injection point.
    #[doc(hidden)]
    pub fn set_workers_stalled(&self, stalled: bool) {
        for level in &self.levels {
            if let LevelRunner::Worker(worker) = level {
                worker.set_stalled(stalled);
            }
        }
    }

    /// Convolves one host block. `inputs` has `num_inputs` slices and `outputs` `num_outputs`
    /// slices, all of the same length, at most `max_block_size`; the outputs are overwritten with
    /// the wet signal. Any length works, and it may change from call to call. Does not allocate,
    /// lock or wait.
    pub fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let num_frames = outputs.first().map_or(0, |o| o.len());
        debug_assert!(
            inputs.len() == self.config.num_inputs && outputs.len() == self.config.num_outputs
        );
        let quantum = self.plan.quantum;

        let mut done = 0;
        while done < num_frames {
            // Work in sub-blocks that end on quantum boundaries, where levels may run.
            let to_boundary = quantum - (self.time % quantum as u64) as usize;
            let len = to_boundary.min(num_frames - done);
            let range = done..done + len;

            // Level 0 with the fused head: a quantum that this call delivers whole is computed
            // in the frequency domain, head taps included; one that arrives in pieces plays
            // level 0's prepared sum through the rings and the head sample by sample.
            let fused = match self.levels.first_mut() {
                Some(LevelRunner::Inline(level)) if level.has_fused_head() => Some(level),
                _ => None,
            };
            let at_quantum_start = to_boundary == quantum;
            let whole_quantum = fused.is_some() && at_quantum_start && len == quantum;
            if let Some(level) = fused
                && at_quantum_start
                && !whole_quantum
            {
                level.flush_pending(self.time, &mut self.output_rings);
            }

            for (ring, input) in self.input_rings.iter_mut().zip(inputs) {
                for (offset, &sample) in input[range.clone()].iter().enumerate() {
                    ring.write(self.time + offset as u64, sample);
                }
            }
            let mut sub_outputs: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (output_idx, ((sub, output), ring)) in sub_outputs
                .iter_mut()
                .zip(outputs.iter_mut())
                .zip(&mut self.output_rings)
                .enumerate()
            {
                let output = &mut output[range.clone()];
                output.fill(0.0);
                if !whole_quantum {
                    self.head
                        .add_output(output_idx, self.time, &self.input_rings, output);
                }
                ring.drain_add(self.time, output);
                *sub = output;
            }

            self.time += len as u64;
            done += len;
            if whole_quantum && let Some(LevelRunner::Inline(level)) = self.levels.first_mut() {
                let num_outputs = self.config.num_outputs;
                level.run_fused(
                    self.time,
                    &self.input_rings,
                    &mut sub_outputs[..num_outputs],
                );
            }
            if self.time.is_multiple_of(quantum as u64) {
                // Every level whose chunk just completed contributes to future output.
                for level in &mut self.levels {
                    let chunk_done = self.time.is_multiple_of(level.partition_size() as u64);
                    match level {
                        LevelRunner::Inline(level) if level.has_fused_head() => {
                            // A whole quantum already advanced the level in `run_fused`.
                            if !whole_quantum {
                                level.advance(self.time, &self.input_rings);
                            }
                        }
                        LevelRunner::Inline(level) if chunk_done => {
                            level.run(self.time, &self.input_rings, &mut self.output_rings);
                        }
                        LevelRunner::Inline(_) => {}
                        LevelRunner::Worker(worker) => {
                            // Results due before the next boundary must be in the rings now.
                            let horizon = self.time + quantum as u64;
                            let rings = &mut self.output_rings;
                            worker.collect(self.time, horizon, rings, self.offline);
                            let inputs = &self.input_rings;
                            worker.feed(self.time, quantum, inputs, rings, self.offline);
                            if chunk_done {
                                worker.submit(self.time, self.offline);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Forgets all history and pending output; the IR stays. Does not allocate.
    pub fn reset(&mut self) {
        self.input_rings.iter_mut().for_each(InputRing::clear);
        self.output_rings.iter_mut().for_each(OutputRing::clear);
        for level in &mut self.levels {
            match level {
                LevelRunner::Inline(level) => level.reset(),
                LevelRunner::Worker(worker) => worker.reset(),
            }
        }
        self.time = self.stagger;
    }

    /// Test hook: fills every scratch buffer with `value`. Results must not change.
    #[doc(hidden)]
    pub fn poison_scratch(&mut self, value: f32) {
        for level in &mut self.levels {
            if let LevelRunner::Inline(level) = level {
                level.poison_scratch(value);
            }
        }
    }
}
