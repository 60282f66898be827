//! One level of an engine and where it runs: on the audio thread whole when its chunk
//! completes (level 0, and every level with the inline executor), on the audio thread spread
//! over its period ([`spread`]) or summed ahead of its chunk ([`ahead`]), or on
//! a worker ([`super::worker`]).
//!
//! Uses the plan, the rings, the FFT levels, the spread and ahead levels, the pace and the
//! workers.

pub mod ahead;
pub mod spread;

use std::sync::Arc;

use super::memory::rings::{InputRing, OutputRing};
use super::plan::PartitionPlan;
use super::realtime::pace::Wait;
use super::upols::UpolsLevel;
use super::worker::{InputHistory, WorkerLevel, num_slots};
use ahead::AheadLevel;
use spread::SpreadLevel;

/// One level and where it runs.
pub enum LevelRunner {
    /// Whole, on the audio thread, when its chunk completes.
    Inline(Box<UpolsLevel>),
    /// On the audio thread, spread over the quanta of its period.
    Spread(Box<SpreadLevel>),
    /// On the audio thread as its chunk completes, its later partitions summed ahead over the
    /// period before.
    Ahead(Box<AheadLevel>),
    /// On its worker thread (or the GPU hub).
    Worker(WorkerLevel),
}

/// The input history an engine's worker levels read in place, long enough for each level's
/// slots ([`InputHistory::for_levels`]); none where every level runs on the audio thread
/// (`inline`: the inline executor). Allocates.
pub fn worker_inputs(
    plan: &PartitionPlan,
    num_inputs: usize,
    inline: bool,
) -> Option<Arc<InputHistory>> {
    let workers = plan
        .levels
        .iter()
        .enumerate()
        .filter(|&(idx, _)| !inline && !plan.on_audio_thread(idx))
        .map(|(_, level)| {
            let slack = plan.output_delay(level) - level.partition_size;
            (level.partition_size, num_slots(level.partition_size, slack))
        });
    InputHistory::for_levels(num_inputs, plan.quantum, workers)
}

impl LevelRunner {
    /// Whether the level runs on a worker.
    pub fn is_worker(&self) -> bool {
        matches!(self, Self::Worker(_))
    }

    /// Whether the level adds its results to the engine's output rings: every level but a
    /// worker level whose results play from their slots.
    pub fn adds_to_rings(&self) -> bool {
        !matches!(self, Self::Worker(worker) if worker.plays_from_slot())
    }

    /// The worker, where the level runs on one.
    pub fn worker(&self) -> Option<&WorkerLevel> {
        match self {
            Self::Worker(worker) => Some(worker),
            Self::Inline(_) | Self::Spread(_) | Self::Ahead(_) => None,
        }
    }

    /// Partition size `P`.
    pub fn partition_size(&self) -> usize {
        match self {
            Self::Inline(level) => level.partition_size(),
            Self::Spread(level) => level.partition_size(),
            Self::Ahead(level) => level.partition_size(),
            Self::Worker(level) => level.partition_size(),
        }
    }

    /// At the quantum boundary `time` (the input is in the rings up to it; `quantum` samples
    /// to the next boundary): the level's share of work. A level with a fused head is advanced
    /// unless `whole_quantum` says `run_fused` did it; an inline level runs when its chunk
    /// completes; a spread level takes this boundary's steps; a worker level's due results are
    /// taken (the small ones into `outputs`), its input fed and, when its chunk completes, the
    /// chunk submitted, waiting as `wait` allows. Does not allocate.
    pub fn at_boundary(
        &mut self,
        time: u64,
        quantum: usize,
        whole_quantum: bool,
        inputs: &[InputRing],
        outputs: &mut [OutputRing],
        wait: &mut Wait,
    ) {
        let chunk_done = time.is_multiple_of(self.partition_size() as u64);
        match self {
            Self::Inline(level) if level.has_fused_head() => {
                // A whole quantum already advanced the level in `run_fused`.
                if !whole_quantum {
                    level.advance(time, inputs);
                }
            }
            Self::Inline(level) if chunk_done => level.run(time, inputs, outputs),
            Self::Inline(_) => {}
            Self::Spread(level) => level.run(time, inputs, outputs),
            Self::Ahead(level) => level.run(time, inputs, outputs),
            Self::Worker(worker) => {
                // Results due before the next boundary must be taken now.
                let horizon = time + quantum as u64;
                worker.collect(time, horizon, outputs, wait);
                worker.feed(time, quantum, wait);
                if chunk_done {
                    worker.submit(time, *wait);
                }
            }
        }
    }

    /// Adds what a worker level's results hold for times `[start, start + range.len())` to
    /// `outputs[..][range]`, straight from its slots; the other levels add theirs to the
    /// output rings. Does not allocate.
    pub fn play(&self, start: u64, outputs: &mut [&mut [f32]], range: std::ops::Range<usize>) {
        if let Self::Worker(worker) = self {
            worker.play(start, outputs, range);
        }
    }

    /// Samples of the engine's input rings the level reads at a quantum boundary: an inline
    /// level transforms its window (`2P`, or `(span + 1) P`) when its chunk completes (a
    /// quantum more to spare), a spread level up to `P - q` samples later (`P` more); a worker
    /// level reads the engine's input history instead.
    pub fn history(&self, quantum: usize) -> usize {
        match self {
            Self::Inline(level) => level.window_len() + quantum,
            Self::Spread(level) => level.window_len() + level.partition_size(),
            Self::Ahead(level) => level.window_len() + quantum,
            Self::Worker(_) => 0,
        }
    }

    /// Forgets history and pending work. Does not allocate.
    pub fn reset(&mut self) {
        match self {
            Self::Inline(level) => level.reset(),
            Self::Spread(level) => level.reset(),
            Self::Ahead(level) => level.reset(),
            Self::Worker(worker) => worker.reset(),
        }
    }

    /// Test hook: fills the audio thread's scratch buffers with `value`.
    pub fn poison_scratch(&mut self, value: f32) {
        match self {
            Self::Inline(level) => level.poison_scratch(value),
            Self::Spread(level) => level.poison_scratch(value),
            Self::Ahead(level) => level.poison_scratch(value),
            Self::Worker(_) => {}
        }
    }
}
