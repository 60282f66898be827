//! A level's running state on a CPU thread (`JobRunner`): the overlap-save windows and where
//! the chunks stood, shared by the worker's live jobs and the standby's replay.
//!
//! Uses the job protocol ([`super::protocol`]) and the FFT level ([`super::super::upols`]).

use super::protocol::Shared;
use crate::engine::routing::MAX_CHANNELS;
use crate::engine::upols::UpolsLevel;

/// A level's running state on a worker thread: the overlap-save windows and where the chunks
/// stood, so gaps and resets are handled the same whether jobs come live or are replayed.
pub(crate) struct JobRunner {
    partition_size: usize,
    /// `[input][(span + 1) P]`: the level's window ([`UpolsLevel::window_len`]), the current
    /// chunk last.
    windows: Vec<Vec<f32>>,
    /// `[output][P]`: the last job's result.
    pub(crate) results: Vec<Vec<f32>>,
    last_chunk_end: Option<u64>,
    epoch: u64,
}

impl JobRunner {
    pub(crate) fn new(shared: &Shared, window_len: usize) -> Self {
        let partition_size = shared.partition_size;
        Self {
            partition_size,
            windows: vec![vec![0.0; window_len]; shared.num_inputs],
            results: vec![vec![0.0; partition_size]; shared.num_outputs],
            last_chunk_end: None,
            epoch: 0,
        }
    }

    /// Runs the chunk that ends at `chunk_end` through `level`; `read(input_idx, dst)` copies
    /// its input into `dst` and says whether it was whole. A chunk that was not (written over
    /// before it was read) runs as silence on every input. The result is in `self.results`;
    /// returns whether the chunk was whole.
    pub(crate) fn run(
        &mut self,
        level: &mut UpolsLevel,
        chunk_end: u64,
        chunk_epoch: u64,
        mut read: impl FnMut(usize, &mut [f32]) -> bool,
    ) -> bool {
        let partition_size = self.partition_size;
        if chunk_epoch != self.epoch {
            // The engine was reset: time starts again from zero with empty history.
            level.reset();
            self.windows.iter_mut().for_each(|w| w.fill(0.0));
            self.last_chunk_end = None;
            self.epoch = chunk_epoch;
        }
        // Chunks dropped by the audio thread leave a gap: the delay line gets silence for
        // them, and so do the window's older chunks.
        let expected = self
            .last_chunk_end
            .map_or(partition_size as u64, |end| end + partition_size as u64);
        if chunk_end != expected {
            let missing = (chunk_end.saturating_sub(expected) / partition_size as u64) as usize;
            level.push_silence(missing);
            self.windows.iter_mut().for_each(|w| {
                let older = w.len() - partition_size;
                w[..older].fill(0.0)
            });
        }
        let mut whole = true;
        for (input_idx, window) in self.windows.iter_mut().enumerate() {
            let newest = window.len() - partition_size;
            whole &= read(input_idx, &mut window[newest..]);
        }
        if !whole {
            self.windows.iter_mut().for_each(|w| {
                let newest = w.len() - partition_size;
                w[newest..].fill(0.0)
            });
        }
        {
            let num_outputs = self.results.len();
            let mut window_refs: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
            for (slot, window) in window_refs.iter_mut().zip(&self.windows) {
                *slot = window;
            }
            let mut result_refs: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (slot, result) in result_refs.iter_mut().zip(self.results.iter_mut()) {
                *slot = result;
            }
            level.compute(
                &window_refs[..self.windows.len()],
                &mut result_refs[..num_outputs],
            );
        }
        // The window moves on by a chunk: the current one becomes the next one's second newest.
        for window in &mut self.windows {
            window.copy_within(partition_size.., 0);
        }
        self.last_chunk_end = Some(chunk_end);
        whole
    }

    /// Input `input_idx` of the chunk run last (until the next [`Self::run`]).
    pub(crate) fn last_chunk(&self, input_idx: usize) -> &[f32] {
        let window = &self.windows[input_idx];
        &window[window.len() - 2 * self.partition_size..window.len() - self.partition_size]
    }
}
