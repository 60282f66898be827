//! The way back: how a level that left the GPU goes back to it (`Returns`, the worker's
//! side), and the history of chunks the hub warms up on (`keep_in_history`).
//!
//! A level that left the GPU tries to go back, with hysteresis: the first try comes
//! [`GPU_RETRY_AFTER`] after it left, and every failed try or new departure doubles the wait (up
//! to [`GPU_RETRY_MAX`]); after [`MAX_GPU_RETURNS`] failures it stays on the CPU. The thermal
//! policy moves levels too ([`LevelProbe::hold_gpu`]): a held level leaves as if it failed,
//! does not try while held, and tries at once when let go (the policy waited for the GPU to
//! cool down; such a departure is no failure). A try runs on a
//! thread of its own (opening a device and uploading spectra take time the worker does not
//! have): it asks the process's hub for its health ([`Hub::health`]: the recent round trips, or
//! a fresh measurement when the hub is idle) and registers the level only if the engine's rule
//! accepts them ([`GpuHome::fits`]). The CPU worker stays in charge while the GPU warms up: from
//! job `J` on it copies each chunk it runs into the history, the hub runs the same chunks from
//! there and throws the results away, and at job `J + n + 1` (the GPU's delay line holds
//! nothing but real input by then) the worker hands the level over and becomes the standby
//! again. Both compute the same convolution (to float rounding), so the switch needs no fade.
//!
//! Uses the job protocol, the job runner and the hub's side of a level (`GpuFeed`).
//!
//! [`LevelProbe::hold_gpu`]: crate::engine::worker::LevelProbe::hold_gpu
//! [`Hub::health`]: longtail_gpu::Hub::health

use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use longtail_gpu::{Feed, OpenOptions, Registration, RoundTrip};

use super::feed::GpuFeed;
use crate::engine::upols::GpuSpecSource;
use crate::engine::worker::job_runner::JobRunner;
use crate::engine::worker::protocol::{ON_CPU, ON_GPU, RETURNING, Shared};

/// A level that left the GPU first tries to go back this long after (see the module docs).
pub const GPU_RETRY_AFTER: Duration = Duration::from_secs(5);
/// Longest wait between two tries.
pub const GPU_RETRY_MAX: Duration = Duration::from_secs(320);
/// Failures (departures for lates or faults, failed tries) after which a level stops trying
/// to go back and stays on the CPU.
pub const MAX_GPU_RETURNS: usize = 7;

/// How a GPU level may go back after it left (see the module docs).
#[derive(Clone)]
pub struct GpuHome {
    /// The options the engine opened its hub with.
    pub options: OpenOptions,
    /// Whether a hub whose recent round trips are these may take the level back.
    pub fits: Arc<dyn Fn(&RoundTrip) -> bool + Send + Sync>,
}

impl std::fmt::Debug for GpuHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuHome")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Copies job `job`'s input chunk (the one `runner` ran last) into the history, for the hub to
/// warm up on when the level goes back to the GPU. Worker thread, before it publishes the job.
pub(crate) fn keep_in_history(
    shared: &Shared,
    job: u64,
    runner: &JobRunner,
    chunk_end: u64,
    chunk_epoch: u64,
) {
    // SAFETY: the history slot is the worker's while it runs the level: the hub reads the
    // history only for jobs below `history_written`, and during a return the worker writes at
    // most `n + 1` chunks (`J .. J + n + 1`) into `n + 2` slots, so none it writes is one the
    // hub may still read.
    unsafe {
        shared.keep_chunk(
            job,
            |input_idx| runner.last_chunk(input_idx),
            chunk_end,
            chunk_epoch,
        );
    }
    shared.history_written.store(job + 1, Ordering::Release);
}

/// What a try to go back to the GPU yields: the new place on a hub, its feed and the hub's
/// thread.
type ReturnTry = Result<(Registration, Arc<GpuFeed>, Thread), String>;

