//! The worker thread: runs a level's jobs in order until stopped, sleeping on its own chunk
//! clock between them, and, for a level with a way to the GPU, stands by while it is there and
//! drives the way back.
//!
//! Uses the job protocol, the job runner, the chunk clock, real-time scheduling and the GPU
//! side ([`super::gpu`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::chunk_clock::ChunkClock;
use super::gpu::{GpuHome, Returns, keep_in_history, standby};
use super::job_runner::JobRunner;
use super::protocol::{IDLE_TIMEOUT, MIGRATING, ON_GPU, Shared, UNSTAMPED};
use crate::engine::realtime::priority::raise_priority;
use crate::engine::upols::{GpuSpecSource, UpolsLevel};

/// The worker thread: runs jobs in order until stopped. A GPU level's worker is its standby
/// while the level is on the GPU (see [`super::gpu`] and [`super::gpu::way_back`]).
pub(crate) fn worker_main(
    mut level: UpolsLevel,
    mut runner: JobRunner,
    shared: Arc<Shared>,
    level_idx: usize,
    home: Option<(GpuHome, GpuSpecSource)>,
) {
    let _ftz = crate::engine::realtime::denormals::ScopedFtz::enable();
    raise_priority(level_idx);
    let partition_size = shared.partition_size;
    let mut next_job = 0u64;
    let mut returns = home.map(|(home, source)| Returns::new(home, source));

    loop {
        if matches!(shared.executor.load(Ordering::Acquire), ON_GPU | MIGRATING) {
            match standby(&mut level, &shared, &mut runner) {
                Some(job) => next_job = job,
                None => return,
            }
            if let Some(returns) = &mut returns {
                returns.left(&shared);
            }
        }
        let mut clock = ChunkClock::default();
        loop {
            if shared.stop.load(Ordering::Acquire) {
                return;
            }
            if let Some(returns) = &mut returns
                && returns.poll(&shared, next_job)
            {
                // Handed over to the GPU: standby again.
                break;
            }
            if shared.stalled.load(Ordering::Acquire) {
                std::thread::park_timeout(IDLE_TIMEOUT);
                continue;
            }
            if shared.submitted.load(Ordering::SeqCst) <= next_job {
                idle_wait(&shared, next_job, &mut clock);
                continue;
            }
            let slot_idx = (next_job % shared.num_slots as u64) as usize;
            match shared.submit_times[slot_idx].load(Ordering::Relaxed) {
                UNSTAMPED => clock.forget(),
                ns => clock.arrived(next_job, shared.created + Duration::from_nanos(ns)),
            }
            let chunk_end = shared.chunk_ends[slot_idx].load(Ordering::Relaxed);
            let chunk_epoch = shared.chunk_epochs[slot_idx].load(Ordering::Relaxed);
            let job_start = Instant::now();
            // `submitted > next_job` was seen with acquire, so the chunk is in the input
            // history and the slot's fields are written; the audio thread will not touch the
            // slot until `completed` and `consumed` both pass this job.
            let whole = runner.run(&mut level, chunk_end, chunk_epoch, |input_idx, dst| {
                shared.read_chunk(slot_idx, input_idx, dst)
            });
            if !whole {
                shared.count_lost_chunk();
            }
            if shared.history.get().is_some() {
                keep_in_history(&shared, next_job, &runner, chunk_end, chunk_epoch);
            }
            for (output_idx, result) in runner.results.iter().enumerate() {
                // SAFETY: the audio thread consumed this slot's previous job before submitting
                // this one, and reads it again only after `publish_completed`.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        result.as_ptr(),
                        shared.output_slot(slot_idx, output_idx),
                        partition_size,
                    );
                }
            }
            let busy_ns = job_start.elapsed().as_nanos() as u64;
            shared.stats.busy_ns.fetch_add(busy_ns, Ordering::Relaxed);
            shared.publish_completed(next_job);
            next_job += 1;
        }
    }
}

/// Sleeps until job `next_job` may have arrived: on the worker's own timer near the expected
/// time, or until woken when the timing is unknown or missed. Worker thread.
fn idle_wait(shared: &Shared, next_job: u64, clock: &mut ChunkClock) {
    let now = Instant::now();
    if let Some(sleep) = clock.own_sleep(now) {
        // Published before `submitted` is read again (both SeqCst, paired with `submit`):
        // either this thread sees a chunk that came meanwhile, or the audio thread sees when
        // this one will look and wakes it if that is much later than the chunk came.
        let wake_at = (now + sleep)
            .saturating_duration_since(shared.created)
            .as_nanos() as u64;
        shared.own_wake_at.store(wake_at.max(1), Ordering::SeqCst);
        if shared.submitted.load(Ordering::SeqCst) <= next_job {
            std::thread::park_timeout(sleep);
        }
        shared.own_wake_at.store(0, Ordering::SeqCst);
        return;
    }
    shared.needs_wake.store(true, Ordering::SeqCst);
    if shared.submitted.load(Ordering::SeqCst) <= next_job && !shared.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(IDLE_TIMEOUT);
    }
    shared.needs_wake.store(false, Ordering::SeqCst);
}
