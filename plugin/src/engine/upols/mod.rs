//! One uniformly partitioned overlap-save level with a frequency-domain delay line (FDL).
//!
//! Built off the audio thread ([`UpolsLevel::new`] allocates and plans FFTs).
//! [`UpolsLevel::compute`] runs on whichever thread executes the level (a worker thread, or the
//! audio thread through [`UpolsLevel::run`] for level 0 and the inline executor) and never
//! allocates: every buffer is sized at construction.
//!
//! Per run, for a level of partition size `P` whose input chunk `[T - P, T)` just completed:
//!
//! 1. each input channel's last `2P` samples are transformed once (r2c, `P + 1` bins) into that
//!    input's FDL slot, shared by every path from that input;
//! 2. each output channel accumulates `sum_j X[now - j] * H_path[j]` over its paths and
//!    partitions (the spectral multiply-accumulate, split real/imaginary arrays); summed whole
//!    (not spread), a level whose spectra outgrow the cache reads each partition's spectra once
//!    for two periods (`carry.rs`), on a worker or the audio thread;
//! 3. the sum goes back through one c2r per output; its last `P` samples (the valid part of the
//!    circular convolution) are added to the output ring at `T - P + delay`.
//!
//! The IR spectra carry the inverse FFT's `1 / 2P` scale, so no pass rescales the output.
//!
//! # Partitions of several hops
//!
//! A level may instead cut its IR into partitions of `s * P` taps (its *span* `s`, 2 or 3) and
//! run them in FFTs of `F = (s + 1) P` every `P` samples: each input's last `F` samples are
//! transformed, partition `j` meets the input spectrum `s * j` periods old (the FDL holds
//! `s (n - 1) + 1` of them), and the last `P` samples of the inverse are valid. Per tap and
//! sample that is `(s + 1) / 2s` of the products and spectra bytes of partitions of `P` (3/4
//! for `s = 2`, 2/3 for `s = 3`) for transforms `(s + 1) / 2` times the size: where paths
//! outnumber channels, as in a matrix, the products are most of the work and that pays
//! ([`super::plan`]'s cost model chooses). Everything above holds with `2P` read as `F`, `P + 1`
//! bins as `F / 2 + 1` and the age `j` as `s * j`.
//!
//! # Parts
//!
//! - [`mac`]: the spectral multiply-accumulate kernels, the hot loop of every level.
//! - [`split_fft`]: the level's real FFTs, between samples and split spectra.
//! - `spectra`: the split real and imaginary arrays every spectrum of a level lives in.
//! - `carry`, `fused` and `ahead`: more of [`UpolsLevel`]'s methods, one way of running it a
//!   file: spectra read once for two periods, level 0's fused head, terms summed over the
//!   period before.

use std::sync::Arc;

use rustfft::FftPlanner;

use super::memory::pages::PageBuf;
use super::memory::rings::{InputRing, OutputRing};
use super::routing::{MAX_CHANNELS, Path};
use mac::{Acc, MacKernels, Spectrum, Term, best_mac_kernels, wants_wide_kernels};
use split_fft::SplitRealFft;

pub mod mac;
pub mod split_fft;

mod ahead;
mod carry;
mod fused;
mod spectra;

use carry::{Carry, carry_for, sums_together};
use spectra::SplitSpectra;

/// Bytes of `num_spectra` split spectra of `num_partitions` blocks of `num_bins` bins each.
fn spectra_bytes(num_spectra: usize, num_partitions: usize, num_bins: usize) -> usize {
    num_spectra * num_partitions * num_bins * 2 * size_of::<f32>()
}

/// One spectrum per output channel for the terms a carrying level sums ahead.
fn carry_buffers(num_outputs: usize, num_bins: usize) -> Vec<SplitSpectra> {
    (0..num_outputs)
        .map(|_| SplitSpectra::zeroed(1, num_bins))
        .collect()
}

