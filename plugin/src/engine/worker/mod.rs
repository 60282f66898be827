//! The CPU tail executor: one background thread per level, fed through preallocated job slots.
//!
//! # Threads and allocation
//!
//! [`WorkerLevel::spawn`] (off the audio thread) allocates every slot and starts the thread, which
//! owns the level's [`UpolsLevel`]. The levels of an engine read their input from one
//! [`InputHistory`], which the engine writes once per sample. On the audio thread,
//! [`WorkerLevel::feed`] and [`WorkerLevel::submit`] only touch atomics,
//! [`WorkerLevel::collect`] takes the results that fall due (a small one into the output rings
//! whole) and [`WorkerLevel::play`] adds the big ones from their slots to the host's output; they
//! call `Thread::unpark` (a futex
//! wake that never blocks) only when the worker needs it; they never allocate or lock, and in
//! real-time mode wait only while the host is ahead of real time, within the bound of
//! [`crate::engine::realtime::pace`]. Dropping a `WorkerLevel` stops and joins its thread, so
//! engines are dropped off the audio thread.
//!
//! # Parts
//!
//! Each part uses only the parts listed before it (and this module uses them all):
//!
//! - [`input_history`]: the input samples every level reads in place.
//! - [`late_policy`]: what happens to a result that comes late, and the level's counters.
//! - [`chunk_clock`]: how an idle worker times its own wake-ups.
//! - [`protocol`]: the job slots and counters the threads share, and who runs the jobs.
//! - [`player`]: the results a level is playing, read from their slots at every call.
//! - [`job_runner`]: a level's overlap-save state on a CPU thread.
//! - [`level_probe`]: a view of one level for other threads.
//! - [`gpu`]: the hub's feed, the migration to the CPU and the way back.
//! - [`thread`]: the worker thread itself.
//!
//! This module keeps the audio thread's handle on a level ([`WorkerLevel`]).

pub mod chunk_clock;
pub mod gpu;
pub mod input_history;
pub mod job_runner;
pub mod late_policy;
pub mod level_probe;
pub mod player;
pub mod protocol;
pub mod thread;

#[cfg(test)]
mod tests;

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use longtail_gpu::{Feed, Hub, Registration};

use super::memory::pages::PageBuf;
use super::memory::rings::OutputRing;
use super::realtime::pace::Wait;
use super::upols::{GpuSpecSource, UpolsLevel};
pub use chunk_clock::{EARLY_CHUNK_WAKE, POLL_INTERVAL, WAKE_EARLY, WAKE_WINDOW};
use gpu::GpuFeed;
pub use gpu::{GPU_RETRY_AFTER, GPU_RETRY_MAX, GpuHome, HELD_REASON, MAX_GPU_RETURNS};
pub use input_history::InputHistory;
use job_runner::JobRunner;
pub use late_policy::{DEGRADED_AFTER_LATES, LATE_FADE_SAMPLES, LateStats, LevelStats};
pub use level_probe::LevelProbe;
use player::Player;
pub use protocol::{MIN_SLOTS, num_slots};
use protocol::{ON_CPU, ON_GPU, Shared, UNSTAMPED, wait_for_completion, wait_for_completion_until};
use thread::worker_main;

/// Samples of a result (its length times its outputs) from which it plays straight from its
/// slot, a call's part at a time ([`player`]), instead of going into the output rings whole at
/// the boundary before its first sample. A small result is one streaming pass over its slot
/// and a few lines of the rings. A big one added whole put up to 768 KB into the rings in one
/// call (a 12 x 12 matrix's 16,384-sample level), and added in pieces spread over its period
/// it still made each piece's call the slow one and the rings as long as the level's delay;
/// from the slot, every call reads its own part, and the rings only span the small results.
pub const SLOT_PLAY_MIN: usize = 16384;

