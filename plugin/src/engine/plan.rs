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
//!
//! Every level is a uniformly partitioned overlap-save convolver with partition size `P`,
//! `num_partitions` partitions and IR offset `D`. A level's input chunk `[T - P, T)` is complete
//! at time `T`; the first output sample it contributes to is `T - P + D + latency`. Levels after
//! the first have `D >= 2P`, so their results are needed `D - P >= P` samples after their input
//! is complete: that slack is the deadline of whichever executor runs the level. A level of up
//! to [`MAX_SPREAD_PARTITION`] samples starts at `D = 2P`, and where its slack is under
//! [`PlanLimits::min_worker_slack`] it runs on the audio thread, its period spread over the
//! quanta of its slack ([`super::spread`]); bigger levels start where they have a worker's
//! slack, and run on workers (or the GPU).
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
//! [`PlanLimits::max_partition_size`]; a level either grows (covering exactly the span up to
//! where the next size may start) or covers the rest of the IR. The plan is the
//! cheapest chain of such choices ([`PartitionPlan::estimated_cost`]), found by exhaustive
//! search over the few dozen chains there are. Short IRs end up with one or two levels, long
//! ones grow to the cap; zita-convolver's fixed x4 growth is one of the chains considered.
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

/// Flops per complex multiply-add of the spectral MAC.
pub const MAC_FLOPS: f64 = 8.0;
/// Flops per sample and `log2(2P)` of one forward and one inverse real FFT of size `2P`.
pub const FFT_FLOPS: f64 = 10.0;
/// Flops-equivalent of handing one job to a worker thread (wake-up, context switch, cold
/// caches).
pub const JOB_FLOPS: f64 = 100_000.0;
/// How much the FFT and job terms of the cost model weigh per path, against a stereo engine's
/// path (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostWeights {
    /// Transforms per path, against one forward and one inverse per path.
    pub fft: f64,
    /// Worker jobs per path, against one per two paths.
    pub job: f64,
}

impl CostWeights {
    /// A stereo engine's path: every term counts whole.
    pub const STEREO: Self = Self { fft: 1.0, job: 1.0 };

    /// The weights of an engine with `num_inputs` and `num_outputs` channels and `num_paths`
    /// paths, each at most 1.
    pub fn for_paths(num_inputs: usize, num_outputs: usize, num_paths: usize) -> Self {
        let paths = num_paths.max(1) as f64;
        Self {
            fft: ((num_inputs + num_outputs) as f64 / (2.0 * paths)).min(1.0),
            job: (2.0 / paths).min(1.0),
        }
    }
}

/// Growth factors the planner considers between consecutive levels.
pub const GROWTH_FACTORS: [usize; 3] = [2, 4, 8];

/// Smallest quantum the plan uses; hosts with smaller power-of-two buffers still get 16.
pub const MIN_QUANTUM: usize = 16;
/// Largest quantum taken from the host's block size.
pub const MAX_QUANTUM: usize = 1024;
/// Quantum when the host's maximum block size is not a power of two in range.
pub const DEFAULT_QUANTUM: usize = 64;
/// Default least slack of a worker level: 1536 samples, 32 ms at 48 kHz, more than the
/// longest stalls seen on a loaded 2-core VM (16 instances of a 10 s IR at 64-sample blocks).
pub const DEFAULT_MIN_WORKER_SLACK: usize = 1536;
/// Largest partition size of a level after the first that runs on the audio thread, spread
/// over its period, when its slack is too small for a worker: bigger levels keep a worker's
/// slack, so the GPU may take them (its levels start at 1024).
pub const MAX_SPREAD_PARTITION: usize = 512;
/// Default cap on partition sizes.
pub const DEFAULT_MAX_PARTITION_SIZE: usize = 16384;

/// How the engine trades latency against CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LatencyMode {
    /// Direct-form FIR head, reported latency 0.
    Zero,
    /// No head, reported latency of one quantum.
    LowCpu,
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
}

impl Default for PlanLimits {
    fn default() -> Self {
        Self {
            max_partition_size: DEFAULT_MAX_PARTITION_SIZE,
            min_worker_slack: DEFAULT_MIN_WORKER_SLACK,
        }
    }
}

