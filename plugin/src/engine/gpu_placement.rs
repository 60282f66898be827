//! Where the GPU takes levels: the [`GpuPolicy`], opening the hub for an engine
//! ([`open_gpu`], which also has the hub's thread raise its priority), the rules that place a
//! level on the GPU or let it go back, and the CPU's cost the Auto policy compares the GPU with
//! ([`cpu_partition_cost_ns`]).
//!
//! Uses the GPU crate, the FFT levels ([`super::upols`]) and the paths ([`super::routing`]) to
//! measure the CPU; the engine and its workers use it, never the other way round.

use realfft::RealFftPlanner;

use super::routing::Path;
use super::upols::{self, UpolsLevel};

/// When the GPU takes levels ([`Executor::Gpu`](super::Executor::Gpu)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuPolicy {
    /// Only when it pays: a real GPU (not a CPU adapter such as lavapipe) that opened and
    /// calibrated, and an engine with at least [`AUTO_MIN_WORK`] path-samples of IR. Smaller
    /// engines start on the CPU with a way to the GPU, and go there when the Auto engines of
    /// the process together load the CPU and the GPU costs less ([`super::load_policy`]).
    Auto,
    /// Every level of at least [`GPU_MIN_PARTITION`] samples on the GPU whenever one can be
    /// opened, whatever the calibration says; `allow_cpu_adapter` accepts lavapipe (tests, or
    /// `LONGTAIL_GPU_ALLOW_CPU=1`). Levels still fall back to the CPU when it fails or is late.
    Forced {
        /// Accept a CPU adapter.
        allow_cpu_adapter: bool,
    },
}

/// Smallest partition the GPU takes: below it, dispatch and transfer overhead outweigh the
/// FFT work (the DESIGN's GPU threshold; the calibration decides the slack side).
pub const GPU_MIN_PARTITION: usize = 1024;
/// [`GpuPolicy::Auto`] puts an engine on the GPU when it is built from this many path-samples
/// of IR (paths times IR length): a true-stereo 8 s IR at 48 kHz; a single stereo 10 s reverb
/// starts on the CPU (many of them go to the GPU together, by [`super::load_policy`]).
pub const AUTO_MIN_WORK: usize = 1_500_000;

/// Opens the GPU hub for `policy` and an engine of `work` path-samples of IR (with the options
/// it was opened with), or says why the engine stays on the CPU: Auto and a small engine, no
/// adapter, a CPU adapter that was not allowed, or (Auto) a GPU whose calibrated cost per
/// path-partition is not below the CPU's. Opening and calibrating take a moment: call off the
/// audio thread.
///
/// First, whatever the answer, it has every hub of the process raise its thread as a worker's
/// ([`raise_gpu_hub`](super::worker::realtime::raise_gpu_hub)): every engine that may use the
/// GPU comes here before any hub opens, those that open it later (a level's way back, after a
/// refusal here) included.
pub fn open_gpu(
    policy: GpuPolicy,
    work: usize,
) -> Result<(std::sync::Arc<longtail_gpu::Hub>, longtail_gpu::OpenOptions), String> {
    longtail_gpu::set_thread_start(Some(super::worker::realtime::raise_gpu_hub));
    let allow_cpu_adapter = match policy {
        GpuPolicy::Auto if work < AUTO_MIN_WORK => {
            return Err(format!(
                "CPU: Auto keeps a small engine on the CPU ({work} path-samples of IR, one \
                 engine pays for the GPU from {AUTO_MIN_WORK}; many go there together when they \
                 load the CPU)"
            ));
        }
        GpuPolicy::Auto => false,
        GpuPolicy::Forced { allow_cpu_adapter } => {
            allow_cpu_adapter || longtail_gpu::OpenOptions::from_env().allow_cpu_adapter
        }
    };
    let options = longtail_gpu::OpenOptions {
        allow_cpu_adapter,
        ..longtail_gpu::OpenOptions::from_env()
    };
    let hub = longtail_gpu::shared(options).map_err(|err| format!("CPU: {err}"))?;
    if !allow_cpu_adapter && hub.adapter().kind == longtail_gpu::AdapterKind::Cpu {
        return Err(format!(
            "CPU: {} is a CPU adapter, slower than our own CPU code",
            hub.adapter()
        ));
    }
    if policy == GpuPolicy::Auto {
        let gpu_ns = hub.calibration().partition_cost_ns;
        let cpu_ns = cpu_partition_cost_ns();
        if gpu_ns >= cpu_ns {
            return Err(format!(
                "CPU: the GPU costs {gpu_ns:.0} ns per path-partition of {}, the CPU {cpu_ns:.0}",
                hub.calibration().partition_size
            ));
        }
    }
    Ok((hub, options))
}