/// Spectra of `count` partitions of `size` taps from `taps[offset..]` (zero-padded to `fft_size`
/// and past the end of `taps`), scaled by the inverse FFT's `1 / fft_size`. Allocates.
fn transform_partitions(
    fft: &mut SplitRealFft,
    taps: &[f32],
    offset: usize,
    count: usize,
    size: usize,
    fft_size: usize,
) -> SplitSpectra {
    let mut spectra = SplitSpectra::zeroed(count, fft_size / 2 + 1);
    transform_partitions_into(fft, taps, offset, size, fft_size, &mut spectra, 0..count);
    spectra
}

/// [`transform_partitions`] into blocks `blocks` of `spectra`, one partition each.
fn transform_partitions_into(
    fft: &mut SplitRealFft,
    taps: &[f32],
    offset: usize,
    size: usize,
    fft_size: usize,
    spectra: &mut SplitSpectra,
    blocks: std::ops::Range<usize>,
) {
    let mut real_buffer = vec![0.0; fft_size];
    let scale = 1.0 / fft_size as f32;
    for (partition_idx, block_idx) in blocks.enumerate() {
        real_buffer.fill(0.0);
        let start = (offset + partition_idx * size).min(taps.len());
        let end = (start + size).min(taps.len());
        real_buffer[..end - start].copy_from_slice(&taps[start..end]);
        let (re, im) = spectra.block_mut(block_idx);
        fft.forward(&mut real_buffer, re, im);
        re.iter_mut().chain(im).for_each(|value| *value *= scale);
    }
}

/// Sizes and timing of one level, from the plan.
#[derive(Debug, Clone, Copy)]
pub struct LevelShape {
    /// Partition size `P`: the hop, and the valid samples of each period.
    pub partition_size: usize,
    /// Hops each IR partition spans (its taps are `span * P`, its FFT `(span + 1) P`; see the
    /// module docs); 1 for the plain level.
    pub span: usize,
    /// Number of partitions.
    pub num_partitions: usize,
    /// First IR tap covered.
    pub ir_offset: usize,
    /// Delay from input time to output time (`D + latency`), at least `P`.
    pub output_delay: usize,
    /// Input channels (one FDL each).
    pub num_inputs: usize,
    /// Output channels (one inverse FFT each).
    pub num_outputs: usize,
}

/// A level's shape and shared IR spectra, for registering it with the GPU (see
/// [`UpolsLevel::gpu_spec_source`]).
#[derive(Debug, Clone)]
pub struct GpuSpecSource {
    partition_size: usize,
    num_partitions: usize,
    num_inputs: usize,
    num_outputs: usize,
    paths: Vec<(usize, usize)>,
    /// Every distinct IR's partitions, one after another ([`UpolsLevel`]'s `spectra`).
    spectra: Arc<SplitSpectra>,
    /// Index into `spectra` of each path's IR: its partitions start at block `index * n`.
    path_spectrum: Vec<usize>,
}

impl GpuSpecSource {
    /// Partitions `n`.
    pub fn num_partitions(&self) -> usize {
        self.num_partitions
    }

    /// The GPU's level description: each path's IR spectra as `[re, im]` pairs, partition
    /// after partition (`n * (P + 1)`). Allocates a copy of the spectra.
    pub fn spec(&self) -> longtail_gpu::LevelSpec {
        longtail_gpu::LevelSpec {
            partition_size: self.partition_size,
            num_partitions: self.num_partitions,
            num_inputs: self.num_inputs,
            num_outputs: self.num_outputs,
            paths: self.paths.clone(),
            spectra: self
                .path_spectrum
                .iter()
                .map(|&idx| {
                    let n = self.num_partitions;
                    (idx * n..(idx + 1) * n)
                        .flat_map(|block| {
                            let block = self.spectra.block(block);
                            block.re.iter().zip(block.im).map(|(&re, &im)| [re, im])
                        })
                        .collect()
                })
                .collect(),
        }
    }
}

