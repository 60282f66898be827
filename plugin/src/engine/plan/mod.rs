//! The partition plan: which part of the impulse response each convolution level computes.
//!
//! Pure code, no threads and no allocation beyond the returned `Vec` of levels. The plan is a
//! function of (IR length, host maximum block size, latency mode, limits) and is computed once
//! per engine, off the audio thread.
//!
//! # Layout
//!
//! The quantum `q` is the size of level 0's partitions (64 by default, or the host's maximum
//! block size when that is a power of two, clamped to [`MIN_QUANTUM`]..=[`MAX_QUANTUM`]; see
//! [`quantum_for_block_size`]).
//!
//! - Zero-latency mode: a direct-form FIR (the *head*) computes taps `[0, q)` sample by sample,
//!   level 0 starts at IR offset `q`. Reported latency: 0. When one host call delivers a whole
//!   quantum (the usual case with power-of-two buffers), level 0 computes the head taps too, as
//!   one more partition multiplied with the quantum's own spectrum: the zero-latency
//!   uniform-partitioned scheme zita-convolver uses, at the cost of one partition MAC instead of
//!   `q` taps per sample.
//! - Low-CPU mode: no head, level 0 starts at IR offset 0 and its output is delayed by one
//!   quantum. Reported latency: `q`.
//! - Offload mode: no head, level 0 starts at IR offset 0 with a partition `P0` of at least
//!   `q`, and the output is delayed by a fixed `L` (from [`OFFLOAD_LATENCIES`], or more where a
//!   worker needs it: [`offload_shape`]). Level 0 then has `L - P0` samples of slack and runs
//!   on a worker like every other level: nothing convolves on the audio thread. Reported
//!   latency: `L`.
//!
//! Every level is a uniformly partitioned overlap-save convolver with partition size `P`,
//! `num_partitions` partitions and IR offset `D`. A level's input chunk `[T - P, T)` is complete
//! at time `T`; the first output sample it contributes to is `T - P + D + latency`. Levels after
//! the first have `D >= 2P` (but those summed ahead, below), so their results are needed
//! `D - P >= P` samples after their input is complete: that slack is the deadline of whichever
//! executor runs the level. A level of up to [`MAX_SPREAD_PARTITION`] samples starts at
//! `D = 2P`, and where its slack is under
//! [`PlanLimits::min_worker_slack`] it runs on the audio thread, its period spread over the
//! quanta of its slack ([`super::runner::spread`]); bigger levels start where they have a worker's
//! slack, and run on workers (or the GPU). Where the GPU is never used (the CPU backend,
//! [`PlanLimits::for_gpu`]), a level of at most [`CPU_SPREAD_MAX_QUANTA`] quanta whose spectra
//! fit [`CPU_SPREAD_MAX_BYTES`] stays on the audio thread too, spread the same way: handing
//! its job to a worker costs more than the level (a stereo 1 s reverb at block 1024 costs
//! 24 % less so). From a quantum of [`AHEAD_MIN_QUANTUM`] samples, where the GPU is never
//! used, a level may also start at `D = P`, its result due as its chunk completes, and run on
//! the audio thread summed ahead ([`super::runner::ahead`]: that call transforms the chunk and adds
//! partition 0, the calls before it summed the other partitions; at most
//! [`AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE`] bytes of spectra per sample of the quantum, span 1):
//! the level before it then covers fewer partitions, and its period hands no job over. The
//! planner weighs that start beside the others.
//!
//! # The cost model
//!
//! Per output sample and path, a level of `n` partitions of size `P` costs about
//!
//! ```text
//! cost(P, n) = MAC_FLOPS * n * (P + 1) / P      spectral multiply-accumulate, n partitions
//!            + FFT_FLOPS * log2(2P)             one r2c and one c2r of size 2P per P samples
//!            + JOB_FLOPS / P                    waking a worker and switching to it, per run
//! ```
//!
//! (the last term only for levels on workers). The MAC term wants big
//! partitions, the FFT and job terms want few levels. Each level after the first starts as
//! early as the rule above allows and partition sizes grow by 2, 4 or 8 ([`GROWTH_FACTORS`]) up to
//! [`PlanLimits::max_partition_size`] ([`DEFAULT_MAX_PARTITION_SIZE`], or
//! [`CPU_MAX_PARTITION_SIZE`] for a mono, stereo or true-stereo engine that never uses the
//! GPU: [`PlanLimits::for_executor`]); a level either grows (covering exactly the span up to
//! where the next size may start) or covers the rest of the IR. The plan is the
//! cheapest chain of such choices ([`PartitionPlan::estimated_cost`]), found by exhaustive
//! search over the few dozen chains there are. Short IRs end up with one or two levels, long
//! ones grow to the cap; zita-convolver's fixed x4 growth is one of the chains considered.
//!
//! Where the GPU is never used, a level after the first may cut its IR into partitions of
//! `2P` taps run in FFTs of `3P` every `P` samples ([`Level::span`], `super::upols`): `n`
//! partitions then cost `MAC_FLOPS * n * (3P / 2 + 1) / P` and transforms of `3P`
//! ([`SPAN_FFT_WEIGHT`] times the model), 3/4 of the products per tap for 1.5 times the
//! transforms. Matrices, nearly all MAC, take it for their levels that fit in cache
//! ([`SPAN_MAX_SPECTRA_BYTES`]); stereo engines never do. The search memoises the chains from
//! each size and offset, so it stays small.
//!
//! That is the cost of one path of a stereo engine, where every path has its own input and
//! output transform (2 paths, 2 + 2 transforms). A matrix shares its transforms: N inputs and
//! M outputs are N + M transforms for N * M paths, so per path its FFT term weighs
//! `(N + M) / (2 * paths)` and its job term `2 / paths` ([`CostWeights`], at most 1 each: stereo
//! and mono engines plan as they always did, true stereo and mono-to-stereo count their shared
//! transforms). Dense matrices are nearly all MAC, and plan fewer, bigger partitions
//! ([`PartitionPlan::new_weighted`]).
//!
//! The constants are measured, in units of one flop: a real FFT of size `N` costs about
//! `2.5 N log2 N`, a complex MAC 8, and a worker wake-up and context switch on a 2-core VM
//! about 10 µs, 1e5 flops at the FFT's speed.
//!
//! # Parts
//!
//! This module holds the plan's types ([`PartitionPlan`], [`PlanLimits`], [`LatencyMode`]) and
//! its constants. Each part uses only the parts listed before it:
//!
//! - `level.rs`: one level's shape ([`Level`]) and the bytes of spectra it holds.
//! - `cost.rs`: the cost model above, per level ([`weighted_level_cost`]).
//! - `placement.rs`: where a level runs (the audio thread or a worker) by its slack, and where
//!   a level may start.
//! - `search.rs`: the memoised search for the cheapest chain of levels.

