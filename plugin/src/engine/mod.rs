//! The convolution engine: the partition plan, the zero-latency head and the FFT levels.
//!
//! # Threads and allocation
//!
//! [`Engine::new`] runs off the audio thread: it plans the partitions, transforms the IR into
//! per-level spectra, allocates every ring and scratch buffer at its final size (and has the OS
//! back the pages of those the audio thread writes, [`memory::pages::PageBuf::prefault`], so that
//! its first calls take no page faults) and, with [`Executor::Workers`], starts one worker thread
//! per level after the first; with [`Executor::Gpu`], the levels the GPU can take go to the
//! process's GPU hub instead, each with its worker thread as a CPU standby.
//! [`Engine::process`] and [`Engine::reset`] run on the audio thread and never allocate or lock.
//! They wait for a worker result only where the host leaves time: offline mode waits for every
//! result, and real-time mode waits, within a bound, while the host runs ahead of real time
//! ([`pace`]); at real-time pace they never wait. Level 0 and the head run inside
//! `process()` (but in the offload mode, [`LatencyMode::Offload`], where level 0 has a fixed
//! latency's slack and goes to a worker like the rest), and so do the later levels whose
//! `D - P` samples of slack are too few for a worker ([`PlanLimits::min_worker_slack`]), or
//! (the CPU backend) whose job would cost a worker more than the level ([`plan`]): each
//! period of such a level is spread over the quanta of its slack ([`runner::spread`]), a steady
//! share per call. From quanta of 1024 samples (the CPU backend), a later level may also start at a
//! delay of one partition, its result due in the call in which its chunk completes
//! ([`PartitionPlan::runs_ahead`]): the level before it covers fewer partitions and its
//! period hands no job over. It runs summed ahead ([`runner::ahead`]): that call transforms the
//! chunk and adds partition 0, the calls of the period before summed the other partitions, and its
//! spectra are bounded against the calls' time ([`plan::AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE`]). The others run on their workers, which
//! get the slack as their deadline, with the late policy of [`worker::late_policy`]. With
//! [`Executor::Inline`] every level runs inside `process()` whole when its chunk completes
//! (the reference executor).

