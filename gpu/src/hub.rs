//! One GPU service per process: one device, one thread, every instance's levels in one batch.
//!
//! Engines register each GPU level with a [`Feed`], their side of the job protocol. The hub's
//! thread wakes when a feed's owner unparks it ([`Hub::thread`], a futex wake that never
//! blocks) or every [`IDLE_POLL`], takes the next ready chunk of every level (at most one per
//! level per period), runs them all in one [`Convolver::execute`], and hands each result back.
//! Registering and unregistering take the hub's lock between periods, so levels come and go
//! while the others keep running.
//!
//! # Priority
//!
//! The hub's deadlines are those of the levels it serves, so its thread should run at real-time
//! priority as the CPU workers do; but scheduling is the embedder's business (the plugin has
//! its own rules for its threads, and this crate knows nothing of them). [`set_thread_start`]
//! gives the hub a function its thread runs first, before any period: the plugin's raises the
//! thread as it raises a worker. The function says whether the thread now runs at real-time
//! priority ([`HubStats::realtime`]); where the OS refuses (no permission, as in CI), the hub
//! runs at the default policy and serves all the same. The setting is process-wide, like the
//! hub: whoever opens or reopens the hub ([`shared`], [`Hub::open`]), its thread starts the
//! same way.
//!
//! # Waiting
//!
//! A period blocks in the driver until the GPU is done. Some drivers' blocking waits spin a CPU
//! core for the whole round trip; each period's wait is timed in wall and CPU time
//! ([`mod@crate::period_stats`]), and once the last [`HEALTH_WINDOW`] waits burnt at least
//! [`SPINNING_WAIT`] of their time, the hub naps instead, polling between sleeps of
//! [`crate::convolver::NAP`] ([`Convolver::set_napping`]).
//!
//! # Failure
//!
//! A period that fails (a device error, a lost device, no answer within the convolver's
//! timeout) breaks the hub: every feed is told ([`Feed::fail`]) and their levels move to their
//! CPU standbys; new registrations are refused, and [`shared`] opens a fresh device once every
//! engine has let go of the broken one. A level that asks to leave ([`Feed::wants_to_leave`]:
//! its results keep coming late, or the GPU is too hot) is failed over the same way, alone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use crate::convolver::{ChunkStart, Convolver, LevelId, LevelSpec};
pub use crate::period_stats::RoundTrip;
use crate::period_stats::{Period, PeriodLog, PeriodStats, thread_cpu_us};
use crate::{AdapterSummary, GpuError, OpenOptions};

/// How often an idle hub looks for work it was not woken for.
pub const IDLE_POLL: Duration = Duration::from_millis(2);
/// The name of the hub's thread.
pub const THREAD_NAME: &str = "longtail-gpu";
/// Round trips kept for the percentiles.
const ROUND_TRIPS_KEPT: usize = 4096;
/// After a failed open, how long [`shared`] answers with the same error before trying again.
const REOPEN_AFTER: Duration = Duration::from_secs(30);

/// The engine's side of one GPU level. Every method is called on the hub's thread.
pub trait Feed: Send + Sync {
    /// If the level's next chunk is ready, copies it into `inputs` (`P` samples per input
    /// channel) and says how it follows the previous one.
    fn take(&self, inputs: &mut [f32]) -> Option<ChunkStart>;
    /// The result of the chunk taken last: `P` samples per output channel.
    fn finish(&self, outputs: &[f32]);
    /// Whether the level wants to leave the GPU, and why (its results keep coming late, the
    /// GPU is too hot): the reason its [`Feed::fail`] is then given.
    fn wants_to_leave(&self) -> Option<&'static str>;
    /// The GPU no longer serves this level, for `reason`; no other call follows. The chunks
    /// taken but not finished are the standby's to compute.
    fn fail(&self, reason: &str);
}

