//! A level that runs on the audio thread with its period spread over the quanta of its slack.
//!
//! A level of partition size `P` after the first has `D >= 2P`: the result of the chunk that
//! completes at `T` is first needed at `T + D - P >= T + P`. A worker may use that slack; so may
//! the audio thread, a slice at a time. A [`SpreadLevel`] cuts each period into its steps, in
//! the order [`UpolsLevel::compute`] takes them (each input's forward transform, each output's
//! partition products path by path, two per pass over its sum, and its inverse transform), and at
//! each of the `P / q` quantum boundaries from `T` on it takes steps until the estimated work
//! done reaches that boundary's share of the period; the last boundary before the next chunk
//! finishes it. Each output's `P` samples go to its output ring as soon as its inverse
//! transform is done, before the first of them is due.
//!
//! A level whose spectra outgrow the cache and that carries in chunks of bins run whole
//! (`upols/carry.rs`: each IR partition and input spectrum read once for two periods) takes its
//! products a chunk a step instead ([`UpolsLevel::mac_chunk_step`]), carrying the same way, so
//! the audio thread reads its spectra half as often as well. On the Xeon VM (2026-12-04, the
//! peers' 60 s input, 6 rounds alternated) that took 7.7 % off a stereo 10 s reverb at block 1024
//! (its `4096x14` level; the audio thread 0.00140 to 0.00121 CPU-s/s, the median call 28 to
//! 23 us, p99 the same) and 3.6 % off a 1 s one (`4096x10`).
//!
//! So a level whose slack is too small for a worker
//! ([`crate::engine::plan::PartitionPlan::on_audio_thread`]) costs the audio thread a steady share
//! of each quantum instead of a spike every `P` samples, and no hand-over. The steps and their
//! order are those of a whole period, and where they fall depends only on the time, so the output
//! is the same bit for bit whatever the host's block sizes, and that of the level run whole when
//! its chunk completes; only a level carrying by parity, which no plan spreads (its IR spectra pass
//! what a spread level may hold), would sum its terms in another order, to float rounding.
//!
//! Uses the rings and the FFT levels ([`crate::engine::upols`]).

use crate::engine::memory::rings::{InputRing, OutputRing};
use crate::engine::upols::UpolsLevel;

/// The next step of a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// No period in progress.
    Idle,
    /// The forward transform of one input channel's window.
    Forward { input_idx: usize },
    /// The partition products of an output's sum from its term `term_idx` on, two at a time
    /// ([`UpolsLevel::mac_step`]).
    Mac { output_idx: usize, term_idx: usize },
    /// The inverse transform of an output's sum, and its samples into the output ring.
    Inverse { output_idx: usize },
    /// Chunk `chunk_idx` of the bins of an output's sum, of a level that carries in chunks
    /// ([`UpolsLevel::mac_chunk_step`]); of every output's where it sums them together.
    MacChunk { output_idx: usize, chunk_idx: usize },
}

/// A level on the audio thread, its period spread over `P / q` quanta.
pub struct SpreadLevel {
    level: UpolsLevel,
    num_inputs: usize,
    /// Boundaries a period is spread over: `P / q`.
    slices: u64,
    quantum: u64,
    /// Where the period in progress started (its chunk's end).
    chunk_end: u64,
    next: Step,
    /// Estimated work done in this period, and in a whole period (see [`Self::new`]).
    done_cost: u64,
    period_cost: u64,
    fft_cost: u64,
    mac_cost: u64,
}

