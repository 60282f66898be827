//! A level summed ahead: its terms `j >= 1` summed over the period before, so that the call
//! that completes a chunk only transforms it, adds its partition 0 and transforms back.
//!
//! Period `t` of an output needs `sum_j X[t - j] * H[j]`. Every term `j >= 1` is known as soon
//! as chunk `t - 1` completes, a whole period before `t`'s result is due. A level summed ahead
//! keeps one sum per output (its *ahead sum*): during period `t - 1` the terms
//! `X[t - j] * H[j]`, `j >= 1`, go into it a chunk of bins at a time
//! ([`UpolsLevel::ahead_chunk_step`], `X[t - j]` being the spectrum `j - 1` periods old then);
//! when chunk `t` completes, [`UpolsLevel::inverse_ahead`] adds `X[t] * H[0]` path by path and
//! transforms the sum back. So a level may start at `D = P` (its result due as its chunk
//! completes) and still put only one partition's products and its transforms into that call;
//! the rest of its period is spread over the calls between (`engine::runner::ahead`).
//!
//! It carries as a level run whole carries in chunks (`carry.rs`): odd and even chunks of bins
//! lead in turn, and a chunk that leads sums, in one walk over its partitions, the next
//! period's terms `j >= 1` and the period after's terms `j >= 2` (its *later sum*), each `H[j]`
//! read once for both; in the other periods the chunk only adds `X[next - 1] * H[1]` to the
//! later sum carried. So its spectra are read about once for two periods. Where the steps fall
//! and which chunks lead depend only on the time, so each output's sum is added in one order
//! whatever the host's calls, to the same bits offline and at any pace. The order is not that
//! of the level run whole, so the two differ by float rounding.

use super::carry::{CARRY_CHUNK_BINS, Carry, chunk_acc};
use super::mac::Term;
use super::{UpolsLevel, carry_buffers};

impl UpolsLevel {
    /// Makes the level one summed ahead (the module docs): an ahead sum and a later sum per
    /// output (the latter in `carry`), carrying only that way, and no sums of all outputs at
    /// once. Allocates; call off the audio thread,
    /// before [`Self::prefault`].
    pub fn enable_ahead(&mut self) {
        self.carry_kind = Carry::None;
        self.together = false;
        self.output_accs = Vec::new();
        debug_assert_eq!(
            self.span, 1,
            "a level summed ahead has partitions of one hop"
        );
        self.carry = carry_buffers(self.num_outputs(), self.num_bins);
        self.carry_period = None;
        self.carry_chunk_bins = CARRY_CHUNK_BINS.min(self.num_bins);
        self.ahead = carry_buffers(self.num_outputs(), self.num_bins);
    }

    /// Whether [`Self::enable_ahead`] made this a level summed ahead.
    pub fn sums_ahead(&self) -> bool {
        !self.ahead.is_empty()
    }

    /// Chunks of bins of an output's ahead sum, each a [`Self::ahead_chunk_step`].
    pub fn num_ahead_chunks(&self) -> usize {
        self.num_bins.div_ceil(self.carry_chunk_bins)
    }

    /// Chunk `chunk_idx` of output `output_idx`'s terms `j >= 1` of the next period, into its
    /// ahead sum (the module docs): where the chunk leads, per path `X[next - j] * H[j]` for
    /// each partition `j >= 1` and, in the same pass over `H[j]`, `j >= 2`'s terms of the period
    /// after into its later sum; else that later sum and `X[next - 1] * H[1]`. Call after this
    /// period's forward transforms and [`Self::inverse_ahead`]. Returns the single-bin products
    /// it took. Does not allocate.
    pub fn ahead_chunk_step(&mut self, output_idx: usize, chunk_idx: usize) -> usize {
        let start = chunk_idx * self.carry_chunk_bins;
        let range = start..(start + self.carry_chunk_bins).min(self.num_bins);
        let leads = (self.period + chunk_idx as u64).is_multiple_of(2);
        let mut ahead = std::mem::take(&mut self.ahead);
        let mut later = std::mem::take(&mut self.carry);
        let (sum, later_sum) = (&mut ahead[output_idx], &mut later[output_idx]);
        let paths = &self.output_paths[output_idx];
        if leads {
            later_sum.re[range.clone()].fill(0.0);
            later_sum.im[range.clone()].fill(0.0);
        } else {
            sum.re[range.clone()].copy_from_slice(&later_sum.re[range.clone()]);
            sum.im[range.clone()].copy_from_slice(&later_sum.im[range.clone()]);
        }
        let partitions = if leads { self.num_partitions } else { 2 };
        let mut waiting: Option<Term<'_>> = None;
        for &path_idx in paths {
            for partition_idx in 1..partitions.min(self.num_partitions) {
                let x = self.next_input_bins(path_idx, partition_idx, &range);
                let (_, h) = self.term_bins(path_idx, partition_idx, &range);
                if partition_idx == 1 {
                    self.add_term(chunk_acc(sum, &range), &mut waiting, (x, h));
                    continue;
                }
                // Partition `j` meets `X[t + 2 - j]` in the period after: one period younger.
                let fdl = &self.fdl[self.paths[path_idx].input_idx];
                let x_later = fdl.bins(self.slot_of_age(self.age(partition_idx) - 2), &range);
                let (acc, later_acc) = (chunk_acc(sum, &range), chunk_acc(later_sum, &range));
                match waiting.take() {
                    Some(lead) => (self.mac.lead_pair)(acc, [lead], x, later_acc, x_later, h),
                    None => (self.mac.pair)(acc, [], x, later_acc, x_later, h),
                }
            }
        }
        self.add_last_term(chunk_acc(sum, &range), waiting);
        self.ahead = ahead;
        self.carry = later;
        let later_terms = if leads {
            2 * self.num_partitions.saturating_sub(2)
        } else {
            0
        };
        paths.len() * (1 + later_terms) * range.len()
    }

    /// Output `output_idx`'s period as its chunk completes (after this period's forward
    /// transforms): its ahead sum plus `X[t] * H[0]` of each path, transformed back; the ahead
    /// sum is then cleared for the next period's terms. Returns the valid `P` samples. Does not
    /// allocate.
    pub fn inverse_ahead(&mut self, output_idx: usize) -> &[f32] {
        let mut ahead = std::mem::take(&mut self.ahead);
        let sum = &mut ahead[output_idx];
        let mut waiting = None;
        for &path_idx in &self.output_paths[output_idx] {
            self.add_term(sum.acc(), &mut waiting, self.term(path_idx, 0));
        }
        self.add_last_term(sum.acc(), waiting);
        self.inverse(sum);
        sum.re.fill(0.0);
        sum.im.fill(0.0);
        self.ahead = ahead;
        self.valid_samples()
    }
}