/// Whether the GPU can take a level: big enough partitions, and slack for four times the
/// round trip's 99.9th percentile (calibrated, or recent) plus one host period.
pub fn gpu_can_take(
    round_trip: &longtail_gpu::RoundTrip,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    partition_size >= GPU_MIN_PARTITION
        && slack_samples as f64
            >= 4.0 * round_trip_samples(round_trip, sample_rate) + max_block_size as f64
}

/// The round trip's 99.9th percentile, in samples at `sample_rate`.
fn round_trip_samples(round_trip: &longtail_gpu::RoundTrip, sample_rate: u32) -> f64 {
    round_trip.p999_us * 1e-6 * f64::from(sample_rate.max(1))
}

/// Whether results would come back within the slack (the rule for levels placed without the
/// four-fold margin: forced ones, and those the thermal policy sends).
pub(super) fn results_on_time(
    round_trip: &longtail_gpu::RoundTrip,
    slack_samples: usize,
    sample_rate: u32,
) -> bool {
    round_trip_samples(round_trip, sample_rate) < slack_samples as f64
}

/// Whether a level goes on the GPU when the engine is built: Forced takes every level of at
/// least [`GPU_MIN_PARTITION`] samples, Auto only where the calibrated round trip fits
/// ([`gpu_can_take`]).
pub fn level_goes_to_gpu(
    policy: GpuPolicy,
    calibration: &longtail_gpu::Calibration,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    match policy {
        GpuPolicy::Forced { .. } => partition_size >= GPU_MIN_PARTITION,
        GpuPolicy::Auto => gpu_can_take(
            &calibration.round_trip,
            partition_size,
            slack_samples,
            max_block_size,
            sample_rate,
        ),
    }
}

/// Whether a level that left the GPU may go back to a hub with these recent round trips:
/// Auto asks what it asked when it placed the level ([`gpu_can_take`]); Forced placed it
/// without asking, and asks only that results would come back within the slack.
pub(super) fn gpu_fits(
    policy: GpuPolicy,
    round_trip: &longtail_gpu::RoundTrip,
    partition_size: usize,
    slack_samples: usize,
    max_block_size: usize,
    sample_rate: u32,
) -> bool {
    match policy {
        GpuPolicy::Auto => gpu_can_take(
            round_trip,
            partition_size,
            slack_samples,
            max_block_size,
            sample_rate,
        ),
        GpuPolicy::Forced { .. } => results_on_time(round_trip, slack_samples, sample_rate),
    }
}

/// The CPU's cost of one path-partition of the GPU calibration's partition size (4096): a
/// true-stereo level of 16 partitions run through [`UpolsLevel::compute`], its time per job
/// divided by its 64 path-partitions (the MAC plus a share of the transforms). Measured once
/// per process (a few milliseconds), the median of 9 jobs after 3 to warm up.
pub fn cpu_partition_cost_ns() -> f64 {
    static COST: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *COST.get_or_init(|| {
        const P: usize = 4096;
        const N: usize = 16;
        let paths: Vec<Path> = (0..2)
            .flat_map(|input_idx| {
                (0..2).map(move |output_idx| Path {
                    input_idx,
                    output_idx,
                })
            })
            .collect();
        let mut rng = crate::rng::Rng::new(7);
        let taps: Vec<Vec<f32>> = paths
            .iter()
            .map(|_| (0..P * N).map(|_| 0.5 * rng.bipolar()).collect())
            .collect();
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let mut level = UpolsLevel::new(
            &mut RealFftPlanner::new(),
            upols::LevelShape {
                partition_size: P,
                num_partitions: N,
                ir_offset: 0,
                output_delay: P,
                num_inputs: 2,
                num_outputs: 2,
            },
            &paths,
            &tap_refs,
            &[0, 1, 2, 3],
        );
        let windows: Vec<Vec<f32>> = (0..2)
            .map(|_| (0..2 * P).map(|_| 0.5 * rng.bipolar()).collect())
            .collect();
        let mut results = vec![vec![0.0f32; P]; 2];
        let mut times = Vec::new();
        for job in 0..12 {
            let started = std::time::Instant::now();
            let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
            let mut result_refs: Vec<&mut [f32]> =
                results.iter_mut().map(Vec::as_mut_slice).collect();
            level.compute(&window_refs, &mut result_refs);
            if job >= 3 {
                times.push(started.elapsed().as_secs_f64());
            }
        }
        times.sort_by(f64::total_cmp);
        times[times.len() / 2] * 1e9 / (paths.len() * N) as f64
    })
}
