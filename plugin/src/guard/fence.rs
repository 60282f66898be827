//! A fence through nice-plug's task queue: [`TaskFence::wait`] posts a task and waits, within a
//! bound, until it has run, so every task posted before it has run too.
//!
//! # Why
//!
//! nice-plug's VST3 wrapper on Linux runs every task posted off the thread that created an
//! instance on one background thread that all instances of the process share: a parameter
//! change the host makes from its audio thread (a notice for the editor), a latency change the
//! plugin reports from `process()` (the host's `restartComponent`). Each task carries a weak
//! reference to its instance, and the thread *returns for good* at a task whose instance is
//! already gone. A task posted just before the host releases an instance therefore ends the
//! thread: the living instances' later tasks are lost (a latency change no longer reaches the
//! host), and when the last instance goes, nice-plug's `WorkerThread::drop` sends a shutdown to a
//! thread that no longer listens, panics on the failed send inside an `extern "C"` call, and the
//! host aborts. pluginval met it in 1 run of 7 (nice-plug 0.4.2).
//!
//! The queue is first in, first out. A host stops calling `process()` before `setActive(false)`,
//! so when `deactivate()` posts a fence and sees it run, every task this instance's audio
//! thread posted has run while the instance lived. The plugin's own task executor runs the
//! fence ([`Task::run`]), which takes no lock of nice-plug's: nice-plug holds the plugin's lock
//! during `deactivate()`, and none of the tasks ahead of the fence needs it.
//!
//! # The bound, and what it cannot close
//!
//! The wait ends after [`FENCE_LIMIT`] at the latest: a host whose `restartComponent`, called on
//! the shared thread, waited for the main thread (which waits here) would otherwise hang. A
//! fence that timed out stays queued, and becomes a stale task itself if the instance is
//! released before it runs; `deactivate()` logs it. A fence whose task was dropped unposted (the
//! queue full, or the thread already ended) returns at once ([`FenceOutcome::Dropped`]).
//!
//! Nor can a fence see nice-plug's thread let go of the instance: the thread holds a strong
//! reference while it runs any task of the instance, the fence included, so a host that
//! releases the instance in the few instructions between the fence's signal and the end of
//! nice-plug's `execute` has it dropped on that thread (and for the last instance, nice-plug's
//! `WorkerThread::drop` then joins the thread from itself: a panic message, no abort). The
//! wait sleeps [`FENCE_SETTLE`] after the fence ran, so that thread has the core back first.
//!
//! No fence covers a parameter the host sets from another thread than the creating one after
//! `setActive(false)`, or on an instance it never activated: our code runs no more between that
//! call and the release. The fix for those belongs in nice-plug (the upstream report in
//! `docs/dependencies.md`).

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The longest [`TaskFence::wait`] waits: longer than a hold ([`HOLD_LIMIT`]) that a host's
/// size query left without opening the window.
pub const FENCE_LIMIT: Duration = Duration::from_secs(2);

/// How long [`TaskFence::wait`] leaves the thread that ran the fence after it did: that thread
/// still holds a strong reference to the instance for the few instructions from the fence's
/// signal to the end of nice-plug's `execute`, and a host that released the instance meanwhile
/// would have it dropped there (see the module's doc). Waking the posting thread can preempt it
/// on the same core; sleeping hands the core back.
pub const FENCE_SETTLE: Duration = Duration::from_millis(1);

/// The longest a [`TaskFence::hold`] parks the queue's thread when it is not released.
pub const HOLD_LIMIT: Duration = Duration::from_secs(1);

/// A task of the plugin's own, run by nice-plug's task executor through [`Task::run`] (the
/// plugin's `BackgroundTask`).
#[derive(Debug)]
pub enum Task {
    /// Opens the fence that posted it.
    Fence(Token),
    /// Opens the fence, then parks the thread until its [`Hold`] is released (with whether to
    /// settle after).
    Hold(Token, Arc<Latch<bool>>),
}

impl Task {
    /// Runs the task (on whichever thread nice-plug runs it).
    pub fn run(self) {
        match self {
            Self::Fence(token) => token.open(),
            Self::Hold(token, release) => {
                token.open();
                if release.wait(HOLD_LIMIT) == Some(true) {
                    // The releasing thread still finishes the call it released from (nice-plug's
                    // `attached()`, which holds the editor's cell): leave it the core.
                    std::thread::sleep(FENCE_SETTLE);
                }
            }
        }
    }
}