/// Measured when the hub opens, with three reference batches of `P` = 4096: a light one (true
/// stereo, 4 partitions: 16 path-partitions, 4 transforms) for the round trip, a heavy one
/// (4 x 4 paths of 16 partitions: 256 path-partitions, 8 transforms) and a wide one (8 x 8
/// paths of 1 partition: 64 path-partitions, 16 transforms). Their medians, less a fixed
/// overhead, give the marginal cost of one path-partition and of one transform apart, the
/// figures Auto compares with the CPU's (a dense 16 x 16 level has 32 transforms for 256
/// paths, a true-stereo one 4 for 4).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Calibration {
    /// Partition size of the reference batches.
    pub partition_size: usize,
    /// Paths in the light batch.
    pub paths: usize,
    /// The light batch's round trip.
    pub round_trip: RoundTrip,
    /// The heavy batch's round trip.
    pub heavy_round_trip: RoundTrip,
    /// The wide batch's round trip (many transforms, few path-partitions).
    pub wide_round_trip: RoundTrip,
    /// Marginal GPU time of one path-partition of `partition_size` (its spectral MAC), in
    /// nanoseconds, the transforms counted apart ([`Calibration::transform_cost_ns`]): solved
    /// from the three batches' medians. Never below 1 ns (a GPU so fast the difference drowns
    /// in noise still counts as fast).
    pub partition_cost_ns: f64,
    /// Marginal GPU time of one transform (an input's forward or an output's inverse FFT of
    /// `2 x partition_size`), in nanoseconds, solved with [`Calibration::partition_cost_ns`].
    /// Never below 1 ns.
    pub transform_cost_ns: f64,
}

/// The light calibration batch: paths (inputs x outputs) and partitions.
const LIGHT_BATCH: (usize, usize, usize) = (2, 2, 4);
/// The heavy one.
const HEAVY_BATCH: (usize, usize, usize) = (4, 4, 16);
/// The wide one: transforms over MACs.
const WIDE_BATCH: (usize, usize, usize) = (8, 8, 1);
/// Partition size of both.
const CALIBRATION_PARTITION: usize = 4096;
/// Round trips of the last periods a health check looks at, and the waits the hub looks at to
/// tell a spinning driver.
const HEALTH_WINDOW: usize = 64;
/// CPU share of the waits above which the driver counts as spinning, and the hub naps
/// ([`Convolver::set_napping`]): a sleeping wait costs a few percent of its time.
const SPINNING_WAIT: f64 = 0.5;

/// What the hub is doing, for status displays.
#[derive(Debug, Clone, PartialEq)]
pub struct HubStats {
    /// The adapter.
    pub adapter: AdapterSummary,
    /// Levels registered now.
    pub levels: usize,
    /// Periods run.
    pub periods: u64,
    /// Round trips of the recent periods.
    pub round_trip: RoundTrip,
    /// The same periods, their phases apart and grouped by the largest partition in the batch.
    pub periods_detail: PeriodStats,
    /// Why the hub stopped serving, if it did.
    pub broken: Option<String>,
    /// Levels that left for their CPU standby.
    pub levels_failed_over: u64,
    /// Whether the hub's thread runs at real-time priority, as its [`ThreadStart`] said;
    /// `None` where none was set.
    pub realtime: Option<bool>,
    /// CPU seconds the hub's thread has used so far, as of its last period or idle wake-up
    /// (`None` without a thread CPU clock): the hub's own share of the process's CPU, apart
    /// from the driver's threads.
    pub thread_cpu_s: Option<f64>,
}

struct Registered {
    key: u64,
    id: LevelId,
    feed: Arc<dyn Feed>,
    /// `num_inputs * P`: the feed's chunk before it is staged.
    scratch: Vec<f32>,
    taken: bool,
}

struct State {
    convolver: Convolver,
    levels: Vec<Registered>,
    next_key: u64,
    broken: Option<String>,
    periods: PeriodLog,
    /// Test hook: extra time each period takes.
    delay: Duration,
}

