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
//! the rest of its period is spread over the calls between (`engine::ahead`).
//!
//! Each output's sum is added in one order, whatever the host's calls: per chunk of bins, path
//! by path in routing order and partition by partition for `j >= 1` (two terms per pass), then
//! each path's `j = 0`. That is the order of a level carrying in chunks (`carry.rs`) run whole,
//! to the dual kernel's rounding. Its spectra are read once a period: a level summed ahead does
//! not carry.

use super::super::mac::Term;
use super::carry::{CARRY_CHUNK_BINS, Carry, chunk_acc};
use super::{UpolsLevel, carry_buffers};

impl UpolsLevel {
    /// Makes the level one summed ahead (the module docs): one ahead sum per output, no
    /// carrying and no sums of all outputs at once. Allocates; call off the audio thread,
    /// before [`Self::prefault`].
    pub fn enable_ahead(&mut self) {
        self.carry_kind = Carry::None;
        self.together = false;
        self.output_accs = Vec::new();
        self.carry = Vec::new();
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
    /// ahead sum: per path, `X[next - j] * H[j]` for each partition `j >= 1`, two per pass.
    /// Call after this period's forward transforms and [`Self::inverse_ahead`]. Returns the
    /// single-bin products it took. Does not allocate.
    pub fn ahead_chunk_step(&mut self, output_idx: usize, chunk_idx: usize) -> usize {
        let start = chunk_idx * self.carry_chunk_bins;
        let range = start..(start + self.carry_chunk_bins).min(self.num_bins);
        let mut ahead = std::mem::take(&mut self.ahead);
        let sum = &mut ahead[output_idx];
        let mut waiting: Option<Term<'_>> = None;
        let mut products = 0;
        for &path_idx in &self.output_paths[output_idx] {
            for partition_idx in 1..self.num_partitions {
                let x = self.next_input_bins(path_idx, partition_idx, &range);
                let (_, h) = self.term_bins(path_idx, partition_idx, &range);
                self.add_term(chunk_acc(sum, &range), &mut waiting, (x, h));
                products += range.len();
            }
        }
        self.add_last_term(chunk_acc(sum, &range), waiting);
        self.ahead = ahead;
        products
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