/// The worker's side of the way back: when to try, the try in flight, and the place on the
/// hub while the level warms up there or runs there.
pub(crate) struct Returns {
    home: GpuHome,
    source: GpuSpecSource,
    /// Failures so far (departures for lates or faults, failed tries): the next wait is
    /// `2^(failures - 1)` first waits. A departure the thermal policy asked for is no failure.
    failures: u32,
    /// When the next try starts; `None` while one is in flight, the level is (going back) on
    /// the GPU, is held off it, or has given up.
    next_try: Option<Instant>,
    attempt: Option<JoinHandle<ReturnTry>>,
    /// The place taken on the way back, and its feed.
    place: Option<(Registration, Arc<GpuFeed>)>,
    /// A place no longer used, handed to the next try's thread to drop (dropping takes the
    /// hub's lock, which may be held for a whole period).
    stale: Option<Registration>,
    /// Next free entry of `hub_wakers` (a new hub takes one; the same hub reuses its own).
    next_waker: usize,
    /// The thermal policy's hold, as last seen.
    held: bool,
}

impl Returns {
    pub(crate) fn new(home: GpuHome, source: GpuSpecSource) -> Self {
        Self {
            home,
            source,
            failures: 0,
            next_try: None,
            attempt: None,
            place: None,
            stale: None,
            next_waker: 1,
            held: false,
        }
    }

    /// The level is on the CPU again: it left the GPU, or its way back failed.
    pub(crate) fn left(&mut self, shared: &Shared) {
        if let Some((registration, _)) = self.place.take() {
            self.stale = Some(registration);
        }
        if shared.gpu_held.load(Ordering::Relaxed) {
            // Held off by the thermal policy: back when it lets go.
            self.next_try = None;
        } else {
            self.failed(shared);
        }
    }

    /// Schedules the next try, further off than the last; gives up after [`MAX_GPU_RETURNS`]
    /// failures.
    fn failed(&mut self, shared: &Shared) {
        self.failures = self.failures.saturating_add(1);
        if self.failures as usize > MAX_GPU_RETURNS {
            self.next_try = None;
            return;
        }
        let first = match shared.retry_after_ms.load(Ordering::Relaxed) {
            0 => GPU_RETRY_AFTER,
            ms => Duration::from_millis(ms),
        };
        let wait = first
            .saturating_mul(1 << (self.failures - 1).min(16))
            .min(GPU_RETRY_MAX.max(first));
        self.next_try = Some(Instant::now() + wait);
    }