/// One uniformly partitioned overlap-save level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Partition size `P` in samples (a power of two); the FFT size is `2P`.
    pub partition_size: usize,
    /// Number of partitions of this level.
    pub num_partitions: usize,
    /// First IR tap this level covers (`D`).
    pub ir_offset: usize,
}

impl Level {
    /// One past the last IR tap this level covers.
    pub fn ir_end(&self) -> usize {
        self.ir_offset + self.partition_size * self.num_partitions
    }
}

/// The whole plan for one engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionPlan {
    /// Quantum `q`: level 0's partition size and the head's length.
    pub quantum: usize,
    /// Latency mode the plan was made for.
    pub latency_mode: LatencyMode,
    /// Taps computed by the direct-form head (`min(q, ir_len)` in zero-latency mode, else 0).
    pub head_taps: usize,
    /// IR length the plan covers, in samples.
    pub ir_len: usize,
    /// The FFT levels, in order of IR offset; empty when the head covers the whole IR.
    pub levels: Vec<Level>,
    /// Least slack of a level that runs on a worker ([`PlanLimits::min_worker_slack`]): a
    /// level after the first with less runs on the audio thread, spread over its period.
    pub min_worker_slack: usize,
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
            LatencyMode::LowCpu => (0, 0),
        };

        let levels = if offset < ir_len {
            let shape = ChainLimits {
                ir_len,
                max_partition_size,
                min_worker_slack: limits.min_worker_slack,
                latency: latency_for(latency_mode, quantum),
                weights,
            };
            cheapest_levels(quantum, offset, &shape, true).1
        } else {
            Vec::new()
        };

        Self {
            quantum,
            latency_mode,
            head_taps,
            ir_len,
            levels,
            min_worker_slack: limits.min_worker_slack,
        }
    }

    /// The cost model's estimate for the whole plan, in flops per output sample and path.
    pub fn estimated_cost(&self) -> f64 {
        self.levels
            .iter()
            .enumerate()
            .map(|(idx, level)| {
                let on_worker = !self.on_audio_thread(idx);
                level_cost(level.partition_size, level.num_partitions, on_worker)
            })
            .sum()
    }

    /// Whether level `level_idx` runs on the audio thread whatever the executor: level 0, whose
    /// result is due as its chunk completes, and every level with less slack than
    /// [`Self::min_worker_slack`], whose period is spread over the quanta of its slack
    /// ([`super::spread`]). The others run on workers (or the GPU), or inline with the inline
    /// executor.
    pub fn on_audio_thread(&self, level_idx: usize) -> bool {
        let level = &self.levels[level_idx];
        !runs_on_worker(
            level_idx == 0,
            level,
            self.latency_samples(),
            self.min_worker_slack,
        )
    }

    /// Latency the plugin reports to the host, in samples (`0`, or `q` in low-CPU mode).
    pub fn latency_samples(&self) -> usize {
        latency_for(self.latency_mode, self.quantum)
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

    /// One line for humans: `q=64 head=64 | 64x7@64 256x6@512 ...` (size x count @ offset).
    pub fn describe(&self) -> String {
        let mut text = format!(
            "q={} latency={} head={}",
            self.quantum,
            self.latency_samples(),
            self.head_taps
        );
        if !self.levels.is_empty() {
            text.push_str(" |");
        }
        for level in &self.levels {
            text.push_str(&format!(
                " {}x{}@{}",
                level.partition_size, level.num_partitions, level.ir_offset
            ));
        }
        text
    }
}

/// The cost model of the module docs for one level of a stereo path.
pub fn level_cost(partition_size: usize, num_partitions: usize, on_worker: bool) -> f64 {
    weighted_level_cost(
        partition_size,
        num_partitions,
        on_worker,
        CostWeights::STEREO,
    )
}

/// [`level_cost`] with the FFT and job terms weighted per path.
pub fn weighted_level_cost(
    partition_size: usize,
    num_partitions: usize,
    on_worker: bool,
    weights: CostWeights,
) -> f64 {
    let size = partition_size as f64;
    let mac = MAC_FLOPS * num_partitions as f64 * (size + 1.0) / size;
    let fft = weights.fft * FFT_FLOPS * (2.0 * size).log2();
    let job = if on_worker {
        weights.job * JOB_FLOPS / size
    } else {
        0.0
    };
    mac + fft + job
}

