//! One host thread of a benchmark run ([`run_on_thread`]): it builds its engines, feeds them
//! block by block in its timed loop as a host's audio thread does, and reports what it measured.

use std::borrow::Cow;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::config::BenchConfig;
use super::pace::{OfflineRender, Pace, Pacer};
use super::result::BenchResult;
use crate::cpu_time;
use crate::engine::{Engine, EngineConfig, EngineError, MAX_CHANNELS, PlanLimits, stagger_phase};
use crate::ir::Ir;

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

/// [`run`](super::run) as one of [`run_host_threads`](super::run_host_threads)' threads: its
/// engines are the instances from `first_instance` on (for their stagger phases), and it waits
/// at `start` for the others before its timed loop.
pub(super) fn run_on_thread(
    ir: Cow<'_, Ir>,
    input: &[Vec<f32>],
    config: &BenchConfig,
    output: Option<&mut Vec<Vec<f32>>>,
    first_instance: usize,
    start: Option<&Barrier>,
) -> Result<BenchResult, EngineError> {
    let _ftz = crate::engine::realtime::denormals::ScopedFtz::enable();
    let mut setup = Setup::new(ir, input, config, first_instance, start)?;
    // --check compares the first instance's output with its offline render.
    let mut checked_output = Vec::new();
    let mut output = output.or(if config.check && !setup.engines.is_empty() {
        Some(&mut checked_output)
    } else {
        None
    });
    let timed = setup.timed_loop(input, config, output.as_deref_mut());
    timed.report(setup, input, config, output.as_deref(), first_instance)
}

/// A thread's engines (or its fixed work), built before its timed loop.
struct Setup<'ir> {
    engines: Vec<Engine>,
    /// What every engine was built for (and `--check`'s offline render).
    engine_config: EngineConfig,
    /// The work of [`BenchConfig::fixed_work_us`], in the engines' place.
    fixed_work: Option<FixedWork>,
    /// The IR, kept for `--check`'s offline render; else dropped once the engines are built.
    kept_ir: Option<Cow<'ir, Ir>>,
    ir_taps: usize,
    num_outputs: usize,
    setup_s: f64,
    /// The process's resident memory once the engines are built, and what each one added.
    rss_kb: u64,
    mem_per_instance_kb: u64,
}