struct Inner {
    state: Mutex<State>,
    stop: AtomicBool,
    periods: AtomicU64,
    failed_over: AtomicU64,
    /// The hub thread's CPU time in microseconds ([`HubStats::thread_cpu_s`]); `u64::MAX`
    /// without a clock.
    thread_cpu_us: AtomicU64,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The process's GPU service. Get it with [`shared`].
pub struct Hub {
    inner: Arc<Inner>,
    thread: Thread,
    join: Option<JoinHandle<()>>,
    adapter: AdapterSummary,
    calibration: Calibration,
    realtime: Option<bool>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("adapter", &self.adapter)
            .finish()
    }
}

/// A level's place on the hub; dropping it unregisters the level (off the audio thread).
pub struct Registration {
    hub: Arc<Hub>,
    key: u64,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .finish()
    }
}

impl Registration {
    /// The hub this level runs on.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut state = self.hub.inner.lock();
        if let Some(idx) = state.levels.iter().position(|r| r.key == self.key) {
            let registered = state.levels.swap_remove(idx);
            state.convolver.unregister(registered.id);
        }
    }
}

/// What a hub's thread runs first, before its first period (see [`set_thread_start`]), given
/// the hub's adapter: the embedder raises the thread's priority there (or not, for a CPU
/// adapter whose work runs on ordinary threads). Returns whether the thread now runs at
/// real-time priority; `false` (the OS refused, or the embedder chose not to) leaves the hub at
/// the default policy, which works, only with less margin on a busy machine.
pub type ThreadStart = fn(&AdapterSummary) -> bool;

static THREAD_START: Mutex<Option<ThreadStart>> = Mutex::new(None);

/// Sets what the thread of every hub opened from now on runs first ([`ThreadStart`]), or with
/// `None` nothing (the default scheduling policy, as before any call). Process-wide, as the
/// hub is; a hub already running keeps the priority it has. Call it before the first hub opens
/// ([`shared`] and [`Hub::open`] read it).
pub fn set_thread_start(hook: Option<ThreadStart>) {
    *THREAD_START.lock().unwrap_or_else(|p| p.into_inner()) = hook;
}

static SHARED: Mutex<Weak<Hub>> = Mutex::new(Weak::new());
static LAST_FAILURE: Mutex<Option<(Instant, OpenOptions, GpuError)>> = Mutex::new(None);

/// The process's hub: the running one, or a new one on the preferred adapter (opening the
/// device, building the pipelines and calibrating take a moment: call off the audio thread).
/// A failed open is remembered for `REOPEN_AFTER`; a broken hub is replaced once nobody
/// holds it.
pub fn shared(options: OpenOptions) -> Result<Arc<Hub>, GpuError> {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(hub) = shared.upgrade()
        && hub.broken().is_none()
    {
        return Ok(hub);
    }
    {
        let failure = LAST_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((when, tried, error)) = &*failure
            && *tried == options
            && when.elapsed() < REOPEN_AFTER
        {
            return Err(error.clone());
        }
    }
    match Hub::open(options) {
        Ok(hub) => {
            let hub = Arc::new(hub);
            *shared = Arc::downgrade(&hub);
            Ok(hub)
        }
        Err(error) => {
            *LAST_FAILURE.lock().unwrap_or_else(|p| p.into_inner()) =
                Some((Instant::now(), options, error.clone()));
            Err(error)
        }
    }
}