impl SpreadLevel {
    /// Spreads `level`, whose inputs are `num_inputs` channels, over the quanta of size
    /// `quantum` of each period. The work is estimated with the plan's cost model: a real FFT
    /// of size `F` (`2P`, or `(span + 1) P`) as `2.5 F log2(F)` flops, a partition product as
    /// `8 (F / 2 + 1)`.
    pub fn new(level: UpolsLevel, num_inputs: usize, quantum: usize) -> Self {
        let size = level.partition_size();
        let fft_size = level.window_len() as u64;
        let fft_cost = 5 * fft_size / 2 * u64::from(fft_size.ilog2());
        let mac_cost = 8 * (fft_size / 2 + 1);
        let outputs = (0..level.num_outputs()).map(|idx| level.num_output_terms(idx) as u64);
        let mut period_cost = num_inputs as u64 * fft_cost;
        for terms in outputs.filter(|&terms| terms > 0) {
            period_cost += terms * mac_cost + fft_cost;
        }
        Self {
            slices: (size / quantum).max(1) as u64,
            quantum: quantum as u64,
            level,
            num_inputs,
            chunk_end: 0,
            next: Step::Idle,
            done_cost: 0,
            period_cost,
            fft_cost,
            mac_cost,
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

    /// At a quantum boundary `time` (the input is in the rings up to it): starts a period when
    /// a chunk completes, and does this boundary's share of the period in progress. Does not
    /// allocate.
    pub fn run(&mut self, time: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        if time.is_multiple_of(self.level.partition_size() as u64) {
            // A period is always finished by now; this only guards the rule.
            self.take_steps(u64::MAX, inputs, outputs);
            self.chunk_end = time;
            self.done_cost = 0;
            self.level.advance_fdl();
            self.next = Step::Forward { input_idx: 0 };
        }
        if self.next == Step::Idle {
            return;
        }
        let slice = (time - self.chunk_end) / self.quantum + 1;
        let budget = if slice >= self.slices {
            u64::MAX
        } else {
            self.period_cost * slice / self.slices
        };
        self.take_steps(budget, inputs, outputs);
    }

    /// Takes steps until `budget` of the period's work is done, or the period is.
    fn take_steps(&mut self, budget: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        let size = self.level.partition_size();
        while self.done_cost < budget {
            self.next = match self.next {
                Step::Idle => return,
                Step::Forward { input_idx } => {
                    let window_len = self.level.window_len();
                    let window = inputs[input_idx].window(self.chunk_end, window_len);
                    self.level.forward_input(input_idx, window);
                    self.done_cost += self.fft_cost;
                    if input_idx + 1 < self.num_inputs {
                        Step::Forward {
                            input_idx: input_idx + 1,
                        }
                    } else {
                        self.first_step_of(0)
                    }
                }
                Step::Mac {
                    output_idx,
                    term_idx,
                } => {
                    let taken = self.level.mac_step(output_idx, term_idx);
                    self.done_cost += taken as u64 * self.mac_cost;
                    if term_idx + taken < self.level.num_output_terms(output_idx) {
                        Step::Mac {
                            output_idx,
                            term_idx: term_idx + taken,
                        }
                    } else {
                        Step::Inverse { output_idx }
                    }
                }
                Step::MacChunk {
                    output_idx,
                    chunk_idx,
                } => {
                    // Single-bin products, 8 flops each as in `mac_cost`: a leading chunk takes
                    // twice a carried one's share, and the budget sees it.
                    let products = self.level.mac_chunk_step(output_idx, chunk_idx);
                    self.done_cost += 8 * products as u64;
                    if chunk_idx + 1 < self.level.num_carry_chunks() {
                        Step::MacChunk {
                            output_idx,
                            chunk_idx: chunk_idx + 1,
                        }
                    } else if self.level.sums_outputs_together() {
                        self.inverse_of(0)
                    } else {
                        Step::Inverse { output_idx }
                    }
                }
                Step::Inverse { output_idx } => {
                    let start = self.chunk_end + (self.level.output_delay() - size) as u64;
                    let samples = if self.level.carries_in_chunks() {
                        self.level.inverse_chunked(output_idx)
                    } else {
                        self.level.inverse_acc()
                    };
                    outputs[output_idx].add(start, samples);
                    self.done_cost += self.fft_cost;
                    if self.level.carries_in_chunks() && self.level.sums_outputs_together() {
                        self.inverse_of(output_idx + 1)
                    } else {
                        self.first_step_of(output_idx + 1)
                    }
                }
            };
        }
    }

    /// The first step of the first output from `output_idx` on that has paths (clearing the
    /// sum for it, or its first chunk), or the end of the period.
    fn first_step_of(&mut self, output_idx: usize) -> Step {
        match self.next_output(output_idx) {
            Some(output_idx) if self.level.carries_in_chunks() => Step::MacChunk {
                output_idx,
                chunk_idx: 0,
            },
            Some(output_idx) => {
                self.level.clear_acc();
                Step::Mac {
                    output_idx,
                    term_idx: 0,
                }
            }
            None => self.end_period(),
        }
    }

    /// The inverse transform of the first output from `output_idx` on that has paths, of a
    /// level whose chunks summed every output at once, or the end of the period.
    fn inverse_of(&mut self, output_idx: usize) -> Step {
        match self.next_output(output_idx) {
            Some(output_idx) => Step::Inverse { output_idx },
            None => self.end_period(),
        }
    }

    /// The first output from `output_idx` on that has paths.
    fn next_output(&self, output_idx: usize) -> Option<usize> {
        (output_idx..self.level.num_outputs()).find(|&idx| self.level.num_output_terms(idx) > 0)
    }

    /// [`Step::Idle`], the period done: a level that carries in chunks keeps what it carries.
    fn end_period(&mut self) -> Step {
        if self.level.carries_in_chunks() {
            self.level.end_chunked_period();
        }
        Step::Idle
    }

    /// Forgets the period in progress and clears the FDLs. Does not allocate.
    pub fn reset(&mut self) {
        self.level.reset();
        self.next = Step::Idle;
        self.done_cost = 0;
    }

    /// Test hook: see [`UpolsLevel::poison_scratch`]. The accumulator is scratch only
    /// between outputs: from an output's first product to its inverse transform it holds the
    /// output's sum.
    pub fn poison_scratch(&mut self, value: f32) {
        match self.next {
            Step::Idle | Step::Forward { .. } => self.level.poison_scratch(value),
            Step::Mac { .. } | Step::MacChunk { .. } | Step::Inverse { .. } => {
                self.level.poison_transform_scratch(value)
            }
        }
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

    impl SteppedLevel for SpreadLevel {
        fn run(&mut self, time: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
            SpreadLevel::run(self, time, inputs, outputs);
        }

        fn reset(&mut self) {
            SpreadLevel::reset(self);
        }
    }

    fn level(
        paths: &[Path],
        taps: &[Vec<f32>],
        num_inputs: usize,
        num_outputs: usize,
    ) -> UpolsLevel {
        let path_taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let shared: Vec<usize> = (0..paths.len()).collect();
        UpolsLevel::new(
            &mut FftPlanner::new(),
            LevelShape {
                partition_size: 256,
                span: 1,
                num_partitions: 3,
                ir_offset: 512,
                output_delay: 512,
                num_inputs,
                num_outputs,
            },
            paths,
            &path_taps,
            &shared,
        )
    }

    /// Spread over quanta of 64, a level gives what it gives run whole when each chunk
    /// completes (to float rounding: run whole, a level sums half of each period's terms a
    /// period ahead), and has each block in the rings before its first sample is due.
    #[test]
    fn spread_periods_match_whole_runs() {
        let mut rng = Rng::new(7);
        let (num_inputs, num_outputs) = (3, 2);
        // Output 0 from inputs 0 and 2, output 1 from input 1; no path from input 2 to 1.
        let paths = [(0, 0), (1, 1), (2, 0)].map(|(input_idx, output_idx)| Path {
            input_idx,
            output_idx,
        });
        let taps: Vec<Vec<f32>> = (0..paths.len())
            .map(|_| (0..1400).map(|_| rng.bipolar()).collect())
            .collect();
        let mut whole = level(&paths, &taps, num_inputs, num_outputs);
        let mut spread = SpreadLevel::new(
            level(&paths, &taps, num_inputs, num_outputs),
            num_inputs,
            64,
        );
        let check = WholeRunCheck {
            quantum: 64,
            num_quanta: 200,
            reset_after: None,
            // Sums of 3 x 1400 products below 1 in magnitude, in two orders.
            matching: Matching::Within(1e-4),
        };
        check_against_whole_runs(&mut whole, &mut spread, &check, &mut rng);
    }

    /// A dense level of `P = 1024` and 8 or 16 partitions, big enough to carry in chunks
    /// (`upols/carry.rs`; with 8 inputs, summing its outputs together too), spread over
    /// quanta of 256: its output is the whole run's bit for bit, before and after a reset.
    #[test]
    fn spread_periods_that_carry_give_the_whole_runs_bits() {
        for (num_inputs, num_outputs, num_partitions, together) in
            [(4, 4, 8, false), (8, 2, 16, true)]
        {
            const P: usize = 1024;
            const Q: usize = 256;
            let mut rng = Rng::new(11);
            let paths = Path::dense(num_inputs, num_outputs);
            let taps: Vec<Vec<f32>> = (0..paths.len())
                .map(|_| (0..num_partitions * P).map(|_| rng.bipolar()).collect())
                .collect();
            let path_taps: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
            let shared: Vec<usize> = (0..paths.len()).collect();
            let shape = LevelShape {
                partition_size: P,
                span: 1,
                num_partitions,
                ir_offset: 0,
                output_delay: 2 * P,
                num_inputs,
                num_outputs,
            };
            let mut planner = FftPlanner::new();
            let mut new = || UpolsLevel::new(&mut planner, shape, &paths, &path_taps, &shared);
            let mut whole = new();
            let level = new();
            assert!(level.carries_in_chunks());
            assert_eq!(level.sums_outputs_together(), together);
            assert!(level.num_carry_chunks() >= 2);
            let mut spread = SpreadLevel::new(level, num_inputs, Q);
            let check = WholeRunCheck {
                quantum: Q,
                num_quanta: (12 * P / Q) as u64,
                reset_after: Some((7 * P / Q) as u64),
                matching: Matching::Bits,
            };
            check_against_whole_runs(&mut whole, &mut spread, &check, &mut rng);
        }
    }
}
