//! The convolution engine: the partition plan, the zero-latency head and the FFT levels.
//!
//! # Threads and allocation
//!
//! [`Engine::new`] runs off the audio thread: it plans the partitions, transforms the IR into
//! per-level spectra and allocates every ring and scratch buffer at its final size.
//! [`Engine::process`] and [`Engine::reset`] run on the audio thread and never allocate, lock or
//! wait. In this version every level runs synchronously inside `process()` when its input chunk
//! completes; the plan already gives levels after the first `D - P` samples of slack, which is
//! what background executors will use.
//!
//! # Signal flow
//!
//! Input samples go into one mirrored history ring per input channel ([`rings::InputRing`]).
//! Each output sample is the sum of the head (direct-form FIR over taps `[0, q)`, zero-latency
//! mode only) and whatever the levels have added for that time to the output channel's
//! accumulator ([`rings::OutputRing`]). Every `q` samples, each level whose partition size divides
//! the current time runs ([`upols::UpolsLevel::run`]) and adds its block `D + latency` samples
//! after its input.
//!
//! # Paths
//!
//! A path is one input channel convolved into one output channel. The IR layout and the host's
//! channel counts decide the paths (see [`route`]): a mono input feeds both stereo sides of the
//! IR, a mono output receives the average of both sides, and IR channels that land on the same
//! (input, output) pair are summed before transformation.

pub mod direct;
pub mod plan;
pub mod rings;
pub mod upols;

use realfft::RealFftPlanner;
use thiserror::Error;

use crate::ir::Ir;
use direct::DirectHead;
pub use plan::{LatencyMode, PartitionPlan, PlanLimits};
use rings::{InputRing, OutputRing};
use upols::UpolsLevel;

/// Most input or output channels the engine handles.
pub const MAX_CHANNELS: usize = 2;

/// One input channel convolved into one output channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// Input channel index.
    pub input_idx: usize,
    /// Output channel index.
    pub output_idx: usize,
}

/// What an engine is built for besides its IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// Largest number of samples one `process()` call may carry.
    pub max_block_size: usize,
    /// Input channels (1 or 2).
    pub num_inputs: usize,
    /// Output channels (1 or 2).
    pub num_outputs: usize,
    /// Zero latency (head FIR) or low CPU (one quantum of latency).
    pub latency_mode: LatencyMode,
    /// Limits from the executors.
    pub limits: PlanLimits,
}

/// Why an engine could not be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("{num_inputs} in / {num_outputs} out is not supported; use mono or stereo")]
    UnsupportedChannels {
        num_inputs: usize,
        num_outputs: usize,
    },
    #[error("the IR is empty")]
    EmptyIr,
    #[error("the maximum block size must be at least 1")]
    ZeroBlockSize,
}

/// The paths for `ir` with `num_inputs` inputs and `num_outputs` outputs, each with its summed
/// taps. Allocates.
pub fn route(ir: &Ir, num_inputs: usize, num_outputs: usize) -> Vec<(Path, Vec<f32>)> {
    let mut paths: Vec<(Path, Vec<f32>)> = Vec::new();
    for (&(source, destination), taps) in ir.layout.channel_routes().iter().zip(&ir.channels) {
        // Mono IRs act on both sides, each input to its own output.
        let sides: &[(usize, usize)] = if ir.layout == crate::ir::IrLayout::Mono {
            &[(0, 0), (1, 1)]
        } else {
            &[(source, destination)]
        };
        for &(source, destination) in sides {
            let path = Path {
                input_idx: source.min(num_inputs - 1),
                output_idx: destination.min(num_outputs - 1),
            };
            // A mono output is the average of the two sides.
            let weight = if num_outputs == 1 { 0.5 } else { 1.0 };
            match paths.iter_mut().find(|(p, _)| *p == path) {
                Some((_, summed)) => {
                    summed
                        .iter_mut()
                        .zip(taps)
                        .for_each(|(s, t)| *s += weight * t);
                }
                None => paths.push((path, taps.iter().map(|t| weight * t).collect())),
            }
        }
    }
    paths
}

/// A built convolution engine for one IR and one channel configuration.
pub struct Engine {
    plan: PartitionPlan,
    config: EngineConfig,
    /// Number of paths after routing.
    num_paths: usize,
    head: DirectHead,
    levels: Vec<UpolsLevel>,
    /// History per input channel, long enough for the largest level's `2P` window.
    input_rings: Vec<InputRing>,
    /// Pending level output per output channel.
    output_rings: Vec<OutputRing>,
    /// Samples processed since the last reset (the absolute time of the next input sample).
    time: u64,
}

