//! What an engine is built for besides its IR ([`EngineConfig`]), and where its levels run
//! ([`Executor`], and for the GPU, [`GpuPolicy`]).
//!
//! Uses the plan's latency modes and limits; plain configuration, it knows nothing of how the
//! levels are placed ([`placement`](super::placement) reads it).

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

/// When the GPU takes levels ([`Executor::Gpu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuPolicy {
    /// Only when it pays: a real GPU (not a CPU adapter such as lavapipe) that opened and
    /// calibrated, and an engine with at least [`AUTO_MIN_WORK`](super::AUTO_MIN_WORK) path-samples
    /// of IR. Smaller engines start on the CPU with a way to the GPU, and go there when the Auto
    /// engines of the process together load the CPU and the GPU costs less
    /// ([`load_policy`](super::placement::load_policy)).
    Auto,
    /// Every level of at least [`GPU_MIN_PARTITION`](super::GPU_MIN_PARTITION) samples on the GPU
    /// whenever one can be opened, whatever the calibration says; `allow_cpu_adapter` accepts
    /// lavapipe (tests, or `LONGTAIL_GPU_ALLOW_CPU=1`). Levels still fall back to the CPU when it
    /// fails or is late.
    Forced {
        /// Accept a CPU adapter.
        allow_cpu_adapter: bool,
    },
}