impl<'ir> Setup<'ir> {
    /// Builds the engines, meets the other host threads at `start` whether or not it could,
    /// drops an owned IR that `--check` does not need and lets the worker threads start.
    fn new(
        ir: Cow<'ir, Ir>,
        input: &[Vec<f32>],
        config: &BenchConfig,
        first_instance: usize,
        start: Option<&Barrier>,
    ) -> Result<Self, EngineError> {
        let num_channels = input.len();
        let num_outputs = ir.layout.matrix_outputs().unwrap_or(num_channels);
        let ir_taps = ir.len();
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
        let fixed_work = config.fixed_work_us.map(FixedWork::new);
        let num_engines = if fixed_work.is_some() {
            0
        } else {
            config.instances.max(1)
        };
        let built: Result<Vec<Engine>, EngineError> = (0..num_engines)
            .map(|instance_idx| {
                let mut engine = Engine::new(&ir, engine_config)?;
                let max_partition_size = engine.plan().max_partition_size();
                let phase =
                    stagger_phase((first_instance + instance_idx) as u64, max_partition_size);
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
        let engines = built?;
        // Let the worker threads start before the clock runs.
        std::thread::sleep(Duration::from_millis(20));
        let setup_s = setup_start.elapsed().as_secs_f64();
        let rss_kb = crate::tools::resources::Resources::sample().rss_kb;
        let mem_per_instance_kb = rss_kb.saturating_sub(rss_before) / engines.len().max(1) as u64;
        Ok(Self {
            engines,
            engine_config,
            fixed_work,
            kept_ir,
            ir_taps,
            num_outputs,
            setup_s,
            rss_kb,
            mem_per_instance_kb,
        })
    }

    /// Feeds `input` to the engines block by block as the pace releases it, as a host's audio
    /// thread does, timing each call, and copies the first instance's output into `output`.
    /// Allocates before and after the loop, not in it.
    fn timed_loop(
        &mut self,
        input: &[Vec<f32>],
        config: &BenchConfig,
        mut output: Option<&mut Vec<Vec<f32>>>,
    ) -> Timed {
        let num_channels = input.len();
        let num_outputs = self.num_outputs;
        let num_frames = input.first().map_or(0, Vec::len);
        let block = config.block.max(1);
        let engines = &mut self.engines;

        let num_blocks = num_frames.div_ceil(block);
        // Each call's wall-clock time in ns (saturating at 4.3 s): 4 bytes a call, as the peers'
        // harnesses keep, so that the per-call record weighs little in the process's peak RSS.
        let mut block_times: Vec<u32> = Vec::with_capacity(num_blocks);
        let mut block_cpu_s = Vec::with_capacity(num_blocks);
        let mut block_starts = Vec::with_capacity(num_blocks);
        let mut scratch = vec![vec![0.0f32; block]; num_outputs];
        // The host's input buffers: each block is copied here before its calls, outside the
        // timed part, as a host writes a track's or bus's buffers (from disk, the tracks before
        // it, the sends) just before it calls the plugin. Handing over slices of the whole
        // generated input instead would make every call the first to touch its input lines, a
        // miss to memory no host's call has.
        let mut host_input = vec![vec![0.0f32; block]; num_channels];
        if let Some(output) = output.as_deref_mut() {
            *output = vec![vec![0.0; num_frames]; num_outputs];
        }

        let realtime = config
            .audio_priority
            .and_then(crate::engine::realtime::priority::RealtimeGuard::raise);
        let steal_start = steal_ms();
        let hub_cpu = |engines: &[Engine]| engines.iter().find_map(|e| e.gpu_stats()?.thread_cpu_s);
        let hub_start = hub_cpu(engines);
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
            if let Some(work) = self.fixed_work.as_mut() {
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
            .zip(hub_cpu(engines))
            .map(|(start, end)| end - start);
        let steal_ms = match (steal_start, steal_ms()) {
            (Some(start), Some(end)) => end - start,
            _ => -1.0,
        };
        let audio_priority = realtime.as_ref().map_or(0, |guard| guard.priority);
        drop(realtime);
        Timed {
            block_times,
            block_cpu_s,
            block_starts,
            block_times_path,
            wall_start_monotonic_ns,
            call_cpu,
            frames_done,
            wall_s,
            cpu_main_s,
            cpu_process_s,
            cpu_s,
            gpu_hub_cpu_s,
            steal_ms,
            audio_priority,
        }
    }
}

/// What a thread's timed loop measured.
struct Timed {
    /// Each call's wall-clock time, in ns (saturating).
    block_times: Vec<u32>,
    /// Each call's thread CPU time, in s, where `call_cpu`.
    block_cpu_s: Vec<f64>,
    /// Each call's start after the loop's, where the per-call file is asked for.
    block_starts: Vec<Duration>,
    /// `LONGTAIL_BENCH_BLOCK_TIMES`: where the per-call file goes.
    block_times_path: Option<std::ffi::OsString>,
    /// The loop's start on CLOCK_MONOTONIC, in ns.
    wall_start_monotonic_ns: u64,
    /// Whether each call's thread CPU time was read.
    call_cpu: bool,
    frames_done: usize,
    wall_s: f64,
    cpu_main_s: f64,
    cpu_process_s: Option<f64>,
    cpu_s: f64,
    gpu_hub_cpu_s: Option<f64>,
    steal_ms: f64,
    audio_priority: u32,
}

impl Timed {
    /// The thread's result: the per-call figures past the warm-up, the engines' lates and
    /// waits, the distance from the offline render (`--check`), the plan and the memory. Writes
    /// the per-call file where it is asked for; drops the engines (and joins their threads)
    /// once the figures are taken.
    fn report(
        mut self,
        setup: Setup<'_>,
        input: &[Vec<f32>],
        config: &BenchConfig,
        output: Option<&Vec<Vec<f32>>>,
        first_instance: usize,
    ) -> Result<BenchResult, EngineError> {
        if let Some(path) = &self.block_times_path {
            self.write_block_times(path);
        }
        let block = config.block.max(1);
        let warmup_blocks = (config.warmup_s * f64::from(config.rate)) as usize / block;
        let calls = CallStats::new(
            &mut self.block_times,
            &self.block_cpu_s,
            self.call_cpu,
            warmup_blocks,
        );
        let engines = &setup.engines;
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
        for engine in engines {
            let stats = engine.late_stats();
            late_blocks += stats.late_results + stats.dropped_chunks;
            dropped_chunks += stats.dropped_chunks;
            waits += stats.waits;
            wait_max_ns = wait_max_ns.max(stats.wait_max_ns);
        }
        let snr_vs_offline_db = match (setup.kept_ir.as_deref(), output, engines.first()) {
            (Some(ir), Some(output), Some(first)) => {
                let phase = stagger_phase(first_instance as u64, first.plan().max_partition_size());
                let offline = OfflineRender {
                    ir,
                    input,
                    config: setup.engine_config,
                    phase,
                    block,
                    num_frames: self.frames_done,
                };
                Some(offline.snr_db(output)?)
            }
            _ => None,
        };
        let audio_s = self.frames_done as f64 / f64::from(config.rate);
        let wakes = engines.iter().map(Engine::worker_wakes).sum::<u64>();
        let (layout, latency_samples) = layout(engines, config);
        let on_gpu = engines.iter().any(|e| e.backend_report().gpu_levels > 0);
        let gpu_stats = engines.iter().find_map(|e| e.gpu_stats());
        let fixed_work = setup.fixed_work.is_some();
        let result = BenchResult {
            engine: if fixed_work { "fixed-work" } else { "longtail" },
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
            gpu_hub_cpu_s: self.gpu_hub_cpu_s,
            block,
            rate: config.rate,
            channels: input.len(),
            outputs: setup.num_outputs,
            paths: engines.first().map_or(0, Engine::num_paths),
            ir_taps: if fixed_work { 0 } else { setup.ir_taps },
            instances: engines.len(),
            audio_s,
            n_blocks: calls.n_blocks,
            cpu_s: self.cpu_s,
            cpu_main_s: self.cpu_main_s,
            cpu_process_s: self.cpu_process_s,
            wall_s: self.wall_s,
            threads: 1 + engines.iter().map(Engine::num_workers).sum::<usize>(),
            setup_s: setup.setup_s,
            warmup_blocks: calls.warmup_blocks,
            blk_med_us: calls.blk_med_us,
            blk_p99_us: calls.blk_p99_us,
            blk_max_us: calls.blk_max_us,
            blk_max_all_us: calls.blk_max_all_us,
            oncpu_p99_us: calls.oncpu_p99_us,
            oncpu_max_us: calls.oncpu_max_us,
            offcpu_max_us: calls.offcpu_max_us,
            steal_ms: self.steal_ms,
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
            rss_kb: setup.rss_kb,
            mem_per_instance_kb: setup.mem_per_instance_kb,
            audio_priority: self.audio_priority,
            host_threads: 1,
            host_thread: None,
        };
        // Engines (and their threads) are dropped here, outside the timed loop.
        drop(setup);
        Ok(result)
    }

    /// Diagnostics, one call per line: its wall-clock time, its thread CPU time and its start
    /// on CLOCK_MONOTONIC (as `perf record -k CLOCK_MONOTONIC` stamps events), all in ns, to
    /// look for periodic spikes, tell computing from time the thread did not run, and find
    /// what else ran then.
    fn write_block_times(&self, path: &std::ffi::OsStr) {
        let text: String = self
            .block_times
            .iter()
            .zip(&self.block_cpu_s)
            .zip(&self.block_starts)
            .map(|((wall, cpu), start)| {
                format!(
                    "{} {} {}\n",
                    wall,
                    (cpu * 1e9).round() as u64,
                    self.wall_start_monotonic_ns + start.as_nanos() as u64
                )
            })
            .collect();
        if let Err(err) = std::fs::write(path, text) {
            eprintln!(
                "cannot write block times to {}: {err}",
                path.to_string_lossy()
            );
        }
    }
}

/// The per-call figures of a run past its warm-up, in us.
struct CallStats {
    warmup_blocks: usize,
    n_blocks: usize,
    blk_med_us: f64,
    blk_p99_us: f64,
    blk_max_us: f64,
    /// The slowest call, the warm-up's included.
    blk_max_all_us: f64,
    oncpu_p99_us: Option<f64>,
    oncpu_max_us: Option<f64>,
    offcpu_max_us: Option<f64>,
}

impl CallStats {
    /// The figures of the calls after the first `warmup_blocks`, wall clock and (where
    /// `call_cpu`) thread CPU time apart. Sorts `block_times` past the warm-up in place: the
    /// per-call order is not needed any more.
    fn new(
        block_times: &mut [u32],
        block_cpu_s: &[f64],
        call_cpu: bool,
        warmup_blocks: usize,
    ) -> Self {
        let warmup_blocks = warmup_blocks.min(block_times.len());
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
        let steady = &mut block_times[warmup_blocks..];
        steady.sort_unstable();
        Self {
            warmup_blocks,
            n_blocks,
            blk_med_us: percentile_us(steady, 0.5, 1e-3),
            blk_p99_us: percentile_us(steady, 0.99, 1e-3),
            blk_max_us: percentile_us(steady, 1.0, 1e-3),
            blk_max_all_us: f64::from(all_max) * 1e-3,
            oncpu_p99_us,
            oncpu_max_us,
            offcpu_max_us,
        }
    }
}

/// The first engine's plan in one line (`head64 64x7 256x6 ...`) and its latency, or the
/// fixed work's length where no engine ran.
fn layout(engines: &[Engine], config: &BenchConfig) -> (String, usize) {
    match engines.first() {
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
    }
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