impl Engine {
    /// Plans and builds the engine for `ir`. Allocates and runs FFTs over the whole IR: call off
    /// the audio thread.
    pub fn new(ir: &Ir, config: EngineConfig) -> Result<Self, EngineError> {
        let EngineConfig {
            max_block_size,
            num_inputs,
            num_outputs,
            latency_mode,
            limits,
        } = config;
        if !(1..=MAX_CHANNELS).contains(&num_inputs) || !(1..=MAX_CHANNELS).contains(&num_outputs) {
            return Err(EngineError::UnsupportedChannels {
                num_inputs,
                num_outputs,
            });
        }
        if ir.is_empty() {
            return Err(EngineError::EmptyIr);
        }
        if max_block_size == 0 {
            return Err(EngineError::ZeroBlockSize);
        }

        let plan = PartitionPlan::new(ir.len(), max_block_size, latency_mode, limits);
        let routed = route(ir, num_inputs, num_outputs);
        let paths: Vec<Path> = routed.iter().map(|(path, _)| *path).collect();
        let path_taps: Vec<&[f32]> = routed.iter().map(|(_, taps)| taps.as_slice()).collect();

        let head = DirectHead::new(plan.head_taps, &paths, &path_taps);
        let mut planner = RealFftPlanner::new();
        let levels = plan
            .levels
            .iter()
            .map(|level| {
                UpolsLevel::new(
                    &mut planner,
                    upols::LevelShape {
                        partition_size: level.partition_size,
                        num_partitions: level.num_partitions,
                        ir_offset: level.ir_offset,
                        output_delay: plan.output_delay(level),
                        num_inputs,
                        num_outputs,
                    },
                    &paths,
                    &path_taps,
                )
            })
            .collect();

        let history = (2 * plan.max_partition_size()).max(plan.quantum);
        let max_ahead = plan
            .levels
            .iter()
            .map(|level| plan.output_delay(level))
            .max()
            .unwrap_or(0);
        Ok(Self {
            num_paths: paths.len(),
            head,
            levels,
            input_rings: (0..num_inputs).map(|_| InputRing::new(history)).collect(),
            output_rings: (0..num_outputs)
                .map(|_| OutputRing::new(max_ahead))
                .collect(),
            time: 0,
            plan,
            config,
        })
    }

    /// The partition plan this engine runs.
    pub fn plan(&self) -> &PartitionPlan {
        &self.plan
    }

    /// The configuration this engine was built for.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Number of paths (input-to-output convolutions) after routing.
    pub fn num_paths(&self) -> usize {
        self.num_paths
    }

    /// Latency to report to the host, in samples.
    pub fn latency_samples(&self) -> usize {
        self.plan.latency_samples()
    }

    /// Samples of output that follow the last non-silent input: IR length - 1 + latency.
    pub fn tail_samples(&self) -> usize {
        self.plan.ir_len - 1 + self.latency_samples()
    }

    /// Bytes held by spectra, delay lines and rings (approximate, for reports).
    pub fn memory_bytes(&self) -> usize {
        let levels: usize = self.levels.iter().map(UpolsLevel::memory_bytes).sum();
        let rings = self
            .input_rings
            .iter()
            .map(|r| 2 * r.history_len())
            .sum::<usize>()
            * 4;
        levels + rings
    }

    /// Convolves one host block. `inputs` has `num_inputs` slices and `outputs` `num_outputs`
    /// slices, all of the same length, at most `max_block_size`; the outputs are overwritten with
    /// the wet signal. Any length works, and it may change from call to call. Does not allocate,
    /// lock or wait.
    pub fn process(&mut self, inputs: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let num_frames = outputs.first().map_or(0, |o| o.len());
        debug_assert!(
            inputs.len() == self.config.num_inputs && outputs.len() == self.config.num_outputs
        );
        let quantum = self.plan.quantum;

        let mut done = 0;
        while done < num_frames {
            // Work in sub-blocks that end on quantum boundaries, where levels may run.
            let to_boundary = quantum - (self.time % quantum as u64) as usize;
            let len = to_boundary.min(num_frames - done);
            let range = done..done + len;

            for (ring, input) in self.input_rings.iter_mut().zip(inputs) {
                for (offset, &sample) in input[range.clone()].iter().enumerate() {
                    ring.write(self.time + offset as u64, sample);
                }
            }
            for (output_idx, (output, ring)) in
                outputs.iter_mut().zip(&mut self.output_rings).enumerate()
            {
                let output = &mut output[range.clone()];
                output.fill(0.0);
                self.head
                    .add_output(output_idx, self.time, &self.input_rings, output);
                ring.drain_add(self.time, output);
            }

            self.time += len as u64;
            done += len;
            if self.time.is_multiple_of(quantum as u64) {
                // Every level whose chunk just completed contributes to future output.
                for level in &mut self.levels {
                    if self.time.is_multiple_of(level.partition_size() as u64) {
                        level.run(self.time, &self.input_rings, &mut self.output_rings);
                    }
                }
            }
        }
    }

    /// Forgets all history and pending output; the IR stays. Does not allocate.
    pub fn reset(&mut self) {
        self.input_rings.iter_mut().for_each(InputRing::clear);
        self.output_rings.iter_mut().for_each(OutputRing::clear);
        self.levels.iter_mut().for_each(UpolsLevel::reset);
        self.time = 0;
    }

    /// Test hook: fills every scratch buffer with `value`. Results must not change.
    #[doc(hidden)]
    pub fn poison_scratch(&mut self, value: f32) {
        self.levels
            .iter_mut()
            .for_each(|level| level.poison_scratch(value));
    }
}
