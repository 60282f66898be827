//! The input history the worker levels read in place ([`InputHistory`]): one ring per input,
//! written once by the audio thread, read by every worker level and the GPU hub when they take
//! a chunk, so the audio thread no longer copies each quantum into every level's job slot.
//!
//! # Reading while the ring moves on
//!
//! The audio thread never waits for a reader, so the ring may wrap over a chunk that a level
//! far behind has not read yet. The samples are atomics (relaxed stores and loads, the same
//! instructions as plain ones on x86-64 and AArch64), and a read checks afterwards that the
//! writer had not reached the chunk's samples meanwhile, as a sequence lock does: the writer
//! stores its *frontier* (the count of samples written, or being written) and then, behind a
//! release fence, the samples; a reader loads the samples, then, behind an acquire fence, the
//! frontier. If a load saw a sample of a later lap, the fences order the frontier store before
//! the frontier load, so the reader sees the chunk overwritten and discards what it read.
//!
//! The ring is long enough ([`InputHistory::for_levels`]) that this happens only to a level
//! whose job slots are all busy: offline, or with the host ahead of real time, the audio
//! thread waits for such a level before it writes on, so renders never lose a chunk.
//!
//! Uses the rings' prefetch ([`crate::engine::memory::rings`]) and the engine's huge pages
//! ([`crate::engine::memory::pages`]) for the samples.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use crate::engine::memory::pages::PageBuf;
use crate::engine::memory::rings::prefetch_for_write;

/// One ring per input channel of the samples the audio thread received, shared with the
/// worker threads and the GPU hub.
pub struct InputHistory {
    num_inputs: usize,
    /// Samples per input.
    len: usize,
    /// `[input][len]`, `f32` bits: the sample of count `n` is at `n % len`.
    samples: PageBuf<AtomicU32>,
    /// Samples written since the history was made, counting those being written: only the
    /// audio thread stores it.
    frontier: AtomicU64,
}

impl InputHistory {
    /// A history of `len` samples per input (at least 1). Allocates.
    pub fn new(num_inputs: usize, len: usize) -> Self {
        let len = len.max(1);
        Self {
            num_inputs,
            len,
            samples: PageBuf::resident(num_inputs * len),
            frontier: AtomicU64::new(0),
        }
    }

    /// The history the worker levels of an engine need, or none where no level runs on a
    /// worker. `levels` gives each worker level's `(P, slots)` ([`super::num_slots`]). A chunk
    /// stays whole until the audio thread has written `len - P` samples after it; while it
    /// reserves the slot for job `j + slots` (a quantum into that chunk) it has written
    /// `(slots - 1) P + quantum`, and job `j` must have been taken by then or the audio thread
    /// waits for it (offline) or drops the new chunk. So `slots * P + quantum` samples are
    /// enough. Allocates.
    pub fn for_levels(
        num_inputs: usize,
        quantum: usize,
        levels: impl Iterator<Item = (usize, usize)>,
    ) -> Option<Arc<Self>> {
        let need = levels.map(|(partition, slots)| partition * slots).max()?;
        Some(Arc::new(Self::new(num_inputs, need + quantum)))
    }

    /// Input channels.
    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    /// Samples per input.
    #[expect(clippy::len_without_is_empty, reason = "never empty")]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Samples written so far (never goes back, not even at a reset). Exact on the audio
    /// thread; a lower bound elsewhere.
    pub fn written(&self) -> u64 {
        self.frontier.load(Ordering::Relaxed)
    }

    /// Appends `inputs[i][range]` to ring `i` for every input. Audio thread only (the one
    /// writer); never allocates, locks or waits.
    pub fn write(&self, inputs: &[&[f32]], range: std::ops::Range<usize>) {
        debug_assert!(range.len() <= self.len);
        let start = self.frontier.load(Ordering::Relaxed);
        self.frontier
            .store(start + range.len() as u64, Ordering::Relaxed);
        // Orders the frontier before the samples for any reader that sees one of them.
        fence(Ordering::Release);
        let len = self.len;
        let first = (start % len as u64) as usize;
        for (ring, input) in self
            .samples
            .chunks_exact(len)
            .zip(inputs)
            .take(self.num_inputs)
        {
            let input = &input[range.clone()];
            let split = (len - first).min(input.len());
            for (cell, &x) in ring[first..first + split].iter().zip(&input[..split]) {
                cell.store(x.to_bits(), Ordering::Relaxed);
            }
            for (cell, &x) in ring.iter().zip(&input[split..]) {
                cell.store(x.to_bits(), Ordering::Relaxed);
            }
        }
        // The next call's samples, most likely as many: fetched meanwhile.
        self.prefetch(range.len());
    }