/// One level of the partition plan, for every path of the engine.
pub struct UpolsLevel {
    /// Partition size `P` (the hop); the FFT size is `(span + 1) P`.
    partition_size: usize,
    /// Hops each IR partition spans ([`LevelShape::span`]).
    span: usize,
    /// Number of partitions `n`.
    num_partitions: usize,
    /// FDL slots: `span (n - 1) + 1`, the input spectra the oldest partition reaches back to.
    num_slots: usize,
    /// `(span + 1) P / 2 + 1`.
    num_bins: usize,
    /// Samples from an input time to the output time it contributes to (`D + latency`).
    output_delay: usize,
    /// The level's transforms (its IR at build, its periods), to and from split spectra.
    fft: SplitRealFft,
    /// FDL per input channel, indexed `[slot_idx * num_bins + bin_idx]`.
    fdl: Vec<SplitSpectra>,
    /// Slot of the newest input spectrum in every FDL.
    fdl_head: usize,
    /// IR spectra, every distinct IR among the paths one after another, each its `n` partitions:
    /// block `spectrum_idx * n + partition_idx`, scaled by `1 / (span + 1) P`. One buffer, not
    /// one per IR: a dense 16 x 16 matrix's `16384 x 10` level holds 256 IRs of 0.66 MB a part,
    /// three of which filled a shared block of huge pages (`super::memory::pages`), leaving 22 MB
    /// of them unused. Never written after construction; shared with [`GpuSpecSource`].
    spectra: Arc<SplitSpectra>,
    /// `(input_idx, output_idx)` of each path.
    paths: Vec<Path>,
    /// Index into `spectra` of each path's IR.
    path_spectrum: Vec<usize>,
    /// Indices into `paths` of each output channel's paths, in path order (one list per output
    /// channel, empty where no path writes it).
    output_paths: Vec<Vec<usize>>,
    /// `(span + 1) P` samples for the FFTs' time-domain side.
    real_scratch_buffer: PageBuf,
    /// The spectral MAC kernels for this CPU (see [`best_mac_kernels`]).
    mac: MacKernels,
    /// Accumulator of one output channel's spectrum.
    acc: SplitSpectra,
    /// Whether [`Self::compute`] sums all outputs at once ([`sums_together`]).
    together: bool,
    /// Per output channel, the accumulator of a level that sums all outputs at once; none for
    /// other levels.
    output_accs: Vec<SplitSpectra>,
    /// How [`Self::compute`] sums a period ahead ([`carry_for`]).
    carry_kind: Carry,
    /// Per output channel, the terms of the next period that [`Self::compute`] summed ahead of
    /// time (see there); none where the level does not carry.
    carry: Vec<SplitSpectra>,
    /// FDL advances since construction.
    period: u64,
    /// The period whose terms `carry` holds, if any.
    carry_period: Option<u64>,
    /// Bins per chunk of a carrying level's walk ([`carry::chunk_bins`]).
    carry_chunk_bins: usize,
    /// `P` samples per output channel: the inline path's result before it goes to the rings.
    output_buffer: PageBuf,
    /// Fused head only: spectra of the head taps `[0, P)` per path, scaled by `1 / 2P`.
    head_spectra: Vec<SplitSpectra>,
    /// Fused head only: per output channel, the next quantum's partition sum.
    pending: Vec<SplitSpectra>,
    /// Summed ahead only (`ahead.rs`): per output channel, the next period's terms `j >= 1`.
    ahead: Vec<SplitSpectra>,
}

