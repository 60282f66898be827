//! A level whose spectra outgrow the cache, run whole: its spectra read once for two periods,
//! in one of two ways.
//!
//! # In chunks of bins (a level of many partitions)
//!
//! Period `t` of an output needs `sum_j X[t - j] * H[j]`. Its terms `j >= 1` are known a period
//! early, and the walk over `j` that sums them for `t` meets, one step later, the spectrum the
//! next period needs: `X[t + 1 - j] = X[t - (j - 1)]`. So the bins are cut into chunks of
//! [`CARRY_CHUNK_BINS`] and, in alternate periods, a chunk *leads*: one walk over the
//! partitions sums both `t`'s terms `j >= 1` and `t + 1`'s, each `H[j]` and `X[t - j]` read once
//! from memory, the previous step's input still in the first-level cache. In the other periods
//! the chunk only adds `X[t] * H[0]` to the sum carried from the period before. Odd and even
//! chunks lead in turn, so every period does half of each: the same arithmetic as summing each
//! period whole, split evenly, for about half of the reads from memory.
//!
//! Every period's sum is added in one order, whether carried or not: the terms `j >= 1`, path by
//! path in routing order and partition by partition, then each path's `j = 0`. So the output is
//! the same bits whichever chunks were carried, after a gap (a chunk the late policy dropped) or
//! a reset as well as between, and whatever thread runs the level.
//!
//! # By parity (a dense level of a few partitions)
//!
//! Period `t` reads partition 0 and the partitions `j >= 1` with `j = t (mod 2)`, adding each to
//! this period's sum and to the next one's; the other half came carried from period `t - 1`.
//! About `(n + 1) / 2` partitions are read per period instead of `n`, the same arithmetic,
//! split evenly over the periods. A period that follows anything but this one (the first, one
//! after a gap or a reset) has nothing carried and reads all; its output is that of the level
//! summed afresh to float rounding.
//!
//! # All outputs at once
//!
//! A level carrying by parity, and one carrying in chunks whose outputs share its inputs and
//! whose input spectra outgrow the cache ([`TOGETHER_MIN_INPUT_BYTES`]), sum all their outputs
//! at once, in chunks of [`TOGETHER_CHUNK_BINS`]: per chunk, path rank by path rank, partition
//! by partition, output by output. In a dense matrix the `k`-th path of every output comes from
//! input `k`, so each chunk of an input spectrum is read from beyond the core's cache once for
//! all outputs, where a walk one output at a time read every input spectrum once per output.
//! Each output still adds its terms in the same order, for the same bits.
//!
//! The fused level 0 sums each quantum a quantum ahead on the audio thread
//! (`UpolsLevel::prepare_pending`) and carries the same way, but by parity only: a 4 x 4 room's
//! level 0 (1.1 MB at a 1024 quantum) cost 11 % more on the audio thread carried in chunks.
//! A level spread over the audio thread's quanta (`engine::runner::spread`) carries in chunks as it
//! would run whole, a chunk a step (the impl at the end of this file), for the same bits; by
//! parity it does not: stepwise, one path a step, a 12 x 12 room's at 64-sample blocks did no
//! better (the kernels' stores of the next period's sums cost what the reads saved).
//!
//! On the Xeon VM a stereo 10 s reverb's last level at 1024-sample blocks (28 partitions of
//! 16384, 15 MB of IR and input spectra) took twice the time per product of the levels that
//! stay in a core's cache, and its products were most of the worker's time. Carrying, measured
//! side by side with the peer harness (`bench.py`, median of 5, two runs): stereo 10 s 8 %, 11 to
//! 13 % and 11 to 13 % less CPU at blocks of 64, 256 and 1024, stereo 1 s 6 to 12 % less at 256
//! (at 1024, 0 and 12 % in the two runs: that cell's spread is about 10 %). Chunks of
//! 512 bins did as well as 1024, chunks of 2048 (48 KiB a chunk) lost half of the gain.

use super::super::routing::MAX_CHANNELS;
use super::mac::{Acc, Term};
use super::{SplitSpectra, UpolsLevel, spectra_bytes};