impl Hub {
    /// Opens a hub of its own (tests; engines use [`shared`]). Its thread runs the
    /// [`ThreadStart`] set with [`set_thread_start`] before this returns.
    pub fn open(options: OpenOptions) -> Result<Self, GpuError> {
        let mut convolver = Convolver::open(options)?;
        let adapter = convolver.adapter().clone();
        let calibration = calibrate(&mut convolver)?;
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                convolver,
                levels: Vec::new(),
                next_key: 0,
                broken: None,
                periods: PeriodLog::new(ROUND_TRIPS_KEPT),
                delay: Duration::ZERO,
            }),
            stop: AtomicBool::new(false),
            periods: AtomicU64::new(0),
            failed_over: AtomicU64::new(0),
            thread_cpu_us: AtomicU64::new(u64::MAX),
        });
        let thread_inner = Arc::clone(&inner);
        let thread_start = *THREAD_START.lock().unwrap_or_else(|p| p.into_inner());
        let thread_adapter = adapter.clone();
        let (started_tx, started_rx) = std::sync::mpsc::sync_channel(1);
        let join = std::thread::Builder::new()
            .name(THREAD_NAME.into())
            .spawn(move || {
                // A hook that panics leaves the thread as it was: the hub serves all the same.
                let realtime = thread_start.map(|hook| {
                    std::panic::catch_unwind(|| hook(&thread_adapter)).unwrap_or(false)
                });
                let _ = started_tx.send(realtime);
                hub_main(&thread_inner);
            })
            .map_err(|err| GpuError::Device(format!("cannot start the GPU thread: {err}")))?;
        // The thread answers at once (the hook is a system call or two); it can only fail to
        // if it died, and then its priority does not matter.
        let realtime = started_rx.recv().unwrap_or(None);
        Ok(Self {
            inner,
            thread: join.thread().clone(),
            join: Some(join),
            adapter,
            calibration,
            realtime,
        })
    }

    /// The adapter.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    /// What was measured when the hub opened.
    pub fn calibration(&self) -> Calibration {
        self.calibration
    }

    /// The hub's thread, for waking it (`unpark` never blocks).
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Why the hub stopped serving, if it did.
    pub fn broken(&self) -> Option<String> {
        self.inner.lock().broken.clone()
    }

    /// Registers a level: uploads its IR spectra; `feed` is polled from the next period on.
    pub fn register(
        self: &Arc<Self>,
        spec: &LevelSpec,
        feed: Arc<dyn Feed>,
    ) -> Result<Registration, GpuError> {
        let mut state = self.inner.lock();
        if let Some(reason) = &state.broken {
            return Err(GpuError::Device(reason.clone()));
        }
        let id = state.convolver.register(spec)?;
        let key = state.next_key;
        state.next_key += 1;
        state.levels.push(Registered {
            key,
            id,
            feed,
            scratch: vec![0.0; spec.num_inputs * spec.partition_size],
            taken: false,
        });
        Ok(Registration {
            hub: Arc::clone(self),
            key,
        })
    }

    /// Counters and round trips so far.
    pub fn stats(&self) -> HubStats {
        // The log is copied out and summed up outside the lock: the editor asks every frame,
        // and the hub's thread waits for the lock between periods.
        let (levels, log, broken) = {
            let state = self.inner.lock();
            (
                state.levels.len(),
                state.periods.clone(),
                state.broken.clone(),
            )
        };
        HubStats {
            adapter: self.adapter.clone(),
            levels,
            periods: self.inner.periods.load(Ordering::Relaxed),
            round_trip: RoundTrip::of(&log.round_trips()),
            periods_detail: log.stats(),
            broken,
            levels_failed_over: self.inner.failed_over.load(Ordering::Relaxed),
            realtime: self.realtime,
            thread_cpu_s: match self.inner.thread_cpu_us.load(Ordering::Relaxed) {
                u64::MAX => None,
                us => Some(us as f64 * 1e-6),
            },
        }
    }

    /// Whether the hub can serve now, and how fast: the round trips of its last
    /// `HEALTH_WINDOW` periods, or, when no level is registered (nothing has run lately, or
    /// what ran was what failed), a fresh measurement of the light calibration batch (2
    /// periods to warm up, 16 measured). Takes the hub's lock: call off the audio thread,
    /// where waiting a period is fine.
    pub fn health(&self) -> Result<RoundTrip, GpuError> {
        let mut state = self.inner.lock();
        if let Some(reason) = &state.broken {
            return Err(GpuError::Device(reason.clone()));
        }
        if state.levels.is_empty() || state.periods.is_empty() {
            let delay = state.delay;
            let mut round_trip = measure(&mut state.convolver, LIGHT_BATCH, 2, 16)?;
            // The injected delay counts, as it does for the levels' periods.
            let delay_us = delay.as_secs_f64() * 1e6;
            round_trip.p50_us += delay_us;
            round_trip.p99_us += delay_us;
            round_trip.p999_us += delay_us;
            round_trip.max_us += delay_us;
            return Ok(round_trip);
        }
        let recent = state.periods.newest_round_trips(HEALTH_WINDOW);
        Ok(RoundTrip::of(&recent))
    }

    /// Test hook: every period takes `delay` longer (a slow or overloaded GPU).
    #[doc(hidden)]
    pub fn inject_delay(&self, delay: Duration) {
        self.inner.lock().delay = delay;
    }

    /// Test hook: the device is lost (destroyed) before the next period.
    #[doc(hidden)]
    pub fn inject_device_loss(&self) {
        self.inner.lock().convolver.lose_device();
        self.thread.unpark();
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Release);
        if let Some(join) = self.join.take() {
            join.thread().unpark();
            let _ = join.join();
        }
    }
}

