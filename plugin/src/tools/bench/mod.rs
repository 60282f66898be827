//! `longtail-cli bench`: drives engines block by block like a host and measures them, in the
//! peer-benchmark harness contract of `shared/bench/peers/RESULTS.md` (one JSON line per run).
//!
//! Runs on the calling thread (the "audio thread" of the measurement); engines are built before
//! the timed loop. Without pacing, blocks are fed back to back and engines run in offline mode
//! (they wait for their workers, like zita-convolver's `process(sync)`), so nothing is late and
//! CPU time is comparable; with pacing, each block is released at its real-time deadline and
//! engines run in real-time mode, so lates are counted exactly as in a host.
//!
//! Each call is timed on the wall clock (what a host's deadline sees) and on the thread's CPU
//! clock, read just outside the wall-clock interval. On a virtual machine the two tell the
//! engine's work from time the hypervisor took (Linux guests leave paravirtual steal time out
//! of a thread's CPU time), and [`BenchConfig::fixed_work_us`] measures the same tail for a
//! job of known length, with no engine at all.
//!
//! [`run_host_threads`] spreads the instances over several such threads, as a DAW runs its
//! tracks on several audio threads: each thread has its own engines, pace and deadline
//! statistics, and they start their timed loops together.

use std::borrow::Cow;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::cpu_time;
use crate::engine::{
    Engine, EngineConfig, EngineError, Executor, LatencyMode, MAX_CHANNELS, PlanLimits,
    stagger_phase,
};
use crate::ir::Ir;
use crate::rng::Rng;

mod pace;
mod raw;
mod report;
pub use pace::{AHEAD_PAUSE, Pace};
use pace::{OfflineRender, Pacer};
pub use raw::{read_raw_f32, write_raw_f32};

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
    /// that render ([`BenchResult::snr_vs_offline_db`]).
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
    /// figures ([`BenchResult::cpu_process_s`], `oncpu_*`, `offcpu_max_us`). Each read is a
    /// system call on Linux (no vDSO for thread clocks), about 0.25 us on the VMs here: at
    /// 64-sample blocks 0.0004 CPU-s/s, a tenth of a stereo 1 s reverb's. The harness mode
    /// leaves it off, as the peers' harnesses time their blocks by the monotonic clock alone.
    pub call_cpu: bool,
}

/// What a benchmark measured (the harness contract's fields).
#[derive(Debug, Clone)]
pub struct BenchResult {
    /// `longtail`, or `fixed-work` for [`BenchConfig::fixed_work_us`].
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
    /// `None` where the run did not read it ([`BenchConfig::call_cpu`]).
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
    /// where the run did not read it ([`BenchConfig::call_cpu`]), as the next.
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
    /// With [`BenchConfig::check`]: the first instance's output against its offline render,
    /// in dB (300 when identical).
    pub snr_vs_offline_db: Option<f64>,
    /// Resident memory of the process once the engines are built, in KiB.
    pub rss_kb: u64,
    /// Resident memory the engines added, per instance, in KiB.
    pub mem_per_instance_kb: u64,
    /// The measuring thread's SCHED_FIFO priority (Windows: the one asked for, when MMCSS or
    /// the thread priority was granted), 0 when it ran with the default policy.
    pub audio_priority: u32,
    /// Host threads the session ran on ([`run_host_threads`]); 1 for [`run`].
    pub host_threads: usize,
    /// This thread's index among them; `None` for a whole run or session.
    pub host_thread: Option<usize>,
}

/// The benchmark workload of `shared/bench/peers`: white noise N(0, 0.1^2), seeded.
pub fn noise_input(num_channels: usize, num_frames: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut rng = Rng::new(seed);
    (0..num_channels)
        .map(|_| {
            (0..num_frames)
                .map(|_| (0.1 * rng.gaussian()) as f32)
                .collect()
        })
        .collect()
}

