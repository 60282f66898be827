//! Where a level of the plan runs, and where it may start: on the audio thread (level 0, a
//! level spread over the quanta of its slack, or summed ahead as its chunk completes) or on a
//! worker, by its slack, its size and its spectra ([`Placement`]). The one rule for both the
//! planner's costs ([`super::search`]) and
//! [`PartitionPlan::on_audio_thread`](super::PartitionPlan::on_audio_thread).
//!
//! Pure code: no threads, no allocation. Not the GPU's placement, which takes worker levels at
//! run time ([`crate::engine::placement`]).

use super::level::{Level, level_spectra_bytes};

/// Largest partition size of a level after the first that runs on the audio thread, spread
/// over its period, when its slack is too small for a worker: bigger levels keep a worker's
/// slack, so the GPU may take them (its levels start at 1024).
pub const MAX_SPREAD_PARTITION: usize = 512;
/// Most quanta the period of a level with a worker's slack may be spread over on the audio
/// thread where no GPU may take the level ([`PlanLimits::for_gpu`](super::PlanLimits::for_gpu)).
pub const CPU_SPREAD_MAX_QUANTA: usize = 8;
/// Smallest quantum from which a level after the first may start at a delay of its partition
/// size, its result due as its chunk completes, and run summed ahead on the audio thread
/// ([`crate::engine::runner::ahead`]), where the GPU is never used
/// ([`PlanLimits::for_gpu`](super::PlanLimits::for_gpu)): the level before it covers fewer
/// partitions and its own period hands no job over. The call that completes its chunk still takes
/// its transforms and partition 0, so only hosts of big blocks get such levels. Allowed from 64
/// (Zen 4 EPYC VM, 2026-12-06, bounded per call), a 4 x 4 room at 128 and a stereo 10 s reverb at
/// 256 took 0.83 and 0.79 of their CPU offline, but at real-time pace the room cost more (0.042
/// against 0.038 CPU-s/s: each call meets its spectra colder) and the calls' p99 rose from 80 to
/// 231 us and from 76 to 332 us.
pub const AHEAD_MIN_QUANTUM: usize = 1024;
/// Most bytes of spectra ([`level_spectra_bytes`]) of a level summed ahead on the audio
/// thread, per sample of the quantum: 6 MiB at 1024. Such a level first ran whole as its chunk
/// completed: on the Zen 4 EPYC VM (2026-12-05, `bench --backend cpu --block 1024`, 9 rounds
/// alternated with the plans before), a 4 x 4 room's `4096x7` level (4.6 MB) at `D = P`, so
/// that level 0 covers 3 partitions instead of 7, took the room to 0.83 of its CPU, and stereo
/// 1 s and 10 s reverbs to 0.88 and 0.96; paced, a call's max rose from 0.3 to 0.4 ms to 0.6 to
/// 0.8 ms of the 21.3 ms it has at 48 kHz. Summed ahead (2026-12-06, 7 rounds) the same plans
/// cost the same (paired ratios 1.02, 1.01 and 0.96) and the paced calls' p99 fell from 0.7 to
/// 0.8 ms to 0.36 to 0.40 (4 x 4) and from 0.29 to 0.20 to 0.21 ms (stereo 1 s); a stereo
/// 10 s reverb's from 0.35 to 0.22 ms (before it carried). Bounding a call's share instead (one
/// partition and its part of the others) also summed ahead a 4 x 4 room's `16384x5` and a
/// stereo 10 s reverb's `32768x14`: 0.925 and 0.965 of the CPU (15 rounds), but p99 978 and
/// 741 us, the big transforms of the call that completes their chunk.
pub const AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE: usize = 6 << 10;

/// What decides whether a level after the first runs on a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Placement {
    /// The plan's latency (the quantum in low-CPU mode, the offload mode's `L`, else 0).
    pub(super) latency: usize,
    pub(super) min_worker_slack: usize,
    pub(super) quantum: usize,
    /// [`PlanLimits::cpu_spread_bytes`](super::PlanLimits::cpu_spread_bytes); 0 in the offload
    /// mode, where nothing convolves on the audio thread.
    pub(super) cpu_spread_bytes: usize,
    /// [`CostWeights::streams`](super::CostWeights::streams).
    pub(super) streams: usize,
    /// Most bytes of spectra of a level summed ahead ([`AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE`]);
    /// 0 where none may (a GPU may take levels, the offload mode, small quanta).
    pub(super) ahead_bytes: usize,
}