    /// Asks the caches for the cells the next [`Self::write`] of `len` samples writes (up to
    /// the ring's end), for every input. Audio thread only.
    pub fn prefetch(&self, len: usize) {
        let start = self.frontier.load(Ordering::Relaxed);
        let first = (start % self.len as u64) as usize;
        for ring in self.samples.chunks_exact(self.len).take(self.num_inputs) {
            prefetch_for_write(&ring[first..(first + len).min(self.len)]);
        }
    }

    /// Copies the samples of counts `[end - dst.len(), end)` of input `input_idx` into `dst`.
    /// Returns whether they were still there: `false` when the audio thread had written past
    /// them (then `dst` holds a mix of laps, which the caller must not use). Samples up to
    /// `end` must have been published to this thread (release and acquire on the job counter).
    pub fn read(&self, input_idx: usize, end: u64, dst: &mut [f32]) -> bool {
        let len = self.len;
        debug_assert!(dst.len() <= len && end >= dst.len() as u64);
        let start = end - dst.len() as u64;
        let ring = &self.samples[input_idx * len..(input_idx + 1) * len];
        let first = (start % len as u64) as usize;
        let split = (len - first).min(dst.len());
        let (head, tail) = dst.split_at_mut(split);
        for (x, cell) in head.iter_mut().zip(&ring[first..first + split]) {
            *x = f32::from_bits(cell.load(Ordering::Relaxed));
        }
        for (x, cell) in tail.iter_mut().zip(ring) {
            *x = f32::from_bits(cell.load(Ordering::Relaxed));
        }
        // Orders the loads above before the frontier's (see the module docs).
        fence(Ordering::Acquire);
        self.frontier.load(Ordering::Relaxed) <= start + len as u64
    }
}

impl std::fmt::Debug for InputHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputHistory")
            .field("num_inputs", &self.num_inputs)
            .field("len", &self.len())
            .field("written", &self.written())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_read_back_across_the_wrap_until_overwritten() {
        let history = InputHistory::new(2, 16);
        assert_eq!(history.len(), 16);
        let left: Vec<f32> = (0..40).map(|i| i as f32).collect();
        let right: Vec<f32> = (0..40).map(|i| -(i as f32)).collect();
        // Ragged writes, wrapping twice.
        let mut at = 0;
        for len in [3, 7, 1, 5, 9, 2, 6, 7] {
            history.write(&[&left, &right], at..at + len);
            at += len;
        }
        assert_eq!(history.written(), 40);
        let mut dst = [0.0f32; 10];
        // Counts 30..40 sit across the wrap at 32.
        assert!(history.read(0, 40, &mut dst));
        assert_eq!(dst.to_vec(), left[30..40].to_vec());
        assert!(history.read(1, 40, &mut dst));
        assert_eq!(dst.to_vec(), right[30..40].to_vec());
        // The oldest whole chunk: counts 24..34 (written up to 40 = 24 + 16).
        assert!(history.read(0, 34, &mut dst));
        assert_eq!(dst.to_vec(), left[24..34].to_vec());
        // One sample further back was overwritten: the read says so.
        assert!(!history.read(0, 33, &mut dst));
    }

    #[test]
    fn a_history_is_sized_for_its_biggest_level_and_none_without_levels() {
        assert!(InputHistory::for_levels(2, 64, std::iter::empty()).is_none());
        let history = InputHistory::for_levels(2, 64, [(256, 6), (4096, 4)].into_iter()).unwrap();
        // The biggest level's slots and a quantum.
        assert_eq!(history.len(), 4 * 4096 + 64);
    }
}
