//! A level's running state on a CPU thread (`JobRunner`): the overlap-save windows and where
//! the chunks stood, shared by the worker's live jobs and the standby's replay.
//!
//! Uses the job protocol ([`super::protocol`]) and the FFT level ([`super::super::upols`]).

use crate::engine::memory::pages::PageBuf;
use crate::engine::routing::MAX_CHANNELS;
use crate::engine::upols::UpolsLevel;

/// A level's running state on a worker thread: the overlap-save windows and where the chunks
/// stood, so gaps and resets are handled the same whether jobs come live or are replayed.
pub(crate) struct JobRunner {
    partition_size: usize,
    /// `[input][(span + 1) P]`: the level's window ([`UpolsLevel::window_len`]), the current
    /// chunk last.
    windows: Vec<PageBuf>,
    /// `[output][P]`: the last job's result.
    pub(crate) results: Vec<PageBuf>,
    last_chunk_end: Option<u64>,
    epoch: u64,
}

impl JobRunner {
    pub(crate) fn new(level: &UpolsLevel, num_inputs: usize) -> Self {
        let partition_size = level.partition_size();
        Self {
            partition_size,
            windows: (0..num_inputs)
                .map(|_| PageBuf::zeroed(level.window_len()))
                .collect(),
            results: (0..level.num_outputs())
                .map(|_| PageBuf::zeroed(partition_size))
                .collect(),
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
        // Where each window's newest chunk starts; the chunks before it are the older ones.
        let newest = level.window_len() - partition_size;
        if chunk_epoch != self.epoch {
            // The engine was reset: time starts again from zero with empty history.
            level.reset();
            self.windows.iter_mut().for_each(|w| w.fill(0.0));
            self.last_chunk_end = None;
            self.epoch = chunk_epoch;
        }
        // Chunks dropped by the audio thread leave a gap: the delay line gets silence for
        // them, and so does the window. A window of more than two chunks keeps the ones from
        // before the gap that it still reaches, moved on past the missing chunks.
        let expected = self
            .last_chunk_end
            .map_or(partition_size as u64, |end| end + partition_size as u64);
        if chunk_end != expected {
            let missing = (chunk_end.saturating_sub(expected) / partition_size as u64) as usize;
            level.push_silence(missing);
            let skipped = (missing.max(1) * partition_size).min(newest);
            self.windows.iter_mut().for_each(|w| {
                w.copy_within(skipped..newest, 0);
                w[newest - skipped..newest].fill(0.0)
            });
        }
        let mut whole = true;
        for (input_idx, window) in self.windows.iter_mut().enumerate() {
            whole &= read(input_idx, &mut window[newest..]);
        }
        if !whole {
            self.windows.iter_mut().for_each(|w| w[newest..].fill(0.0));
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

#[cfg(test)]
mod tests {
    use rustfft::FftPlanner;

    use super::*;
    use crate::engine::routing::Path;
    use crate::engine::upols::LevelShape;
    use crate::rng::Rng;

    /// A level whose partitions span two hops, run by the job runner across a dropped chunk,
    /// gives the bits of the same level fed its windows by hand: the chunks it still reaches
    /// from before the gap, silence for the dropped one, and silence in the delay line.
    #[test]
    fn spanning_windows_move_on_past_a_gap() {
        const P: usize = 16;
        let mut rng = Rng::new(21);
        let taps: Vec<f32> = (0..4 * P).map(|_| rng.bipolar()).collect();
        let input: Vec<f32> = (0..12 * P).map(|_| rng.bipolar()).collect();
        let shape = LevelShape {
            partition_size: P,
            span: 2,
            num_partitions: 2,
            ir_offset: 0,
            output_delay: P,
            num_inputs: 1,
            num_outputs: 1,
        };
        let paths = [Path {
            input_idx: 0,
            output_idx: 0,
        }];
        let mut planner = FftPlanner::new();
        let mut new = || UpolsLevel::new(&mut planner, shape, &paths, &[&taps], &[0]);
        let (mut run_level, mut hand_level) = (new(), new());
        let mut runner = JobRunner::new(&run_level, 1);
        // Chunk 5 (ending at 5P) never reaches the level.
        let heard = |chunk: usize| if chunk == 5 { 0.0 } else { 1.0 };
        let mut output = vec![0.0f32; P];
        for chunk in (1..=12).filter(|&chunk| chunk != 5) {
            let end = chunk * P;
            runner.run(&mut run_level, end as u64, 0, |_, dst| {
                dst.copy_from_slice(&input[end - P..end]);
                true
            });
            if chunk == 6 {
                hand_level.push_silence(1);
            }
            let window: Vec<f32> = (end.saturating_sub(3 * P)..end)
                .map(|time| input[time] * heard(time / P + 1))
                .collect();
            let window = [vec![0.0; 3 * P - window.len()], window].concat();
            hand_level.compute(&[&window], &mut [&mut output]);
            assert_eq!(runner.results[0][..], output[..], "chunk {chunk}");
        }
    }
}
