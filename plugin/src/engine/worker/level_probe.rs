//! A view of one worker level for other threads ([`LevelProbe`]): where it runs, its counters,
//! and the thermal policy's lever.
//!
//! Uses the job protocol ([`super::protocol`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::protocol::{ON_GPU, Shared};

/// A view of one worker level for other threads (the editor, the thermal governor): where it
/// runs, its counters, and the thermal policy's lever. Keeps nothing alive: once the level is
/// dropped it reports an idle CPU level and ignores the lever.
#[derive(Clone)]
pub struct LevelProbe {
    shared: std::sync::Weak<Shared>,
    has_gpu_home: bool,
}

impl std::fmt::Debug for LevelProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LevelProbe")
            .field("on_gpu", &self.on_gpu())
            .finish()
    }
}

impl LevelProbe {
    /// A view of the level whose shared memory is `shared`.
    pub(crate) fn new(shared: &Arc<Shared>) -> Self {
        Self {
            shared: Arc::downgrade(shared),
            has_gpu_home: shared.history_chunks > 0,
        }
    }

    /// Whether the level runs on the GPU now.
    pub fn on_gpu(&self) -> bool {
        self.shared
            .upgrade()
            .is_some_and(|s| s.executor.load(Ordering::Relaxed) == ON_GPU)
    }

    /// Why the level left the GPU, if it ran there and left (and has not gone back), with
    /// why its last try to go back failed, if one did.
    pub fn gpu_exit(&self) -> Option<String> {
        let shared = self.shared.upgrade()?;
        let exit = shared.gpu_exit.lock().ok()?.clone()?;
        match shared.gpu_not_back.lock().ok().and_then(|r| r.clone()) {
            Some(not_back) => Some(format!("{exit}; not back yet: {not_back}")),
            None => Some(exit),
        }
    }

    /// Times the level went back to the GPU after leaving it.
    pub fn gpu_returns(&self) -> u64 {
        self.shared
            .upgrade()
            .map_or(0, |s| s.gpu_returns.load(Ordering::Relaxed))
    }

    /// Time the worker thread has spent computing, in nanoseconds.
    pub fn busy_ns(&self) -> u64 {
        self.shared
            .upgrade()
            .map_or(0, |s| s.stats.busy_ns.load(Ordering::Relaxed))
    }

    /// Late results and dropped chunks so far.
    pub fn lates(&self) -> (u64, u64) {
        self.shared.upgrade().map_or((0, 0), |s| {
            (
                s.stats.late_results.load(Ordering::Relaxed),
                s.stats.dropped_chunks.load(Ordering::Relaxed),
            )
        })
    }

    /// The thermal policy's lever: `true` moves the level off the GPU (the crossfaded
    /// migration of a fault) and keeps it on the CPU; `false` lets it go (back) at once (the
    /// policy has its own hysteresis). No effect on a level without a way to the GPU.
    pub fn hold_gpu(&self, held: bool) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        shared.gpu_held.store(held, Ordering::Relaxed);
        if shared.history_chunks > 0
            && let Some(hub) = shared.hub_thread()
        {
            hub.unpark();
        }
    }

    /// Whether the level has a way to the GPU (it started there, or may be sent there).
    pub fn has_gpu_home(&self) -> bool {
        self.has_gpu_home
    }
}