/// The audio thread's handle on one level that runs on its own worker thread.
pub struct WorkerLevel {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// GPU levels: the first place on the hub (dropped first, so the hub stops feeding). The
    /// places taken on the way back belong to the worker thread.
    registration: Option<Registration>,
    /// Copy of `submitted`, owned by the audio thread.
    submitted: u64,
    /// Copy of `consumed`, owned by the audio thread.
    consumed: u64,
    /// Job numbers already counted as late, so each late counts once.
    late_counted_up_to: u64,
    /// The results playing now (jobs `consumed..`), read from their slots at each call.
    player: Player,
    /// Whether the level's results play from their slots ([`SLOT_PLAY_MIN`]); else each goes
    /// into the output rings whole at the boundary before its first sample.
    plays_from_slot: bool,
    /// Each slot's due time (its job's first output sample): the audio thread's copy, so that
    /// a boundary with nothing due touches no line the worker writes.
    dues: Box<[u64]>,
    /// A chunk is coming in for slot `submitted` ([`Self::feed`] saw its first quantum).
    gathering: bool,
    /// Samples of that chunk before a reset in mid-chunk: silence.
    lead: usize,
    /// That chunk has its slot (else it will be dropped).
    slot_reserved: bool,
    /// Reset epoch, owned by the audio thread.
    epoch: u64,
    partition_size: usize,
    output_delay: usize,
    /// Lates in a row after which the level is degraded (and a GPU level goes to its
    /// standby): [`DEGRADED_AFTER_LATES`], or 1 for a level whose lates are holes in the wet
    /// signal ([`Self::degrade_at_first_late`]).
    degraded_after: u64,
}

impl WorkerLevel {
    /// Moves `level` onto a new worker thread (named `longtail-level-P`). `level_idx` orders
    /// the real-time priorities: smaller partitions have shorter deadlines and run at higher
    /// priority (rate-monotonic, as zita-convolver does). The level reads its input from
    /// `inputs`, which the engine writes. Allocates the slots; call off the audio thread.
    pub fn spawn(
        level: UpolsLevel,
        inputs: &Arc<InputHistory>,
        level_idx: usize,
    ) -> std::io::Result<Self> {
        Self::spawn_on(level, inputs, level_idx, None, false)
    }

    /// Registers `level` with the GPU `hub`, its worker thread started as the standby (see
    /// [`gpu`]); once the level left, `home` says how it may go back ([`gpu::way_back`]).
    /// Allocates; call off the audio thread. When the hub refuses the level (memory, a broken
    /// device), the standby runs it from the start and [`LevelProbe::gpu_exit`] says why.
    pub fn spawn_gpu(
        level: UpolsLevel,
        inputs: &Arc<InputHistory>,
        level_idx: usize,
        hub: &Arc<Hub>,
        home: GpuHome,
    ) -> std::io::Result<Self> {
        let source = level.gpu_spec_source(inputs.num_inputs());
        let spec = source.spec();
        let mut worker = Self::spawn_on(level, inputs, level_idx, Some((home, source)), true)?;
        let _ = worker.shared.hub_wakers[0].set(hub.thread().clone());
        let feed = Arc::new(GpuFeed::new(
            Arc::clone(&worker.shared),
            worker.thread.as_ref().map(|t| t.thread().clone()),
        ));
        match hub.register(&spec, Arc::clone(&feed) as Arc<dyn Feed>) {
            Ok(registration) => worker.registration = Some(registration),
            // The standby takes the level from the start.
            Err(err) => feed.fail(&err.to_string()),
        }
        Ok(worker)
    }

    /// Whether the level was placed on the GPU (it may have left since).
    pub fn started_on_gpu(&self) -> bool {
        self.shared.started_on_gpu
    }

    /// A view of this level for other threads.
    pub fn probe(&self) -> LevelProbe {
        LevelProbe::new(&self.shared)
    }

    /// Starts `level` on its worker thread, held off the GPU ([`LevelProbe::hold_gpu`]) with
    /// `home` as its way there: the thermal policy lets it go when the CPU is hot and the GPU
    /// cool (see [`gpu::way_back`]). Allocates; call off the audio thread.
    pub fn spawn_held(
        level: UpolsLevel,
        inputs: &Arc<InputHistory>,
        level_idx: usize,
        home: GpuHome,
    ) -> std::io::Result<Self> {
        let source = level.gpu_spec_source(inputs.num_inputs());
        let worker = Self::spawn_on(level, inputs, level_idx, Some((home, source)), false)?;
        worker.shared.gpu_held.store(true, Ordering::Relaxed);
        Ok(worker)
    }

