//! The late policy: what happens when a worker level's result is not there when due, and the
//! counters that say how often it was ([`LevelStats`], summed over an engine in [`LateStats`]).
//!
//! A result is due when the audio thread is about to play its first sample, `D - P` samples
//! after its input chunk completed (the level's slack).
//!
//! - Real-time mode waits only while the host is ahead of real time, never past the bound of
//!   [`crate::engine::realtime::pace`] ([`Wait::Until`]); at real-time pace it does not wait. A
//!   result that is still not complete then is *late*: it is counted once
//!   ([`LevelStats::late_results`]), and when it arrives only the samples that are still in the
//!   future are used, faded in over [`LATE_FADE_SAMPLES`]; the part of the slot that has
//!   already played stays silent for this level.
//! - When every slot is still busy at a chunk boundary (after the same bounded wait) the chunk
//!   cannot be handed over; it is counted as dropped ([`LevelStats::dropped_chunks`]) and the
//!   worker feeds silence into its delay line in its place, so the level keeps its timing and
//!   recovers by itself. A worker so far behind that the input history has wrapped over a
//!   chunk it was handed reads that chunk as silence, and counts it as dropped too.
//! - [`LevelStats::consecutive_lates`] counts lates in a row; at [`DEGRADED_AFTER_LATES`]
//!   the level raises its degraded flag (for the editor, and a GPU level's move to its CPU
//!   standby) until a result is on time again. The offload mode's level 0, whose lates are
//!   holes in the wet signal rather than in its tail, raises it at the first.
//! - Offline mode (`ProcessMode::Offline`, `longtail-cli render`) waits for every result, so
//!   nothing is ever late ([`Wait::Forever`]).
//! - The bounded waits are counted ([`LevelStats::waits`]), with their longest and their total.
//!
//! The audio thread's side of the policy is in [`WorkerLevel::collect`] and
//! [`WorkerLevel::submit`](super::WorkerLevel::submit). Uses nothing of the engine but the
//! pace's [`Wait`].
//!
//! [`WorkerLevel::collect`]: super::WorkerLevel::collect
//! [`Wait::Until`]: crate::engine::realtime::pace::Wait::Until
//! [`Wait::Forever`]: crate::engine::realtime::pace::Wait::Forever
//! [`Wait`]: crate::engine::realtime::pace::Wait

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Fade-in of a late result's remaining samples.
pub const LATE_FADE_SAMPLES: usize = 64;
/// Consecutive lates after which a level reports itself degraded.
pub const DEGRADED_AFTER_LATES: u64 = 3;

/// Counters of one worker level, written by the audio thread, readable from any thread.
#[derive(Debug, Default)]
pub struct LevelStats {
    /// Results that were not complete when due.
    pub late_results: AtomicU64,
    /// Input chunks that could not be handed to the worker (all slots busy), or that the input
    /// history had wrapped over when the worker came to read them (written by the worker).
    pub dropped_chunks: AtomicU64,
    /// Lates in a row (reset by a result on time).
    pub consecutive_lates: AtomicU64,
    /// Set after [`DEGRADED_AFTER_LATES`] consecutive lates, cleared by a result on time.
    pub degraded: AtomicBool,
    /// Wall time the worker spent computing jobs, in nanoseconds (written by the worker).
    pub busy_ns: AtomicU64,
    /// Times the audio thread woke the worker in real-time mode: a system call each (see
    /// [`super::chunk_clock`]).
    pub wakes: AtomicU64,
    /// Bounded waits of the audio thread for this level in real-time mode, with the host ahead
    /// (see [`crate::engine::realtime::pace`]); offline waits are not counted.
    pub waits: AtomicU64,
    /// The longest of those waits, in nanoseconds.
    pub wait_max_ns: AtomicU64,
    /// All of them together, in nanoseconds.
    pub wait_total_ns: AtomicU64,
    /// How long those waits ran past their deadline, together, in nanoseconds: the system's
    /// wake-up latency (a loaded machine, a coarse timer), not a wait the engine chose.
    pub wait_overshoot_ns: AtomicU64,
}

impl LevelStats {
    /// Counts a bounded wait of `waited_ns`, of which `overshoot_ns` past its deadline. Audio
    /// thread.
    pub(crate) fn count_wait(&self, waited_ns: u64, overshoot_ns: u64) {
        self.waits.fetch_add(1, Ordering::Relaxed);
        self.wait_max_ns.fetch_max(waited_ns, Ordering::Relaxed);
        self.wait_total_ns.fetch_add(waited_ns, Ordering::Relaxed);
        self.wait_overshoot_ns
            .fetch_add(overshoot_ns, Ordering::Relaxed);
    }
}

/// Lateness counters of an engine's worker levels, summed ([`Engine::late_stats`]).
///
/// [`Engine::late_stats`]: crate::engine::Engine::late_stats
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LateStats {
    /// Results that were not complete when due.
    pub late_results: u64,
    /// Chunks that could not be handed to a worker.
    pub dropped_chunks: u64,
    /// Whether any level has had several lates in a row.
    pub degraded: bool,
    /// Bounded waits for a result while the host ran ahead of real time
    /// ([`crate::engine::realtime::pace`]).
    pub waits: u64,
    /// The longest of them, in nanoseconds.
    pub wait_max_ns: u64,
    /// All of them together, in nanoseconds.
    pub wait_total_ns: u64,
    /// How long they ran past their deadlines, together, in nanoseconds (the system's wake-up
    /// latency).
    pub wait_overshoot_ns: u64,
}

impl LateStats {
    /// Adds one level's counters.
    pub fn add(&mut self, level: &LevelStats) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        self.late_results += load(&level.late_results);
        self.dropped_chunks += load(&level.dropped_chunks);
        self.degraded |= level.degraded.load(Ordering::Relaxed);
        self.waits += load(&level.waits);
        self.wait_max_ns = self.wait_max_ns.max(load(&level.wait_max_ns));
        self.wait_total_ns += load(&level.wait_total_ns);
        self.wait_overshoot_ns += load(&level.wait_overshoot_ns);
    }
}