use std::collections::HashMap;

mod cost;
mod level;
mod placement;
mod search;

pub use cost::{
    CostWeights, FFT_FLOPS, JOB_FLOPS, MAC_FLOPS, SPAN_FFT_WEIGHT, level_cost, weighted_level_cost,
};
pub use level::{Level, level_spectra_bytes};
pub use placement::{
    AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE, AHEAD_MIN_QUANTUM, CPU_SPREAD_MAX_QUANTA,
    MAX_SPREAD_PARTITION,
};
use placement::{Placement, runs_ahead, runs_on_worker, slack};
use search::{ChainLimits, cheapest_levels};
pub use search::{GROWTH_FACTORS, SPAN_MAX_PARTITIONS, SPAN_MAX_SPECTRA_BYTES};

/// Most hops an IR partition may span ([`Level::span`]) in a plan that never uses the GPU
/// ([`PlanLimits::for_gpu`]): 2, partitions of `2P` in FFTs of `3P`, besides the plain 1.
///
/// Measured on the Intel VM (2026-12-03, `cargo bench -p longtail-tests --features bench
/// --bench engine -- level_span`), a period of a dense 12 x 12 level covering `6P` taps, run
/// whole as a worker runs it: at `P` = 512, 1024 and 2048, `Px3/2` took 23, 22 and 8 % less
/// time than `Px6`, and at 4096 (28 MB of IR spectra) 5 % more; `Px2/3` (FFTs of `4P`) took
/// 25 % less at 512 but 3 % less at 1024 and 7 % more at 2048. A real FFT of 3072 points took
/// 1.76 times one of 2048 ([`SPAN_FFT_WEIGHT`]).
pub const MAX_SPAN: usize = 2;