/// The IR of the harness contract from its channels: with `outputs`, an `inputs` x `outputs`
/// matrix (`channels[i * outputs + o]` is input `i` to output `o`); without, the diagonal
/// (channel `c` for path `c -> c`): mono or stereo for one or two inputs, else a matrix with
/// only its diagonal. `channels` must hold as many channels as that says.
pub fn harness_ir(
    rate: u32,
    inputs: usize,
    outputs: Option<usize>,
    channels: Vec<Vec<f32>>,
) -> Result<Ir, crate::ir::IrError> {
    use crate::ir::IrLayout;
    let bad_size = crate::ir::IrError::MatrixSize {
        inputs,
        outputs: outputs.unwrap_or(inputs),
    };
    match outputs {
        None if inputs <= 2 => Ir::new("bench", rate, channels),
        None => {
            let layout = IrLayout::matrix(inputs, inputs).ok_or(bad_size)?;
            let len = channels.first().map_or(0, Vec::len);
            let mut diagonal = channels.into_iter();
            let matrix = (0..inputs * inputs)
                .map(|c| match c % (inputs + 1) {
                    0 => diagonal.next().unwrap_or_default(),
                    _ => vec![0.0; len],
                })
                .collect();
            Ir::with_layout("bench", rate, layout, matrix)
        }
        Some(outputs) => {
            let layout = IrLayout::matrix(inputs, outputs).ok_or(bad_size)?;
            Ir::with_layout("bench", rate, layout, channels)
        }
    }
}

/// A reverb-like IR per path for [`harness_ir`]'s layout (`inputs * outputs` channels with
/// `outputs`, else `inputs`): seeded noise decaying to -60 dB over its length, unit energy.
pub fn decaying_noise_ir(
    inputs: usize,
    outputs: Option<usize>,
    num_taps: usize,
    rate: u32,
    seed: u64,
) -> Result<Ir, crate::ir::IrError> {
    let num_channels = inputs * outputs.unwrap_or(1);
    let channels = (0..num_channels)
        .map(|channel_idx| {
            let mut rng = Rng::new(seed + 1000 * channel_idx as u64);
            let decay = (-(1000f64.ln()) / num_taps.max(1) as f64).exp();
            let mut envelope = 1.0;
            let mut taps: Vec<f64> = (0..num_taps)
                .map(|_| {
                    let tap = rng.gaussian() * envelope;
                    envelope *= decay;
                    tap
                })
                .collect();
            let norm = taps
                .iter()
                .map(|t| t * t)
                .sum::<f64>()
                .sqrt()
                .max(f64::MIN_POSITIVE);
            taps.iter_mut().for_each(|t| *t /= norm);
            taps.into_iter().map(|t| t as f32).collect()
        })
        .collect();
    harness_ir(rate, inputs, outputs, channels)
}

/// Work of a fixed length per call, for [`BenchConfig::fixed_work_us`].
struct FixedWork {
    duration: Duration,
    buffer: Vec<f32>,
    cursor: usize,
}

impl FixedWork {
    const BUFFER_LEN: usize = 128 * 1024;

    fn new(micros: f64) -> Self {
        Self {
            duration: Duration::from_secs_f64(micros.max(0.0) * 1e-6),
            // Written once, so every page is resident before the clock runs.
            buffer: vec![1.0; Self::BUFFER_LEN],
            cursor: 0,
        }
    }

    /// Spins for the duration, 1024 samples of the buffer between looks at the clock.
    fn run(&mut self) {
        let start = Instant::now();
        while start.elapsed() < self.duration {
            let end = self.cursor + 1024;
            for sample in &mut self.buffer[self.cursor..end] {
                *sample = *sample * 0.5 + 0.5;
            }
            self.cursor = end % Self::BUFFER_LEN;
        }
        std::hint::black_box(&self.buffer);
    }
}

