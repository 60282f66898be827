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
//! is complete: that slack is the deadline a background executor gets (the worker issue).
//!
//! # Growth rule (the cost model)
//!
//! Per output sample and path, a level costs about `num_partitions` complex multiply-adds (the
//! spectral MAC) plus two FFTs of size `2P` amortised over `P` samples, `~ 2 log2(2P)` butterfly
//! operations. The MAC term dominates for long IRs, so partitions should grow as soon as the
//! `D >= 2P` rule allows, while the FFT term (and the size of the spike when a level runs on the
//! audio thread) bounds the largest size. The plan therefore grows partition sizes by
//! [`GROWTH_FACTOR`] (x4), each level covering exactly the span up to where the next size may
//! start (`2 * P_next`), and caps sizes at [`PlanLimits::max_partition_size`]. A level that can
//! reach the end of the IR within its own span ends the plan, so short IRs use few levels.

/// Smallest quantum the plan uses; hosts with smaller power-of-two buffers still get 16.
pub const MIN_QUANTUM: usize = 16;
/// Largest quantum taken from the host's block size.
pub const MAX_QUANTUM: usize = 512;
/// Quantum when the host's maximum block size is not a power of two in range.
pub const DEFAULT_QUANTUM: usize = 64;
/// Ratio between the partition sizes of consecutive levels.
pub const GROWTH_FACTOR: usize = 4;
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
}

impl Default for PlanLimits {
    fn default() -> Self {
        Self {
            max_partition_size: DEFAULT_MAX_PARTITION_SIZE,
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
}

impl PartitionPlan {
    /// Plans the engine for an IR of `ir_len` samples (at least 1) and a host that sends at most
    /// `max_block_size` samples per call.
    pub fn new(
        ir_len: usize,
        max_block_size: usize,
        latency_mode: LatencyMode,
        limits: PlanLimits,
    ) -> Self {
        let quantum = quantum_for_block_size(max_block_size);
        let max_partition_size = limits.max_partition_size.max(quantum).next_power_of_two();
        let ir_len = ir_len.max(1);

        let (head_taps, mut offset) = match latency_mode {
            LatencyMode::Zero => (ir_len.min(quantum), quantum),
            LatencyMode::LowCpu => (0, 0),
        };

        let mut levels = Vec::new();
        let mut partition_size = quantum;
        while offset < ir_len {
            let next_size = (partition_size * GROWTH_FACTOR).min(max_partition_size);
            // Where the next level may start: its offset must be at least twice its size.
            let next_start = 2 * next_size;
            let can_grow = next_size > partition_size && next_start > offset;
            let end = if can_grow && next_start < ir_len {
                next_start
            } else {
                ir_len
            };
            let num_partitions = (end - offset).div_ceil(partition_size);
            levels.push(Level {
                partition_size,
                num_partitions,
                ir_offset: offset,
            });
            offset += num_partitions * partition_size;
            if can_grow {
                partition_size = next_size;
            }
        }

        Self {
            quantum,
            latency_mode,
            head_taps,
            ir_len,
            levels,
        }
    }

    /// Latency the plugin reports to the host, in samples (`0`, or `q` in low-CPU mode).
    pub fn latency_samples(&self) -> usize {
        match self.latency_mode {
            LatencyMode::Zero => 0,
            LatencyMode::LowCpu => self.quantum,
        }
    }

    /// Delay from a level's input time to its output time, `D + latency`. Always at least the
    /// level's partition size, so a level computed when its chunk completes is on time.
    pub fn output_delay(&self, level: &Level) -> usize {
        level.ir_offset + self.latency_samples()
    }

    /// Samples between a level's input chunk completing and its first output sample being
    /// needed: the deadline of whichever executor runs it.
    pub fn slack_samples(&self, level: &Level) -> usize {
        self.output_delay(level) - level.partition_size
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

/// The quantum for a host maximum block size: the block size itself when it is a power of two
/// in `[MIN_QUANTUM, MAX_QUANTUM]`, [`MAX_QUANTUM`] for larger powers of two (which it divides),
/// [`MIN_QUANTUM`] below that range, else [`DEFAULT_QUANTUM`].
///
/// Hosts with power-of-two buffers send whole quanta, which level 0 computes head included in
/// the frequency domain; the cap bounds the direct-form head (`q` taps per sample) for the
/// calls that arrive in pieces.
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
        assert_eq!(sizes, vec![64, 256, 1024, 4096, 16384]);
        assert_eq!(
            plan.levels[0],
            Level {
                partition_size: 64,
                num_partitions: 7,
                ir_offset: 64
            }
        );
        assert_eq!(plan.levels[1].ir_offset, 512);
        assert_eq!(plan.levels[4].ir_offset, 32768);
        assert_eq!(
            plan.levels[4].num_partitions,
            (480_000usize - 32768).div_ceil(16384)
        );
        assert_eq!(plan.slack_samples(&plan.levels[4]), 32768 - 16384);
    }

    #[test]
    fn uniform_plan_when_capped_at_the_quantum() {
        let limits = PlanLimits {
            max_partition_size: 64,
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
                        let limits = PlanLimits { max_partition_size };
                        let plan = PartitionPlan::new(ir_len, max_block, latency_mode, limits);
                        check_invariants(&plan);
                    }
                }
            }
        }
    }
}