/// Smallest quantum the plan uses; hosts with smaller power-of-two buffers still get 16.
pub const MIN_QUANTUM: usize = 16;
/// Largest quantum taken from the host's block size. A quantum smaller than the host's block
/// (level 0 run twice or more per call, the next levels starting earlier) costs more: a dense
/// 4 x 4 room of 2 s at blocks of 1024 (Intel VM, 2026-12-03, 3 rounds alternated, the plans
/// `1024x7 4096x6 16384x4`, `512x7 2048x6 8192x10` and `256x3 512x6 2048x6 8192x10`) took
/// 0.0070 to 0.0072 CPU-s/s with a quantum of 1024, 0.0078 to 0.0084 with 512 and 0.0087 to
/// 0.0089 with 256.
pub const MAX_QUANTUM: usize = 1024;
/// Quantum when the host's maximum block size is not a power of two in range.
pub const DEFAULT_QUANTUM: usize = 64;
/// Default least slack of a worker level: 1536 samples, 32 ms at 48 kHz, more than the
/// longest stalls seen on a loaded 2-core VM (16 instances of a 10 s IR at 64-sample blocks).
pub const DEFAULT_MIN_WORKER_SLACK: usize = 1536;
/// Default cap on partition sizes: the largest the GPU's levels have been measured at.
pub const DEFAULT_MAX_PARTITION_SIZE: usize = 16384;
/// Cap on partition sizes of an engine that never uses the GPU and holds at most
/// [`LONG_PARTITION_MAX_STREAMS`] spectra per partition (mono, stereo, true stereo), in place
/// of [`DEFAULT_MAX_PARTITION_SIZE`] ([`PlanLimits::for_executor`]). A stereo 10 s reverb's
/// tail then takes 13 partitions of 32768 (and its 4096 level 14) instead of 28 of 16384 (and
/// 6): on the EPYC VM (2026-12-02, `bench --backend cpu --ir-seconds 10 --seconds 40`, 10
/// rounds alternated) 8 % less CPU at 64-sample blocks and 10 % less at 1024 (median of the
/// paired ratios), resident memory the same. A dense matrix holds far more per partition: a
/// 16 x 16 x 4 s one took 17 % less CPU but 80 MB more memory, so matrices keep the default.
/// Of those 80 MB, 25 are the bigger level's buffers and the rest is the huge-page pool's
/// (`super::memory::pages`): its `32768 x 4` level keeps each path's real and imaginary spectra in
/// buffers of 0.5 MiB and 48 bytes, three of which fill a shared 2 MiB block, leaving a
/// quarter of every block unused (mapped 555 MB for 456 MB of buffers, against 457 for 431).
/// Shared blocks of four huge pages took that back (477 MB mapped; resident after the build
/// 682 against 678 MB), but the peak stayed 27 MB higher (747 against 720 MB, 15 s of input)
/// for 10 to 16 % less CPU (2026-12-02, three rounds), more than the budget for that matrix
/// (peak memory less its IR at most 1.2 times its spectra) has to spare. A level's IR spectra
/// now lie in one buffer (`upols`), so that quarter is no longer lost, but the bigger level's
/// own 25 MB would still take the matrix past its budget (1.17 times its spectra with 16384,
/// 2026-12-03).
pub const CPU_MAX_PARTITION_SIZE: usize = 32768;
/// Most spectra per partition ([`CostWeights::streams`]) of an engine that may use
/// [`CPU_MAX_PARTITION_SIZE`]: true stereo's 4 paths and 2 inputs.
pub const LONG_PARTITION_MAX_STREAMS: usize = 6;
/// Most bytes of spectra (IR and input, [`level_spectra_bytes`]) of a level with a worker's
/// slack that the audio thread runs, spread over its period, where no GPU may take the level.
/// Handing a job to a worker costs about 35 us here (a wake-up of the other core and its cold
/// caches: a stereo 1 s reverb at block 1024 cost 20 % less pinned to one core), more than a
/// small level's period. Spread on the audio thread (Xeon VM, offline bench, 3 runs): a stereo
/// 1 s reverb's `4096x10` level (1.3 MiB) took 24 % off at block 1024 and its `2048x22` 31 %
/// at 256; a 10 s one's `4096x6` (0.8 MiB) 5 % at 1024 and `2048x14` 6 % at 256. A 4 x 4
/// room's `4096x6` (3.9 MiB) cost 15 % more, and 3 to 5 % more even carried in chunks as on a
/// worker (`super::runner::spread`, 2026-12-04; likely level 0 evicting its spectra between steps).
pub const CPU_SPREAD_MAX_BYTES: usize = 2 << 20;

