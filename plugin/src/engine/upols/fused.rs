//! The fused head of level 0 (zero-latency mode, `D = P`): the head taps `[0, P)` computed as
//! one more partition in the frequency domain for quanta that a host call delivers whole, each
//! quantum's partition sum prepared a quantum ahead on the audio thread.

use super::{Carry, SplitSpectra, UpolsLevel, transform_partitions};
use crate::engine::memory::rings::{InputRing, OutputRing};

impl UpolsLevel {
    /// Makes this level (level 0 of a zero-latency plan, `D = P`) able to compute the head taps
    /// `[0, P)` as one more partition in the frequency domain, for quanta that a host call
    /// delivers whole (see [`Self::run_fused`]). Allocates; call off the audio thread.
    pub fn enable_fused_head(&mut self, path_taps: &[&[f32]]) {
        debug_assert_eq!(self.output_delay, self.partition_size);
        assert_eq!(self.span, 1, "the fused head is a level of span 1");
        self.head_spectra = path_taps
            .iter()
            .map(|taps| {
                transform_partitions(
                    &mut self.fft,
                    taps,
                    0,
                    1,
                    self.partition_size,
                    2 * self.partition_size,
                )
            })
            .collect();
        self.pending = (0..self.num_outputs())
            .map(|_| SplitSpectra::zeroed(1, self.num_bins))
            .collect();
        if self.carry_kind == Carry::Chunks {
            // Summed every quantum on the audio thread, a 4 x 4 room's 1.1 MB cost 11 % more
            // carried in chunks than whole (EPYC VM, 1 MiB of L2); by parity it pays.
            self.carry_kind = Carry::None;
            self.carry = Vec::new();
            self.together = false;
            self.output_accs = Vec::new();
        }
    }

    /// Whether [`Self::enable_fused_head`] was called.
    pub fn has_fused_head(&self) -> bool {
        !self.head_spectra.is_empty()
    }

    /// Fused head, end of a quantum that was played through the direct head: transforms the
    /// chunk that ends at `chunk_end` and prepares the next quantum's partition sum (still in the
    /// frequency domain). Does not allocate.
    pub fn advance(&mut self, chunk_end: u64, inputs: &[InputRing]) {
        self.push_chunk(chunk_end, inputs);
        self.prepare_pending();
    }

    /// Transforms the input chunk that ends at `chunk_end` into the newest FDL slot, and
    /// nothing else: for a level whose FDL is brought up to date before it runs (the head's
    /// blocks, [`crate::engine::head`]). Does not allocate.
    pub fn push_chunk(&mut self, chunk_end: u64, inputs: &[InputRing]) {
        let windows = self.ring_windows(inputs, chunk_end);
        self.forward(&windows[..inputs.len()]);
    }

    /// Fused head, start of a quantum that arrives in pieces: the prepared partition sum goes
    /// to the output rings for `[start, start + P)`, and the direct head computes the head taps
    /// as samples come. Does not allocate.
    pub fn flush_pending(&mut self, start: u64, outputs: &mut [OutputRing]) {
        let pending = std::mem::take(&mut self.pending);
        for (output_idx, ring) in outputs.iter_mut().enumerate() {
            if !self.output_paths[output_idx].is_empty() {
                ring.add(start, self.inverse(&pending[output_idx]));
            }
        }
        self.pending = pending;
    }

    /// Fused head, a quantum that one host call delivered whole (its input is in the rings up
    /// to `chunk_end`): adds the head taps (one more partition, `X_now * H_head`) to the
    /// prepared sum and adds the result, the whole wet signal of levels 0 and head for
    /// `[chunk_end - P, chunk_end)`, to `outputs`; then prepares the next quantum. One inverse
    /// FFT per output replaces `P` direct-form taps per sample. Does not allocate.
    pub fn run_fused(&mut self, chunk_end: u64, inputs: &[InputRing], outputs: &mut [&mut [f32]]) {
        self.push_chunk(chunk_end, inputs);
        let mut pending = std::mem::take(&mut self.pending);
        for (output_idx, output) in outputs.iter_mut().enumerate() {
            if self.output_paths[output_idx].is_empty() {
                continue;
            }
            let acc = &mut pending[output_idx];
            for &path_idx in &self.output_paths[output_idx] {
                let head = &self.head_spectra[path_idx];
                let fdl = &self.fdl[self.paths[path_idx].input_idx];
                (self.mac.single)(acc.acc(), fdl.block(self.fdl_head), head.block(0));
            }
            for (out, wet) in output.iter_mut().zip(self.inverse(&pending[output_idx])) {
                *out += wet;
            }
        }
        self.pending = pending;
        self.prepare_pending();
    }

    /// The next quantum's partition sum per output, from the FDL as it is now: step 2, carried
    /// as in [`Self::compute`] (a 16 x 16 room's level 0 at a 1024 quantum reads 8.4 MB).
    fn prepare_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        let mut carry = std::mem::take(&mut self.carry);
        let carried = self.carry_period == Some(self.period);
        if self.together {
            // Every output at once; those without paths come out silent.
            self.sum_together(&mut pending, &mut carry, carried);
        } else {
            for (output_idx, acc) in pending.iter_mut().enumerate() {
                if self.output_paths[output_idx].is_empty() {
                    acc.re.fill(0.0);
                    acc.im.fill(0.0);
                } else {
                    self.sum_output(output_idx, acc, &mut carry, carried);
                }
            }
        }
        self.carry_period = (!carry.is_empty()).then_some(self.period + 1);
        self.carry = carry;
        self.pending = pending;
    }
}
