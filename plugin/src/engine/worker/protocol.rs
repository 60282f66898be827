//! The job protocol: the memory one level's audio thread, worker thread and GPU hub share
//! (`Shared`): job slots, sequence counters, and who runs the jobs now.
//!
//! Jobs are numbered. The input is not copied into the jobs: the audio thread writes every
//! input sample once into the engine's [`InputHistory`], which all its levels read in place.
//! At job `j`'s first quantum the audio thread reserves slot `j % num_slots` (noting how much
//! of the chunk came before a reset in mid-chunk: silence), and when the chunk's `P` samples
//! are in the history it stores the chunk's end time, where it ends in the history, and
//! publishes `submitted = j + 1` (release). The worker reads the chunk from the history (a
//! chunk the audio thread has written over meanwhile is read as silence and counted as
//! dropped: [`Shared::read_chunk`]), keeps the previous chunk itself to form the `2P`
//! overlap-save window, runs the level, writes `P` output samples per output channel into the
//! slot, and publishes `completed = j + 1` (release). The audio thread reads the result after
//! seeing `completed > j` (acquire): a small one it adds to the output rings whole at the
//! quantum boundary before its first sample, a big one it plays straight from the slot into
//! the host's output ([`super::player`]); once the result is in the rings, or has played to
//! its end, it publishes `consumed = j + 1`. A slot is reused
//! for job `j + num_slots` only when job `j` is both completed and consumed, so neither side
//! ever touches a slot the other may be using. A level has room for the chunks its slack keeps
//! in flight plus two ([`num_slots`]).
//!
//! Uses the input history ([`super::input_history`]), the late policy's counters
//! ([`super::late_policy`]) and the engine's huge pages for the result slots
//! ([`crate::engine::memory::pages`]); every other part of the worker uses it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::engine::memory::pages::PageBuf;

use super::input_history::InputHistory;
use super::late_policy::LevelStats;

/// Fewest job slots of a level.
pub const MIN_SLOTS: usize = 5;

/// Job slots of a level with partition size `P` and `slack_samples` of slack: the results a
/// slack holds back (due), the one playing from its slot (see [`super::player`]), the chunk
/// just handed over, the chunk being gathered and one late result, so chunks are dropped only
/// when the worker is more than a chunk behind.
pub fn num_slots(partition_size: usize, slack_samples: usize) -> usize {
    (slack_samples.div_ceil(partition_size.max(1)) + 4).max(MIN_SLOTS)
}

/// How long an idle worker sleeps before it checks its stop flag again (it is normally woken
/// by `unpark` as soon as a job arrives).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_millis(100);

/// The hand-over time of a chunk submitted offline, when the worker is always woken.
pub(crate) const UNSTAMPED: u64 = u64::MAX;

