//! The migration to the CPU: a GPU level's worker thread stands by while the hub runs the
//! level, and when the hub gives it up rebuilds the level's delay lines from the chunks the hub
//! kept.
//!
//! Uses the job protocol and the job runner.

use std::sync::atomic::Ordering;

use crate::engine::upols::UpolsLevel;
use crate::engine::worker::job_runner::JobRunner;
use crate::engine::worker::protocol::{IDLE_TIMEOUT, MIGRATING, ON_CPU, Shared};

/// The standby of a level on the GPU: sleeps until the hub gives the level up, then rebuilds
/// the delay lines from the last `n + 1` chunks the hub finished and hands back the first job
/// it did not; `None` when stopped first.
pub(crate) fn standby(
    level: &mut UpolsLevel,
    shared: &Shared,
    runner: &mut JobRunner,
) -> Option<u64> {
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return None;
        }
        if shared.executor.load(Ordering::Acquire) == MIGRATING {
            break;
        }
        std::thread::park_timeout(IDLE_TIMEOUT);
    }
    let next_job = shared.completed.load(Ordering::Acquire);
    let first = next_job.saturating_sub(shared.history_chunks as u64 - 1);
    for job in first..next_job {
        let slot_idx = (job % shared.history_chunks as u64) as usize;
        let chunk_end = shared.history_ends[slot_idx].load(Ordering::Relaxed);
        let chunk_epoch = shared.history_epochs[slot_idx].load(Ordering::Relaxed);
        runner.run(level, chunk_end, chunk_epoch, |input_idx, dst| {
            // SAFETY: the hub gave the level up (`MIGRATING`, acquire) and writes the history
            // no more; the standby is its only accessor now.
            let chunk = unsafe {
                std::slice::from_raw_parts(shared.history_chunk(job, input_idx), dst.len())
            };
            dst.copy_from_slice(chunk);
            true
        });
    }
    shared.history_written.store(next_job, Ordering::Release);
    shared.executor.store(ON_CPU, Ordering::SeqCst);
    Some(next_job)
}