/// The spectra a level reads per period (its IR partitions and its inputs'), in bytes, before
/// a level of [`CHUNKED_MIN_PARTITIONS`] or more reads each once for two periods in chunks of
/// bins (the module docs). Below it they stay in the first levels of a core's cache beside the
/// level's sums and transforms, reading them costs little, and carrying only cuts the walk
/// into shorter runs. Measured on the Xeon VM (2 MiB of L2 a core), carrying took 0 to 12 %
/// (two runs) off a stereo 1 s reverb at block 1024, whose last level holds 1.3 MiB; down to
/// no threshold at all, smaller levels gained nothing more.
pub const CARRY_MIN_SPECTRA_BYTES: usize = 1 << 20;

/// Fewest partitions of a level that carries in chunks of bins: the walk over the partitions
/// reuses each input spectrum for the next period's sum, which pays over many partitions. A
/// dense matrix's levels of 2 to 4 partitions carried that way cost 5 to 10 % more than
/// carrying half their partitions a period ([`DENSE_CARRY_MIN_SPECTRA_BYTES`]).
pub const CHUNKED_MIN_PARTITIONS: usize = 5;

/// The IR spectra a dense level of fewer than [`CHUNKED_MIN_PARTITIONS`] partitions must hold,
/// in bytes, before it reads half of its partitions each period for two periods: below it
/// they stay in cache (2 x 1 MiB L2 on the EPYC VM), reading them costs little, and carrying
/// only adds the next period's stores.
pub const DENSE_CARRY_MIN_SPECTRA_BYTES: usize = 4 << 20;

/// How a level run whole sums a period ahead (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Carry {
    /// Each period alone.
    None,
    /// In chunks of bins, each IR partition and input spectrum read once for two periods.
    Chunks,
    /// Half of the partitions each period, each read for two periods.
    Parity,
}

/// How a level carries: in chunks from [`CHUNKED_MIN_PARTITIONS`] partitions and
/// [`CARRY_MIN_SPECTRA_BYTES`] of IR and input spectra; by parity where it has fewer (at least
/// two), its IR spectra pass [`DENSE_CARRY_MIN_SPECTRA_BYTES`], and there are more of them than
/// input spectra, as in a dense matrix (a pair read saves an IR block but adds an input block,
/// so diagonal paths, one IR per input, gain nothing); else not at all.
pub(super) fn carry_for(
    num_partitions: usize,
    num_spectra: usize,
    num_inputs: usize,
    num_bins: usize,
) -> Carry {
    let block = spectra_bytes(1, num_partitions, num_bins);
    if num_partitions >= CHUNKED_MIN_PARTITIONS
        && (num_spectra + num_inputs) * block >= CARRY_MIN_SPECTRA_BYTES
    {
        Carry::Chunks
    } else if num_partitions >= 2
        && num_spectra > num_inputs
        && num_spectra * block >= DENSE_CARRY_MIN_SPECTRA_BYTES
    {
        Carry::Parity
    } else {
        Carry::None
    }
}

/// Whether a level carrying as `kind` sums all its outputs at once, each chunk of bins output
/// by output (the module docs): by parity always; in chunks where it has more IR spectra than
/// inputs (outputs share input spectra, as in a dense matrix) and its `input_bytes` of input
/// spectra pass [`TOGETHER_MIN_INPUT_BYTES`].
pub(super) fn sums_together(
    kind: Carry,
    num_spectra: usize,
    num_inputs: usize,
    input_bytes: usize,
) -> bool {
    match kind {
        Carry::None => false,
        Carry::Parity => true,
        Carry::Chunks => num_spectra > num_inputs && input_bytes >= TOGETHER_MIN_INPUT_BYTES,
    }
}

/// Bins per chunk: the sums of two periods and one input spectrum of a chunk (24 KiB) stay in
/// a core's first-level cache, and each walk step streams runs of 4 KiB, long enough for the
/// hardware prefetcher.
pub const CARRY_CHUNK_BINS: usize = 1024;

/// Bins per chunk of a level that sums all its outputs at once (see the module docs): long
/// enough runs for the hardware prefetcher in each of the chunk's many spectra (16 KiB an
/// array). Measured on the Xeon VM (dense 2 s matrices, 4 rounds alternated), a parity walk in
/// chunks of 4096 bins took 5 to 9 % off 4 x 4 and 12 x 12 at block 1024 and 16 x 16 at 64
/// and 1024 against the walk one output at a time, where chunks of 1024 cost up to 6 % more
/// than it on 12 x 12 and 16 x 16, and 2048, 8192 and whole spectra came out between the two.
pub const TOGETHER_CHUNK_BINS: usize = 4096;