/// Memory shared by the audio thread and one worker thread.
pub(crate) struct Shared {
    pub(crate) partition_size: usize,
    pub(crate) num_inputs: usize,
    pub(crate) num_outputs: usize,
    /// Job slots ([`num_slots`]).
    pub(crate) num_slots: usize,
    /// The engine's input history, which the chunks are read from.
    pub(crate) inputs: Arc<InputHistory>,
    /// `num_slots` results, `[slot][output][sample]`. Written by the worker for job `j`, read by
    /// the audio thread after `completed > j` and before it publishes `consumed > j`.
    pub(crate) output_slots: PageBuf<UnsafeCell<f32>>,
    /// End time of each slot's input chunk (absolute samples), written with the chunk.
    pub(crate) chunk_ends: Box<[AtomicU64]>,
    /// Where each slot's chunk ends in the input history ([`InputHistory::written`]).
    pub(crate) chunk_written: Box<[AtomicU64]>,
    /// Samples at the start of each slot's chunk that came before a reset: silence.
    pub(crate) chunk_leads: Box<[AtomicU64]>,
    /// Reset epoch of each slot's chunk: a chunk from a newer epoch makes the worker clear its
    /// level's history first (the audio thread called `reset()`).
    pub(crate) chunk_epochs: Box<[AtomicU64]>,
    /// When each slot's chunk was handed over, in nanoseconds since `created` ([`UNSTAMPED`]
    /// offline): the worker's chunk clock learns the host's timing from these
    /// ([`super::chunk_clock`]).
    pub(crate) submit_times: Box<[AtomicU64]>,
    pub(crate) created: Instant,
    pub(crate) submitted: AtomicU64,
    pub(crate) completed: AtomicU64,
    /// Low 32 bits of `completed`, stored after it: the futex word an offline wait sleeps on.
    pub(crate) completed_seq: AtomicU32,
    /// Set while the audio thread sleeps on `completed_seq` (offline mode, or a bounded wait
    /// while the host is ahead), so the worker makes the wake system call only when someone
    /// waits.
    pub(crate) waiting: AtomicBool,
    /// Set while the worker sleeps until it is woken (not on its own timer), so the audio
    /// thread makes the wake system call only then ([`super::chunk_clock`]).
    pub(crate) needs_wake: AtomicBool,
    /// While the worker sleeps on its own timer: when it will look for the next chunk, in
    /// nanoseconds since `created` (0 when it does not), so the audio thread wakes it for a
    /// chunk that came much earlier ([`super::chunk_clock`]).
    pub(crate) own_wake_at: AtomicU64,
    pub(crate) consumed: AtomicU64,
    pub(crate) stop: AtomicBool,
    /// Test hook: while set, the worker does not start new jobs (a stalled executor).
    pub(crate) stalled: AtomicBool,
    pub(crate) stats: LevelStats,
    /// Who runs the jobs: [`ON_CPU`], [`ON_GPU`], [`MIGRATING`] (from the GPU to the CPU) or
    /// [`RETURNING`] (from the CPU back to the GPU).
    pub(crate) executor: AtomicU8,
    /// GPU levels: the last chunks, `[slot][input][sample]` with slot `job % history_chunks`.
    /// Written by the hub's thread while the level is on the GPU (read by the standby after it
    /// saw [`MIGRATING`], acquire), and by the worker while it runs the level (read by the hub
    /// while the level goes back, after `history_written`, acquire).
    /// Allocated with the level when it starts on the GPU, else by the worker before its first
    /// try to go there.
    pub(crate) history: OnceLock<Box<[UnsafeCell<f32>]>>,
    pub(crate) history_chunks: usize,
    /// The level started on the GPU (else it has a way there, or none).
    pub(crate) started_on_gpu: bool,
    /// End time and epoch of each history slot's chunk.
    pub(crate) history_ends: Box<[AtomicU64]>,
    pub(crate) history_epochs: Box<[AtomicU64]>,
    /// Jobs below this are in the history (stored by the worker after it wrote them).
    pub(crate) history_written: AtomicU64,
    /// Going back to the GPU: the first job the hub warms up on (from the history), and the
    /// first it serves ([`super::gpu::way_back`]). Stored before [`RETURNING`].
    pub(crate) shadow_from: AtomicU64,
    pub(crate) handover_job: AtomicU64,
    /// The hub threads this level has been on: the first hub's, then one per registration on
    /// the way back. `hub_waker` indexes the current one (stored before [`ON_GPU`]).
    pub(crate) hub_wakers: Box<[OnceLock<Thread>]>,
    pub(crate) hub_waker: AtomicUsize,
    /// Times the level went back to the GPU.
    pub(crate) gpu_returns: AtomicU64,
    /// Test hook: the first retry's wait in milliseconds instead of
    /// [`GPU_RETRY_AFTER`](super::GPU_RETRY_AFTER) (0).
    pub(crate) retry_after_ms: AtomicU64,
    /// Set by the thermal policy: the level leaves the GPU and does not try to go back until
    /// it is cleared (see [`LevelProbe::hold_gpu`](super::LevelProbe::hold_gpu)).
    pub(crate) gpu_held: AtomicBool,
    /// Why the level left the GPU (never touched by the audio thread).
    pub(crate) gpu_exit: Mutex<Option<String>>,
    /// Why the last try to go back failed.
    pub(crate) gpu_not_back: Mutex<Option<String>>,
}

