//! What a benchmark run measured ([`BenchResult`]), one thread's or a whole session's.

use super::pace::Pace;

/// What a benchmark measured (the harness contract's fields).
#[derive(Debug, Clone)]
pub struct BenchResult {
    /// `longtail`, or `fixed-work` for
    /// [`BenchConfig::fixed_work_us`](super::BenchConfig::fixed_work_us).
    pub engine: &'static str,
    pub variant: String,
    /// `cpu`, or `gpu` when any level ran on the GPU.
    pub backend: &'static str,
    /// The GPU adapter, when the engines opened one.
    pub gpu_adapter: Option<String>,
    /// The GPU hub's round trip over the run (median, 99th percentile, largest), in us.
    pub gpu_rt_us: [f64; 3],
    /// The same periods' phases and round trips by batch ([`longtail_gpu::PeriodStats`]).
    pub gpu_periods: Option<longtail_gpu::PeriodStats>,
    /// CPU seconds of the GPU hub's thread over the timed run (the rest of the process's CPU
    /// beyond the audio and worker threads is the driver's).
    pub gpu_hub_cpu_s: Option<f64>,
    pub block: usize,
    pub rate: u32,
    /// Input channels.
    pub channels: usize,
    /// Output channels (the matrix's, else `channels`).
    pub outputs: usize,
    /// Paths after routing (a matrix's present paths; 1 or 2 for the diagonal layouts).
    pub paths: usize,
    pub ir_taps: usize,
    pub instances: usize,
    pub audio_s: f64,
    pub n_blocks: usize,
    pub cpu_s: f64,
    pub cpu_main_s: f64,
    /// The calling threads' CPU seconds inside each block's calls (the engines' `process()`,
    /// and with `--out` the copy of the first instance's output): their `cpu_main_s` less
    /// what the host loop between blocks costs (a paced loop's sleeps and wake-ups, which a
    /// host's audio thread pays whatever plugin it runs).
    /// `None` where the run did not read it
    /// ([`BenchConfig::call_cpu`](super::BenchConfig::call_cpu)).
    pub cpu_process_s: Option<f64>,
    pub wall_s: f64,
    pub threads: usize,
    pub setup_s: f64,
    pub warmup_blocks: usize,
    pub blk_med_us: f64,
    pub blk_p99_us: f64,
    pub blk_max_us: f64,
    pub blk_max_all_us: f64,
    /// The measuring thread's own CPU time per call (its thread clock, read just outside the
    /// wall-clock interval), after warm-up: 99th percentile and largest, in us. Where the
    /// kernel accounts for a hypervisor's steal time (Linux guests with paravirtual steal
    /// clocks), that time is not in here, while the wall-clock `blk_*` figures hold it. `None`
    /// where the run did not read it ([`BenchConfig::call_cpu`](super::BenchConfig::call_cpu)), as
    /// the next.
    pub oncpu_p99_us: Option<f64>,
    pub oncpu_max_us: Option<f64>,
    /// The largest wall-clock time of one call that was not the thread's CPU time (stolen by
    /// the hypervisor, or the thread preempted), after warm-up, in us.
    pub offcpu_max_us: Option<f64>,
    /// Time the machine's hypervisor took from all its CPUs during the timed loop, in ms
    /// (`steal` of /proc/stat); -1 where unknown.
    pub steal_ms: f64,
    pub deadline_us: f64,
    pub latency_samples: usize,
    pub late_blocks: u64,
    pub dropped_chunks: u64,
    /// Times a call waited for a worker result while the host ran ahead of real time (see
    /// `engine::realtime::pace`), and the longest wait in us.
    pub waits: u64,
    pub wait_max_us: f64,
    /// Times the measuring thread woke a worker (a system call each), per second of audio.
    pub wakes_per_s: f64,
    pub layout: String,
    /// Whether the engines ran in real-time mode.
    pub paced: bool,
    /// The [`Pace`] the blocks were released at.
    pub pace: Pace,
    /// With [`BenchConfig::check`](super::BenchConfig::check): the first instance's output against
    /// its offline render, in dB (300 when identical).
    pub snr_vs_offline_db: Option<f64>,
    /// Resident memory of the process once the engines are built, in KiB.
    pub rss_kb: u64,
    /// Resident memory the engines added, per instance, in KiB.
    pub mem_per_instance_kb: u64,
    /// The measuring thread's SCHED_FIFO priority (Windows: the one asked for, when MMCSS or
    /// the thread priority was granted), 0 when it ran with the default policy.
    pub audio_priority: u32,
    /// Host threads the session ran on ([`run_host_threads`](super::run_host_threads)); 1 for
    /// [`run`](super::run).
    pub host_threads: usize,
    /// This thread's index among them; `None` for a whole run or session.
    pub host_thread: Option<usize>,
}
