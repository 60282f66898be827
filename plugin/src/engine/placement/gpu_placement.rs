//! Where the GPU takes levels for a [`GpuPolicy`]: opening the hub for an engine
//! ([`open_gpu`], which also has the hub's thread raise its priority), the rules that place a
//! level on the GPU or let it go back, and the costs the Auto policy compares the GPU's with
//! ([`cpu_costs`]: transforms and multiply-adds apart, weighed by an engine's
//! [`gpu_workload`]).
//!
//! Uses the GPU crate, the FFT levels ([`crate::engine::upols`]) and the paths
//! ([`crate::engine::routing`]) to measure the CPU; the engine and its workers use it, never the
//! other way round.

use rustfft::FftPlanner;

use crate::engine::config::GpuPolicy;
use crate::engine::plan::PartitionPlan;
use crate::engine::routing::Path;
use crate::engine::upols::{self, UpolsLevel};

/// Smallest partition the GPU takes: below it, dispatch and transfer overhead outweigh the
/// FFT work (the DESIGN's GPU threshold; the calibration decides the slack side).
pub const GPU_MIN_PARTITION: usize = 1024;
/// [`GpuPolicy::Auto`] puts an engine on the GPU when it is built from this many path-samples
/// of IR (paths times IR length): a true-stereo 8 s IR at 48 kHz; a single stereo 10 s reverb
/// starts on the CPU (many of them go to the GPU together, by [`super::load_policy`]).
pub const AUTO_MIN_WORK: usize = 1_500_000;