/// The level runs on its worker thread.
pub(crate) const ON_CPU: u8 = 0;
/// The level runs on the GPU hub; the worker thread is its standby.
pub(crate) const ON_GPU: u8 = 1;
/// The hub gave the level up; the standby is rebuilding it.
pub(crate) const MIGRATING: u8 = 2;
/// The worker runs the level while the hub warms up to take it back.
pub(crate) const RETURNING: u8 = 3;

// SAFETY: the `UnsafeCell` slots are only accessed under the job protocol in the module docs:
// a slot has exactly one accessor at a time, handed over with release/acquire on the sequence
// counters. Everything else in `Shared` is atomic or immutable.
unsafe impl Sync for Shared {}

impl Shared {
    /// Copies the input chunk of slot `slot_idx` (`P` samples of input `input_idx`) into
    /// `dst`. Returns whether the chunk was whole: `false` when the audio thread had written
    /// over it before this read (a level more than its slots behind), and then `dst` must not
    /// be used (the callers run silence on every input instead). Worker or hub thread, after
    /// seeing `submitted` pass the slot's job (acquire).
    pub(crate) fn read_chunk(&self, slot_idx: usize, input_idx: usize, dst: &mut [f32]) -> bool {
        let lead = (self.chunk_leads[slot_idx].load(Ordering::Relaxed) as usize).min(dst.len());
        let end = self.chunk_written[slot_idx].load(Ordering::Relaxed);
        let (silent, chunk) = dst.split_at_mut(lead);
        silent.fill(0.0);
        self.inputs.read(input_idx, end, chunk)
    }

    /// A chunk was written over before it was read: it counts as dropped, as a chunk the audio
    /// thread could not hand over does.
    pub(crate) fn count_lost_chunk(&self) {
        self.stats.dropped_chunks.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn output_slot(&self, slot_idx: usize, output_idx: usize) -> *mut f32 {
        let offset = (slot_idx * self.num_outputs + output_idx) * self.partition_size;
        self.output_slots[offset].get()
    }

    /// Output `output_idx` of the result in slot `slot_idx`: `P` samples.
    ///
    /// # Safety
    ///
    /// The audio thread, after seeing `completed` pass the slot's job (acquire) and before it
    /// publishes `consumed` past it: the worker does not write the slot in between, nor before
    /// a new submission.
    pub(crate) unsafe fn result(&self, slot_idx: usize, output_idx: usize) -> &[f32] {
        // SAFETY: the caller's contract; the slot's outputs are `P` samples each.
        unsafe {
            std::slice::from_raw_parts(self.output_slot(slot_idx, output_idx), self.partition_size)
        }
    }

    /// The thread of the hub the level is on (or was last on).
    pub(crate) fn hub_thread(&self) -> Option<&Thread> {
        self.hub_wakers
            .get(self.hub_waker.load(Ordering::Acquire))?
            .get()
    }

    pub(crate) fn history_chunk(&self, job: u64, input_idx: usize) -> *mut f32 {
        let slot_idx = (job % self.history_chunks as u64) as usize;
        let offset = (slot_idx * self.num_inputs + input_idx) * self.partition_size;
        // Present: the history is allocated before anyone reads or writes it (see `history`).
        self.history.get().expect("history allocated")[offset].get()
    }

    /// Copies job `job`'s input chunk (`chunk(input_idx)`, `P` samples of each input) into its
    /// history slot, with its end time and epoch, for the standby (from the hub) or the hub's
    /// warm-up (from the worker).
    ///
    /// # Safety
    ///
    /// The caller is the history slot's only accessor: the hub while the level is on the GPU,
    /// the worker while it runs the level (see [`super::gpu::keep_in_history`]).
    pub(crate) unsafe fn keep_chunk<'a>(
        &self,
        job: u64,
        chunk: impl Fn(usize) -> &'a [f32],
        chunk_end: u64,
        chunk_epoch: u64,
    ) {
        for input_idx in 0..self.num_inputs {
            let chunk = chunk(input_idx);
            debug_assert_eq!(chunk.len(), self.partition_size);
            // SAFETY: the caller's contract; `chunk` is `P` samples.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    chunk.as_ptr(),
                    self.history_chunk(job, input_idx),
                    self.partition_size,
                );
            }
        }
        let history_slot = (job % self.history_chunks as u64) as usize;
        self.history_ends[history_slot].store(chunk_end, Ordering::Relaxed);
        self.history_epochs[history_slot].store(chunk_epoch, Ordering::Relaxed);
    }

    /// Job `job`'s result is in its output slot: publish it, and wake an offline wait. Worker
    /// or hub thread.
    pub(crate) fn publish_completed(&self, job: u64) {
        self.completed.store(job + 1, Ordering::Release);
        self.completed_seq.store((job + 1) as u32, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) {
            atomic_wait::wake_all(&self.completed_seq);
        }
    }
}