    /// Between jobs, before job `next_job`: starts a try when due, takes a finished one's
    /// outcome, and hands the level over once the GPU has warmed up. True when the level was
    /// just handed over (the worker becomes the standby). Never waits.
    pub(crate) fn poll(&mut self, shared: &Arc<Shared>, next_job: u64) -> bool {
        let held = shared.gpu_held.load(Ordering::Relaxed);
        if held != self.held {
            self.held = held;
            if !held && self.failures as usize <= MAX_GPU_RETURNS {
                // The policy let go: try at once (it waited for the GPU to cool down).
                self.next_try = Some(Instant::now());
            }
        }
        match shared.executor.load(Ordering::Acquire) {
            RETURNING => {
                if next_job < shared.handover_job.load(Ordering::Relaxed) {
                    return false;
                }
                if held {
                    // Held meanwhile: stay on the CPU; the feed is let go.
                    if shared
                        .executor
                        .compare_exchange(RETURNING, ON_CPU, Ordering::SeqCst, Ordering::SeqCst)
                        .is_ok()
                    {
                        self.left(shared);
                    }
                    return false;
                }
                // The lates of the CPU's time are not the GPU's.
                shared.stats.consecutive_lates.store(0, Ordering::Relaxed);
                shared.stats.degraded.store(false, Ordering::Relaxed);
                if shared
                    .executor
                    .compare_exchange(RETURNING, ON_GPU, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
                {
                    // The hub gave the feed up meanwhile: handled at the next poll.
                    return false;
                }
                shared.gpu_returns.fetch_add(1, Ordering::Relaxed);
                for note in [&shared.gpu_exit, &shared.gpu_not_back] {
                    if let Ok(mut note) = note.lock() {
                        *note = None;
                    }
                }
                if let Some(hub) = shared.hub_thread() {
                    hub.unpark();
                }
                true
            }
            ON_CPU => {
                if self.place.is_some() {
                    // The hub gave the level up while it warmed up.
                    self.left(shared);
                }
                if self.attempt.as_ref().is_some_and(JoinHandle::is_finished) {
                    let outcome = self.attempt.take().map_or(Err("no try".into()), |attempt| {
                        attempt
                            .join()
                            .unwrap_or_else(|_| Err("the try panicked".into()))
                    });
                    match outcome {
                        Ok((registration, _, _)) if held => self.stale = Some(registration),
                        Ok((registration, feed, hub_thread)) => {
                            self.warm_up(shared, next_job, registration, feed, hub_thread);
                        }
                        Err(reason) => {
                            if let Ok(mut not_back) = shared.gpu_not_back.lock() {
                                *not_back = Some(reason);
                            }
                            self.failed(shared);
                        }
                    }
                } else if self.attempt.is_none()
                    && !held
                    && self.next_try.is_some_and(|at| Instant::now() >= at)
                {
                    self.next_try = None;
                    self.attempt = self.start_try(shared);
                    if self.attempt.is_none() {
                        self.failed(shared);
                    }
                }
                false
            }
            _ => false,
        }
    }

    /// Starts a try on a thread of its own.
    fn start_try(&mut self, shared: &Arc<Shared>) -> Option<JoinHandle<ReturnTry>> {
        // A level that started on the CPU gets its history now (the worker keeps it from the
        // next job on; the GPU warms up on it).
        shared.history.get_or_init(|| {
            let len = shared.history_chunks * shared.num_inputs * shared.partition_size;
            (0..len).map(|_| UnsafeCell::new(0.0f32)).collect()
        });
        let home = self.home.clone();
        let source = self.source.clone();
        let stale = self.stale.take();
        let shared = Arc::clone(shared);
        let standby = std::thread::current();
        std::thread::Builder::new()
            .name("longtail-gpu-return".into())
            .spawn(move || {
                drop(stale);
                let hub = longtail_gpu::shared(home.options).map_err(|err| err.to_string())?;
                let health = hub.health().map_err(|err| err.to_string())?;
                if !(home.fits)(&health) {
                    return Err(format!(
                        "the round trip is still too long (p99.9 {:.0} us)",
                        health.p999_us
                    ));
                }
                let feed = Arc::new(GpuFeed::new(shared, Some(standby)));
                let registration = hub
                    .register(&source.spec(), Arc::clone(&feed) as Arc<dyn Feed>)
                    .map_err(|err| err.to_string())?;
                Ok((registration, feed, hub.thread().clone()))
            })
            .ok()
    }

    /// A try got a place: the hub warms up on the history from job `next_job` on while the
    /// worker keeps running the level.
    fn warm_up(
        &mut self,
        shared: &Shared,
        next_job: u64,
        registration: Registration,
        feed: Arc<GpuFeed>,
        hub_thread: Thread,
    ) {
        // The same hub keeps its entry; a new one (after a lost device) takes the next.
        if shared.hub_thread().map(Thread::id) != Some(hub_thread.id()) {
            let Some(slot) = shared.hub_wakers.get(self.next_waker) else {
                // Every entry used: this level has seen enough devices come and go.
                self.stale = Some(registration);
                self.failures = u32::MAX;
                self.next_try = None;
                return;
            };
            let _ = slot.set(hub_thread);
            shared.hub_waker.store(self.next_waker, Ordering::Release);
            self.next_waker += 1;
        }
        shared.shadow_from.store(next_job, Ordering::Relaxed);
        shared.handover_job.store(
            next_job + self.source.num_partitions() as u64 + 1,
            Ordering::Relaxed,
        );
        shared.executor.store(RETURNING, Ordering::SeqCst);
        // Paired with `GpuFeed::fail`: either it sees RETURNING, or this sees its flag.
        if feed.failed.load(Ordering::SeqCst) {
            let _ = shared.executor.compare_exchange(
                RETURNING,
                ON_CPU,
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
        self.place = Some((registration, feed));
    }
}

impl Drop for Returns {
    fn drop(&mut self) {
        // A try in flight finishes first (its place is then dropped with it).
        if let Some(attempt) = self.attempt.take() {
            let _ = attempt.join();
        }
    }
}