//! # Signal flow
//!
//! Input samples go into one mirrored history ring per input channel
//! ([`memory::rings::InputRing`]), as long as the head and the levels on the audio thread need,
//! and, where levels run on workers, into the [`worker::InputHistory`] they read in place. Each
//! output sample is the sum of the head (taps `[0, q)`, zero-latency mode only; see [`head`]),
//! whatever the audio thread's levels have added and the worker levels' small results for that time
//! to the output channel's accumulator ([`memory::rings::OutputRing`]), and the worker levels' big
//! results for that time, in level order, read straight from their slots ([`worker::player`]).
//! Every `q` samples, each level whose partition size divides the current time runs
//! ([`upols::UpolsLevel::run`], or its chunk goes to its worker) and adds its block `D + latency`
//! samples after its input; a worker result is taken at the boundary before its first sample.
//!
//! In zero-latency mode, level 0 also holds the spectrum of the head taps (the *fused head*,
//! [`upols::UpolsLevel::run_fused`]). A quantum that one call delivers whole is then computed
//! at its end in the frequency domain, head included, and written straight to the output; a
//! quantum that arrives in pieces plays level 0's prepared sum through the rings and runs the
//! head on each piece: a direct-form FIR over its first 64 taps, and a small FFT level for the
//! rest, run at each 64-sample boundary ([`head`]), so a piecewise quantum costs a few times a
//! whole one instead of `q` taps per sample and path. Both give the same signal, so calls of
//! any size may mix.
//!
//! # Paths and matrices
//!
//! A path is one input channel convolved into one output channel; [`routing`] decides them
//! from the IR and the bus by the rules of [`crate::ir::mapping`] (a stereo IR on 7.1.4 by
//! sides, a file of one channel per speaker, a whole matrix). An engine takes 1 to [`MAX_CHANNELS`] (64)
//! inputs and outputs: a stereo reverb has 2 to 4 paths, an N x M matrix IR
//! ([`crate::ir::IrLayout::Matrix`]) up to N * M, dense or sparse (a silent IR channel is no
//! path). Every level transforms each input once per period (N forward FFTs), accumulates per
//! output and bin the products of its paths' spectra with their inputs' (one multiply-add per
//! present path and partition: the matrix-vector product, bin by bin) and transforms each
//! output back once (M inverse FFTs). Paths with identical taps share one spectrum. The head,
//! the rings, the workers and the GPU levels are sized from N, M and the paths when the engine
//! is built; the audio path holds at most one stack array of [`MAX_CHANNELS`] slice references
//! per call, so nothing there is sized for two channels.
//!
//! # Parts
//!
//! Each part uses only the parts listed before it (and this module uses them all), so no two
//! parts import from each other:
//!
//! - [`realtime`]: what every thread that convolves asks of the OS and the host: denormals
//!   flushed to zero, real-time priorities for the workers and the GPU hub, and how far ahead
//!   of real time the host runs ([`pace`]: how long a call may wait).
//! - [`memory`]: buffers streamed every period, packed into huge pages, and the input history
//!   and output accumulator rings.
//! - [`routing`]: the paths and their summed taps.
//! - [`error`]: why an engine could not be built.
//! - [`plan`]: the partition plan (quantum, head, levels, latency), where each level runs, and
//!   the cost model.
//! - [`config`]: what an engine is built for besides its IR, and where its levels run.
//! - [`upols`]: one FFT level (uniformly partitioned overlap-save; a matrix's may cut its IR
//!   into partitions of two periods, run in FFTs of three), with its real FFTs and its
//!   spectral multiply-accumulate kernels.
//! - [`head`]: the zero-latency head: a direct-form FIR for its first taps, a small FFT level
//!   for the rest.
//! - [`worker`]: the levels' worker threads, their GPU side and the late policy.
//! - [`runner`]: one level and where it runs (whole, spread over the quanta of its slack,
//!   summed ahead or on a worker), and what it does at each quantum boundary.
//! - [`placement`]: where the levels run while the engine plays: which levels the GPU takes
//!   (and the CPU's cost it is compared with), Auto for the whole process, what other threads
//!   see of an engine ([`BackendProbe`]) and the thread that runs the thermal and load
//!   policies through it; [`Engine`] starts watching and lets go.
//!
//! This module keeps the engine at play ([`Engine::process`], [`Engine::reset`], its counters
//! and test hooks); `builder.rs` builds it ([`Engine::new`]) in steps: it checks the
//! configuration, routes and plans, opens the GPU, places each level, sizes the rings and makes
//! the probe.

mod builder;
pub mod config;
pub mod error;
pub mod head;
pub mod memory;
pub mod placement;
pub mod plan;
pub mod realtime;
pub mod routing;
pub mod runner;
pub mod upols;
pub mod worker;

pub use config::{EngineConfig, Executor, GpuPolicy};
pub use error::EngineError;
use head::Head;
use memory::rings::{InputRing, OutputRing};
use placement::governor;
pub use placement::gpu_placement::{
    AUTO_MIN_WORK, CostSplit, GPU_MIN_PARTITION, Workload, cpu_costs, cpu_partition_cost_ns,
    gpu_can_take, gpu_workload, level_goes_to_gpu, open_gpu,
};
pub use placement::probe::{BackendProbe, BackendReport, LevelStatus, RunsOn};
pub use plan::{CostWeights, LatencyMode, PartitionPlan, PlanLimits};
// The host's pace keeps its short path (`engine::pace`): the plugin's docs and the tests name it.
pub use realtime::pace;
pub use realtime::pace::{HostPace, Wait};
pub use routing::{MAX_CHANNELS, Path, route, route_plain};
use runner::LevelRunner;
pub use worker::LateStats;

/// Frames of a call whose ring lines [`Engine::process`] asks for up front: 16 lines a ring.
const PREFETCH_FRAMES: usize = 256;

/// A stagger phase for the `instance_idx`-th engine of a process: spread over the largest
/// partition size by the golden ratio, so any number of instances stays evenly spread.
pub fn stagger_phase(instance_idx: u64, max_partition_size: usize) -> u64 {
    // 0.618... in 32-bit fixed point.
    const GOLDEN: u64 = 2_654_435_769;
    let fraction = instance_idx.wrapping_mul(GOLDEN) & 0xFFFF_FFFF;
    (fraction * max_partition_size as u64) >> 32
}