fn hub_main(inner: &Inner) {
    loop {
        let cpu_us = thread_cpu_us().map_or(u64::MAX, |us| us as u64);
        inner.thread_cpu_us.store(cpu_us, Ordering::Relaxed);
        if inner.stop.load(Ordering::Acquire) {
            return;
        }
        let mut guard = inner.lock();
        let state = &mut *guard;
        if state.broken.is_some() {
            drop(guard);
            std::thread::park_timeout(IDLE_POLL * 50);
            continue;
        }
        // Levels that ask to leave go to their CPU standby.
        let mut idx = 0;
        while idx < state.levels.len() {
            if let Some(reason) = state.levels[idx].feed.wants_to_leave() {
                let registered = state.levels.swap_remove(idx);
                state.convolver.unregister(registered.id);
                registered.feed.fail(reason);
                inner.failed_over.fetch_add(1, Ordering::Relaxed);
            } else {
                idx += 1;
            }
        }
        let mut any = false;
        for registered in &mut state.levels {
            registered.taken = false;
            if let Some(start) = registered.feed.take(&mut registered.scratch) {
                state
                    .convolver
                    .stage(registered.id, start)
                    .copy_from_slice(&registered.scratch);
                registered.taken = true;
                any = true;
            }
        }
        if !any {
            drop(guard);
            std::thread::park_timeout(IDLE_POLL);
            continue;
        }
        let started = Instant::now();
        let result = state.convolver.execute();
        if !state.delay.is_zero() {
            std::thread::sleep(state.delay);
        }
        let round_trip_us = started.elapsed().as_secs_f64() * 1e6;
        match result {
            Ok(()) => {
                for registered in state.levels.iter().filter(|r| r.taken) {
                    registered
                        .feed
                        .finish(state.convolver.output(registered.id));
                }
                state.periods.push(Period {
                    round_trip_us,
                    phases: state.convolver.phases(),
                });
                // A driver whose wait spins costs a CPU core for as long as the GPU works:
                // nap between polls instead, from then on.
                if !state.convolver.napping()
                    && state.periods.len() >= HEALTH_WINDOW
                    && (state.periods.newest_wait_cpu_share(HEALTH_WINDOW))
                        .is_some_and(|share| share >= SPINNING_WAIT)
                {
                    state.convolver.set_napping(true);
                }
                inner.periods.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                let reason = format!("the GPU failed: {error}");
                for registered in state.levels.drain(..) {
                    registered.feed.fail(&reason);
                    inner.failed_over.fetch_add(1, Ordering::Relaxed);
                }
                state.broken = Some(reason);
            }
        }
        state.convolver.finish_period();
    }
}

