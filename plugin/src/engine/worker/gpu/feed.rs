//! The hub's side of one GPU level (`GpuFeed`, its [`Feed`]): takes the submitted chunks
//! from the input history, keeps them for the standby, publishes the hub's results as a worker
//! would, and gives the level up when told to.
//!
//! Uses the job protocol ([`super::super::protocol`]) and the GPU hub's [`Feed`] trait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use longtail_gpu::{ChunkStart, Feed};

use crate::engine::worker::protocol::{MIGRATING, ON_CPU, ON_GPU, RETURNING, Shared};

/// Why a level left the GPU when the thermal policy held it off
/// ([`LevelProbe::hold_gpu`](crate::engine::worker::LevelProbe::hold_gpu)).
pub const HELD_REASON: &str = "the thermal policy moved it to the CPU (the GPU is hot)";

/// The hub's side of one GPU level: takes submitted chunks from the input history, keeps them for
/// the standby, and publishes the hub's results as the worker would. On the way back it first takes
/// the chunks the worker ran from the history, and throws their results away.
pub(crate) struct GpuFeed {
    shared: Arc<Shared>,
    /// The standby worker, woken when the hub gives the level up.
    standby: Option<Thread>,
    /// Set when the hub gave this feed up.
    pub(crate) failed: AtomicBool,
    /// Hub thread only (the lock is never contended).
    state: Mutex<FeedState>,
}

#[derive(Debug)]
struct FeedState {
    /// The next job to take; the job taken last is `next_job - 1` while `taken` is set.
    next_job: u64,
    /// `next_job` was set from `shadow_from`.
    started: bool,
    taken: bool,
    /// The chunk taken was a warm-up chunk: its result is not published.
    warming: bool,
    epoch: u64,
    last_chunk_end: Option<u64>,
}

impl GpuFeed {
    pub(crate) fn new(shared: Arc<Shared>, standby: Option<Thread>) -> Self {
        Self {
            shared,
            standby,
            failed: AtomicBool::new(false),
            state: Mutex::new(FeedState {
                next_job: 0,
                started: false,
                taken: false,
                warming: false,
                // The first chunk starts the level afresh.
                epoch: u64::MAX,
                last_chunk_end: None,
            }),
        }
    }
}

impl Feed for GpuFeed {
    fn take(&self, inputs: &mut [f32]) -> Option<ChunkStart> {
        let shared = &*self.shared;
        let executor = shared.executor.load(Ordering::Acquire);
        if !matches!(executor, ON_GPU | RETURNING) || shared.stalled.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.state.lock().ok()?;
        if state.taken {
            return None;
        }
        if !state.started {
            state.started = true;
            state.next_job = shared.shadow_from.load(Ordering::Relaxed);
        }
        let job = state.next_job;
        let partition_size = shared.partition_size;
        let history_slot = (job % shared.history_chunks as u64) as usize;
        let warming = job < shared.handover_job.load(Ordering::Relaxed);
        let (slot_idx, chunk_end, chunk_epoch) = if warming {
            // Warming up: the chunks the worker ran, from the history.
            if shared.history_written.load(Ordering::Acquire) <= job {
                return None;
            }
            (
                None,
                shared.history_ends[history_slot].load(Ordering::Relaxed),
                shared.history_epochs[history_slot].load(Ordering::Relaxed),
            )
        } else {
            if executor != ON_GPU || shared.submitted.load(Ordering::Acquire) <= job {
                return None;
            }
            let slot_idx = (job % shared.num_slots as u64) as usize;
            (
                Some(slot_idx),
                shared.chunk_ends[slot_idx].load(Ordering::Relaxed),
                shared.chunk_epochs[slot_idx].load(Ordering::Relaxed),
            )
        };
        let mut start = ChunkStart::default();
        if chunk_epoch != state.epoch {
            start.reset = true;
            state.epoch = chunk_epoch;
            state.last_chunk_end = None;
        }
        let expected = state
            .last_chunk_end
            .map_or(partition_size as u64, |end| end + partition_size as u64);
        if !start.reset && chunk_end != expected {
            // Chunks the audio thread dropped: silence in their place, as on the CPU.
            start.silent_chunks =
                (chunk_end.saturating_sub(expected) / partition_size as u64) as usize;
        }
        state.last_chunk_end = Some(chunk_end);
        let mut whole = true;
        for (input_idx, dst) in inputs.chunks_exact_mut(partition_size).enumerate() {
            match slot_idx {
                // SAFETY: a history chunk below `history_written` (acquire) is not written
                // again while the hub may read it (see `keep_in_history`).
                None => dst.copy_from_slice(unsafe {
                    std::slice::from_raw_parts(shared.history_chunk(job, input_idx), partition_size)
                }),
                // `submitted > job` was seen with acquire: the chunk is in the input history.
                Some(slot_idx) => whole &= shared.read_chunk(slot_idx, input_idx, dst),
            }
        }
        if !whole {
            // Written over before the hub took it: silence on every input, as on the CPU.
            inputs.fill(0.0);
            shared.count_lost_chunk();
        }
        if slot_idx.is_some() {
            let inputs = &*inputs;
            // SAFETY: the history slot is the hub's alone while the level is on the GPU.
            unsafe {
                shared.keep_chunk(
                    job,
                    |input_idx| &inputs[input_idx * partition_size..][..partition_size],
                    chunk_end,
                    chunk_epoch,
                );
            }
        }
        state.next_job += 1;
        state.taken = true;
        state.warming = warming;
        Some(start)
    }

    fn finish(&self, outputs: &[f32]) {
        let shared = &*self.shared;
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if !state.taken {
            return;
        }
        state.taken = false;
        if state.warming {
            return;
        }
        let job = state.next_job - 1;
        let slot_idx = (job % shared.num_slots as u64) as usize;
        for (output_idx, result) in outputs.chunks_exact(shared.partition_size).enumerate() {
            // SAFETY: as for the worker: this slot's previous job was consumed before this one
            // was submitted, and the audio thread reads it only after `publish_completed`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    result.as_ptr(),
                    shared.output_slot(slot_idx, output_idx),
                    shared.partition_size,
                );
            }
        }
        shared.publish_completed(job);
    }

    fn wants_to_leave(&self) -> Option<&'static str> {
        let shared = &*self.shared;
        if shared.executor.load(Ordering::Relaxed) != ON_GPU {
            None
        } else if shared.gpu_held.load(Ordering::Relaxed) {
            Some(HELD_REASON)
        } else if shared.stats.degraded.load(Ordering::Relaxed) {
            Some("its GPU results kept coming late; the CPU took over")
        } else {
            None
        }
    }

    fn fail(&self, reason: &str) {
        let shared = &*self.shared;
        self.failed.store(true, Ordering::SeqCst);
        loop {
            let (from, to) = match shared.executor.load(Ordering::SeqCst) {
                // Warming up: the worker keeps the level and tries again later.
                RETURNING => (RETURNING, ON_CPU),
                ON_GPU => (ON_GPU, MIGRATING),
                _ => return,
            };
            if shared
                .executor
                .compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                if let Ok(mut exit) = shared.gpu_exit.lock() {
                    *exit = Some(if from == RETURNING {
                        format!("{reason} (on the way back)")
                    } else {
                        reason.to_string()
                    });
                }
                if let Some(standby) = &self.standby {
                    standby.unpark();
                }
                return;
            }
        }
    }
}