/// How the engine trades latency against CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LatencyMode {
    /// Direct-form FIR head, reported latency 0.
    Zero,
    /// No head, reported latency of one quantum.
    LowCpu,
    /// Nothing convolves on the audio thread: every level runs on a background executor and
    /// the output comes at least this many samples late ([`offload_shape`] says how many).
    Offload(usize),
}

/// The latencies the offload mode offers users, in samples at any sample rate (what a host
/// compensates is samples; the workers' least slack is samples too). The CPU workers need
/// [`DEFAULT_MIN_WORKER_SLACK`] plus a host block plus level 0's partition, so 512 and 1024
/// become 2048 there ([`offload_shape`]); they are for executors with a shorter round trip.
pub const OFFLOAD_LATENCIES: [usize; 4] = [512, 1024, 2048, 4096];

/// Largest latency the offload mode takes, in samples: 1.4 s at 48 kHz. It sizes the output
/// rings, so a number from outside (a command line, a saved state) is refused past it.
pub const MAX_OFFLOAD_LATENCY: usize = 65536;

/// The most latency the plugin's modes report for a host that sends at most `max_block_size`
/// samples a call (the offload mode's longest, [`OFFLOAD_LATENCIES`], or one quantum): what a
/// dry path delayed to match the wet one must hold. A latency asked for past the list (the
/// command line's) may be more.
pub fn max_latency(max_block_size: usize, limits: PlanLimits) -> usize {
    let longest = OFFLOAD_LATENCIES[OFFLOAD_LATENCIES.len() - 1];
    offload_shape(longest, max_block_size, limits)
        .0
        .max(MAX_QUANTUM)
}

/// The offload mode's latency `L` and level 0's partition size `P0` when `requested` samples
/// of latency are asked for, the host sends at most `max_block_size` samples per call and
/// the workers need `limits.min_worker_slack`.
///
/// Level 0 starts at IR offset 0 and its slack is `L - P0`. Its worker must get the least
/// slack of any worker level after a whole host block, since a call's chunks are all handed
/// over when the call comes, and the rest of the call's samples may be due in it. So the rule
/// is `L - P0 >= min_worker_slack + max_block_size`, with `P0` a power of two from the
/// quantum to the partition cap; `P0` is the largest that fits (fewer, bigger periods). Where
/// none fits, `L` is the smallest power of two for which the quantum does. The GPU's levels
/// keep their CPU standby, so the same rule holds with the GPU.
///
/// A `requested` latency past [`MAX_OFFLOAD_LATENCY`] is taken as that.
pub fn offload_shape(
    requested: usize,
    max_block_size: usize,
    limits: PlanLimits,
) -> (usize, usize) {
    let quantum = quantum_for_block_size(max_block_size);
    let max_partition = limits.max_partition_size.max(quantum).next_power_of_two();
    let need = limits.min_worker_slack + max_block_size;
    let requested = requested.clamp(1, MAX_OFFLOAD_LATENCY);
    let latency = if requested >= quantum + need {
        requested
    } else {
        (quantum + need).next_power_of_two()
    };
    let room = latency - need;
    // The largest power of two at most `room`, within [quantum, max_partition].
    let partition = (1usize << room.ilog2()).clamp(quantum, max_partition);
    (latency, partition)
}