impl Placement {
    pub(super) fn new(
        latency: usize,
        min_worker_slack: usize,
        quantum: usize,
        cpu_spread_bytes: usize,
        streams: usize,
    ) -> Self {
        let ahead_bytes = if cpu_spread_bytes > 0 && quantum >= AHEAD_MIN_QUANTUM {
            AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE * quantum
        } else {
            0
        };
        Self {
            latency,
            min_worker_slack,
            quantum,
            cpu_spread_bytes,
            streams,
            ahead_bytes,
        }
    }
}

/// Whether a level runs on a worker (or the GPU, or inline with the inline executor): not the
/// first level of the zero-latency and low-CPU modes (`first_inline`), whose result is due as
/// its chunk completes, nor a level with less slack (`D + latency - P`) than
/// `min_worker_slack`, nor, where the GPU is never used, a level of at most
/// [`CPU_SPREAD_MAX_QUANTA`] quanta and `cpu_spread_bytes` of spectra, whose job costs a worker
/// more than the audio thread's share; the audio thread spreads those over their period, which
/// needs a period of slack (`D >= 2P`, as [`level_start`] places them). The one rule for both
/// the planner's costs and
/// [`PartitionPlan::on_audio_thread`](super::PartitionPlan::on_audio_thread).
pub(super) fn runs_on_worker(first_inline: bool, level: &Level, placement: &Placement) -> bool {
    let spread_here = level.partition_size <= CPU_SPREAD_MAX_QUANTA * placement.quantum
        && level_spectra_bytes(level, placement.streams) <= placement.cpu_spread_bytes
        && slack(level, placement.latency) >= level.partition_size;
    !first_inline && slack(level, placement.latency) >= placement.min_worker_slack && !spread_here
}

/// Whether a level after the first runs summed ahead on the audio thread, its result due as
/// its chunk completes ([`crate::engine::runner::ahead`]): its slack is under its period (too
/// little to spread it) and under a worker's. Only [`ahead_start`] places such levels.
pub(super) fn runs_ahead(first_inline: bool, level: &Level, placement: &Placement) -> bool {
    let slack = slack(level, placement.latency);
    !first_inline && slack < level.partition_size && slack < placement.min_worker_slack
}

/// [`runs_ahead`] for a level of `partition_size` starting at `ir_offset`, whatever its
/// partitions: the slack depends on nothing else.
pub(super) fn runs_ahead_at(
    first_inline: bool,
    partition_size: usize,
    ir_offset: usize,
    placement: &Placement,
) -> bool {
    let probe = Level {
        partition_size,
        span: 1,
        num_partitions: 1,
        ir_offset,
    };
    runs_ahead(first_inline, &probe, placement)
}

/// Samples between a level's input chunk completing and its first output sample being needed,
/// `D + latency - P`, with the plan's `latency`.
pub(super) fn slack(level: &Level, latency: usize) -> usize {
    level.ir_offset + latency - level.partition_size
}

/// Where a level of `size` may start after a level whose partitions of `previous_taps` start at
/// `previous_offset`, on the previous level's partition grid so the levels tile the IR:
/// `D >= 2P` (a period of slack) for a level the audio thread may spread
/// ([`MAX_SPREAD_PARTITION`]), and also `D - P >= min_worker_slack` for a bigger one, which
/// runs on a worker.
pub(super) fn level_start(
    size: usize,
    previous_taps: usize,
    previous_offset: usize,
    min_worker_slack: usize,
) -> usize {
    let earliest = if size <= MAX_SPREAD_PARTITION {
        2 * size
    } else {
        (2 * size).max(size + min_worker_slack)
    };
    on_grid(earliest, previous_taps, previous_offset)
}

/// Where a level of `size` summed ahead ([`runs_ahead`]) may start after a level whose partitions
/// of `previous_taps` start at `previous_offset`: `D >= P`, its result due as its chunk
/// completes, on the previous level's grid.
pub(super) fn ahead_start(size: usize, previous_taps: usize, previous_offset: usize) -> usize {
    on_grid(size, previous_taps, previous_offset)
}

/// The first point at or after `earliest` of the grid of partitions of `previous_taps` that
/// starts at `previous_offset` (the offset itself where `earliest` is before it).
fn on_grid(earliest: usize, previous_taps: usize, previous_offset: usize) -> usize {
    previous_offset
        + earliest
            .saturating_sub(previous_offset)
            .next_multiple_of(previous_taps)
}