/// A value set once on one thread and awaited, for a bounded time, on another: what became of a
/// fence's [`Token`], or the release of a [`Hold`].
#[derive(Debug)]
pub struct Latch<T> {
    value: Mutex<Option<T>>,
    changed: Condvar,
}

impl<T> Default for Latch<T> {
    fn default() -> Self {
        Self {
            value: Mutex::new(None),
            changed: Condvar::new(),
        }
    }
}

impl<T: Copy> Latch<T> {
    fn lock(&self) -> MutexGuard<'_, Option<T>> {
        // The data is a plain value: a panic while it was held leaves it consistent.
        self.value
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records the first value only.
    fn set(&self, value: T) {
        let mut slot = self.lock();
        if slot.is_none() {
            *slot = Some(value);
            self.changed.notify_all();
        }
    }

    /// Waits until a value is set, for `limit` at most.
    fn wait(&self, limit: Duration) -> Option<T> {
        let slot = self.lock();
        let (slot, _) = self
            .changed
            .wait_timeout_while(slot, limit, |slot| slot.is_none())
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *slot
    }
}

/// The queue's thread parked in a task of ours ([`TaskFence::hold`]): tasks posted meanwhile wait
/// behind it. Dropping it lets the thread go on at once.
#[derive(Debug)]
pub struct Hold(Arc<Latch<bool>>);

impl Hold {
    /// Lets the thread go on after [`FENCE_SETTLE`]: for a caller that returns into a call that
    /// still holds what the queued tasks use, and whose instance lives on (the thread holds the
    /// instance meanwhile).
    pub fn release_settled(self) {
        self.0.set(true);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// The half of a fence that travels through the queue: opens the fence when run, and tells it
/// when it is dropped without running.
#[derive(Debug)]
pub struct Token(Arc<Latch<Settled>>);

impl Token {
    fn open(self) {
        self.0.set(Settled::Ran);
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        // After `open` this finds the latch set already and changes nothing.
        self.0.set(Settled::Dropped);
    }
}

/// What became of a fence's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settled {
    Ran,
    Dropped,
}

impl From<Option<Settled>> for FenceOutcome {
    fn from(settled: Option<Settled>) -> Self {
        match settled {
            Some(Settled::Ran) => Self::Drained,
            Some(Settled::Dropped) => Self::Dropped,
            None => Self::TimedOut,
        }
    }
}

/// How [`TaskFence::wait`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceOutcome {
    /// The fence ran: every task posted before it has run.
    Drained,
    /// The fence did not run within the limit (it stays queued).
    TimedOut,
    /// The fence's task was dropped without running: not posted (the queue full, or the thread
    /// that runs it gone).
    Dropped,
}

/// Posts fences through a task queue: nice-plug's, through the `AsyncExecutor` the plugin is
/// given, or any function that queues a [`Task`] to be run later.
pub struct TaskFence {
    post: Box<dyn Fn(Task) + Send + Sync>,
    /// The queue is nice-plug's VST3 one, where tasks of the instance can be left for a
    /// released instance (set by [`Self::mark_vst3`]).
    vst3: AtomicBool,
}

impl std::fmt::Debug for TaskFence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskFence")
    }
}

impl TaskFence {
    /// A fence whose tasks `post` queues.
    pub fn new(post: impl Fn(Task) + Send + Sync + 'static) -> Self {
        Self {
            post: Box::new(post),
            vst3: AtomicBool::new(false),
        }
    }

    /// Marks the queue as nice-plug's VST3 one (the plugin learns its API at activation, the
    /// editor when its window opens): only there do the fence and the holds matter.
    pub fn mark_vst3(&self) {
        self.vst3.store(true, Relaxed);
    }

    /// Whether [`Self::mark_vst3`] was called.
    pub fn is_vst3(&self) -> bool {
        self.vst3.load(Relaxed)
    }

    /// Posts a fence and waits until it has run, for `limit` at most, then [`FENCE_SETTLE`].
    /// Main thread; blocks.
    pub fn wait(&self, limit: Duration) -> FenceOutcome {
        let settled = Arc::new(Latch::default());
        (self.post)(Task::Fence(Token(Arc::clone(&settled))));
        let outcome = FenceOutcome::from(settled.wait(limit));
        if outcome == FenceOutcome::Drained {
            std::thread::sleep(FENCE_SETTLE);
        }
        outcome
    }