/// Limits that executors put on the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanLimits {
    /// Largest partition size any level may use (a power of two, at least the quantum).
    pub max_partition_size: usize,
    /// Least slack a worker level gets, in samples, whatever its size: the time a worker may be
    /// kept from running (by other instances' work, or a host or hypervisor stall that makes
    /// the audio thread catch up in a burst) without its result being late.
    pub min_worker_slack: usize,
    /// Most bytes of spectra of a level with a worker's slack, and a period of at most
    /// [`CPU_SPREAD_MAX_QUANTA`] quanta, that the audio thread runs instead, spread over its
    /// period: 0 by default, since the GPU takes only levels on workers;
    /// [`CPU_SPREAD_MAX_BYTES`] for engines that never use the GPU ([`Self::for_gpu`]).
    pub cpu_spread_bytes: usize,
    /// Most hops a level's IR partitions may span ([`Level::span`]): 1 by default, since the
    /// GPU runs FFTs of `2P` only; [`MAX_SPAN`] for engines that never use the GPU.
    pub max_span: usize,
}

impl Default for PlanLimits {
    fn default() -> Self {
        Self {
            max_partition_size: DEFAULT_MAX_PARTITION_SIZE,
            min_worker_slack: DEFAULT_MIN_WORKER_SLACK,
            cpu_spread_bytes: 0,
            max_span: 1,
        }
    }
}

impl PlanLimits {
    /// These limits for an engine whose executor may use the GPU or never does (the CPU
    /// backend): where it never does, small levels with a worker's slack run on the audio
    /// thread, spread over their period ([`CPU_SPREAD_MAX_BYTES`]), and partitions may span
    /// up to [`MAX_SPAN`] hops.
    pub fn for_gpu(self, may_use_gpu: bool) -> Self {
        Self {
            cpu_spread_bytes: if may_use_gpu { 0 } else { CPU_SPREAD_MAX_BYTES },
            max_span: if may_use_gpu { 1 } else { MAX_SPAN },
            ..self
        }
    }

    /// [`Self::for_gpu`] for an engine whose paths weigh `weights`: where it never uses the
    /// GPU and holds few spectra per partition ([`LONG_PARTITION_MAX_STREAMS`]), the default
    /// cap becomes [`CPU_MAX_PARTITION_SIZE`] (a cap of the caller's own stays).
    pub fn for_executor(self, may_use_gpu: bool, weights: CostWeights) -> Self {
        let long = !may_use_gpu
            && weights.streams <= LONG_PARTITION_MAX_STREAMS
            && self.max_partition_size == DEFAULT_MAX_PARTITION_SIZE;
        Self {
            max_partition_size: if long {
                CPU_MAX_PARTITION_SIZE
            } else {
                self.max_partition_size
            },
            ..self.for_gpu(may_use_gpu)
        }
    }
}

/// The whole plan for one engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionPlan {
    /// Quantum `q`: level 0's partition size and the head's length.
    pub quantum: usize,
    /// Latency mode the plan was made for (in the offload mode, the latency asked for).
    pub latency_mode: LatencyMode,
    /// Latency of the output in samples: 0, the quantum in low-CPU mode, or the offload
    /// mode's `L` ([`offload_shape`]).
    latency: usize,
    /// Taps computed by the direct-form head (`min(q, ir_len)` in zero-latency mode, else 0).
    pub head_taps: usize,
    /// IR length the plan covers, in samples.
    pub ir_len: usize,
    /// The FFT levels, in order of IR offset; empty when the head covers the whole IR.
    pub levels: Vec<Level>,
    /// Least slack of a level that runs on a worker ([`PlanLimits::min_worker_slack`]): a
    /// level after the first with less runs on the audio thread, spread over its period.
    pub min_worker_slack: usize,
    /// [`PlanLimits::cpu_spread_bytes`]; 0 in the offload mode ([`Placement`]).
    cpu_spread_bytes: usize,
    /// [`CostWeights::streams`] of the paths planned for.
    streams: usize,
}

