//! A level on the audio thread whose result is due as its chunk completes, summed ahead.
//!
//! A level after the first may start at `D = P` ([`crate::engine::plan`]): the contribution of the
//! chunk that completes at `T` is due from `T + D - P` on, in the very call that completes
//! it, so nothing may hand it to a worker. Run whole in that call, its period would be one
//! spike every `P` samples. An [`AheadLevel`] puts only what needs the new chunk there: each
//! input's forward transform, each output's partition 0 and inverse transform
//! ([`UpolsLevel::inverse_ahead`]). The terms of its other partitions for the next period are
//! known from `T` on (`upols/ahead.rs`), and the calls at the boundaries `T + q` to
//! `T + P - q` take them a chunk of bins at a time ([`UpolsLevel::ahead_chunk_step`]), each
//! boundary until the products done reach its share of the period's, the last one finishing
//! them.
//!
//! Where the steps fall depends only on the time, so the output is the same bits whatever the
//! host's block sizes, offline or at any pace.
//!
//! Uses the rings and the FFT levels ([`crate::engine::upols`]).

use crate::engine::memory::rings::{InputRing, OutputRing};
use crate::engine::upols::UpolsLevel;

/// A level summed ahead on the audio thread (the module docs).
pub struct AheadLevel {
    level: UpolsLevel,
    num_inputs: usize,
    /// Boundaries the ahead sums are spread over: `P / q - 1`, the quanta after the one that
    /// completes a chunk (0 where `P = q`: the call completing the chunk takes them too).
    slices: u64,
    quantum: u64,
    /// Where the period in progress started (its chunk's end).
    chunk_end: u64,
    /// The next step, output and chunk of bins; `None` when the period's sums are done.
    next: Option<(usize, usize)>,
    /// Single-bin products of the ahead sums taken in this period, and in a whole one.
    done: u64,
    period_products: u64,
}

impl AheadLevel {
    /// Sums `level` ahead ([`UpolsLevel::enable_ahead`]), its inputs `num_inputs` channels, its
    /// steps spread over the quanta of size `quantum` of each period. Allocates.
    pub fn new(mut level: UpolsLevel, num_inputs: usize, quantum: usize) -> Self {
        level.enable_ahead();
        let bins = level.window_len() / 2 + 1;
        let later = level.num_partitions().saturating_sub(1);
        let terms: usize = (0..level.num_outputs())
            .map(|idx| level.num_output_terms(idx) / level.num_partitions() * later)
            .sum();
        Self {
            slices: (level.partition_size() / quantum).saturating_sub(1) as u64,
            quantum: quantum as u64,
            num_inputs,
            chunk_end: 0,
            next: None,
            done: 0,
            period_products: (terms * bins) as u64,
            level,
        }
    }

    /// Partition size `P`.
    pub fn partition_size(&self) -> usize {
        self.level.partition_size()
    }

    /// Samples of each input a period transforms ([`UpolsLevel::window_len`]).
    pub fn window_len(&self) -> usize {
        self.level.window_len()
    }

    /// Makes every buffer the level writes resident now ([`UpolsLevel::prefault`]).
    pub fn prefault(&mut self) {
        self.level.prefault();
    }

    /// At a quantum boundary `time` (the input is in the rings up to it): when a chunk
    /// completes, finishes the ahead sums, transforms the chunk and adds each output's period
    /// to its ring; else takes this boundary's share of the ahead sums. Does not allocate.
    pub fn run(&mut self, time: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        let size = self.level.partition_size() as u64;
        if time.is_multiple_of(size) {
            // The last boundary before this one finished them; this only guards the rule.
            self.take_steps(u64::MAX);
            self.level.advance_fdl();
            let window_len = self.level.window_len();
            for (input_idx, input) in inputs.iter().enumerate().take(self.num_inputs) {
                self.level
                    .forward_input(input_idx, input.window(time, window_len));
            }
            let start = time + self.level.output_delay() as u64 - size;
            for (output_idx, output) in outputs.iter_mut().enumerate() {
                if self.level.num_output_terms(output_idx) > 0 {
                    output.add(start, self.level.inverse_ahead(output_idx));
                }
            }
            self.chunk_end = time;
            self.done = 0;
            self.next = self.first_chunk_of(0);
            if self.slices == 0 {
                self.take_steps(u64::MAX);
            }
            return;
        }
        if self.next.is_none() {
            return;
        }
        let slice = time.saturating_sub(self.chunk_end) / self.quantum;
        let budget = if slice >= self.slices {
            u64::MAX
        } else {
            self.period_products * slice / self.slices
        };
        self.take_steps(budget);
    }