/// Bytes of input spectra (the FDL) from which a level carrying in chunks, whose outputs share
/// its inputs, sums all its outputs at once: below it they stay in a core's cache, and the
/// walk one output at a time keeps each chunk's sums in the first-level cache. Measured on the
/// Xeon VM (dense 4 x 4 x 2 s, 100 s of input, 5 rounds alternated), the `8192 x 10` level
/// (2.9 MB of input spectra) together took 4 to 7 % off at blocks of 64 and 128; the `4096 x 6`
/// level at 1024 (0.9 MB) cost 2 to 5 % more together.
pub const TOGETHER_MIN_INPUT_BYTES: usize = 1 << 20;

/// Bins per chunk for a level of `num_bins` that carries as `kind`, all outputs at once or not
/// (`together`): [`TOGETHER_CHUNK_BINS`] or [`CARRY_CHUNK_BINS`]; in chunks, at most half the
/// bins (rounded up), so that every level has chunks of both parities and each period does
/// about the same work; by parity (always together), at most all of them.
pub fn chunk_bins(kind: Carry, together: bool, num_bins: usize) -> usize {
    let most = if together {
        TOGETHER_CHUNK_BINS
    } else {
        CARRY_CHUNK_BINS
    };
    match kind {
        Carry::Parity => most.min(num_bins),
        Carry::None | Carry::Chunks => most.min(num_bins.div_ceil(2)),
    }
    .max(1)
}

/// Bins `range` of a one-block spectrum, as an accumulator.
pub(super) fn chunk_acc<'a>(
    spectra: &'a mut SplitSpectra,
    range: &std::ops::Range<usize>,
) -> Acc<'a> {
    Acc {
        re: &mut spectra.re[range.clone()],
        im: &mut spectra.im[range.clone()],
    }
}

impl UpolsLevel {
    /// Step 2 of a level carrying in chunks, for the outputs `outputs` (one, or all of them at
    /// once: see the module docs): this period's sums into `accs` (one per output of
    /// `outputs`), and in the chunks that lead, the next period's terms `j >= 1` into `nexts`,
    /// which hold on entry the sums carried from the period before (`carried`: it was this
    /// level's previous period). Per chunk, path rank by path rank, partition by partition,
    /// output by output: each output's terms in the same order however many are walked
    /// together, for the same bits.
    pub(super) fn mac_chunks(
        &self,
        outputs: std::ops::Range<usize>,
        accs: &mut [SplitSpectra],
        nexts: &mut [SplitSpectra],
        carried: bool,
    ) {
        for chunk_idx in 0..self.num_carry_chunks() {
            self.mac_chunk(outputs.clone(), accs, nexts, carried, chunk_idx);
        }
    }