impl PartitionPlan {
    /// Plans the engine for an IR of `ir_len` samples (at least 1) and a host that sends at most
    /// `max_block_size` samples per call, for stereo paths ([`CostWeights::STEREO`]).
    pub fn new(
        ir_len: usize,
        max_block_size: usize,
        latency_mode: LatencyMode,
        limits: PlanLimits,
    ) -> Self {
        Self::new_weighted(
            ir_len,
            max_block_size,
            latency_mode,
            limits,
            CostWeights::STEREO,
        )
    }

    /// [`Self::new`] for paths that share their transforms as `weights` says (a matrix).
    pub fn new_weighted(
        ir_len: usize,
        max_block_size: usize,
        latency_mode: LatencyMode,
        limits: PlanLimits,
        weights: CostWeights,
    ) -> Self {
        let quantum = quantum_for_block_size(max_block_size);
        let max_partition_size = limits.max_partition_size.max(quantum).next_power_of_two();
        let ir_len = ir_len.max(1);

        let (head_taps, offset) = match latency_mode {
            LatencyMode::Zero => (ir_len.min(quantum), quantum),
            LatencyMode::LowCpu | LatencyMode::Offload(_) => (0, 0),
        };
        // Level 0's partition, and whether it runs on the audio thread: in the offload mode it
        // has a worker's slack ([`offload_shape`]).
        let (latency, first_size, first_inline) = match latency_mode {
            LatencyMode::Zero => (0, quantum, true),
            LatencyMode::LowCpu => (quantum, quantum, true),
            LatencyMode::Offload(requested) => {
                let (latency, partition) = offload_shape(requested, max_block_size, limits);
                (latency, partition, false)
            }
        };

        let cpu_spread_bytes = if first_inline {
            limits.cpu_spread_bytes
        } else {
            0
        };
        let placement = Placement::new(
            latency,
            limits.min_worker_slack,
            quantum,
            cpu_spread_bytes,
            weights.streams,
        );
        let levels = if offset < ir_len {
            let shape = ChainLimits {
                ir_len,
                max_partition_size,
                max_span: limits.max_span.max(1),
                placement,
                weights,
            };
            cheapest_levels(
                first_size,
                offset,
                &shape,
                first_inline,
                &mut HashMap::new(),
            )
            .1
        } else {
            Vec::new()
        };

        Self {
            quantum,
            latency_mode,
            latency,
            head_taps,
            ir_len,
            levels,
            min_worker_slack: limits.min_worker_slack,
            cpu_spread_bytes: placement.cpu_spread_bytes,
            streams: placement.streams,
        }
    }

    /// What decides where this plan's levels after the first run.
    fn placement(&self) -> Placement {
        Placement::new(
            self.latency,
            self.min_worker_slack,
            self.quantum,
            self.cpu_spread_bytes,
            self.streams,
        )
    }

    /// The cost model's estimate for the whole plan, in flops per output sample and path.
    pub fn estimated_cost(&self) -> f64 {
        self.levels
            .iter()
            .enumerate()
            .map(|(idx, level)| {
                let on_worker = !self.on_audio_thread(idx);
                weighted_level_cost(level, on_worker, CostWeights::STEREO)
            })
            .sum()
    }

