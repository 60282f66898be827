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
//!
//! # Parts
//!
//! - `pace.rs`: how the measuring thread releases blocks ([`Pace`]), and the offline render a
//!   `--check` run is compared with.
//! - `config.rs` and `result.rs`: what a run is asked ([`BenchConfig`]) and what it measured
//!   ([`BenchResult`]).
//! - `host_thread.rs`: one thread's run: its engines built, its timed loop, its figures.
//! - `report.rs`: the JSON line of a [`BenchResult`]; `raw.rs`: the harness's raw f32 files.

use std::borrow::Cow;
use std::sync::Barrier;

use crate::engine::EngineError;
use crate::ir::Ir;
use crate::rng::Rng;

mod config;
mod host_thread;
mod pace;
mod raw;
mod report;
mod result;
pub use config::BenchConfig;
use host_thread::run_on_thread;
pub use pace::{AHEAD_PAUSE, Pace};
pub use raw::{read_raw_f32, write_raw_f32};
pub use result::BenchResult;

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