    /// Whether the level runs on the GPU now.
    pub fn on_gpu(&self) -> bool {
        self.shared.executor.load(Ordering::Relaxed) == ON_GPU
    }

    /// Test hook: a level that leaves the GPU tries to go back after `wait` (doubling as
    /// usual) instead of [`GPU_RETRY_AFTER`].
    #[doc(hidden)]
    pub fn set_gpu_retry_after(&self, wait: Duration) {
        self.shared
            .retry_after_ms
            .store(wait.as_millis().max(1) as u64, Ordering::Relaxed);
    }

    fn spawn_on(
        level: UpolsLevel,
        inputs: &Arc<InputHistory>,
        level_idx: usize,
        home: Option<(GpuHome, GpuSpecSource)>,
        on_gpu: bool,
    ) -> std::io::Result<Self> {
        let num_inputs = inputs.num_inputs();
        let partition_size = level.partition_size();
        let output_delay = level.output_delay();
        let num_outputs = level.num_outputs();
        let num_slots = num_slots(partition_size, output_delay.saturating_sub(partition_size));
        let atomics = |count: usize| (0..count).map(|_| AtomicU64::new(0)).collect();
        let cells = |count: usize| {
            (0..count)
                .map(|_| UnsafeCell::new(0.0f32))
                .collect::<Box<[_]>>()
        };
        // A GPU level's standby rebuilds from `n + 1` chunks; one more slot for the chunk the
        // hub may have taken but not finished.
        let history_chunks = if home.is_some() {
            level.num_partitions() + 2
        } else {
            0
        };
        let history = OnceLock::new();
        if on_gpu {
            let _ = history.set(cells(history_chunks * num_inputs * partition_size));
        }
        let shared = Arc::new(Shared {
            partition_size,
            num_inputs,
            num_outputs,
            num_slots,
            inputs: Arc::clone(inputs),
            output_slots: PageBuf::zeroed(num_slots * num_outputs * partition_size),
            chunk_ends: atomics(num_slots),
            chunk_written: atomics(num_slots),
            chunk_leads: atomics(num_slots),
            chunk_epochs: atomics(num_slots),
            submit_times: atomics(num_slots),
            created: Instant::now(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            completed_seq: AtomicU32::new(0),
            waiting: AtomicBool::new(false),
            needs_wake: AtomicBool::new(false),
            own_wake_at: AtomicU64::new(0),
            consumed: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            stats: LevelStats::default(),
            executor: AtomicU8::new(if on_gpu { ON_GPU } else { ON_CPU }),
            history,
            history_chunks,
            started_on_gpu: on_gpu,
            history_ends: atomics(history_chunks),
            history_epochs: atomics(history_chunks),
            history_written: AtomicU64::new(0),
            shadow_from: AtomicU64::new(0),
            handover_job: AtomicU64::new(0),
            hub_wakers: (0..=MAX_GPU_RETURNS).map(|_| OnceLock::new()).collect(),
            hub_waker: AtomicUsize::new(0),
            gpu_returns: AtomicU64::new(0),
            retry_after_ms: AtomicU64::new(0),
            gpu_held: AtomicBool::new(false),
            gpu_exit: Mutex::new(None),
            gpu_not_back: Mutex::new(None),
        });
        let thread_shared = Arc::clone(&shared);
        // Its buffers are cut here, in the build's order, not on the new thread: cut there,
        // they raced the engine's last buffers for the pool's room (`pages`), and a stereo
        // reverb's peak memory changed by a huge page from run to run.
        let runner = JobRunner::new(&level, num_inputs);
        let thread = std::thread::Builder::new()
            .name(format!("longtail-level-{partition_size}"))
            .spawn(move || worker_main(level, runner, thread_shared, level_idx, home))?;
        Ok(Self {
            shared,
            thread: Some(thread),
            registration: None,
            submitted: 0,
            consumed: 0,
            late_counted_up_to: 0,
            player: Player::default(),
            plays_from_slot: partition_size * num_outputs >= SLOT_PLAY_MIN,
            dues: vec![0; num_slots].into_boxed_slice(),
            gathering: false,
            lead: 0,
            slot_reserved: false,
            epoch: 0,
            partition_size,
            output_delay,
            degraded_after: DEGRADED_AFTER_LATES,
        })
    }

    /// Degrades the level at its first late result or dropped chunk, not the third: the
    /// offload mode's level 0, whose lates are holes in the wet signal from its first sample,
    /// not in its tail. On the GPU, its standby then takes over after one late. Off the audio
    /// thread, before the level plays.
    pub fn degrade_at_first_late(&mut self) {
        self.degraded_after = 1;
    }

    /// Partition size `P`.
    pub fn partition_size(&self) -> usize {
        self.partition_size
    }

    /// Counters of this level.
    pub fn stats(&self) -> &LevelStats {
        &self.shared.stats
    }

    /// Test hook: stalls (`true`) or releases the worker, as a fault-injection point.
    #[doc(hidden)]
    pub fn set_stalled(&self, stalled: bool) {
        self.shared.stalled.store(stalled, Ordering::Release);
        if !stalled {
            self.wake();
        }
    }

    fn wake(&self) {
        if self.shared.executor.load(Ordering::Acquire) == ON_GPU
            && let Some(hub) = self.shared.hub_thread()
        {
            hub.unpark();
        } else if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
    }

    /// Notes the quantum that ends at `time` (`quantum` samples, a divisor of `P`) as part of
    /// the chunk coming in: its samples are in the engine's [`InputHistory`], which the worker
    /// reads, so nothing is copied. The chunk's first quantum (or the first after a reset in
    /// mid-chunk, the samples before it then silence) reserves the slot: when every slot is
    /// busy, it waits for the worker as `wait` allows (see [`crate::engine::realtime::pace`]), and
    /// else drops the chunk and counts it (see the late policy). Audio thread; never allocates;
    /// waits only as `wait` allows.
    pub fn feed(&mut self, time: u64, quantum: usize, wait: &mut Wait) {
        if !self.gathering {
            self.gathering = true;
            let start = time - quantum as u64;
            self.lead = (start % self.partition_size as u64) as usize;
            self.slot_reserved = self.reserve_slot(wait);
        }
    }

    /// Whether job `submitted` may use its slot now: its previous user is completed and
    /// consumed (played to its end). Waits for it as `wait` allows.
    fn reserve_slot(&mut self, wait: &mut Wait) -> bool {
        loop {
            let completed = self.shared.completed.load(Ordering::Acquire);
            if self.submitted - completed.min(self.consumed) < self.shared.num_slots as u64 {
                return true;
            }
            // Only results still playing hold the slots (not expected: `num_slots` leaves room
            // for the slack and the play), and no wait frees them: drop the chunk.
            if completed >= self.submitted || !wait.may_wait() || !self.wait_for(completed, wait) {
                return false;
            }
        }
    }

    /// Waits for job `job` as `wait` allows (see [`crate::engine::realtime::pace`]): returns
    /// whether it completed. Counts the bounded waits. Audio thread; never allocates.
    fn wait_for(&self, job: u64, wait: &mut Wait) -> bool {
        match wait {
            Wait::Never => false,
            Wait::Forever => {
                self.wake();
                wait_for_completion(&self.shared, job);
                true
            }
            Wait::Until { deadline, ended } => {
                let start = Instant::now();
                if start >= *deadline {
                    return false;
                }
                self.wake();
                let (completed, end) = wait_for_completion_until(&self.shared, job, *deadline);
                self.shared.stats.count_wait(
                    end.saturating_duration_since(start).as_nanos() as u64,
                    end.saturating_duration_since(*deadline).as_nanos() as u64,
                );
                *ended = Some(end);
                completed
            }
        }
    }

    /// Hands the chunk that ends at `chunk_end` (a multiple of `P`), announced by [`Self::feed`]
    /// and now in the input history, to the worker, or counts it as dropped when it had no slot.
    /// Wakes the worker when it asked for it, when it sleeps on its timer far past this chunk's
    /// arrival (a host ahead of real time, see [`chunk_clock`]), and always offline (`wait` is
    /// [`Wait::Forever`]). Audio thread; never allocates, locks or waits.
    pub fn submit(&mut self, chunk_end: u64, wait: Wait) {
        let offline = wait.is_forever();
        let reserved = std::mem::take(&mut self.slot_reserved);
        self.gathering = false;
        if !reserved {
            let stats = &self.shared.stats;
            stats.dropped_chunks.fetch_add(1, Ordering::Relaxed);
            // A dropped chunk is as bad as a late result for the degraded flag.
            let lates = stats.consecutive_lates.fetch_add(1, Ordering::Relaxed) + 1;
            if lates >= self.degraded_after {
                stats.degraded.store(true, Ordering::Relaxed);
            }
            return;
        }
        let shared = &*self.shared;
        let slot_idx = (self.submitted % shared.num_slots as u64) as usize;
        shared.chunk_ends[slot_idx].store(chunk_end, Ordering::Relaxed);
        self.dues[slot_idx] = chunk_end - self.partition_size as u64 + self.output_delay as u64;
        shared.chunk_written[slot_idx].store(shared.inputs.written(), Ordering::Relaxed);
        shared.chunk_leads[slot_idx].store(self.lead as u64, Ordering::Relaxed);
        shared.chunk_epochs[slot_idx].store(self.epoch, Ordering::Relaxed);
        // A clock read (the vDSO, no system call where the clock source allows), so the
        // worker knows when the chunk came however late it looks. Offline, the worker is woken
        // for every chunk and the times would teach it a pace that is not the host's.
        let stamp = if offline {
            UNSTAMPED
        } else {
            shared.created.elapsed().as_nanos() as u64
        };
        shared.submit_times[slot_idx].store(stamp, Ordering::Relaxed);
        self.submitted += 1;
        // SeqCst, paired with the worker's `needs_wake` (or `own_wake_at`) store and `submitted`
        // load: either the worker sees this job before it sleeps, or this thread sees that it
        // must wake it.
        shared.submitted.store(self.submitted, Ordering::SeqCst);
        // The GPU hub is always woken: one futex wake per big chunk, and its batch starts at
        // once instead of at its next poll.
        let own_wake_at = shared.own_wake_at.load(Ordering::SeqCst);
        let early = own_wake_at != 0
            && stamp.saturating_add(EARLY_CHUNK_WAKE.as_nanos() as u64) < own_wake_at;
        if offline
            || early
            || shared.executor.load(Ordering::Relaxed) == ON_GPU
            || shared.needs_wake.load(Ordering::SeqCst)
        {
            if !offline {
                shared.stats.wakes.fetch_add(1, Ordering::Relaxed);
            }
            self.wake();
        }
    }

    /// Forgets pending results and makes the worker clear its history before the next chunk.
    /// Audio thread; never allocates or waits (jobs still running finish unread).
    pub fn reset(&mut self) {
        self.epoch += 1;
        self.consumed = self.submitted;
        self.late_counted_up_to = self.submitted;
        self.player.clear();
        self.gathering = false;
        self.slot_reserved = false;
        self.shared.consumed.store(self.consumed, Ordering::Release);
        self.shared
            .stats
            .consecutive_lates
            .store(0, Ordering::Relaxed);
        self.shared.stats.degraded.store(false, Ordering::Relaxed);
    }

    /// Adds what the level's results hold for times `[start, start + range.len())` to
    /// `outputs[..][range]`, straight from their slots (see [`player`]). The span lies within
    /// one quantum, after the boundary's [`Self::collect`]. Audio thread; never allocates.
    pub fn play(&self, start: u64, outputs: &mut [&mut [f32]], range: std::ops::Range<usize>) {
        self.player.play(&self.shared, start, outputs, range);
    }

    /// Whether the level's results play from their slots instead of the output rings
    /// ([`SLOT_PLAY_MIN`]).
    pub fn plays_from_slot(&self) -> bool {
        self.plays_from_slot
    }

    /// Asks the caches for the slot lines [`Self::play`] reads for `[start, start + len)`.
    pub fn prefetch(&self, start: u64, len: usize) {
        self.player.prefetch(&self.shared, start, len);
    }

    /// At the quantum boundary `now` (the time of the next sample to play): retires the
    /// results played to their end, freeing their slots, and takes those whose first sample
    /// falls due before `horizon` (the next boundary): a small one goes into `outputs` whole,
    /// a big one starts playing, which [`Self::play`] then reads ([`SLOT_PLAY_MIN`]). A due
    /// result that is not complete is waited for as `wait` allows
    /// ([`crate::engine::realtime::pace`]), and is late if it is still not complete then: it plays
    /// from the boundary where it is found complete, faded in. Until a result falls due this reads
    /// only the audio thread's own fields. Audio thread; never allocates; waits only as `wait`
    /// allows.
    pub fn collect(&mut self, now: u64, horizon: u64, outputs: &mut [OutputRing], wait: &mut Wait) {
        let partition_size = self.partition_size as u64;
        for _ in 0..self.player.retire(now, self.partition_size) {
            consume(&mut self.consumed, &self.shared);
        }
        loop {
            let job = self.consumed + self.player.len() as u64;
            // A full player (not expected: results tile time) takes the next result at a later
            // boundary, after a retire, rather than this loop meeting the same job again.
            if job >= self.submitted || self.player.is_full() {
                break;
            }
            let slot_idx = (job % self.dues.len() as u64) as usize;
            let due = self.dues[slot_idx];
            if due >= horizon {
                // Not needed yet. Each result is taken at the boundary before its first sample,
                // whenever it completed, so the order of additions (and so the rounding) does
                // not depend on the worker's timing.
                break;
            }
            let completed =
                self.shared.completed.load(Ordering::Acquire) > job || self.wait_for(job, wait);
            if !completed {
                self.count_late(job);
                // Results arrive in order: nothing after this job is complete either.
                break;
            }
            if due + partition_size <= now {
                // Late past its last sample: nothing left to play. (A late result plays only
                // after the ones before it ended, so it is the oldest job here.)
                consume(&mut self.consumed, &self.shared);
                continue;
            }
            if self.late_counted_up_to > job || due < now {
                // Late (or behind a late one): only the part that has not been played yet
                // can still be used, faded in.
                self.count_late(job);
                self.take(slot_idx, due, now, outputs);
                continue;
            }
            let stats = &self.shared.stats;
            stats.consecutive_lates.store(0, Ordering::Relaxed);
            stats.degraded.store(false, Ordering::Relaxed);
            self.take(slot_idx, due, due, outputs);
        }
    }

    /// Plays the completed result in `slot_idx` (first sample due at `due`) from `from` on,
    /// faded in if that is later: from its slot ([`Self::plays_from_slot`]), or added to the
    /// output rings whole now (its slot then free again).
    fn take(&mut self, slot_idx: usize, due: u64, from: u64, outputs: &mut [OutputRing]) {
        if self.plays_from_slot {
            self.player.start(slot_idx, due, from);
            return;
        }
        let shared = &*self.shared;
        for (output_idx, ring) in outputs.iter_mut().enumerate().take(shared.num_outputs) {
            // SAFETY: `completed` passed this job (acquire, checked by the caller), and it is
            // consumed only below.
            let result = unsafe { shared.result(slot_idx, output_idx) };
            if from > due {
                ring.add_faded_in(from, &result[(from - due) as usize..], LATE_FADE_SAMPLES);
            } else {
                ring.add(due, result);
            }
        }
        consume(&mut self.consumed, shared);
    }

    /// Counts job `job` late, once.
    fn count_late(&mut self, job: u64) {
        if self.late_counted_up_to > job {
            return;
        }
        self.late_counted_up_to = job + 1;
        let stats = &self.shared.stats;
        stats.late_results.fetch_add(1, Ordering::Relaxed);
        let lates = stats.consecutive_lates.fetch_add(1, Ordering::Relaxed) + 1;
        if lates >= self.degraded_after {
            stats.degraded.store(true, Ordering::Relaxed);
        }
    }
}

/// The oldest unconsumed job has played to its end (or never will): its slot may be reused.
/// Audio thread.
fn consume(consumed: &mut u64, shared: &Shared) {
    *consumed += 1;
    shared.consumed.store(*consumed, Ordering::Release);
}

impl Drop for WorkerLevel {
    fn drop(&mut self) {
        // Off the hub first, so it takes no more chunks; then stop the worker (or standby).
        drop(self.registration.take());
        self.shared.stop.store(true, Ordering::Release);
        self.shared.stalled.store(false, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