    /// Whether level `level_idx` runs on the audio thread whatever the executor: level 0,
    /// whose result is due as its chunk completes (but in the offload mode), every level
    /// with less slack than [`Self::min_worker_slack`], and, where the GPU is never used, the
    /// small levels of [`PlanLimits::cpu_spread_bytes`]; the period of a level after the first
    /// is spread over the quanta of its slack ([`super::runner::spread`]), or summed ahead where it
    /// has less slack than its period ([`Self::runs_ahead`]). The others run on workers
    /// (or the GPU), or inline with the inline executor.
    pub fn on_audio_thread(&self, level_idx: usize) -> bool {
        let level = &self.levels[level_idx];
        let first_inline = level_idx == 0 && !self.offloads();
        !runs_on_worker(first_inline, level, &self.placement())
    }

    /// Whether level `level_idx`, after the first, runs summed ahead on the audio thread, its
    /// result due as its chunk completes: its slack is under both its period and a worker's
    /// ([`AHEAD_MIN_QUANTUM`]).
    pub fn runs_ahead(&self, level_idx: usize) -> bool {
        let level = &self.levels[level_idx];
        let first_inline = level_idx == 0 && !self.offloads();
        runs_ahead(first_inline, level, &self.placement())
    }

    /// Whether this is the offload mode's plan: no level on the audio thread.
    pub fn offloads(&self) -> bool {
        matches!(self.latency_mode, LatencyMode::Offload(_))
    }

    /// Latency the plugin reports to the host, in samples: `0`, `q` in low-CPU mode, `L` in
    /// the offload mode ([`offload_shape`]).
    pub fn latency_samples(&self) -> usize {
        self.latency
    }

    /// Delay from a level's input time to its output time, `D + latency`. Always at least the
    /// level's partition size, so a level computed when its chunk completes is on time.
    pub fn output_delay(&self, level: &Level) -> usize {
        level.ir_offset + self.latency_samples()
    }

    /// Samples between a level's input chunk completing and its first output sample being
    /// needed: the deadline of whichever executor runs it.
    pub fn slack_samples(&self, level: &Level) -> usize {
        slack(level, self.latency_samples())
    }

    /// Largest partition size in the plan (the quantum when there are no levels).
    pub fn max_partition_size(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.partition_size)
            .max()
            .unwrap_or(self.quantum)
    }

    /// One line for humans: `q=64 latency=0 head=64 | 64x7@64 256x6@512 2048x2/2@4096 ...`
    /// (size x count @ offset, and `/span` where partitions span several hops; the offload
    /// mode adds the latency asked for).
    pub fn describe(&self) -> String {
        let mut text = format!("q={} latency={}", self.quantum, self.latency_samples());
        if let LatencyMode::Offload(asked) = self.latency_mode {
            text.push_str(&format!(" (offload, asked {asked})"));
        }
        text.push_str(&format!(" head={}", self.head_taps));
        if !self.levels.is_empty() {
            text.push_str(" |");
        }
        for level in &self.levels {
            text.push_str(&format!(" {}@{}", level.label(), level.ir_offset));
        }
        text
    }
}

/// The quantum for a host maximum block size: the block size itself when it is a power of two
/// in `[MIN_QUANTUM, MAX_QUANTUM]`, [`MAX_QUANTUM`] for larger powers of two (which it divides),
/// [`MIN_QUANTUM`] below that range, else [`DEFAULT_QUANTUM`].
///
/// Hosts with power-of-two buffers send whole quanta, which level 0 computes head included in
/// the frequency domain; a bigger quantum means fewer, bigger partitions on the audio thread
/// and fewer levels (at 1024-sample buffers, dense matrices cost 5 to 15 % less with a quantum
/// of 1024 than with 512). The cap bounds the head's FFT level for the calls that arrive in pieces (`q / 64 - 1`
/// partitions of 64) and level 0's share of one call.
pub fn quantum_for_block_size(max_block_size: usize) -> usize {
    if max_block_size.is_power_of_two() && (MIN_QUANTUM..=MAX_QUANTUM).contains(&max_block_size) {
        max_block_size
    } else if max_block_size.is_power_of_two() && max_block_size > MAX_QUANTUM {
        MAX_QUANTUM
    } else if max_block_size < MIN_QUANTUM {
        MIN_QUANTUM
    } else {
        DEFAULT_QUANTUM
    }
}

#[cfg(test)]
mod tests;
