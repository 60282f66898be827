//! What an engine is built for besides its IR ([`EngineConfig`]), and where its levels run
//! ([`Executor`]).
//!
//! Uses the plan's latency modes and limits and the GPU placement's policy.

use super::placement::gpu_placement::GpuPolicy;
use super::plan::{LatencyMode, PlanLimits};

/// What an engine is built for besides its IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Largest number of samples one `process()` call may carry.
    pub max_block_size: usize,
    /// Input channels (1 to [`MAX_CHANNELS`](super::routing::MAX_CHANNELS); a matrix IR's own inputs).
    pub num_inputs: usize,
    /// Output channels (1 to [`MAX_CHANNELS`](super::routing::MAX_CHANNELS); a matrix IR's own outputs).
    pub num_outputs: usize,
    /// Zero latency (head FIR), low CPU (one quantum of latency) or offload (a fixed latency,
    /// every level on a background executor).
    pub latency_mode: LatencyMode,
    /// Limits from the executors.
    pub limits: PlanLimits,
    /// Where levels after the first run.
    pub executor: Executor,
}

/// Where the levels after the first one run (and level 0 in the offload mode). Level 0 and
/// the head otherwise run on the audio thread, and so do the levels with too little slack for
/// a worker, spread over their period ([`spread`](super::runner::spread); whole with
/// [`Executor::Inline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Executor {
    /// Inside `process()`, when their chunk completes (no threads; spikes at big partitions).
    Inline,
    /// One worker thread per level with a worker's slack, with the late policy of
    /// [`worker::late_policy`](super::worker::late_policy).
    Workers,
    /// Worker threads, and the levels the GPU can take on the process's GPU hub, each with its
    /// worker thread as a warm CPU standby (see [`worker::gpu`](super::worker::gpu)).
    Gpu(GpuPolicy),
}

impl Executor {
    /// Whether engines built for it may put levels on the GPU (what their plan must allow for).
    pub fn may_use_gpu(self) -> bool {
        matches!(self, Self::Gpu(_))
    }
}