    /// Posts a fence that then parks the queue's thread, and waits until it runs (for `limit`
    /// at most): every task posted before it has run, and every task posted until the [`Hold`]
    /// is released (or [`HOLD_LIMIT`] has passed) waits behind it. `None` where the fence did
    /// not run in time: it is released already, and goes on at once when it does run. Main
    /// thread; blocks.
    pub fn hold(&self, limit: Duration) -> Option<Hold> {
        let settled = Arc::new(Latch::default());
        let release = Arc::new(Latch::default());
        (self.post)(Task::Hold(
            Token(Arc::clone(&settled)),
            Arc::clone(&release),
        ));
        let hold = Hold(release);
        (FenceOutcome::from(settled.wait(limit)) == FenceOutcome::Drained).then_some(hold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    /// A queue run by a thread of its own, first in, first out, as nice-plug's is: a fence
    /// returns only after the tasks posted before it have run.
    #[test]
    fn a_fence_returns_after_the_tasks_before_it() {
        let (sender, receiver) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let worker = std::thread::spawn(move || {
            for job in receiver {
                job();
            }
        });
        let ran = Arc::new(Mutex::new(Vec::new()));
        for i in 0..100 {
            let ran = Arc::clone(&ran);
            sender
                .send(Box::new(move || {
                    std::thread::sleep(Duration::from_micros(50));
                    ran.lock().unwrap().push(i);
                }))
                .unwrap();
        }
        let queue = Mutex::new(sender.clone());
        let fence = TaskFence::new(move |task| {
            let _ = queue.lock().unwrap().send(Box::new(move || task.run()));
        });
        let outcome = fence.wait(Duration::from_secs(30));
        assert_eq!(outcome, FenceOutcome::Drained);
        assert_eq!(ran.lock().unwrap().len(), 100);
        drop(fence);
        drop(sender);
        worker.join().unwrap();
    }

    /// A hold parks the queue's thread: a task posted while it is held runs only after the hold
    /// is dropped.
    #[test]
    fn a_hold_keeps_later_tasks_waiting_until_it_is_released() {
        let (sender, receiver) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let worker = std::thread::spawn(move || {
            for job in receiver {
                job();
            }
        });
        let queue = Mutex::new(sender.clone());
        let fence = TaskFence::new(move |task| {
            let _ = queue.lock().unwrap().send(Box::new(move || task.run()));
        });
        let hold = fence.hold(Duration::from_secs(30)).expect("the hold runs");
        let ran = Arc::new(Mutex::new(false));
        let later = Arc::clone(&ran);
        sender
            .send(Box::new(move || *later.lock().unwrap() = true))
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!*ran.lock().unwrap(), "a task ran while the queue was held");
        drop(hold);
        assert_eq!(fence.wait(Duration::from_secs(30)), FenceOutcome::Drained);
        assert!(*ran.lock().unwrap());
        drop(fence);
        drop(sender);
        worker.join().unwrap();
    }

    /// A fence nobody runs times out after its limit; one whose task is dropped unrun returns
    /// at once; one run on the posting thread returns at once.
    #[test]
    fn a_fence_ends_within_its_limit_whatever_becomes_of_its_task() {
        let kept = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::clone(&kept);
        let never_run = TaskFence::new(move |task| queue.lock().unwrap().push(task));
        let start = Instant::now();
        assert_eq!(
            never_run.wait(Duration::from_millis(50)),
            FenceOutcome::TimedOut
        );
        assert!(start.elapsed() >= Duration::from_millis(50));
        // The stale fence is harmless once its gate is gone.
        kept.lock().unwrap().drain(..).for_each(Task::run);

        let dropped = TaskFence::new(drop);
        let start = Instant::now();
        assert_eq!(dropped.wait(Duration::from_secs(30)), FenceOutcome::Dropped);
        assert!(start.elapsed() < Duration::from_secs(10));

        let inline = TaskFence::new(Task::run);
        assert_eq!(inline.wait(Duration::from_secs(30)), FenceOutcome::Drained);
    }
}