/// What bounds every chain the planner considers.
struct ChainLimits {
    ir_len: usize,
    max_partition_size: usize,
    min_worker_slack: usize,
    /// The plan's latency (the quantum in low-CPU mode, else 0).
    latency: usize,
    weights: CostWeights,
}

/// The plan's latency in samples: `0`, or the quantum in low-CPU mode.
fn latency_for(latency_mode: LatencyMode, quantum: usize) -> usize {
    match latency_mode {
        LatencyMode::Zero => 0,
        LatencyMode::LowCpu => quantum,
    }
}

/// Whether a level runs on a worker (or the GPU, or inline with the inline executor): not the
/// first level, whose result is due as its chunk completes, nor a level with less slack
/// (`D + latency - P`) than `min_worker_slack`, which the audio thread spreads over its period.
/// The one rule for both the planner's costs and [`PartitionPlan::on_audio_thread`].
fn runs_on_worker(first: bool, level: &Level, latency: usize, min_worker_slack: usize) -> bool {
    !first && slack(level, latency) >= min_worker_slack
}

/// Samples between a level's input chunk completing and its first output sample being needed,
/// `D + latency - P`, with the plan's `latency`.
fn slack(level: &Level, latency: usize) -> usize {
    level.ir_offset + latency - level.partition_size
}

/// Where a level of `size` may start after a level of `previous_size` that starts at
/// `previous_offset`, on the previous level's partition grid so the levels tile the IR:
/// `D >= 2P` (a period of slack) for a level the audio thread may spread
/// ([`MAX_SPREAD_PARTITION`]), and also `D - P >= min_worker_slack` for a bigger one, which
/// runs on a worker.
fn level_start(
    size: usize,
    previous_size: usize,
    previous_offset: usize,
    min_worker_slack: usize,
) -> usize {
    let earliest = if size <= MAX_SPREAD_PARTITION {
        2 * size
    } else {
        (2 * size).max(size + min_worker_slack)
    };
    previous_offset
        + earliest
            .saturating_sub(previous_offset)
            .next_multiple_of(previous_size)
}