impl UpolsLevel {
    /// Builds the level for taps `[ir_offset, ir_offset + n * span * P)` of every path's IR. `shared`
    /// gives, per path, the first path with the same taps ([`super::routing::shared_spectra`]):
    /// those paths share one spectrum. Allocates and plans FFTs; call off the audio thread.
    pub fn new(
        planner: &mut FftPlanner<f32>,
        shape: LevelShape,
        paths: &[Path],
        path_taps: &[&[f32]],
        shared: &[usize],
    ) -> Self {
        let LevelShape {
            partition_size,
            span,
            num_partitions,
            ir_offset,
            output_delay,
            num_inputs,
            num_outputs,
        } = shape;
        assert!(
            span >= 1 && num_partitions >= 1,
            "a level needs a span and a partition"
        );
        let fft_size = (span + 1) * partition_size;
        let num_bins = fft_size / 2 + 1;
        let num_slots = span * (num_partitions - 1) + 1;
        let mut fft = SplitRealFft::new(planner, fft_size);

        debug_assert_eq!(shared.len(), path_taps.len());
        let own = |path_idx: usize| shared[path_idx] == path_idx;
        let num_spectra = (0..path_taps.len())
            .filter(|&path_idx| own(path_idx))
            .count();
        let mut spectra = SplitSpectra::zeroed(num_spectra * num_partitions, num_bins);
        let mut spectrum_of_path = vec![0; path_taps.len()];
        let mut next_spectrum = 0;
        for (path_idx, taps) in path_taps.iter().enumerate() {
            spectrum_of_path[path_idx] = if own(path_idx) {
                let spectrum = next_spectrum;
                next_spectrum += 1;
                let blocks = spectrum * num_partitions..(spectrum + 1) * num_partitions;
                let hop = span * partition_size;
                transform_partitions_into(
                    &mut fft,
                    taps,
                    ir_offset,
                    hop,
                    fft_size,
                    &mut spectra,
                    blocks,
                );
                spectrum
            } else {
                spectrum_of_path[shared[path_idx]]
            };
        }
        let mut output_paths = vec![Vec::new(); num_outputs];
        for (path_idx, path) in paths.iter().enumerate() {
            output_paths[path.output_idx].push(path_idx);
        }

        let carry_kind = carry_for(num_partitions, num_spectra, num_inputs, num_bins);
        let input_bytes = spectra_bytes(num_inputs, num_slots, num_bins);
        let together = sums_together(carry_kind, num_spectra, num_inputs, input_bytes);
        let ir_bytes = spectra_bytes(num_spectra, num_partitions, num_bins);
        let mac = best_mac_kernels(wants_wide_kernels(ir_bytes, num_spectra, num_inputs));
        Self {
            partition_size,
            span,
            num_partitions,
            num_slots,
            num_bins,
            output_delay,
            fft,
            fdl: (0..num_inputs)
                .map(|_| SplitSpectra::zeroed(num_slots, num_bins))
                .collect(),
            fdl_head: 0,
            spectra: Arc::new(spectra),
            paths: paths.to_vec(),
            path_spectrum: spectrum_of_path,
            output_paths,
            real_scratch_buffer: PageBuf::zeroed(fft_size),
            mac,
            acc: SplitSpectra::zeroed(1, num_bins),
            together,
            output_accs: if together {
                carry_buffers(num_outputs, num_bins)
            } else {
                Vec::new()
            },
            carry_kind,
            carry: if carry_kind == Carry::None {
                Vec::new()
            } else {
                carry_buffers(num_outputs, num_bins)
            },
            period: 0,
            carry_period: None,
            carry_chunk_bins: carry::chunk_bins(carry_kind, together, num_bins),
            head_spectra: Vec::new(),
            pending: Vec::new(),
            ahead: Vec::new(),
            output_buffer: PageBuf::zeroed(num_outputs * partition_size),
        }
    }

    /// Makes every buffer that running the level writes resident now, for a level that runs on
    /// the audio thread ([`PageBuf::prefault`]): its transforms, FDL and sums. Call off the
    /// audio thread, after [`Self::enable_fused_head`] where it is called.
    pub fn prefault(&mut self) {
        self.fft.prefault();
        self.real_scratch_buffer.prefault();
        self.output_buffer.prefault();
        let sums = [&mut self.acc].into_iter().chain(&mut self.output_accs);
        let pending = self
            .carry
            .iter_mut()
            .chain(&mut self.pending)
            .chain(&mut self.ahead);
        sums.chain(pending)
            .chain(&mut self.fdl)
            .for_each(SplitSpectra::prefault);
    }