/// Opens the GPU hub for `policy` and an engine of `work` path-samples of IR (with the options
/// it was opened with), or says why the engine stays on the CPU: Auto and a small engine, no
/// adapter, a CPU adapter that was not allowed, or (Auto) a GPU whose calibrated costs, the
/// transforms and the MACs apart, make the engine's big levels ([`gpu_workload`]) no cheaper
/// than the CPU's ([`cpu_costs`]). Opening and calibrating take a moment: call off the
/// audio thread.
///
/// First, whatever the answer, it has every hub of the process raise its thread as a worker's
/// ([`raise_gpu_hub`](crate::engine::realtime::priority::raise_gpu_hub)): every engine that may use
/// the GPU comes here before any hub opens, those that open it later (a level's way back, after a
/// refusal here) included.
pub fn open_gpu(
    policy: GpuPolicy,
    work: usize,
    workload: Workload,
) -> Result<(std::sync::Arc<longtail_gpu::Hub>, longtail_gpu::OpenOptions), String> {
    longtail_gpu::set_thread_start(Some(crate::engine::realtime::priority::raise_gpu_hub));
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
        let (gpu, cpu) = (CostSplit::of_gpu(&hub.calibration()), cpu_costs());
        let (gpu_ns, cpu_ns) = (gpu.cost_ns(workload), cpu.cost_ns(workload));
        if gpu_ns >= cpu_ns {
            return Err(format!(
                "CPU: this engine's big levels cost the GPU {:.0} us per 4096 samples, the CPU \
                 {:.0} us ({:.0} transforms at {:.0} / {:.0} ns, {:.0} path-partitions at \
                 {:.0} / {:.0} ns)",
                gpu_ns / 1e3,
                cpu_ns / 1e3,
                workload.transforms,
                gpu.transform_ns,
                cpu.transform_ns,
                workload.path_partitions,
                gpu.partition_ns,
                cpu.partition_ns,
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
pub(in crate::engine) fn results_on_time(
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
pub(in crate::engine) fn gpu_fits(
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

/// Costs at the GPU calibration's partition size (4096), the transforms and the MACs apart: a
/// dense 16 x 16 level has 32 transforms for 256 paths, a true-stereo one 4 for 4, so one
/// figure per path-partition would favour one side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostSplit {
    /// One transform (an input's forward or an output's inverse FFT of 8192), in nanoseconds.
    pub transform_ns: f64,
    /// One path-partition's spectral multiply-add, in nanoseconds.
    pub partition_ns: f64,
}

/// What an engine's levels of GPU size ask for, per second up to one common factor (the
/// sample rate over 4096): transforms and path-partitions in units of a 4096-sample
/// partition (a transform of `2P` weighs `P log 2P` against 4096's).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Workload {
    /// Transforms, weighted by size.
    pub transforms: f64,
    /// Path-partitions, weighted by size.
    pub path_partitions: f64,
}

impl CostSplit {
    /// The GPU's, from its calibration.
    pub fn of_gpu(calibration: &longtail_gpu::Calibration) -> Self {
        Self {
            transform_ns: calibration.transform_cost_ns,
            partition_ns: calibration.partition_cost_ns,
        }
    }

    /// The cost of `workload`, in nanoseconds (per 4096 samples of audio).
    pub fn cost_ns(&self, workload: Workload) -> f64 {
        self.transform_ns * workload.transforms + self.partition_ns * workload.path_partitions
    }

    /// The cost per path-partition of a true-stereo level of 16 partitions (4 transforms, 64
    /// path-partitions): the one figure the load policy weighs many small engines with.
    pub fn per_stereo_partition(&self) -> f64 {
        self.cost_ns(Workload {
            transforms: 4.0,
            path_partitions: 64.0,
        }) / 64.0
    }
}

/// The workload of the levels of `plan` that the GPU could take (partitions of at least
/// [`GPU_MIN_PARTITION`]), for `inputs` x `outputs` channels and `paths` paths (after sharing).
pub fn gpu_workload(plan: &PartitionPlan, inputs: usize, outputs: usize, paths: usize) -> Workload {
    const REFERENCE: f64 = 4096.0;
    let mut workload = Workload::default();
    for level in plan
        .levels
        .iter()
        .filter(|level| level.partition_size >= GPU_MIN_PARTITION)
    {
        let size = level.partition_size as f64;
        // Periods per second against 4096's, times each one's work against 4096's.
        let periods = REFERENCE / size;
        let transform = size / REFERENCE * (2.0 * size).log2() / (2.0 * REFERENCE).log2();
        workload.transforms += periods * transform * (inputs + outputs) as f64;
        workload.path_partitions += (paths * level.num_partitions) as f64;
    }
    workload
}

/// The CPU's [`CostSplit`], measured once per process (a few milliseconds): two levels of
/// 4096-sample partitions run through [`UpolsLevel::compute`], a true-stereo one of 16
/// partitions (4 transforms, 64 path-partitions) and an 8 x 8 diagonal one of 1 partition (16
/// transforms, 8 path-partitions), the median of 9 jobs each after 3 to warm up; two equations
/// for the two costs.
pub fn cpu_costs() -> CostSplit {
    static COSTS: std::sync::OnceLock<CostSplit> = std::sync::OnceLock::new();
    *COSTS.get_or_init(|| {
        let stereo = Path::dense(2, 2);
        let diagonal: Vec<Path> = (0..8)
            .map(|idx| Path {
                input_idx: idx,
                output_idx: idx,
            })
            .collect();
        let b = time_level(2, 2, &stereo, 16);
        let a = time_level(8, 8, &diagonal, 1);
        // a = 16 T + 8 M, b = 4 T + 64 M.
        let transform_ns = ((64.0 * a - 8.0 * b) / (16.0 * 64.0 - 4.0 * 8.0)).max(1.0);
        let partition_ns = ((b - 4.0 * transform_ns) / 64.0).max(1.0);
        CostSplit {
            transform_ns,
            partition_ns,
        }
    })
}

/// The CPU's cost of one path-partition of 4096 in a true-stereo level of 16 partitions (the
/// MAC and its share of the transforms, [`CostSplit::per_stereo_partition`] of
/// [`cpu_costs`]): the figure the load policy weighs engines with.
pub fn cpu_partition_cost_ns() -> f64 {
    cpu_costs().per_stereo_partition()
}

/// The median time of one [`UpolsLevel::compute`] job of a level of 4096-sample partitions,
/// in nanoseconds.
fn time_level(inputs: usize, outputs: usize, paths: &[Path], partitions: usize) -> f64 {
    const P: usize = 4096;
    let mut rng = crate::rng::Rng::new(7);
    let taps: Vec<Vec<f32>> = paths
        .iter()
        .map(|_| (0..P * partitions).map(|_| 0.5 * rng.bipolar()).collect())
        .collect();
    let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
    let shared: Vec<usize> = (0..paths.len()).collect();
    let mut level = UpolsLevel::new(
        &mut FftPlanner::new(),
        upols::LevelShape {
            partition_size: P,
            span: 1,
            num_partitions: partitions,
            ir_offset: 0,
            output_delay: P,
            num_inputs: inputs,
            num_outputs: outputs,
        },
        paths,
        &tap_refs,
        &shared,
    );
    let windows: Vec<Vec<f32>> = (0..inputs)
        .map(|_| (0..2 * P).map(|_| 0.5 * rng.bipolar()).collect())
        .collect();
    let mut results = vec![vec![0.0f32; P]; outputs];
    let mut times = Vec::new();
    for job in 0..12 {
        let started = std::time::Instant::now();
        let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
        let mut result_refs: Vec<&mut [f32]> = results.iter_mut().map(Vec::as_mut_slice).collect();
        level.compute(&window_refs, &mut result_refs);
        if job >= 3 {
            times.push(started.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2] * 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plan::{CostWeights, LatencyMode, PlanLimits};

    #[test]
    fn a_dense_matrix_is_mostly_multiply_adds_and_stereo_is_not() {
        let ir_len = 4 * 48_000;
        let plan = |inputs: usize, outputs: usize| {
            let weights = CostWeights::for_paths(inputs, outputs, inputs * outputs);
            PartitionPlan::new_weighted(
                ir_len,
                64,
                LatencyMode::Zero,
                PlanLimits::default(),
                weights,
            )
        };
        let dense = gpu_workload(&plan(16, 16), 16, 16, 256);
        let stereo = gpu_workload(&plan(2, 2), 2, 2, 4);
        let share = |w: Workload| w.transforms / (w.transforms + w.path_partitions);
        assert!(share(dense) < 0.05, "{dense:?}");
        assert!(
            share(stereo) > 2.0 * share(dense),
            "{stereo:?} against {dense:?}"
        );
        // A GPU with cheap multiply-adds and dear transforms pays for the matrix first.
        let cpu = CostSplit {
            transform_ns: 20_000.0,
            partition_ns: 4_000.0,
        };
        let gpu = CostSplit {
            transform_ns: 40_000.0,
            partition_ns: 1_000.0,
        };
        assert!(gpu.cost_ns(dense) < cpu.cost_ns(dense));
        assert_eq!(
            cpu.per_stereo_partition(),
            (4.0 * 20_000.0 + 64.0 * 4_000.0) / 64.0
        );
    }
}