/// The cheapest levels covering taps `[offset, ir_len)` starting with partition size
/// `partition_size`, and their cost. Either this level covers the rest, or it covers up to
/// where a larger size may start and the search goes on from there.
fn cheapest_levels(
    partition_size: usize,
    offset: usize,
    limits: &ChainLimits,
    first: bool,
) -> (f64, Vec<Level>) {
    let ir_len = limits.ir_len;
    let level = |num_partitions| Level {
        partition_size,
        num_partitions,
        ir_offset: offset,
    };
    let rest = (ir_len - offset).div_ceil(partition_size);
    // A level on the audio thread (spread over its period, after the first) hands no job over.
    let on_worker = runs_on_worker(first, &level(rest), limits.latency, limits.min_worker_slack);
    let cost = |num_partitions| {
        weighted_level_cost(partition_size, num_partitions, on_worker, limits.weights)
    };
    let mut best = (cost(rest), vec![level(rest)]);
    for factor in GROWTH_FACTORS {
        let next_size = partition_size * factor;
        let next_start = level_start(next_size, partition_size, offset, limits.min_worker_slack);
        if next_size > limits.max_partition_size || next_start <= offset || next_start >= ir_len {
            continue;
        }
        let num_partitions = (next_start - offset) / partition_size;
        let (tail_cost, tail) = cheapest_levels(next_size, next_start, limits, false);
        let cost = cost(num_partitions) + tail_cost;
        // Ties keep the plan with fewer levels (fewer threads).
        if cost < best.0 {
            let mut levels = vec![level(num_partitions)];
            levels.extend(tail);
            best = (cost, levels);
        }
    }
    best
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
mod tests {
    use super::*;

    fn check_invariants(plan: &PartitionPlan) {
        // Levels tile the IR without gaps from the head (or 0) to at least the IR's end.
        let mut expected_offset = match plan.latency_mode {
            LatencyMode::Zero => plan.quantum,
            LatencyMode::LowCpu => 0,
        };
        for (level_idx, level) in plan.levels.iter().enumerate() {
            assert_eq!(
                level.ir_offset, expected_offset,
                "gap before level {level_idx}"
            );
            assert!(level.partition_size.is_power_of_two());
            assert!(level.num_partitions >= 1);
            assert!(
                plan.output_delay(level) >= level.partition_size,
                "level {level_idx} late"
            );
            if level_idx > 0 {
                assert!(
                    level.ir_offset >= 2 * level.partition_size,
                    "level {level_idx} slack"
                );
                assert!(level.partition_size > plan.levels[level_idx - 1].partition_size);
            }
            expected_offset = level.ir_end();
        }
        assert!(expected_offset >= plan.ir_len || plan.levels.is_empty());
        if plan.levels.is_empty() {
            assert_eq!(plan.latency_mode, LatencyMode::Zero);
            assert!(plan.ir_len <= plan.quantum);
        }
        // The last level covers less than one partition past the IR's end.
        if let Some(last) = plan.levels.last() {
            assert!(last.ir_end() - plan.ir_len < last.partition_size);
        }
    }

    #[test]
    fn quantum_follows_power_of_two_blocks() {
        assert_eq!(quantum_for_block_size(64), 64);
        assert_eq!(quantum_for_block_size(128), 128);
        assert_eq!(quantum_for_block_size(256), 256);
        assert_eq!(quantum_for_block_size(512), 512);
        assert_eq!(quantum_for_block_size(1024), 1024);
        assert_eq!(quantum_for_block_size(4096), MAX_QUANTUM);
        assert_eq!(quantum_for_block_size(1000), DEFAULT_QUANTUM);
        assert_eq!(quantum_for_block_size(8), MIN_QUANTUM);
        assert_eq!(quantum_for_block_size(1), MIN_QUANTUM);
        assert_eq!(quantum_for_block_size(100), DEFAULT_QUANTUM);
    }

    #[test]
    fn short_irs_use_the_head_only_or_one_level() {
        let plan = PartitionPlan::new(1, 64, LatencyMode::Zero, PlanLimits::default());
        assert_eq!(plan.head_taps, 1);
        assert!(plan.levels.is_empty());
        let plan = PartitionPlan::new(64, 64, LatencyMode::Zero, PlanLimits::default());
        assert!(plan.levels.is_empty());
        let plan = PartitionPlan::new(65, 64, LatencyMode::Zero, PlanLimits::default());
        assert_eq!(
            plan.levels,
            vec![Level {
                partition_size: 64,
                num_partitions: 1,
                ir_offset: 64
            }]
        );
        let plan = PartitionPlan::new(1, 64, LatencyMode::LowCpu, PlanLimits::default());
        assert_eq!(plan.head_taps, 0);
        assert_eq!(
            plan.levels,
            vec![Level {
                partition_size: 64,
                num_partitions: 1,
                ir_offset: 0
            }]
        );
        assert_eq!(plan.latency_samples(), 64);
    }

    #[test]
    fn ten_second_ir_grows_to_the_cap() {
        let plan = PartitionPlan::new(480_000, 64, LatencyMode::Zero, PlanLimits::default());
        check_invariants(&plan);
        let sizes: Vec<usize> = plan.levels.iter().map(|l| l.partition_size).collect();
        assert_eq!(sizes, vec![64, 512, 4096, 16384]);
        // Level 1 starts at 2P = 1024 with less slack than a worker gets: it runs on the
        // audio thread, spread over its period; level 2 has a worker's slack.
        assert_eq!(
            plan.levels[0],
            Level {
                partition_size: 64,
                num_partitions: 15,
                ir_offset: 64
            }
        );
        assert_eq!(plan.levels[1].ir_offset, 1024);
        assert!(plan.on_audio_thread(1));
        assert!(!plan.on_audio_thread(2));
        assert!(plan.slack_samples(&plan.levels[2]) >= DEFAULT_MIN_WORKER_SLACK);
        assert_eq!(plan.levels[3].ir_offset, 32768);
        assert_eq!(
            plan.levels[3].num_partitions,
            (480_000usize - 32768).div_ceil(16384)
        );
        assert_eq!(plan.slack_samples(&plan.levels[3]), 32768 - 16384);
    }

    /// zita-convolver's layout rule: x4 growth as soon as allowed, up to the cap.
    fn fixed_growth_plan(ir_len: usize, quantum: usize, cap: usize) -> Vec<Level> {
        let mut levels = Vec::new();
        let (mut size, mut offset) = (quantum, quantum);
        while offset < ir_len {
            let next = (size * 4).min(cap);
            let end = if next > size && 2 * next < ir_len {
                2 * next
            } else {
                ir_len
            };
            let num_partitions = (end - offset).div_ceil(size);
            levels.push(Level {
                partition_size: size,
                num_partitions,
                ir_offset: offset,
            });
            offset += num_partitions * size;
            size = next;
        }
        levels
    }

    #[test]
    fn the_cost_model_picks_the_cheapest_chain() {
        for quantum in [16, 64, 512] {
            for ir_len in [1000, 4097, 48_000, 240_000, 480_000] {
                // zita's rule knows no least slack: compare under the same limits.
                let limits = PlanLimits {
                    min_worker_slack: 0,
                    ..PlanLimits::default()
                };
                let plan = PartitionPlan::new(ir_len, quantum, LatencyMode::Zero, limits);
                check_invariants(&plan);
                let fixed = PartitionPlan {
                    levels: fixed_growth_plan(ir_len, quantum, DEFAULT_MAX_PARTITION_SIZE),
                    ..plan.clone()
                };
                check_invariants(&fixed);
                assert!(
                    plan.estimated_cost() <= fixed.estimated_cost() + 1e-9,
                    "{} costs more than {}",
                    plan.describe(),
                    fixed.describe()
                );
                // Uniform (one level) is a candidate too.
                let uniform = level_cost(quantum, (ir_len - quantum).div_ceil(quantum), false);
                assert!(plan.estimated_cost() <= uniform + 1e-9);
            }
        }
        // The model's terms pull the right ways: more partitions and worker jobs cost more.
        assert!(level_cost(1024, 7, false) > level_cost(1024, 6, false));
        assert!(level_cost(1024, 6, true) > level_cost(1024, 6, false));
        assert!(level_cost(256, 6, true) - level_cost(256, 6, false) > 100.0);
    }

    #[test]
    fn uniform_plan_when_capped_at_the_quantum() {
        let limits = PlanLimits {
            max_partition_size: 64,
            ..PlanLimits::default()
        };
        let plan = PartitionPlan::new(10_000, 64, LatencyMode::Zero, limits);
        check_invariants(&plan);
        assert_eq!(plan.levels.len(), 1);
        assert_eq!(
            plan.levels[0].num_partitions,
            (10_000usize - 64).div_ceil(64)
        );
    }

    #[test]
    fn invariants_hold_for_many_shapes() {
        for latency_mode in [LatencyMode::Zero, LatencyMode::LowCpu] {
            for max_block in [1, 7, 16, 64, 100, 128, 256, 512, 4096] {
                for max_partition_size in [16, 64, 1024, 16384, 65536] {
                    for ir_len in [1, 15, 63, 64, 65, 129, 1000, 4097, 48_000, 480_001] {
                        let limits = PlanLimits {
                            max_partition_size,
                            ..PlanLimits::default()
                        };
                        let plan = PartitionPlan::new(ir_len, max_block, latency_mode, limits);
                        check_invariants(&plan);
                        // Every level after the first has a period of slack at least: a
                        // spread level finishes within it; a worker level has the least
                        // slack a worker gets.
                        for (idx, level) in plan.levels.iter().enumerate().skip(1) {
                            let slack = plan.slack_samples(level);
                            assert!(slack >= level.partition_size, "{}", plan.describe());
                            assert_eq!(
                                plan.on_audio_thread(idx),
                                slack < DEFAULT_MIN_WORKER_SLACK,
                                "{}",
                                plan.describe()
                            );
                        }
                    }
                }
            }
        }
    }
}
