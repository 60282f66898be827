//! What a benchmark run is asked to do ([`BenchConfig`]).

use super::pace::Pace;
use crate::engine::{Executor, LatencyMode};

/// How to run a benchmark.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Host block size in samples.
    pub block: usize,
    /// Sample rate in Hz (for deadlines and audio seconds).
    pub rate: u32,
    /// Plugin instances processed one after another in each block (one engine each).
    pub instances: usize,
    /// Zero latency, low CPU, or the offload mode with its latency.
    pub latency_mode: LatencyMode,
    /// How blocks are released ([`Pace`]); every pace but [`Pace::Offline`] runs the engines in
    /// real-time mode, where lates are possible.
    pub pace: Pace,
    /// Also render the first instance's input offline and report how far its output is from
    /// that render ([`BenchResult::snr_vs_offline_db`](super::BenchResult::snr_vs_offline_db)).
    pub check: bool,
    /// SCHED_FIFO priority of the measuring thread while it runs, as a host gives its audio
    /// thread (Windows: MMCSS "Pro Audio" at critical, see `RealtimeGuard::raise`); `None`
    /// leaves it as it is.
    pub audio_priority: Option<u32>,
    /// Blocks in the first `warmup_s` seconds are left out of the per-block statistics.
    pub warmup_s: f64,
    /// Stop at a block boundary once the timed loop has run this long.
    pub max_wall_s: Option<f64>,
    /// Where levels after the first run.
    pub executor: Executor,
    /// Free-form name of this configuration.
    pub variant: String,
    /// Instead of engines, each call does this many microseconds of fixed work (a spin that
    /// walks a 512 KiB buffer): the machine's own timing noise, measured the same way, at the
    /// same pace and priority, so an engine's per-call tail can be read against it.
    pub fixed_work_us: Option<f64>,
    /// Read the calling thread's CPU clock around each block's calls, for the per-call CPU
    /// figures ([`BenchResult::cpu_process_s`](super::BenchResult::cpu_process_s), `oncpu_*`,
    /// `offcpu_max_us`). Each read is a system call on Linux (no vDSO for thread clocks), about
    /// 0.25 us on the VMs here: at 64-sample blocks 0.0004 CPU-s/s, a tenth of a stereo 1 s
    /// reverb's. The harness mode leaves it off, as the peers' harnesses time their blocks by the
    /// monotonic clock alone.
    pub call_cpu: bool,
}