    /// Chunk `chunk_idx` of [`Self::mac_chunks`]: the bins `[chunk_idx * c, (chunk_idx + 1) c)`
    /// of each sum, `c` being the level's chunk ([`chunk_bins`]). Returns the single-bin
    /// products it took: a chunk that leads takes its terms `j >= 1` twice, one carried only
    /// `j = 0`, one summed afresh each term once.
    fn mac_chunk(
        &self,
        outputs: std::ops::Range<usize>,
        accs: &mut [SplitSpectra],
        nexts: &mut [SplitSpectra],
        carried: bool,
        chunk_idx: usize,
    ) -> usize {
        let (num_bins, chunk_bins) = (self.num_bins, self.carry_chunk_bins);
        let output_paths = &self.output_paths[outputs];
        let most_paths = output_paths.iter().map(Vec::len).max().unwrap_or(0);
        let start = chunk_idx * chunk_bins;
        let range = start..(start + chunk_bins).min(num_bins);
        let leads = (self.period + chunk_idx as u64).is_multiple_of(2);
        let sums_here = !carried || leads;
        let paths: usize = output_paths.iter().map(Vec::len).sum();
        let later_terms = match (sums_here, leads) {
            (false, _) => 0,
            (true, false) => paths * (self.num_partitions - 1),
            (true, true) => 2 * paths * (self.num_partitions - 1),
        };
        for (acc, next) in accs.iter_mut().zip(nexts.iter_mut()) {
            if sums_here {
                acc.re[range.clone()].fill(0.0);
                acc.im[range.clone()].fill(0.0);
                if leads {
                    next.re[range.clone()].fill(0.0);
                    next.im[range.clone()].fill(0.0);
                }
            } else {
                acc.re[range.clone()].copy_from_slice(&next.re[range.clone()]);
                acc.im[range.clone()].copy_from_slice(&next.im[range.clone()]);
            }
        }
        if sums_here {
            for rank in 0..most_paths {
                // Two terms per pass over the sum where none leads, in order: the same bits.
                let mut waiting: [Option<Term<'_>>; MAX_CHANNELS] = [None; MAX_CHANNELS];
                for partition_idx in 1..self.num_partitions {
                    for (output_idx, (acc, next)) in
                        accs.iter_mut().zip(nexts.iter_mut()).enumerate()
                    {
                        let Some(&path_idx) = output_paths[output_idx].get(rank) else {
                            continue;
                        };
                        let (x, h) = self.term_bins(path_idx, partition_idx, &range);
                        if leads {
                            let x_next = self.next_input_bins(path_idx, partition_idx, &range);
                            let (acc, next) = (chunk_acc(acc, &range), chunk_acc(next, &range));
                            (self.mac.pair)(acc, [], x, next, x_next, h);
                        } else {
                            let waiting = &mut waiting[output_idx];
                            self.add_term(chunk_acc(acc, &range), waiting, (x, h));
                        }
                    }
                }
                for (acc, waiting) in accs.iter_mut().zip(waiting) {
                    self.add_last_term(chunk_acc(acc, &range), waiting);
                }
            }
        }
        for rank in 0..most_paths {
            for (output_idx, acc) in accs.iter_mut().enumerate() {
                let Some(&path_idx) = output_paths[output_idx].get(rank) else {
                    continue;
                };
                let (x, h) = self.term_bins(path_idx, 0, &range);
                (self.mac.single)(chunk_acc(acc, &range), x, h);
            }
        }
        (paths + later_terms) * range.len()
    }

    /// Step 2 of every output channel, carrying by parity (see the module docs): `accs[o]` gets
    /// output `o`'s period sum, `nexts[o]` holds on entry the terms carried from the period
    /// before (`carried`) and gets the next period's terms of the partitions read. Walked in
    /// chunks of bins, each chunk path rank by path rank, partition by partition and output by
    /// output: a dense matrix's outputs read each input spectrum in turn while it is in cache,
    /// instead of once per output from beyond it. Each output's terms go in the same order as
    /// summed one output at a time (a term of `acc` alone waits for the next one and goes with
    /// it in one pass: the dual or the lead pair kernel), for the same bits.
    pub(super) fn mac_parity(
        &self,
        accs: &mut [SplitSpectra],
        nexts: &mut [SplitSpectra],
        carried: bool,
    ) {
        for (acc, next) in accs.iter_mut().zip(nexts.iter_mut()) {
            if carried {
                // The carried sum becomes this period's; `next` gets the old buffer.
                std::mem::swap(acc, next);
            } else {
                acc.re.fill(0.0);
                acc.im.fill(0.0);
            }
            next.re.fill(0.0);
            next.im.fill(0.0);
        }
        let (num_bins, chunk_bins) = (self.num_bins, self.carry_chunk_bins);
        let parity = (self.period % 2) as usize;
        let most_paths = self.output_paths.iter().map(Vec::len).max().unwrap_or(0);
        for start in (0..num_bins).step_by(chunk_bins) {
            let range = start..(start + chunk_bins).min(num_bins);
            let mut waiting: [Option<Term<'_>>; MAX_CHANNELS] = [None; MAX_CHANNELS];
            for rank in 0..most_paths {
                for partition_idx in 0..self.num_partitions {
                    let pair = partition_idx > 0 && partition_idx % 2 == parity;
                    if !pair && partition_idx > 0 && carried {
                        continue;
                    }
                    for (output_idx, (acc, next)) in
                        accs.iter_mut().zip(nexts.iter_mut()).enumerate()
                    {
                        let Some(&path_idx) = self.output_paths[output_idx].get(rank) else {
                            continue;
                        };
                        let (x, h) = self.term_bins(path_idx, partition_idx, &range);
                        let waiting = &mut waiting[output_idx];
                        if pair {
                            let x_next = self.next_input_bins(path_idx, partition_idx, &range);
                            let (acc, next) = (chunk_acc(acc, &range), chunk_acc(next, &range));
                            match waiting.take() {
                                Some(lead) => (self.mac.lead_pair)(acc, [lead], x, next, x_next, h),
                                None => (self.mac.pair)(acc, [], x, next, x_next, h),
                            }
                        } else {
                            self.add_term(chunk_acc(acc, &range), waiting, (x, h));
                        }
                    }
                }
            }
            for (acc, waiting) in accs.iter_mut().zip(waiting) {
                self.add_last_term(chunk_acc(acc, &range), waiting);
            }
        }
    }
}

/// A period spread over the audio thread's quanta ([`crate::engine::runner::spread`]) takes step 2
/// of a level that carries in chunks a chunk at a time, in the order [`UpolsLevel::compute`] takes
/// the chunks: the same bits as the level run whole, its spectra still read once for two
/// periods.
impl UpolsLevel {
    /// Whether the level carries in chunks of bins (the module docs), so that a spread period
    /// takes its step 2 with [`Self::mac_chunk_step`].
    pub fn carries_in_chunks(&self) -> bool {
        self.carry_kind == Carry::Chunks
    }

    /// Whether the level sums all its outputs at once ([`sums_together`]): one
    /// [`Self::mac_chunk_step`] then serves every output.
    pub fn sums_outputs_together(&self) -> bool {
        self.together
    }

    /// Chunks of bins of a carrying level's step 2.
    pub fn num_carry_chunks(&self) -> usize {
        self.num_bins.div_ceil(self.carry_chunk_bins)
    }

    /// Bins of chunk `chunk_idx`.
    pub fn carry_chunk_len(&self, chunk_idx: usize) -> usize {
        let start = chunk_idx * self.carry_chunk_bins;
        self.carry_chunk_bins.min(self.num_bins - start)
    }

    /// Chunk `chunk_idx` of output `output_idx`'s step 2 into the level's accumulator, or of
    /// every output's into theirs where the level sums them together, carrying as
    /// [`Self::compute`] does; returns the products it took, each of the chunk's bins (a chunk
    /// that leads takes its terms `j >= 1` twice, one carried takes only `j = 0`). After the
    /// period's last chunk, [`Self::end_chunked_period`]. Does not allocate.
    pub fn mac_chunk_step(&mut self, output_idx: usize, chunk_idx: usize) -> usize {
        let carried = self.carry_period == Some(self.period);
        let mut carry = std::mem::take(&mut self.carry);
        let products = if self.together {
            let mut accs = std::mem::take(&mut self.output_accs);
            let products = self.mac_chunk(
                0..self.num_outputs(),
                &mut accs,
                &mut carry,
                carried,
                chunk_idx,
            );
            self.output_accs = accs;
            products
        } else {
            let mut acc = std::mem::take(&mut self.acc);
            let products = self.mac_chunk(
                output_idx..output_idx + 1,
                std::slice::from_mut(&mut acc),
                std::slice::from_mut(&mut carry[output_idx]),
                carried,
                chunk_idx,
            );
            self.acc = acc;
            products
        };
        self.carry = carry;
        products
    }

    /// Ends a period taken with [`Self::mac_chunk_step`]: the next one finds its carried terms.
    pub fn end_chunked_period(&mut self) {
        self.carry_period = Some(self.period + 1);
    }

    /// Step 3 of output `output_idx` after its chunks ([`Self::mac_chunk_step`]): its valid
    /// `P` samples. Does not allocate.
    pub fn inverse_chunked(&mut self, output_idx: usize) -> &[f32] {
        if !self.together {
            return self.inverse_acc();
        }
        let accs = std::mem::take(&mut self.output_accs);
        self.inverse(&accs[output_idx]);
        self.output_accs = accs;
        self.valid_samples()
    }
}