impl Drop for Engine {
    fn drop(&mut self) {
        // Its probe may live on (the editor's): the governor lets it go now.
        self.probe
            .0
            .engine_dropped
            .store(true, std::sync::atomic::Ordering::Release);
        governor::release();
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
    head: Head,
    levels: Vec<LevelRunner>,
    /// Offline rendering: wait for worker results instead of applying the late policy.
    offline: bool,
    /// How far ahead of real time the host runs (real-time mode with worker levels).
    pace: HostPace,
    /// Absolute time the engine starts from after `new()` and `reset()`: a multiple of the
    /// quantum that shifts where the big levels' chunk boundaries fall, so instances started
    /// together do not all run their big partitions on the same callback.
    stagger: u64,
    /// History per input channel for the head and the levels on the audio thread (none where
    /// every level runs on a worker and there is no head).
    input_rings: Vec<InputRing>,
    /// The input history the worker levels read (none without them).
    worker_inputs: Option<std::sync::Arc<worker::InputHistory>>,
    /// Pending level output per output channel.
    output_rings: Vec<OutputRing>,
    /// Samples processed since the last reset (the absolute time of the next input sample).
    time: u64,
}

impl Engine {
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
    ///
    /// In the offload mode with a GPU executor, instances share one phase instead: nothing of
    /// theirs runs on the audio thread to spread, and the GPU hub then takes all the
    /// instances' periods in one batch per period of level 0, rather than one per phase.
    pub fn set_stagger(&mut self, phase: u64) {
        let grid = match self.config.executor {
            Executor::Gpu(_) if self.plan.offloads() => self.plan.max_partition_size() as u64,
            _ => self.plan.quantum as u64,
        };
        self.stagger = phase - phase % grid;
        self.reset();
    }

    /// Offline mode waits for worker results (deterministic bounces); real-time mode waits
    /// only while the host runs ahead of real time, within a bound, and applies the late policy
    /// otherwise ([`pace`]). The IR's sample rate is the stream's. Does not allocate.
    pub fn set_offline(&mut self, offline: bool) {
        if offline != self.offline {
            self.pace.forget();
        }
        self.offline = offline;
    }

    /// Takes over `other`'s estimate of the host's pace ([`pace`]): an engine that replaces
    /// another (an IR swap) plays for the same host, whose lead the swap does not change. Does
    /// not allocate.
    pub fn continue_pace_of(&mut self, other: &Engine) {
        if !self.offline && !other.offline {
            self.pace = other.pace.moved(other.time, self.time);
        }
    }

    /// Lateness of the worker levels so far.
    pub fn late_stats(&self) -> LateStats {
        let mut stats = LateStats::default();
        for level in &self.levels {
            if let LevelRunner::Worker(worker) = level {
                stats.add(worker.stats());
            }
        }
        stats
    }

