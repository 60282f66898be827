//! Signals, references and checks: block sizes, noise and impulses, float64 references,
//! tails and horizons, and the assertions on runs.

use clack_extensions::tail::TailLength;
use clack_host::prelude::*;
use longtail::audio::processor::silence_horizon;
use longtail::engine::{LatencyMode, PartitionPlan, PlanLimits};
use longtail::ir::Ir;
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::reference_convolution;

use super::*;

// ------------------------------------------------------------------------------------------
// Signals and references
// ------------------------------------------------------------------------------------------

/// Block sizes covering `total` samples, cycling through [`BLOCK_CYCLE`] capped at `max`.
pub(crate) fn block_sizes(total: usize, max: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut covered = 0;
    for &size in BLOCK_CYCLE.iter().cycle() {
        if covered == total {
            break;
        }
        let size = size.min(max).min(total - covered);
        sizes.push(size);
        covered += size;
    }
    sizes
}

/// Start positions of the blocks of `sizes`.
pub(crate) fn block_starts(sizes: &[usize]) -> Vec<usize> {
    sizes
        .iter()
        .scan(0, |start, &size| {
            let this = *start;
            *start += size;
            Some(this)
        })
        .collect()
}

/// Seeded stereo noise, different on each side.
pub(crate) use longtail_tests::stereo_noise;

/// Ideal output of one channel for a constant mix at unity gain (zero latency):
/// `mix * (x * ir) + (1 - mix) * x`, as long as `x`.
pub(crate) fn mixed_reference(x: &[f32], ir: &[f32], mix: f32) -> Vec<f64> {
    let wet = reference_convolution(x, ir);
    let dry_share = f64::from(1.0 - mix);
    x.iter()
        .zip(&wet)
        .map(|(&dry, &wet)| f64::from(mix) * wet + dry_share * f64::from(dry))
        .collect()
}

/// Expected latency in "Low CPU" mode: one quantum, the host's maximum block size when it is a
/// power of two in `16..=256`, 64 otherwise.
/// The low-CPU latency is one quantum of the plan.
pub(crate) fn low_cpu_latency(max_frames: u32) -> u32 {
    longtail::engine::plan::quantum_for_block_size(max_frames as usize) as u32
}

/// The latency the offload mode's parameter value `mode` reports at `max_frames`.
pub(crate) fn offload_latency(mode: f64, max_frames: u32) -> u32 {
    use longtail::engine::plan::{OFFLOAD_LATENCIES, PlanLimits, offload_shape};
    let asked = OFFLOAD_LATENCIES[mode as usize - 2];
    offload_shape(asked, max_frames as usize, PlanLimits::default()).0 as u32
}

pub(crate) fn tail_of(ir: BuiltinIr, latency: u32) -> TailLength {
    tail_at(ir, SAMPLE_RATE, latency)
}

pub(crate) fn tail_at(ir: BuiltinIr, sample_rate: u32, latency: u32) -> TailLength {
    TailLength::Finite((ir.generate(sample_rate).len() - 1) as u32 + latency)
}

/// Input silence after which the plugin's output is exactly zero, for `ir` at this maximum
/// block size and latency mode.
pub(crate) fn horizon_of(ir: &Ir, max_frames: u32, latency_mode: LatencyMode) -> usize {
    let plan = PartitionPlan::new(
        ir.len(),
        max_frames as usize,
        latency_mode,
        PlanLimits::default(),
    );
    silence_horizon(&plan)
}

/// Checks the status of every block of a run that starts without history (after activation or
/// `reset()`), for an engine planned for `ir` with the host's maximum block size and the
/// latency mode: while the input sounds or its reverb rings the plugin asks to keep processing
/// (`CLAP_PROCESS_CONTINUE`, with its tail), and exactly once the input has been silent for
/// the engine's silence horizon (the tail, plus the FFT levels' round-off; see
/// [`silence_horizon`]) it says it may sleep (`CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`, nice-plug's
/// `Normal`, whose tail reads 0) and its output is exactly zero. Returns, per block, whether it
/// was sleep-able.
pub(crate) fn assert_sleeps_exactly_when_rung_out(
    run: &Run,
    input: [&[f32]; 2],
    sizes: &[usize],
    ir: &Ir,
    max_frames: u32,
    latency_mode: LatencyMode,
) -> Vec<bool> {
    let plan = PartitionPlan::new(
        ir.len(),
        max_frames as usize,
        latency_mode,
        PlanLimits::default(),
    );
    let tail = TailLength::Finite((ir.len() - 1 + plan.latency_samples()) as u32);
    let horizon = horizon_of(ir, max_frames, latency_mode) as u64;
    assert!(horizon >= ir.len() as u64 - 1);
    // Input samples since the last non-zero one; no history counts as silence forever.
    let mut silent = u64::MAX;
    let mut start = 0;
    let mut quiet_blocks = Vec::with_capacity(sizes.len());
    for (block_idx, &len) in sizes.iter().enumerate() {
        for (&left, &right) in input[0][start..start + len].iter().zip(&input[1][start..]) {
            silent = if left != 0.0 || right != 0.0 {
                0
            } else {
                silent.saturating_add(1)
            };
        }
        start += len;
        let quiet = silent >= horizon;
        let (status, reported) = (run.statuses[block_idx], run.tails[block_idx]);
        if quiet {
            assert_eq!(
                (status, reported),
                (ProcessStatus::ContinueIfNotQuiet, TailLength::Finite(0)),
                "block {block_idx} ending at {start}: rung out, but no sleep offered"
            );
            for output in &run.outputs {
                assert!(
                    output[start - len..start].iter().all(|&s| s == 0.0),
                    "block {block_idx} ending at {start}: sleep-able but not silent"
                );
            }
        } else {
            assert_eq!(
                (status, reported),
                (ProcessStatus::Continue, tail),
                "block {block_idx} ending at {start}: still ringing"
            );
        }
        quiet_blocks.push(quiet);
    }
    quiet_blocks
}

pub(crate) fn assert_finite(run: &Run) {
    for (channel_idx, output) in run.outputs.iter().enumerate() {
        if let Some(idx) = output.iter().position(|s| !s.is_finite()) {
            panic!("channel {channel_idx} sample {idx} is {}", output[idx]);
        }
    }
}

/// While the reverb rings, the plugin must not ask to be put to sleep. (nice-plug reports a
/// tail as `CLAP_PROCESS_CONTINUE`; `CLAP_PROCESS_TAIL` would do as well.)
pub(crate) fn assert_keeps_processing(run: &Run) {
    for (block_idx, status) in run.statuses.iter().enumerate() {
        assert!(
            matches!(status, ProcessStatus::Continue | ProcessStatus::Tail),
            "block {block_idx}: status {status:?}"
        );
    }
}

pub(crate) fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

pub(crate) fn peak(x: &[f32]) -> f32 {
    x.iter().fold(0.0, |m, &s| m.max(s.abs()))
}

/// A stereo impulse (both sides, or the left only) at `at`, `len` samples long.
pub(crate) fn impulse(len: usize, at: usize, both_sides: bool) -> [Vec<f32>; 2] {
    let mut left = vec![0.0f32; len];
    left[at] = 1.0;
    let mut right = vec![0.0f32; len];
    if both_sides {
        right[at] = 1.0;
    }
    [left, right]
}

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------