/// A batch of random spectra and input: `num_inputs x num_outputs` paths of `num_partitions`
/// partitions of [`CALIBRATION_PARTITION`].
fn reference_spec(batch: (usize, usize, usize), random: &mut impl FnMut() -> f32) -> LevelSpec {
    random_spec(CALIBRATION_PARTITION, batch, random)
}

/// `num_inputs x num_outputs` paths of `num_partitions` random partitions of `p`.
fn random_spec(
    p: usize,
    (num_inputs, num_outputs, num_partitions): (usize, usize, usize),
    random: &mut impl FnMut() -> f32,
) -> LevelSpec {
    let paths: Vec<(usize, usize)> = (0..num_inputs)
        .flat_map(|input| (0..num_outputs).map(move |output| (input, output)))
        .collect();
    let spectra = paths
        .iter()
        .map(|_| {
            (0..num_partitions * (p + 1))
                .map(|_| [random(), random()])
                .collect()
        })
        .collect();
    LevelSpec {
        partition_size: p,
        num_partitions,
        num_inputs,
        num_outputs,
        paths,
        spectra,
    }
}

fn lcg(mut seed: u32) -> impl FnMut() -> f32 {
    move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    }
}

/// Runs `batch` for `warm_up` periods, then measures `measured` round trips.
fn measure(
    convolver: &mut Convolver,
    batch: (usize, usize, usize),
    warm_up: usize,
    measured: usize,
) -> Result<RoundTrip, GpuError> {
    let mut random = lcg(1);
    let spec = reference_spec(batch, &mut random);
    let id = convolver.register(&spec)?;
    let mut round_trips = Vec::with_capacity(measured);
    let mut outcome = Ok(());
    for period in 0..warm_up + measured {
        convolver
            .stage(id, ChunkStart::default())
            .iter_mut()
            .for_each(|s| *s = random());
        let started = Instant::now();
        outcome = convolver.execute();
        convolver.finish_period();
        if outcome.is_err() {
            break;
        }
        if period >= warm_up {
            round_trips.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    convolver.unregister(id);
    outcome?;
    Ok(RoundTrip::of(&round_trips))
}

/// The shape of a benchmark batch ([`bench_round_trip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchBatch {
    /// Levels (instances) in the batch.
    pub levels: usize,
    /// Inputs and outputs of each level: `inputs x outputs` paths.
    pub inputs: usize,
    pub outputs: usize,
    /// Partition size `P`.
    pub partition_size: usize,
    /// Partitions per path.
    pub partitions: usize,
}

/// What [`bench_round_trip`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// The adapter.
    pub adapter: AdapterSummary,
    /// The tiled kernels' tile, or `None` for the radix-2 kernels.
    pub tile: Option<u32>,
    /// Compute dispatches per period.
    pub dispatches_per_period: usize,
    /// Round trip of a period: upload, dispatches, readback, as the hub sees it.
    pub round_trip: RoundTrip,
    /// A period's time on the GPU from timestamp queries, where the adapter has them.
    pub gpu_period: Option<RoundTrip>,
}