    /// Counters per worker level: `(partition size, late results, dropped chunks, wakes)`.
    pub fn late_stats_per_level(&self) -> Vec<(usize, u64, u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        self.levels
            .iter()
            .filter_map(LevelRunner::worker)
            .map(|worker| {
                (
                    worker.partition_size(),
                    worker.stats().late_results.load(Relaxed),
                    worker.stats().dropped_chunks.load(Relaxed),
                    worker.stats().wakes.load(Relaxed),
                )
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
        governor::watch(&self.probe);
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
            .filter_map(LevelRunner::worker)
            .map(|worker| counter(worker.stats()).load(std::sync::atomic::Ordering::Relaxed))
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
    /// the wet signal. Any length works, and it may change from call to call. Does not allocate
    /// or lock; waits for worker results only as [`pace`] allows (offline mode, or a host ahead
    /// of real time).
    pub fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let num_frames = outputs.first().map_or(0, |o| o.len());
        debug_assert!(
            inputs.len() == self.config.num_inputs && outputs.len() == self.config.num_outputs
        );
        self.prefetch_call(num_frames);
        let quantum = self.plan.quantum;
        let has_workers = self.levels.last().is_some_and(|level| level.is_worker());
        let mut wait = if self.offline {
            Wait::Forever
        } else if has_workers {
            // One clock read per call (the vDSO where the clock source allows).
            self.pace
                .call(std::time::Instant::now(), self.time, num_frames)
        } else {
            Wait::Never
        };

        let mut done = 0;
        while done < num_frames {
            // Work in sub-blocks that end on quantum boundaries, where levels may run.
            let to_boundary = quantum - (self.time % quantum as u64) as usize;
            let len = to_boundary.min(num_frames - done);

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
            // The head plays the rest, in pieces that end on its block boundaries.
            let len = if whole_quantum {
                len
            } else {
                self.head
                    .prepare(self.time, &self.input_rings, &mut self.output_rings);
                self.head.piece_len(self.time, len)
            };
            let range = done..done + len;

            for (ring, input) in self.input_rings.iter_mut().zip(inputs) {
                ring.write_slice(self.time, &input[range.clone()]);
            }
            if let Some(history) = &self.worker_inputs {
                history.write(inputs, range.clone());
            }
            for (output_idx, output) in outputs.iter_mut().enumerate() {
                let output = &mut output[range.clone()];
                output.fill(0.0);
                if !whole_quantum {
                    self.head
                        .direct()
                        .add_output(output_idx, self.time, &self.input_rings, output);
                }
                if let Some(ring) = self.output_rings.get_mut(output_idx) {
                    ring.drain_add(self.time, output);
                }
            }
            // The worker levels' results, in level order, straight from their slots.
            for level in &self.levels {
                level.play(self.time, outputs, range.clone());
            }

            self.time += len as u64;
            done += len;
            if whole_quantum && let Some(LevelRunner::Inline(level)) = self.levels.first_mut() {
                // The sub-block of every output, in a stack array (built only here: the
                // offload and low-CPU modes never fuse).
                let mut sub_outputs: [&mut [f32]; MAX_CHANNELS] =
                    std::array::from_fn(|_| &mut [][..]);
                for (sub, output) in sub_outputs.iter_mut().zip(outputs.iter_mut()) {
                    *sub = &mut output[range.clone()];
                }
                let num_outputs = self.config.num_outputs;
                level.run_fused(
                    self.time,
                    &self.input_rings,
                    &mut sub_outputs[..num_outputs],
                );
            }
            if self.time.is_multiple_of(quantum as u64) {
                // Every level whose chunk just completed contributes to future output; spread
                // levels take their share of the period in progress.
                for level in &mut self.levels {
                    let (inputs, outputs) = (&self.input_rings, &mut self.output_rings);
                    level.at_boundary(
                        self.time,
                        quantum,
                        whole_quantum,
                        inputs,
                        outputs,
                        &mut wait,
                    );
                }
            }
        }
        self.pace.end_call(wait);
    }

    /// Asks the caches at once for the ring lines a call of `num_frames` writes and drains
    /// (the first [`PREFETCH_FRAMES`]; the hardware prefetcher follows longer runs), so that
    /// their misses overlap instead of each stalling the loop that meets it: at real-time pace
    /// the workers evict them between calls, whatever the previous call's prefetch fetched.
    fn prefetch_call(&self, num_frames: usize) {
        let len = num_frames.min(PREFETCH_FRAMES);
        if let Some(history) = &self.worker_inputs {
            history.prefetch(len);
        }
        for ring in &self.output_rings {
            ring.prefetch(self.time, len);
        }
        for ring in &self.input_rings {
            ring.prefetch(self.time, len);
        }
        for level in &self.levels {
            if let Some(worker) = level.worker() {
                worker.prefetch(self.time, len);
            }
        }
    }

    /// Forgets all history and pending output; the IR stays. Does not allocate.
    pub fn reset(&mut self) {
        self.input_rings.iter_mut().for_each(InputRing::clear);
        self.output_rings.iter_mut().for_each(OutputRing::clear);
        self.levels.iter_mut().for_each(LevelRunner::reset);
        self.head.reset();
        self.pace.forget();
        self.time = self.stagger;
    }

    /// Test hook: fills every scratch buffer with `value`. Results must not change.
    #[doc(hidden)]
    pub fn poison_scratch(&mut self, value: f32) {
        self.head.poison_scratch(value);
        for level in &mut self.levels {
            level.poison_scratch(value);
        }
    }
}