    /// Takes steps until `budget` products of the period are done, or all of them are.
    fn take_steps(&mut self, budget: u64) {
        while self.done < budget {
            let Some((output_idx, chunk_idx)) = self.next else {
                return;
            };
            self.done += self.level.ahead_chunk_step(output_idx, chunk_idx) as u64;
            self.next = if chunk_idx + 1 < self.level.num_ahead_chunks() {
                Some((output_idx, chunk_idx + 1))
            } else {
                self.first_chunk_of(output_idx + 1)
            };
        }
    }

    /// The first chunk of the first output from `output_idx` on that has later partitions.
    fn first_chunk_of(&self, output_idx: usize) -> Option<(usize, usize)> {
        if self.level.num_partitions() < 2 {
            return None;
        }
        (output_idx..self.level.num_outputs())
            .find(|&idx| self.level.num_output_terms(idx) > 0)
            .map(|idx| (idx, 0))
    }

    /// Forgets the period in progress, clears the FDLs and the ahead sums. Does not allocate.
    pub fn reset(&mut self) {
        self.level.reset();
        self.chunk_end = 0;
        self.next = None;
        self.done = 0;
    }

    /// Test hook: see [`UpolsLevel::poison_scratch`]; the ahead sums are state, not scratch.
    pub fn poison_scratch(&mut self, value: f32) {
        self.level.poison_scratch(value);
    }
}

#[cfg(test)]
mod tests {
    use rustfft::FftPlanner;

    use super::*;
    use crate::engine::routing::Path;
    use crate::engine::upols::LevelShape;
    use crate::engine::upols::whole_runs::{
        Matching, SteppedLevel, WholeRunCheck, check_against_whole_runs,
    };
    use crate::rng::Rng;

    impl SteppedLevel for AheadLevel {
        fn run(&mut self, time: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
            AheadLevel::run(self, time, inputs, outputs);
        }

        fn reset(&mut self) {
            AheadLevel::reset(self);
        }
    }

    /// A level summed ahead over quanta of `quantum` gives what it gives run whole as each
    /// chunk completes (to float rounding: the terms go in another order), its output in the
    /// rings before it is due, before and after a reset: for a level of 4 partitions of 256 at
    /// a delay of one partition (3 inputs, 2 outputs, no path from input 2 to output 1), at
    /// quanta of 64 and at quanta of its own size (the ahead sums then taken in the same call).
    #[test]
    fn summed_ahead_periods_match_whole_runs() {
        const P: usize = 256;
        for quantum in [64, P] {
            let mut rng = Rng::new(5);
            let num_inputs = 3;
            let paths = [(0, 0), (1, 1), (2, 0), (0, 1)].map(|(input_idx, output_idx)| Path {
                input_idx,
                output_idx,
            });
            let taps: Vec<Vec<f32>> = (0..paths.len())
                .map(|_| (0..5 * P).map(|_| rng.bipolar()).collect())
                .collect();
            let path_taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
            let shared: Vec<usize> = (0..paths.len()).collect();
            let shape = LevelShape {
                partition_size: P,
                span: 1,
                num_partitions: 4,
                ir_offset: P,
                output_delay: P,
                num_inputs,
                num_outputs: 2,
            };
            let mut planner = FftPlanner::new();
            let mut new = || UpolsLevel::new(&mut planner, shape, &paths, &path_taps, &shared);
            let mut whole = new();
            let mut ahead = AheadLevel::new(new(), num_inputs, quantum);
            let check = WholeRunCheck {
                quantum,
                num_quanta: (16 * P / quantum) as u64,
                // Mid-period.
                reset_after: Some((9 * P / quantum) as u64 + 1),
                // Sums of 4 x 1024 products below 1 in magnitude, in two orders.
                matching: Matching::Within(1e-4),
            };
            check_against_whole_runs(&mut whole, &mut ahead, &check, &mut rng);
        }
    }
}