    /// Partition size `P`.
    pub fn partition_size(&self) -> usize {
        self.partition_size
    }

    /// Samples of each input a period transforms, `(span + 1) P`: the newest `P` are the chunk
    /// that just completed.
    pub fn window_len(&self) -> usize {
        (self.span + 1) * self.partition_size
    }

    /// Each input ring's window ([`Self::window_len`]) that ends at `chunk_end`, for the
    /// inline and fused runs. Does not allocate.
    fn ring_windows<'a>(
        &self,
        inputs: &'a [InputRing],
        chunk_end: u64,
    ) -> [&'a [f32]; MAX_CHANNELS] {
        let mut windows: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
        for (window, ring) in windows.iter_mut().zip(inputs) {
            *window = ring.window(chunk_end, self.window_len());
        }
        windows
    }

    /// Delay from input time to output time (`D + latency`).
    pub fn output_delay(&self) -> usize {
        self.output_delay
    }

    /// Number of output channels this level writes.
    pub fn num_outputs(&self) -> usize {
        self.output_paths.len()
    }

    /// Number of partitions `n`.
    pub fn num_partitions(&self) -> usize {
        self.num_partitions
    }

    /// What the GPU needs to run this level, to be turned into a [`longtail_gpu::LevelSpec`] on
    /// any thread: it shares the IR spectra instead of copying them. Allocates.
    pub fn gpu_spec_source(&self, num_inputs: usize) -> GpuSpecSource {
        // The GPU runs FFTs of `2P`; plans that may use it keep every span 1 (`super::plan`).
        assert_eq!(self.span, 1, "the GPU runs levels of span 1 only");
        GpuSpecSource {
            partition_size: self.partition_size,
            num_partitions: self.num_partitions,
            num_inputs,
            num_outputs: self.num_outputs(),
            paths: self
                .paths
                .iter()
                .map(|path| (path.input_idx, path.output_idx))
                .collect(),
            spectra: Arc::clone(&self.spectra),
            path_spectrum: self.path_spectrum.clone(),
        }
    }

    /// Inline execution: computes the contribution of the input chunk that ends at `chunk_end`
    /// (a multiple of `P`) from the input rings and adds it to the output rings, `D + latency`
    /// samples later. Does not allocate.
    pub fn run(&mut self, chunk_end: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        debug_assert!(chunk_end.is_multiple_of(self.partition_size as u64));
        let windows = self.ring_windows(inputs, chunk_end);
        let mut result = std::mem::take(&mut self.output_buffer);
        {
            let mut slices: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (slice, chunk) in slices
                .iter_mut()
                .zip(result.chunks_exact_mut(self.partition_size))
            {
                *slice = chunk;
            }
            self.compute(&windows[..inputs.len()], &mut slices[..self.num_outputs()]);
        }
        // `D + latency >= P` for every level; the head's blocks run from time 0.
        let output_start = chunk_end + (self.output_delay - self.partition_size) as u64;
        for (ring, chunk) in outputs
            .iter_mut()
            .zip(result.chunks_exact(self.partition_size))
        {
            ring.add(output_start, chunk);
        }
        self.output_buffer = result;
    }

    /// One period of the level, independent of where the samples live: `windows` holds each
    /// input channel's last `(span + 1) P` samples (oldest first, the newest `P` being the chunk that just
    /// completed); each of `outputs` (one per output channel, `P` samples) is overwritten with
    /// that chunk's contribution. Does not allocate.
    ///
    /// Where the spectra outgrow the cache, each IR partition and input spectrum is read once
    /// for two periods ([`Self::sum_output`]).
    pub fn compute(&mut self, windows: &[&[f32]], outputs: &mut [&mut [f32]]) {
        self.forward(windows);
        let mut acc = std::mem::take(&mut self.acc);
        let mut output_accs = std::mem::take(&mut self.output_accs);
        let mut carry = std::mem::take(&mut self.carry);
        let carried = self.carry_period == Some(self.period);
        if self.together {
            self.sum_together(&mut output_accs, &mut carry, carried);
        }
        for (output_idx, output) in outputs.iter_mut().enumerate() {
            if self.output_paths[output_idx].is_empty() {
                output.fill(0.0);
                continue;
            }
            let sum = if self.together {
                &output_accs[output_idx]
            } else {
                self.sum_output(output_idx, &mut acc, &mut carry, carried);
                &acc
            };
            output.copy_from_slice(self.inverse(sum));
        }
        self.carry_period = (!carry.is_empty()).then_some(self.period + 1);
        self.carry = carry;
        self.output_accs = output_accs;
        self.acc = acc;
    }

    /// Step 2 of every output at once into `accs`, for a level that sums them together
    /// ([`sums_together`]); `carried` as for [`Self::sum_output`].
    fn sum_together(&self, accs: &mut [SplitSpectra], carry: &mut [SplitSpectra], carried: bool) {
        match self.carry_kind {
            Carry::Parity => self.mac_parity(accs, carry, carried),
            Carry::Chunks => self.mac_chunks(0..self.num_outputs(), accs, carry, carried),
            Carry::None => unreachable!("a level that does not carry sums one output at a time"),
        }
    }

    /// Step 2 for output `output_idx` into `acc` (overwritten), for a level that does not sum
    /// its outputs together ([`Self::sum_together`]). Where the spectra outgrow the cache
    /// ([`carry_for`]), reading them is what a period costs, so each IR partition and input
    /// spectrum is read once for two periods (`carry.rs`): the same arithmetic, split evenly
    /// over the periods, for the same bits whatever came before. `carried`: `carry` holds the
    /// terms the previous period, this one's predecessor, summed ahead.
    fn sum_output(
        &self,
        output_idx: usize,
        acc: &mut SplitSpectra,
        carry: &mut [SplitSpectra],
        carried: bool,
    ) {
        match self.carry_kind {
            Carry::Chunks => self.mac_chunks(
                output_idx..output_idx + 1,
                std::slice::from_mut(acc),
                std::slice::from_mut(&mut carry[output_idx]),
                carried,
            ),
            Carry::Parity => unreachable!("a level carrying by parity sums all outputs at once"),
            Carry::None => {
                acc.re.fill(0.0);
                acc.im.fill(0.0);
                self.mac_partitions(output_idx, acc);
            }
        }
    }

    /// Adds `term` to `acc` (a whole sum, or a chunk of its bins) two terms per pass: a term
    /// waits in `waiting` for the next one, and the two go in one pass (the dual kernel) in
    /// order; [`Self::add_last_term`] adds the one left waiting at the end.
    fn add_term<'s>(&self, acc: Acc<'_>, waiting: &mut Option<Term<'s>>, term: Term<'s>) {
        match waiting.take() {
            Some(lead) => (self.mac.dual)(acc, [lead.0, term.0], [lead.1, term.1]),
            None => *waiting = Some(term),
        }
    }

    /// Adds the term left waiting by [`Self::add_term`], if any.
    fn add_last_term(&self, acc: Acc<'_>, waiting: Option<Term<'_>>) {
        if let Some((x, h)) = waiting {
            (self.mac.single)(acc, x, h);
        }
    }

    /// The spectra of one term of step 2 for path `path_idx`: the input spectrum
    /// `span * partition_idx` periods old and the IR spectrum of partition `partition_idx`.
    fn term(&self, path_idx: usize, partition_idx: usize) -> Term<'_> {
        self.term_bins(path_idx, partition_idx, &(0..self.num_bins))
    }

    /// Bins `range` of [`Self::term`]'s spectra (a carrying level's chunk).
    fn term_bins(
        &self,
        path_idx: usize,
        partition_idx: usize,
        range: &std::ops::Range<usize>,
    ) -> Term<'_> {
        let fdl = &self.fdl[self.paths[path_idx].input_idx];
        let ir_block = self.path_spectrum[path_idx] * self.num_partitions + partition_idx;
        let slot = self.slot_of_age(self.age(partition_idx));
        (fdl.bins(slot, range), self.spectra.bins(ir_block, range))
    }

    /// Bins `range` of the input spectrum that partition `partition_idx` (at least 1) of path
    /// `path_idx` meets in the next period: one period younger than its term's now.
    fn next_input_bins(
        &self,
        path_idx: usize,
        partition_idx: usize,
        range: &std::ops::Range<usize>,
    ) -> Spectrum<'_> {
        let fdl = &self.fdl[self.paths[path_idx].input_idx];
        let slot = self.slot_of_age(self.age(partition_idx) - 1);
        fdl.bins(slot, range)
    }

    /// Periods between the input spectrum that partition `partition_idx` meets and the newest.
    fn age(&self, partition_idx: usize) -> usize {
        self.span * partition_idx
    }

    /// The FDL slot of the input spectrum `age` periods old (0: the newest).
    fn slot_of_age(&self, age: usize) -> usize {
        // `fdl_head` and `age` are below the slots: one subtraction instead of a division.
        debug_assert!(age < self.num_slots && self.fdl_head < self.num_slots);
        let slot = self.fdl_head + self.num_slots - age;
        if slot >= self.num_slots {
            slot - self.num_slots
        } else {
            slot
        }
    }

    /// Step 1: one forward FFT per input channel into the newest FDL slot.
    fn forward(&mut self, windows: &[&[f32]]) {
        self.advance_fdl();
        for (input_idx, window) in windows.iter().enumerate() {
            self.forward_input(input_idx, window);
        }
    }

    /// Makes the next FDL slot the newest, for a period's forward transforms. Does not
    /// allocate.
    pub fn advance_fdl(&mut self) {
        self.fdl_head = (self.fdl_head + 1) % self.num_slots;
        self.period += 1;
    }

    /// Step 1 for one input channel: its window of `(span + 1) P` samples (oldest first)
    /// transformed into the newest FDL slot. Does not allocate.
    pub fn forward_input(&mut self, input_idx: usize, window: &[f32]) {
        let window_len = self.window_len();
        self.real_scratch_buffer
            .copy_from_slice(&window[..window_len]);
        let (re, im) = self.fdl[input_idx].block_mut(self.fdl_head);
        self.fft.forward(&mut self.real_scratch_buffer, re, im);
    }

    /// Step 2 for one output channel: `acc += sum X[now - j] * H_path[j]` over its paths and
    /// partitions, two terms per pass over the sum (four measured no faster).
    fn mac_partitions(&self, output_idx: usize, acc: &mut SplitSpectra) {
        // The terms two at a time in the order of [`Self::mac_terms`], walked without dividing.
        let mut waiting = None;
        for &path_idx in &self.output_paths[output_idx] {
            for partition_idx in 0..self.num_partitions {
                self.add_term(acc.acc(), &mut waiting, self.term(path_idx, partition_idx));
            }
        }
        self.add_last_term(acc.acc(), waiting);
    }

    /// Terms `term_idx` and `term_idx + 1` of output `output_idx`'s step 2 into `acc` in one
    /// pass (the dual kernel), or only `term_idx` where it is the last; returns how many. The
    /// terms are numbered path by path (in routing order), partition by partition: term `t` is
    /// path `t / n`'s partition `t % n`. Two at a time or one at a time, they are summed in the
    /// same order, to the same bits.
    fn mac_terms(&self, output_idx: usize, term_idx: usize, acc: &mut SplitSpectra) -> usize {
        let paths = &self.output_paths[output_idx];
        let (path_pos, partition_idx) = (
            term_idx / self.num_partitions,
            term_idx % self.num_partitions,
        );
        let (x, h) = self.term(paths[path_pos], partition_idx);
        let next = if partition_idx + 1 < self.num_partitions {
            Some((path_pos, partition_idx + 1))
        } else {
            (path_pos + 1 < paths.len()).then_some((path_pos + 1, 0))
        };
        match next {
            Some((path_pos, partition_idx)) => {
                let (x_next, h_next) = self.term(paths[path_pos], partition_idx);
                (self.mac.dual)(acc.acc(), [x, x_next], [h, h_next]);
                2
            }
            None => {
                (self.mac.single)(acc.acc(), x, h);
                1
            }
        }
    }

    /// Number of terms of `output_idx`'s step 2: its paths times the partitions.
    pub fn num_output_terms(&self, output_idx: usize) -> usize {
        self.output_paths[output_idx].len() * self.num_partitions
    }

    /// Clears the accumulator, for an output's first [`Self::mac_step`]. Does not allocate.
    pub fn clear_acc(&mut self) {
        self.acc.re.fill(0.0);
        self.acc.im.fill(0.0);
    }

    /// Term `term_idx` of output `output_idx`'s step 2, and the next where there is one, into
    /// the level's accumulator (see [`Self::mac_terms`]), in the order [`Self::compute`] takes
    /// them; returns how many. Does not allocate.
    pub fn mac_step(&mut self, output_idx: usize, term_idx: usize) -> usize {
        let mut acc = std::mem::take(&mut self.acc);
        let taken = self.mac_terms(output_idx, term_idx, &mut acc);
        self.acc = acc;
        taken
    }

    /// Step 3 on the accumulator: the valid `P` samples of the output whose terms it holds.
    /// Does not allocate.
    pub fn inverse_acc(&mut self) -> &[f32] {
        let acc = std::mem::take(&mut self.acc);
        self.inverse(&acc);
        self.acc = acc;
        self.valid_samples()
    }

    /// Step 3: the inverse FFT of `acc`; returns the valid part of the circular convolution
    /// (its last `P` samples).
    fn inverse(&mut self, acc: &SplitSpectra) -> &[f32] {
        let sum = acc.first();
        self.fft
            .inverse(sum.re, sum.im, &mut self.real_scratch_buffer);
        self.valid_samples()
    }

    /// The valid part of the inverse FFT in the scratch buffer: its last `P` samples.
    fn valid_samples(&self) -> &[f32] {
        &self.real_scratch_buffer[self.span * self.partition_size..]
    }

    /// Advances the FDLs by `count` chunks of silence, for chunks that never reached the level
    /// (dropped by the late policy). Does not allocate.
    pub fn push_silence(&mut self, count: usize) {
        for _ in 0..count.min(self.num_slots) {
            self.advance_fdl();
            for fdl in &mut self.fdl {
                let (re, im) = fdl.block_mut(self.fdl_head);
                re.fill(0.0);
                im.fill(0.0);
            }
        }
    }

    /// Clears the FDLs (the IR spectra stay). Does not allocate.
    pub fn reset(&mut self) {
        for fdl in &mut self.fdl {
            fdl.re.fill(0.0);
            fdl.im.fill(0.0);
        }
        // A level summed ahead keeps its later sums in `carry`; they go too.
        let summed_ahead = self.sums_ahead();
        let later = self.carry.iter_mut().filter(|_| summed_ahead);
        let sums = self.pending.iter_mut().chain(&mut self.ahead);
        for acc in sums.chain(later) {
            acc.re.fill(0.0);
            acc.im.fill(0.0);
        }
        self.fdl_head = 0;
        // The same periods carry the same terms after a reset: the output is bit for bit that
        // of a new level.
        self.period = 0;
        self.carry_period = None;
    }

    /// Test hook: fills every scratch buffer with `value`, to prove that no result depends on
    /// what scratch held before.
    pub fn poison_scratch(&mut self, value: f32) {
        self.poison_transform_scratch(value);
        self.acc.re.fill(value);
        self.acc.im.fill(value);
    }

    /// Test hook: [`Self::poison_scratch`] but for the accumulator, which holds an output's sum
    /// between the steps of a spread period ([`super::runner::spread`]).
    pub fn poison_transform_scratch(&mut self, value: f32) {
        self.real_scratch_buffer.fill(value);
        self.fft.poison(value);
        self.output_buffer.fill(value);
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
pub mod whole_runs;