/// Runs `config.instances` engines for `ir` over `input` (one `Vec` per channel, 1 or 2), or
/// the fixed work of [`BenchConfig::fixed_work_us`] in their place. When `output` is given it
/// receives the first instance's output, one sample per input sample. Allocates only before
/// and after the timed loop. An owned `ir` is dropped once the engines are built, as a host
/// drops a file's samples once they are loaded, so the peak memory of the run (the harness
/// contract's `maxrss`) holds the engines and not a second copy of the IR.
pub fn run(
    ir: Cow<'_, Ir>,
    input: &[Vec<f32>],
    config: &BenchConfig,
    output: Option<&mut Vec<Vec<f32>>>,
) -> Result<BenchResult, EngineError> {
    run_on_thread(ir, input, config, output, 0, None)
}

/// Runs `config.instances` engines spread over `host_threads` threads (as even as they divide),
/// each a host audio thread of its own, paced by `config.pace`, with its own per-call and
/// deadline statistics. The threads build their engines, meet, and start their timed loops
/// together. Returns each thread's result, then the session's: the process's CPU (each
/// thread measures the whole process over the same time, so the largest), the worst thread's
/// per-call figures, and the sums of instances, lates, drops and threads.
pub fn run_host_threads(
    ir: &Ir,
    input: &[Vec<f32>],
    config: &BenchConfig,
    host_threads: usize,
) -> Result<(Vec<BenchResult>, BenchResult), EngineError> {
    let num_instances = config.instances.max(1);
    let host_threads = host_threads.clamp(1, num_instances);
    let start = Barrier::new(host_threads);
    let results: Vec<Result<BenchResult, EngineError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..host_threads)
            .map(|thread_idx| {
                let share = num_instances / host_threads;
                let extra = num_instances % host_threads;
                let first_instance = thread_idx * share + thread_idx.min(extra);
                let thread_config = BenchConfig {
                    instances: share + usize::from(thread_idx < extra),
                    ..config.clone()
                };
                let start = &start;
                scope.spawn(move || {
                    let ir = Cow::Borrowed(ir);
                    run_on_thread(ir, input, &thread_config, None, first_instance, Some(start)).map(
                        |result| BenchResult {
                            host_threads,
                            host_thread: Some(thread_idx),
                            ..result
                        },
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let threads = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let session = session_result(&threads);
    Ok((threads, session))
}

/// The whole session of [`run_host_threads`] from its threads' results.
fn session_result(threads: &[BenchResult]) -> BenchResult {
    let max = |field: fn(&BenchResult) -> f64| threads.iter().map(field).fold(0.0, f64::max);
    let max_read = |field: fn(&BenchResult) -> Option<f64>| {
        threads
            .iter()
            .map(field)
            .try_fold(0.0, |max, value| value.map(|value| f64::max(max, value)))
    };
    let first = &threads[0];
    let instances = threads.iter().map(|t| t.instances).sum::<usize>();
    BenchResult {
        variant: first.variant.clone(),
        backend: if threads.iter().any(|t| t.backend == "gpu") {
            "gpu"
        } else {
            "cpu"
        },
        gpu_adapter: threads.iter().find_map(|t| t.gpu_adapter.clone()),
        gpu_rt_us: [
            max(|t| t.gpu_rt_us[0]),
            max(|t| t.gpu_rt_us[1]),
            max(|t| t.gpu_rt_us[2]),
        ],
        // One hub per process: every thread saw the same periods.
        gpu_periods: threads.iter().find_map(|t| t.gpu_periods.clone()),
        gpu_hub_cpu_s: threads.iter().find_map(|t| t.gpu_hub_cpu_s),
        instances,
        n_blocks: threads.iter().map(|t| t.n_blocks).min().unwrap_or(0),
        cpu_s: max(|t| t.cpu_s),
        cpu_main_s: threads.iter().map(|t| t.cpu_main_s).sum(),
        cpu_process_s: threads.iter().map(|t| t.cpu_process_s).sum(),
        wall_s: max(|t| t.wall_s),
        audio_s: threads
            .iter()
            .map(|t| t.audio_s)
            .fold(f64::INFINITY, f64::min),
        threads: threads.iter().map(|t| t.threads).sum(),
        setup_s: max(|t| t.setup_s),
        blk_med_us: max(|t| t.blk_med_us),
        blk_p99_us: max(|t| t.blk_p99_us),
        blk_max_us: max(|t| t.blk_max_us),
        blk_max_all_us: max(|t| t.blk_max_all_us),
        oncpu_p99_us: max_read(|t| t.oncpu_p99_us),
        oncpu_max_us: max_read(|t| t.oncpu_max_us),
        offcpu_max_us: max_read(|t| t.offcpu_max_us),
        late_blocks: threads.iter().map(|t| t.late_blocks).sum(),
        dropped_chunks: threads.iter().map(|t| t.dropped_chunks).sum(),
        waits: threads.iter().map(|t| t.waits).sum(),
        wait_max_us: max(|t| t.wait_max_us),
        wakes_per_s: threads.iter().map(|t| t.wakes_per_s).sum(),
        rss_kb: threads.iter().map(|t| t.rss_kb).max().unwrap_or(0),
        mem_per_instance_kb: threads
            .iter()
            .map(|t| t.mem_per_instance_kb * t.instances as u64)
            .sum::<u64>()
            / instances.max(1) as u64,
        host_thread: None,
        ..first.clone()
    }
}

/// [`run`] as one of [`run_host_threads`]' threads: its engines are the instances from
/// `first_instance` on (for their stagger phases), and it waits at `start` for the others
/// before its timed loop.
fn run_on_thread(
    ir: Cow<'_, Ir>,
    input: &[Vec<f32>],
    config: &BenchConfig,
    output: Option<&mut Vec<Vec<f32>>>,
    first_instance: usize,
    start: Option<&Barrier>,
) -> Result<BenchResult, EngineError> {
    let _ftz = crate::engine::realtime::denormals::ScopedFtz::enable();
    let num_channels = input.len();
    let num_outputs = ir.layout.matrix_outputs().unwrap_or(num_channels);
    let ir_taps = ir.len();
    let num_frames = input.first().map_or(0, Vec::len);
    let block = config.block.max(1);

    let rss_before = crate::tools::resources::Resources::sample().rss_kb;
    let setup_start = Instant::now();
    let engine_config = EngineConfig {
        // A host that splits its periods announces the period as its largest block.
        max_block_size: match config.pace {
            Pace::Split { period } => period.max(block),
            _ => block,
        },
        num_inputs: num_channels,
        num_outputs,
        latency_mode: config.latency_mode,
        limits: PlanLimits::default(),
        executor: config.executor,
    };
    let mut fixed_work = config.fixed_work_us.map(FixedWork::new);
    let num_engines = if fixed_work.is_some() {
        0
    } else {
        config.instances.max(1)
    };
    let built: Result<Vec<Engine>, EngineError> = (0..num_engines)
        .map(|instance_idx| {
            let mut engine = Engine::new(&ir, engine_config)?;
            let max_partition_size = engine.plan().max_partition_size();
            let phase = stagger_phase((first_instance + instance_idx) as u64, max_partition_size);
            engine.set_stagger(phase);
            engine.set_offline(!config.pace.realtime_mode());
            Ok(engine)
        })
        .collect();
    // The other host threads wait here whether or not this one could build its engines.
    if let Some(start) = start {
        start.wait();
    }
    // --check renders the IR offline after the run; else an owned IR goes now (see [`run`]).
    let kept_ir = config.check.then_some(ir);
    let mut engines = built?;
    // Let the worker threads start before the clock runs.
    std::thread::sleep(Duration::from_millis(20));
    let setup_s = setup_start.elapsed().as_secs_f64();
    let rss_kb = crate::tools::resources::Resources::sample().rss_kb;
    let mem_per_instance_kb = rss_kb.saturating_sub(rss_before) / engines.len().max(1) as u64;

    let num_blocks = num_frames.div_ceil(block);
    // Each call's wall-clock time in ns (saturating at 4.3 s): 4 bytes a call, as the peers'
    // harnesses keep, so that the per-call record weighs little in the process's peak RSS.
    let mut block_times: Vec<u32> = Vec::with_capacity(num_blocks);
    let mut block_cpu_s = Vec::with_capacity(num_blocks);
    let mut block_starts = Vec::with_capacity(num_blocks);
    let mut scratch = vec![vec![0.0f32; block]; num_outputs];
    // The host's input buffers: each block is copied here before its calls, outside the timed
    // part, as a host writes a track's or bus's buffers (from disk, the tracks before it, the
    // sends) just before it calls the plugin. Handing over slices of the whole generated input
    // instead would make every call the first to touch its input lines, a miss to memory no
    // host's call has.
    let mut host_input = vec![vec![0.0f32; block]; num_channels];
    // --check compares the first instance's output with its offline render.
    let mut checked_output = Vec::new();
    let mut output = output.or(if config.check && !engines.is_empty() {
        Some(&mut checked_output)
    } else {
        None
    });
    if let Some(output) = output.as_deref_mut() {
        *output = vec![vec![0.0; num_frames]; num_outputs];
    }

    let realtime = config
        .audio_priority
        .and_then(crate::engine::realtime::priority::RealtimeGuard::raise);
    let steal_start = steal_ms();
    let hub_cpu = |engines: &[Engine]| engines.iter().find_map(|e| e.gpu_stats()?.thread_cpu_s);
    let hub_start = hub_cpu(&engines);
    let cpu_start = cpu_time::process_seconds();
    let main_start = cpu_time::thread_seconds();
    let wall_start = Instant::now();
    let wall_start_monotonic_ns = cpu_time::monotonic_ns();
    let mut pacer = Pacer::new(config.pace, config.rate, num_frames, wall_start);
    let mut frames_done = 0;
    let block_times_path = std::env::var_os("LONGTAIL_BENCH_BLOCK_TIMES");
    // The per-call file has a CPU column: asking for it asks for the thread clock's reads.
    let call_cpu = config.call_cpu || block_times_path.is_some();
    while frames_done < num_frames {
        if config
            .max_wall_s
            .is_some_and(|max_wall| wall_start.elapsed().as_secs_f64() >= max_wall)
        {
            break;
        }
        pacer.before(frames_done);
        let len = block.min(num_frames - frames_done);
        let range = frames_done..frames_done + len;
        for (buffer, channel) in host_input.iter_mut().zip(input) {
            buffer[..len].copy_from_slice(&channel[range.clone()]);
        }
        let block_cpu_start = call_cpu.then(cpu_time::thread_seconds);
        let block_start = Instant::now();
        // The buffer arrays are built once per block, as a host hands its buffers over, and
        // not per instance: every instance reads the same input and overwrites the same
        // scratch outputs, and building two arrays of MAX_CHANNELS slices per call would be
        // measured as the engines' cost.
        let mut inputs: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
        for (slot, buffer) in inputs.iter_mut().zip(&host_input) {
            *slot = &buffer[..len];
        }
        let mut outputs: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
        for (slot, channel) in outputs.iter_mut().zip(scratch.iter_mut()) {
            *slot = &mut channel[..len];
        }
        for (instance_idx, engine) in engines.iter_mut().enumerate() {
            engine.process(&inputs[..num_channels], &mut outputs[..num_outputs]);
            if let (0, Some(output)) = (instance_idx, output.as_deref_mut()) {
                for (out, channel) in output.iter_mut().zip(&outputs[..num_outputs]) {
                    out[range.clone()].copy_from_slice(channel);
                }
            }
        }
        if let Some(work) = fixed_work.as_mut() {
            work.run();
        }
        let wall_ns = block_start.elapsed().as_nanos();
        block_times.push(u32::try_from(wall_ns).unwrap_or(u32::MAX));
        if block_times_path.is_some() {
            block_starts.push(block_start - wall_start);
        }
        if let Some(cpu_start) = block_cpu_start {
            block_cpu_s.push(cpu_time::thread_seconds() - cpu_start);
        }
        frames_done += len;
        // Release the next block when the host would.
        pacer.after(frames_done);
    }
    let wall_s = wall_start.elapsed().as_secs_f64();
    let cpu_main_s = cpu_time::thread_seconds() - main_start;
    let cpu_process_s = call_cpu.then(|| block_cpu_s.iter().sum::<f64>());
    let cpu_s = cpu_time::process_seconds() - cpu_start;
    let gpu_hub_cpu_s = hub_start
        .zip(hub_cpu(&engines))
        .map(|(start, end)| end - start);
    let steal_ms = match (steal_start, steal_ms()) {
        (Some(start), Some(end)) => end - start,
        _ => -1.0,
    };
    let audio_priority = realtime.as_ref().map_or(0, |guard| guard.priority);
    drop(realtime);

    if let Some(path) = block_times_path {
        // Diagnostics, one call per line: its wall-clock time, its thread CPU time and its start
        // on CLOCK_MONOTONIC (as `perf record -k CLOCK_MONOTONIC` stamps events), all in ns, to
        // look for periodic spikes, tell computing from time the thread did not run, and find
        // what else ran then.
        let text: String = block_times
            .iter()
            .zip(&block_cpu_s)
            .zip(&block_starts)
            .map(|((wall, cpu), start)| {
                format!(
                    "{} {} {}\n",
                    wall,
                    (cpu * 1e9).round() as u64,
                    wall_start_monotonic_ns + start.as_nanos() as u64
                )
            })
            .collect();
        if let Err(err) = std::fs::write(&path, text) {
            eprintln!(
                "cannot write block times to {}: {err}",
                path.to_string_lossy()
            );
        }
    }
    let warmup_blocks =
        ((config.warmup_s * f64::from(config.rate)) as usize / block).min(block_times.len());
    let all_max = block_times.iter().max().copied().unwrap_or_default();
    let (offcpu_max_us, oncpu_p99_us, oncpu_max_us) = if call_cpu {
        let offcpu_max_us = block_times[warmup_blocks..]
            .iter()
            .zip(&block_cpu_s[warmup_blocks..])
            .map(|(&wall, cpu)| (f64::from(wall) * 1e-9 - cpu).max(0.0) * 1e6)
            .fold(0.0, f64::max);
        let mut steady_cpu: Vec<f64> = block_cpu_s[warmup_blocks..].to_vec();
        steady_cpu.sort_unstable_by(f64::total_cmp);
        (
            Some(offcpu_max_us),
            Some(percentile_us(&steady_cpu, 0.99, 1e6)),
            Some(percentile_us(&steady_cpu, 1.0, 1e6)),
        )
    } else {
        (None, None, None)
    };
    let n_blocks = block_times.len();
    // Sorted in place: the per-call order is not needed any more.
    let steady = &mut block_times[warmup_blocks..];
    steady.sort_unstable();
    let mut late_blocks = 0;
    let mut dropped_chunks = 0;
    let mut waits = 0;
    let mut wait_max_ns = 0;
    if std::env::var_os("LONGTAIL_BENCH_LATE_DETAIL").is_some() {
        for (idx, engine) in engines.iter().enumerate() {
            eprintln!(
                "instance {idx}: per level (partition size, lates, dropped chunks, wakes) {:?}",
                engine.late_stats_per_level()
            );
        }
    }
    for engine in &engines {
        let stats = engine.late_stats();
        late_blocks += stats.late_results + stats.dropped_chunks;
        dropped_chunks += stats.dropped_chunks;
        waits += stats.waits;
        wait_max_ns = wait_max_ns.max(stats.wait_max_ns);
    }
    let snr_vs_offline_db = match (kept_ir.as_deref(), output.as_deref(), engines.first()) {
        (Some(ir), Some(output), Some(first)) => {
            let phase = stagger_phase(first_instance as u64, first.plan().max_partition_size());
            let offline = OfflineRender {
                ir,
                input,
                config: engine_config,
                phase,
                block,
                num_frames: frames_done,
            };
            Some(offline.snr_db(output)?)
        }
        _ => None,
    };
    let audio_s = frames_done as f64 / f64::from(config.rate);
    let wakes = engines.iter().map(Engine::worker_wakes).sum::<u64>();
    let (layout, latency_samples) = match engines.first() {
        Some(engine) => {
            let plan = engine.plan();
            let levels = plan
                .levels
                .iter()
                .map(|level| level.label())
                .collect::<Vec<_>>()
                .join(" ");
            (
                format!("head{} {levels}", plan.head_taps),
                plan.latency_samples(),
            )
        }
        None => (
            format!("fixed work {:.1} us", config.fixed_work_us.unwrap_or(0.0)),
            0,
        ),
    };
    let on_gpu = engines.iter().any(|e| e.backend_report().gpu_levels > 0);
    let gpu_stats = engines.iter().find_map(|e| e.gpu_stats());
    let result = BenchResult {
        engine: if fixed_work.is_some() {
            "fixed-work"
        } else {
            "longtail"
        },
        variant: config.variant.clone(),
        backend: if on_gpu { "gpu" } else { "cpu" },
        gpu_adapter: gpu_stats.as_ref().map(|s| s.adapter.to_string()),
        gpu_rt_us: gpu_stats.as_ref().map_or([0.0; 3], |s| {
            [
                s.round_trip.p50_us,
                s.round_trip.p99_us,
                s.round_trip.max_us,
            ]
        }),
        gpu_periods: gpu_stats.as_ref().map(|s| s.periods_detail.clone()),
        gpu_hub_cpu_s,
        block,
        rate: config.rate,
        channels: num_channels,
        outputs: num_outputs,
        paths: engines.first().map_or(0, Engine::num_paths),
        ir_taps: if fixed_work.is_some() { 0 } else { ir_taps },
        instances: engines.len(),
        audio_s,
        n_blocks,
        cpu_s,
        cpu_main_s,
        cpu_process_s,
        wall_s,
        threads: 1 + engines.iter().map(Engine::num_workers).sum::<usize>(),
        setup_s,
        warmup_blocks,
        blk_med_us: percentile_us(steady, 0.5, 1e-3),
        blk_p99_us: percentile_us(steady, 0.99, 1e-3),
        blk_max_us: percentile_us(steady, 1.0, 1e-3),
        blk_max_all_us: f64::from(all_max) * 1e-3,
        oncpu_p99_us,
        oncpu_max_us,
        offcpu_max_us,
        steal_ms,
        deadline_us: block as f64 / f64::from(config.rate) * 1e6,
        latency_samples,
        late_blocks,
        dropped_chunks,
        waits,
        wait_max_us: wait_max_ns as f64 / 1e3,
        wakes_per_s: wakes as f64 / audio_s.max(f64::MIN_POSITIVE),
        layout,
        paced: config.pace.realtime_mode(),
        pace: config.pace,
        snr_vs_offline_db,
        rss_kb,
        mem_per_instance_kb,
        audio_priority,
        host_threads: 1,
        host_thread: None,
    };
    // Engines (and their threads) are dropped here, outside the timed loop.
    drop(engines);
    Ok(result)
}

/// The `p` quantile (nearest rank) of `sorted`, times `to_us` (its unit in us); 0 when empty.
fn percentile_us<T: Copy + Into<f64>>(sorted: &[T], p: f64, to_us: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[idx].into() * to_us
}

/// Steal time is read from Linux's /proc/stat only.
#[cfg(not(target_os = "linux"))]
fn steal_ms() -> Option<f64> {
    None
}

/// The machine's steal time so far (all CPUs), in ms, from /proc/stat; `None` where the
/// kernel does not report it.
#[cfg(target_os = "linux")]
fn steal_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let steal_ticks: f64 = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .nth(7)?
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks_per_s > 0).then(|| steal_ticks * 1000.0 / ticks_per_s as f64)
}

/// The 1-minute load average, or -1 where unknown.
fn loadavg1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(-1.0)
}