/// Offline waiting for job `job`: sleeps on the `completed_seq` futex word until the worker
/// publishes it, so a bounce that waits for its workers costs no CPU while it waits (as
/// zita-convolver's `process(sync)` sleeps on a semaphore). Never used in real-time mode.
///
/// No wake-up is lost: the audio thread raises `waiting` before it reads the sequence word,
/// and the worker stores the word before it reads `waiting` (all `SeqCst`), so either the
/// worker sees `waiting` and wakes the futex, or the audio thread sees the new word and does
/// not sleep.
pub(crate) fn wait_for_completion(shared: &Shared, job: u64) {
    shared.waiting.store(true, Ordering::SeqCst);
    loop {
        let seq = shared.completed_seq.load(Ordering::SeqCst);
        if shared.completed.load(Ordering::Acquire) > job {
            break;
        }
        atomic_wait::wait(&shared.completed_seq, seq);
    }
    shared.waiting.store(false, Ordering::SeqCst);
}

/// How often a bounded wait checks for its result where it cannot sleep on the futex word
/// with a timeout (not Linux).
#[cfg_attr(
    any(target_os = "linux", target_os = "android"),
    expect(
        dead_code,
        reason = "Linux waits on the futex word with a timeout instead"
    )
)]
pub(crate) const WAIT_POLL: Duration = Duration::from_micros(100);

/// Real-time waiting while the host is ahead of real time ([`crate::engine::realtime::pace`]): like
/// [`wait_for_completion`], but gives up at `deadline`. Returns whether job `job` completed,
/// and when the wait ended. On Linux it sleeps on the `completed_seq` futex word with a
/// timeout, so the worker's publication wakes it at once; elsewhere it sleeps
/// [`WAIT_POLL`] at a time. Never allocates.
pub(crate) fn wait_for_completion_until(
    shared: &Shared,
    job: u64,
    deadline: Instant,
) -> (bool, Instant) {
    shared.waiting.store(true, Ordering::SeqCst);
    let (completed, now) = loop {
        let seq = shared.completed_seq.load(Ordering::SeqCst);
        let now = Instant::now();
        if shared.completed.load(Ordering::Acquire) > job {
            break (true, now);
        }
        match deadline.checked_duration_since(now) {
            Some(left) if !left.is_zero() => timed_wait(&shared.completed_seq, seq, left),
            _ => break (false, now),
        }
    };
    shared.waiting.store(false, Ordering::SeqCst);
    (completed, now)
}

/// Sleeps until `word` is no longer `expected`, or `timeout` has passed (or at once, or
/// spuriously: the caller checks).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn timed_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let timeout = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: FUTEX_WAIT reads the valid, aligned u32 behind `word` and sleeps while it still
    // holds `expected`, for `timeout` (relative) at most; the worker's `wake_all` is a
    // FUTEX_WAKE on the same word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word as *const AtomicU32,
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &timeout as *const libc::timespec,
        );
    }
}

/// Sleeps [`WAIT_POLL`] (or `timeout` when shorter): no portable futex with a timeout here.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn timed_wait(_word: &AtomicU32, _expected: u32, timeout: Duration) {
    std::thread::sleep(timeout.min(WAIT_POLL));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_has_slots_for_what_its_slack_holds_back() {
        // 1536 samples of slack at P = 512: three results due, one playing, the chunk handed
        // over, the one being gathered, one late result.
        assert_eq!(num_slots(512, 1536), 7);
        assert_eq!(num_slots(512, 1537), 8);
        assert_eq!(num_slots(16_384, 16_384), MIN_SLOTS);
        assert_eq!(num_slots(512, 8192), 20);
    }
}
