//! The cost model of the plan (`engine::plan`'s module docs): flops per output sample and
//! path of one level, its products, transforms and hand-offs, weighted for the paths that
//! share the transforms.
//!
//! Uses nothing else of the engine but the level's shape.

use super::level::Level;

/// Flops per complex multiply-add of the spectral MAC.
pub const MAC_FLOPS: f64 = 8.0;
/// Flops per sample and `log2(2P)` of one forward and one inverse real FFT of size `2P`.
pub const FFT_FLOPS: f64 = 10.0;
/// Flops-equivalent of handing one job to a worker thread (wake-up, context switch, cold
/// caches).
pub const JOB_FLOPS: f64 = 100_000.0;
/// How much the FFT and job terms of the cost model weigh per path, against a stereo engine's
/// path (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostWeights {
    /// Transforms per path, against one forward and one inverse per path.
    pub fft: f64,
    /// Worker jobs per path, against one per two paths.
    pub job: f64,
    /// Spectra a level holds per partition: one per path and one per input (stereo: 4).
    pub streams: usize,
}

impl CostWeights {
    /// A stereo engine's path: every term counts whole.
    pub const STEREO: Self = Self {
        fft: 1.0,
        job: 1.0,
        streams: 4,
    };

    /// The weights of an engine with `num_inputs` and `num_outputs` channels and `num_paths`
    /// paths, each at most 1.
    pub fn for_paths(num_inputs: usize, num_outputs: usize, num_paths: usize) -> Self {
        let paths = num_paths.max(1) as f64;
        Self {
            fft: ((num_inputs + num_outputs) as f64 / (2.0 * paths)).min(1.0),
            job: (2.0 / paths).min(1.0),
            streams: num_paths + num_inputs,
        }
    }
}

/// What the transforms of a level of span 2 (FFTs of `3P`) weigh against the cost model's
/// `2.5 N log2 N`. A real FFT of 3072 points took 1.76 times one of 2048 where the model says
/// 1.58 (1.1 times), but in cache the model's FFT term weighs transforms against products
/// more than they cost: a 12 x 12 level of 2048 took about 0.28 ns a product and 2.9 us a
/// transform of 4096 points, 1.45 times less a flop. Side by side (Intel VM, 2026-12-03,
/// `matrix.py --reps 3`, CPU-s/s with 1.1, 0.95 and 0.8), 0.95 was at or under 1.1 in all
/// nine cells (12 x 12 at 64: 0.0981, 0.0890, 0.0885; 16 x 16 at 128: 0.1504, 0.1447, 0.1447)
/// and as fast as 0.8 on 12 x 12 and 16 x 16, where 0.8 gave a 4 x 4 room at 1024 a `4096x3/2`
/// level for its `4096x6` and lost 5 to 6 % in two runs of three (0.0077 against 0.0082).
pub const SPAN_FFT_WEIGHT: f64 = 0.95;

/// The cost model of the module docs for one level of a stereo path, of span 1.
pub fn level_cost(partition_size: usize, num_partitions: usize, on_worker: bool) -> f64 {
    let level = Level {
        partition_size,
        span: 1,
        num_partitions,
        ir_offset: 0,
    };
    weighted_level_cost(&level, on_worker, CostWeights::STEREO)
}

/// [`level_cost`] for any span, with the FFT and job terms weighted per path. A level of span
/// `s` has `(s + 1) P / 2 + 1` bins a partition and transforms of `(s + 1) P` per `P` samples.
pub fn weighted_level_cost(level: &Level, on_worker: bool, weights: CostWeights) -> f64 {
    let size = level.partition_size as f64;
    let fft_size = level.fft_size() as f64;
    let mac = MAC_FLOPS * level.num_partitions as f64 * level.num_bins() as f64 / size;
    let span_weight = if level.span == 1 {
        1.0
    } else {
        SPAN_FFT_WEIGHT
    };
    let fft = span_weight * weights.fft * FFT_FLOPS * fft_size / (2.0 * size) * fft_size.log2();
    let job = if on_worker {
        weights.job * JOB_FLOPS / size
    } else {
        0.0
    };
    mac + fft + job
}