/// Opens a device of its own and measures the round trip of one period in which every level of
/// `batch` has a chunk (random IR and input): `warm_up` periods, then `periods` measured, with
/// the dispatches per period and, where the adapter has timestamp queries, the period's time on
/// the GPU. The figure behind "64 paths of P = 8192 within 1 ms" (`longtail-cli bench-gpu`).
pub fn bench_round_trip(
    options: OpenOptions,
    batch: BenchBatch,
    warm_up: usize,
    periods: usize,
) -> Result<BenchReport, GpuError> {
    let mut convolver = Convolver::open(options)?;
    let adapter = convolver.adapter().clone();
    let timed = convolver.enable_timing();
    let mut gpu_periods = Vec::with_capacity(if timed { periods } else { 0 });
    let mut random = lcg(3);
    let shape = (batch.inputs, batch.outputs, batch.partitions);
    let ids = (0..batch.levels)
        .map(|_| convolver.register(&random_spec(batch.partition_size, shape, &mut random)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut round_trips = Vec::with_capacity(periods);
    for period in 0..warm_up + periods {
        for &id in &ids {
            convolver
                .stage(id, ChunkStart::default())
                .iter_mut()
                .for_each(|s| *s = random());
        }
        let started = Instant::now();
        let outcome = convolver.execute();
        convolver.finish_period();
        outcome?;
        if period >= warm_up {
            round_trips.push(started.elapsed().as_secs_f64() * 1e6);
            gpu_periods.extend(convolver.gpu_period_us());
        }
    }
    Ok(BenchReport {
        adapter,
        tile: convolver.tile(),
        dispatches_per_period: convolver.dispatches(),
        round_trip: RoundTrip::of(&round_trips),
        gpu_period: (!gpu_periods.is_empty()).then(|| RoundTrip::of(&gpu_periods)),
    })
}

/// Warm-up and measurement with the reference batches (see [`Calibration`]): the light one 8
/// periods to warm up and 48 measured, the heavy one 4 and 16.
fn calibrate(convolver: &mut Convolver) -> Result<Calibration, GpuError> {
    let round_trip = measure(convolver, LIGHT_BATCH, 8, 48)?;
    let heavy_round_trip = measure(convolver, HEAVY_BATCH, 4, 16)?;
    let wide_round_trip = measure(convolver, WIDE_BATCH, 4, 16)?;
    let (transform_cost_ns, partition_cost_ns) = solve_costs(
        round_trip.p50_us,
        heavy_round_trip.p50_us,
        wide_round_trip.p50_us,
    );
    Ok(Calibration {
        partition_size: CALIBRATION_PARTITION,
        paths: LIGHT_BATCH.0 * LIGHT_BATCH.1,
        round_trip,
        heavy_round_trip,
        wide_round_trip,
        partition_cost_ns,
        transform_cost_ns,
    })
}

/// `(transform, path-partition)` costs in nanoseconds from the light, heavy and wide batches'
/// medians in microseconds: each is a fixed overhead plus its transforms and path-partitions,
/// three equations for three unknowns. Each cost is at least 1 ns.
fn solve_costs(light_us: f64, heavy_us: f64, wide_us: f64) -> (f64, f64) {
    let count = |(i, o, n): (usize, usize, usize)| ((i + o) as f64, (i * o * n) as f64);
    let (t_light, m_light) = count(LIGHT_BATCH);
    let (t_heavy, m_heavy) = count(HEAVY_BATCH);
    let (t_wide, m_wide) = count(WIDE_BATCH);
    // Differences from the light batch remove the overhead: two equations in T and M.
    let (a1, b1, c1) = (
        t_heavy - t_light,
        m_heavy - m_light,
        (heavy_us - light_us) * 1e3,
    );
    let (a2, b2, c2) = (
        t_wide - t_light,
        m_wide - m_light,
        (wide_us - light_us) * 1e3,
    );
    let det = a1 * b2 - a2 * b1;
    let transform = (c1 * b2 - c2 * b1) / det;
    let mac = (a1 * c2 - a2 * c1) / det;
    (transform.max(1.0), mac.max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_batches_give_the_transform_and_the_mac_apart() {
        // 50 us of overhead, 3 us a transform, 0.2 us a path-partition.
        let time = |(i, o, n): (usize, usize, usize)| {
            50.0 + 3.0 * (i + o) as f64 + 0.2 * (i * o * n) as f64
        };
        let (transform, mac) = solve_costs(time(LIGHT_BATCH), time(HEAVY_BATCH), time(WIDE_BATCH));
        assert!((transform - 3000.0).abs() < 1e-6, "{transform}");
        assert!((mac - 200.0).abs() < 1e-6, "{mac}");
        // Noise that would make one negative leaves it at 1 ns.
        assert_eq!(solve_costs(100.0, 100.0, 100.0), (1.0, 1.0));
    }
}
