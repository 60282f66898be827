//! The CPU tail executor: one background thread per level, fed through preallocated job slots.
//!
//! # Threads and allocation
//!
//! [`WorkerLevel::spawn`] (off the audio thread) allocates every slot and starts the thread,
//! which owns the level's [`UpolsLevel`]. On the audio thread, [`WorkerLevel::feed`],
//! [`WorkerLevel::submit`] and [`WorkerLevel::collect`] only copy samples (a quantum at a time)
//! and touch atomics, and call `Thread::unpark` (a futex wake that never blocks) only when the
//! worker asked for it; they never allocate, lock or wait in real-time mode. Dropping a
//! `WorkerLevel` stops and joins its thread, so engines are dropped off the audio thread.
//!
//! # Waking
//!
//! Waking a sleeping thread costs the waker a system call and, when the thread sleeps on an
//! idle core, an inter-processor interrupt: 20 us on average on the 2-core VMs we measure on,
//! paid on the audio thread at every chunk of the smallest worker level. So an idle worker
//! wakes itself instead: chunks arrive every `P` samples of host time, and the audio thread
//! stamps each one with the time it handed it over (one clock read, through the vDSO), so the
//! worker learns the interval from exact arrival times however late it looked: a timer that
//! fires late (a virtual machine's often do, by 0.1 ms or more) or a backlog does not blur
//! them. It sleeps on a timer until shortly before the next chunk is due ([`WAKE_EARLY`]) and
//! then checks every [`POLL_INTERVAL`]. Only when no chunk has come [`WAKE_WINDOW`] after its
//! expected time (a host that stopped, or calls irregularly) does it raise `needs_wake`, sleep
//! until the audio thread wakes it, as before, and learn the interval afresh. Offline mode
//! always wakes the worker (the audio thread waits for it anyway) and leaves its chunks
//! unstamped, so an offline pace never becomes the worker's timing. The bench reports the
//! wakes the audio thread made (`wakes_per_s`).
//!
//! # Protocol
//!
//! Jobs are numbered. The audio thread gathers job `j`'s input chunk (`P` samples of every
//! input) into slot `j % num_slots` a quantum at a time as it arrives, then stores the chunk's
//! end time and publishes `submitted = j + 1` (release). The worker keeps the previous chunk itself to form the `2P`
//! overlap-save window, runs the level, writes `P` output samples per output channel into the
//! same slot, and publishes `completed = j + 1` (release). The audio thread reads the result
//! after seeing `completed > j` (acquire), a quantum at a time as it falls due (so a big level's
//! result costs each callback a little instead of one callback a lot), and publishes
//! `consumed = j + 1` once all of it is in the output rings. A slot is reused for job
//! `j + num_slots` only when job `j` is both completed and consumed, so neither side ever
//! touches a slot the other may be using. A level has room for the chunks its slack keeps in
//! flight plus two ([`num_slots`]).
//!
//! # On the GPU
//!
//! [`WorkerLevel::spawn_gpu`] registers the level with the process's GPU hub
//! ([`longtail_gpu::hub`]) instead: the hub's thread takes the level's chunks through the same
//! slots ([`GpuFeed`], its [`Feed`]), computes them in its batch and publishes them as a worker
//! would, so the audio thread's side is unchanged (it wakes the hub's thread instead of the
//! worker's). The level's worker thread is started too, as a warm standby: it sleeps until the
//! hub gives the level up (the device failed, or [`DEGRADED_AFTER_LATES`] lates in a row), then
//! rebuilds the level's delay lines from the last `n + 1` chunks the hub took (kept for it off
//! the audio thread), and carries on with the next job as a CPU worker. Results that come late
//! meanwhile follow the late policy below (faded in), so the move is a short crossfade, not a
//! gap in the tail.
//!
//! # Moving back
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
//! # Late policy
//!
//! A result is due when the audio thread is about to play its first sample, `D - P` samples
//! after its input chunk completed (the level's slack).
//!
//! - Real-time mode never waits. A result that is not complete when due is *late*: it is
//!   counted once ([`LevelStats::late_results`]), and when it arrives only the samples that
//!   are still in the future are used, faded in over [`LATE_FADE_SAMPLES`]; the part of the
//!   slot that has already played stays silent for this level.
//! - When every slot is still busy at a chunk boundary the chunk cannot be handed over; it is
//!   counted as dropped ([`LevelStats::dropped_chunks`]) and the worker feeds silence into its
//!   delay line in its place, so the level keeps its timing and recovers by itself.
//! - [`LevelStats::consecutive_lates`] counts lates in a row; at [`DEGRADED_AFTER_LATES`]
//!   the level raises its degraded flag (for the editor) until a result is on time again.
//! - Offline mode (`ProcessMode::Offline`, `longtail-cli render`) waits for every result, so
//!   bounces are deterministic and identical to real-time output when nothing was late.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use longtail_gpu::{ChunkStart, Feed, Hub, OpenOptions, Registration, RoundTrip};

use super::rings::{InputRing, OutputRing};
use super::routing::MAX_CHANNELS;
use super::upols::{GpuSpecSource, UpolsLevel};

/// Fewest job slots of a level.
pub const MIN_SLOTS: usize = 4;

/// Job slots of a level with partition size `P` and `slack_samples` of slack: the results a
/// slack holds back (due or playing), the chunk just handed over, the chunk being gathered and
/// one late result, so chunks are dropped only when the worker is more than a chunk behind.
pub fn num_slots(partition_size: usize, slack_samples: usize) -> usize {
    (slack_samples.div_ceil(partition_size.max(1)) + 3).max(MIN_SLOTS)
}
/// Fade-in of a late result's remaining samples.
pub const LATE_FADE_SAMPLES: usize = 64;
/// Consecutive lates after which a level reports itself degraded.
pub const DEGRADED_AFTER_LATES: u64 = 3;
/// How long an idle worker sleeps before it checks its stop flag again (it is normally woken
/// by `unpark` as soon as a job arrives).
const IDLE_TIMEOUT: Duration = Duration::from_millis(100);
/// A self-timed worker wakes this long before its next chunk is expected (see "Waking").
pub const WAKE_EARLY: Duration = Duration::from_micros(150);
/// Then checks for the chunk this often.
pub const POLL_INTERVAL: Duration = Duration::from_micros(100);
/// And gives up timing itself (asks to be woken) this long after the expected time, or a
/// quarter of the interval if that is shorter.
pub const WAKE_WINDOW: Duration = Duration::from_millis(2);

/// The hand-over time of a chunk submitted offline, when the worker is always woken.
const UNSTAMPED: u64 = u64::MAX;

/// A level that left the GPU first tries to go back this long after (see "Moving back").
pub const GPU_RETRY_AFTER: Duration = Duration::from_secs(5);
/// Longest wait between two tries.
pub const GPU_RETRY_MAX: Duration = Duration::from_secs(320);
/// Failures (departures for lates or faults, failed tries) after which a level stops trying
/// to go back and stays on the CPU.
pub const MAX_GPU_RETURNS: usize = 7;

/// Why a level left the GPU when the thermal policy held it off ([`LevelProbe::hold_gpu`]).
pub const HELD_REASON: &str = "the thermal policy moved it to the CPU (the GPU is hot)";

/// How a GPU level may go back after it left (see "Moving back").
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

/// Counters of one worker level, written by the audio thread, readable from any thread.
#[derive(Debug, Default)]
pub struct LevelStats {
    /// Results that were not complete when due.
    pub late_results: AtomicU64,
    /// Input chunks that could not be handed to the worker (all slots busy).
    pub dropped_chunks: AtomicU64,
    /// Lates in a row (reset by a result on time).
    pub consecutive_lates: AtomicU64,
    /// Set after [`DEGRADED_AFTER_LATES`] consecutive lates, cleared by a result on time.
    pub degraded: AtomicBool,
    /// Wall time the worker spent computing jobs, in nanoseconds (written by the worker).
    pub busy_ns: AtomicU64,
    /// Times the audio thread woke the worker in real-time mode: a system call each (see
    /// "Waking").
    pub wakes: AtomicU64,
}

/// Memory shared by the audio thread and one worker thread.
struct Shared {
    partition_size: usize,
    num_inputs: usize,
    num_outputs: usize,
    /// Job slots ([`num_slots`]).
    num_slots: usize,
    /// `num_slots` input chunks, `[slot][input][sample]`. Written by the audio thread for job
    /// `j` only while job `j - num_slots` is completed and consumed; read by the worker between
    /// seeing `submitted > j` and publishing `completed > j`.
    input_slots: Box<[UnsafeCell<f32>]>,
    /// `num_slots` results, `[slot][output][sample]`. Written by the worker for job `j`, read by
    /// the audio thread after `completed > j` and before it publishes `consumed > j`.
    output_slots: Box<[UnsafeCell<f32>]>,
    /// End time of each slot's input chunk (absolute samples), written with the chunk.
    chunk_ends: Box<[AtomicU64]>,
    /// Reset epoch of each slot's chunk: a chunk from a newer epoch makes the worker clear its
    /// level's history first (the audio thread called `reset()`).
    chunk_epochs: Box<[AtomicU64]>,
    /// When each slot's chunk was handed over, in nanoseconds since `created` ([`UNSTAMPED`]
    /// offline): the worker's chunk clock learns the host's timing from these (see "Waking").
    submit_times: Box<[AtomicU64]>,
    created: Instant,
    submitted: AtomicU64,
    completed: AtomicU64,
    /// Low 32 bits of `completed`, stored after it: the futex word an offline wait sleeps on.
    completed_seq: AtomicU32,
    /// Set while the audio thread sleeps on `completed_seq` (offline mode only), so the worker
    /// makes the wake system call only when someone waits.
    waiting: AtomicBool,
    /// Set while the worker sleeps until it is woken (not on its own timer), so the audio
    /// thread makes the wake system call only then (see "Waking").
    needs_wake: AtomicBool,
    consumed: AtomicU64,
    stop: AtomicBool,
    /// Test hook: while set, the worker does not start new jobs (a stalled executor).
    stalled: AtomicBool,
    stats: LevelStats,
    /// Who runs the jobs: [`ON_CPU`], [`ON_GPU`], [`MIGRATING`] (from the GPU to the CPU) or
    /// [`RETURNING`] (from the CPU back to the GPU).
    executor: AtomicU8,
    /// GPU levels: the last chunks, `[slot][input][sample]` with slot `job % history_chunks`.
    /// Written by the hub's thread while the level is on the GPU (read by the standby after it
    /// saw [`MIGRATING`], acquire), and by the worker while it runs the level (read by the hub
    /// while the level goes back, after `history_written`, acquire).
    /// Allocated with the level when it starts on the GPU, else by the worker before its first
    /// try to go there.
    history: OnceLock<Box<[UnsafeCell<f32>]>>,
    history_chunks: usize,
    /// The level started on the GPU (else it has a way there, or none).
    started_on_gpu: bool,
    /// End time and epoch of each history slot's chunk.
    history_ends: Box<[AtomicU64]>,
    history_epochs: Box<[AtomicU64]>,
    /// Jobs below this are in the history (stored by the worker after it wrote them).
    history_written: AtomicU64,
    /// Going back to the GPU: the first job the hub warms up on (from the history), and the
    /// first it serves (see "Moving back"). Stored before [`RETURNING`].
    shadow_from: AtomicU64,
    handover_job: AtomicU64,
    /// The hub threads this level has been on: the first hub's, then one per registration on
    /// the way back. `hub_waker` indexes the current one (stored before [`ON_GPU`]).
    hub_wakers: Box<[OnceLock<Thread>]>,
    hub_waker: AtomicUsize,
    /// Times the level went back to the GPU.
    gpu_returns: AtomicU64,
    /// Test hook: the first retry's wait in milliseconds instead of [`GPU_RETRY_AFTER`] (0).
    retry_after_ms: AtomicU64,
    /// Set by the thermal policy: the level leaves the GPU and does not try to go back until
    /// it is cleared (see [`LevelProbe::hold_gpu`]).
    gpu_held: AtomicBool,
    /// Why the level left the GPU (never touched by the audio thread).
    gpu_exit: Mutex<Option<String>>,
    /// Why the last try to go back failed.
    gpu_not_back: Mutex<Option<String>>,
}

/// The level runs on its worker thread.
const ON_CPU: u8 = 0;
/// The level runs on the GPU hub; the worker thread is its standby.
const ON_GPU: u8 = 1;
/// The hub gave the level up; the standby is rebuilding it.
const MIGRATING: u8 = 2;
/// The worker runs the level while the hub warms up to take it back.
const RETURNING: u8 = 3;

// SAFETY: the `UnsafeCell` slots are only accessed under the job protocol in the module docs:
// a slot has exactly one accessor at a time, handed over with release/acquire on the sequence
// counters. Everything else in `Shared` is atomic or immutable.
unsafe impl Sync for Shared {}

impl Shared {
    fn input_slot(&self, slot_idx: usize, input_idx: usize) -> *mut f32 {
        let offset = (slot_idx * self.num_inputs + input_idx) * self.partition_size;
        self.input_slots[offset].get()
    }

    fn output_slot(&self, slot_idx: usize, output_idx: usize) -> *mut f32 {
        let offset = (slot_idx * self.num_outputs + output_idx) * self.partition_size;
        self.output_slots[offset].get()
    }

    /// The thread of the hub the level is on (or was last on).
    fn hub_thread(&self) -> Option<&Thread> {
        self.hub_wakers
            .get(self.hub_waker.load(Ordering::Acquire))?
            .get()
    }

    fn history_chunk(&self, job: u64, input_idx: usize) -> *mut f32 {
        let slot_idx = (job % self.history_chunks as u64) as usize;
        let offset = (slot_idx * self.num_inputs + input_idx) * self.partition_size;
        // Present: the history is allocated before anyone reads or writes it (see `history`).
        self.history.get().expect("history allocated")[offset].get()
    }

    /// Job `job`'s result is in its output slot: publish it, and wake an offline wait. Worker
    /// or hub thread.
    fn publish_completed(&self, job: u64) {
        self.completed.store(job + 1, Ordering::Release);
        self.completed_seq.store((job + 1) as u32, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) {
            atomic_wait::wake_all(&self.completed_seq);
        }
    }
}

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
    /// Samples of job `consumed`'s result already added to the output rings.
    added: usize,
    /// A chunk is being gathered into slot `submitted` by [`Self::feed`].
    gathering: bool,
    /// Samples of that chunk in the slot.
    gathered: usize,
    /// The gathered chunk has its slot (else it will be dropped).
    slot_reserved: bool,
    /// Reset epoch, owned by the audio thread.
    epoch: u64,
    partition_size: usize,
    output_delay: usize,
}

impl WorkerLevel {
    /// Moves `level` onto a new worker thread (named `longtail-level-P`). `level_idx` orders
    /// the real-time priorities: smaller partitions have shorter deadlines and run at higher
    /// priority (rate-monotonic, as zita-convolver does). Allocates the slots; call off the
    /// audio thread.
    pub fn spawn(level: UpolsLevel, num_inputs: usize, level_idx: usize) -> std::io::Result<Self> {
        Self::spawn_on(level, num_inputs, level_idx, None, false)
    }

    /// Registers `level` with the GPU `hub`, its worker thread started as the standby (see
    /// "On the GPU"); once the level left, `home` says how it may go back ("Moving back").
    /// Allocates; call off the audio thread. When the hub refuses the level (memory, a broken
    /// device), the standby runs it from the start and [`Self::gpu_exit`] says why.
    pub fn spawn_gpu(
        level: UpolsLevel,
        num_inputs: usize,
        level_idx: usize,
        hub: &Arc<Hub>,
        home: GpuHome,
    ) -> std::io::Result<Self> {
        let source = level.gpu_spec_source(num_inputs);
        let spec = source.spec();
        let mut worker = Self::spawn_on(level, num_inputs, level_idx, Some((home, source)), true)?;
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
        LevelProbe {
            shared: Arc::downgrade(&self.shared),
            has_gpu_home: self.shared.history_chunks > 0,
        }
    }

    /// Starts `level` on its worker thread, held off the GPU ([`LevelProbe::hold_gpu`]) with
    /// `home` as its way there: the thermal policy lets it go when the CPU is hot and the GPU
    /// cool (see "Moving back"). Allocates; call off the audio thread.
    pub fn spawn_held(
        level: UpolsLevel,
        num_inputs: usize,
        level_idx: usize,
        home: GpuHome,
    ) -> std::io::Result<Self> {
        let source = level.gpu_spec_source(num_inputs);
        let worker = Self::spawn_on(level, num_inputs, level_idx, Some((home, source)), false)?;
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
        num_inputs: usize,
        level_idx: usize,
        home: Option<(GpuHome, GpuSpecSource)>,
        on_gpu: bool,
    ) -> std::io::Result<Self> {
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
            input_slots: cells(num_slots * num_inputs * partition_size),
            output_slots: cells(num_slots * num_outputs * partition_size),
            chunk_ends: atomics(num_slots),
            chunk_epochs: atomics(num_slots),
            submit_times: atomics(num_slots),
            created: Instant::now(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            completed_seq: AtomicU32::new(0),
            waiting: AtomicBool::new(false),
            needs_wake: AtomicBool::new(false),
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
        let thread = std::thread::Builder::new()
            .name(format!("longtail-level-{partition_size}"))
            .spawn(move || worker_main(level, thread_shared, level_idx, home))?;
        Ok(Self {
            shared,
            thread: Some(thread),
            registration: None,
            submitted: 0,
            consumed: 0,
            late_counted_up_to: 0,
            added: 0,
            gathering: false,
            gathered: 0,
            slot_reserved: false,
            epoch: 0,
            partition_size,
            output_delay,
        })
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

    /// Copies the quantum that ends at `time` (`quantum` samples, a divisor of `P`) from the
    /// input rings into the slot of the chunk being gathered, so a big level's chunk costs each
    /// callback a little instead of one callback a lot. The chunk's first quantum reserves the
    /// slot: when every slot is busy, real-time mode will drop the chunk and count it (see the
    /// late policy); offline mode (`wait`) waits for the worker and takes its finished results
    /// early. Audio thread; never allocates; waits only when `wait` is set.
    pub fn feed(
        &mut self,
        time: u64,
        quantum: usize,
        inputs: &[InputRing],
        outputs: &mut [OutputRing],
        wait: bool,
    ) {
        let start = time - quantum as u64;
        let offset = (start % self.partition_size as u64) as usize;
        if !self.gathering {
            // The chunk's first quantum, or the first after a reset in mid-chunk.
            self.gathering = true;
            self.slot_reserved = self.reserve_slot(time, outputs, wait);
        }
        if !self.slot_reserved {
            return;
        }
        let shared = &*self.shared;
        let slot_idx = (self.submitted % shared.num_slots as u64) as usize;
        for (input_idx, ring) in inputs.iter().enumerate().take(shared.num_inputs) {
            // SAFETY: job `submitted - num_slots` (the slot's previous user) is completed and
            // consumed (checked by `reserve_slot`), and the worker does not read this slot
            // before it sees the `submitted` store in `submit`, so the audio thread is the
            // slot's only accessor.
            let slot = unsafe {
                std::slice::from_raw_parts_mut(
                    shared.input_slot(slot_idx, input_idx),
                    self.partition_size,
                )
            };
            if self.gathered < offset {
                // Started in mid-chunk (after a reset): the history before it is silence.
                slot[self.gathered..offset].fill(0.0);
            }
            slot[offset..offset + quantum].copy_from_slice(ring.window(time, quantum));
        }
        self.gathered = offset + quantum;
    }

    /// Whether job `submitted` may use its slot now: its previous user is completed and
    /// consumed. Offline mode (`wait`) waits for it; real-time mode answers at once.
    fn reserve_slot(&mut self, now: u64, outputs: &mut [OutputRing], wait: bool) -> bool {
        loop {
            let completed = self.shared.completed.load(Ordering::Acquire);
            if self.submitted - completed.min(self.consumed) < self.shared.num_slots as u64 {
                return true;
            }
            if !wait {
                return false;
            }
            if completed >= self.submitted {
                // Only unconsumed results hold the slots (not expected: `num_slots` leaves
                // room for the slack): take them early rather than wait forever.
                self.collect(now, u64::MAX, outputs, false);
            } else {
                self.wake();
                wait_for_completion(&self.shared, completed);
            }
        }
    }

    /// Hands the chunk that ends at `chunk_end` (a multiple of `P`), gathered by [`Self::feed`],
    /// to the worker, or counts it as dropped when it had no slot. Audio thread; never
    /// allocates, locks or waits.
    pub fn submit(&mut self, chunk_end: u64, wait: bool) {
        let reserved = std::mem::take(&mut self.slot_reserved);
        self.gathering = false;
        self.gathered = 0;
        if !reserved {
            let stats = &self.shared.stats;
            stats.dropped_chunks.fetch_add(1, Ordering::Relaxed);
            // A dropped chunk is as bad as a late result for the degraded flag.
            let lates = stats.consecutive_lates.fetch_add(1, Ordering::Relaxed) + 1;
            if lates >= DEGRADED_AFTER_LATES {
                stats.degraded.store(true, Ordering::Relaxed);
            }
            return;
        }
        let shared = &*self.shared;
        let slot_idx = (self.submitted % shared.num_slots as u64) as usize;
        shared.chunk_ends[slot_idx].store(chunk_end, Ordering::Relaxed);
        shared.chunk_epochs[slot_idx].store(self.epoch, Ordering::Relaxed);
        // A clock read (the vDSO, no system call where the clock source allows), so the
        // worker knows when the chunk came however late it looks. Offline, the worker is woken
        // for every chunk and the times would teach it a pace that is not the host's.
        let stamp = if wait {
            UNSTAMPED
        } else {
            shared.created.elapsed().as_nanos() as u64
        };
        shared.submit_times[slot_idx].store(stamp, Ordering::Relaxed);
        self.submitted += 1;
        // SeqCst, paired with the worker's `needs_wake` store and `submitted` load: either the
        // worker sees this job before it sleeps, or this thread sees that it must wake it.
        shared.submitted.store(self.submitted, Ordering::SeqCst);
        // The GPU hub is always woken: one futex wake per big chunk, and its batch starts at
        // once instead of at its next poll.
        if wait
            || shared.executor.load(Ordering::Relaxed) == ON_GPU
            || shared.needs_wake.load(Ordering::SeqCst)
        {
            if !wait {
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
        self.added = 0;
        self.gathering = false;
        self.gathered = 0;
        self.slot_reserved = false;
        self.shared.consumed.store(self.consumed, Ordering::Release);
        self.shared
            .stats
            .consecutive_lates
            .store(0, Ordering::Relaxed);
        self.shared.stats.degraded.store(false, Ordering::Relaxed);
    }

    /// Adds the parts of results that fall due before `horizon` (the next quantum boundary) to
    /// the output rings. `now` is the time of the next sample to play. A due result that is not
    /// complete is late, or, when `wait` is set (offline mode), waited for. Audio thread; never
    /// allocates; waits only when `wait` is set.
    pub fn collect(&mut self, now: u64, horizon: u64, outputs: &mut [OutputRing], wait: bool) {
        let shared = &*self.shared;
        let partition_size = self.partition_size;
        while self.consumed < self.submitted {
            let job = self.consumed;
            let slot_idx = (job % shared.num_slots as u64) as usize;
            let chunk_end = shared.chunk_ends[slot_idx].load(Ordering::Relaxed);
            let due = chunk_end - partition_size as u64 + self.output_delay as u64;
            if due >= horizon {
                // Not needed yet. Results are added to the rings only as they fall due, so the
                // order of additions (and so the rounding) does not depend on the worker's timing.
                break;
            }
            // SAFETY (both reads of the slot below): the worker published `completed > job`
            // (acquire, checked when the job was first touched) and will not write this slot
            // again until the `consumed` store below and a new submission.
            let result = |output_idx: usize| unsafe {
                std::slice::from_raw_parts(shared.output_slot(slot_idx, output_idx), partition_size)
            };
            if self.added == 0 {
                let mut completed = shared.completed.load(Ordering::Acquire) > job;
                if !completed && wait {
                    self.wake();
                    wait_for_completion(shared, job);
                    completed = true;
                }
                if !completed {
                    if self.late_counted_up_to <= job {
                        self.late_counted_up_to = job + 1;
                        shared.stats.late_results.fetch_add(1, Ordering::Relaxed);
                        let lates = shared
                            .stats
                            .consecutive_lates
                            .fetch_add(1, Ordering::Relaxed)
                            + 1;
                        if lates >= DEGRADED_AFTER_LATES {
                            shared.stats.degraded.store(true, Ordering::Relaxed);
                        }
                    }
                    // Results arrive in order: nothing after this job is complete either.
                    break;
                }
                if self.late_counted_up_to > job {
                    // Late: only the part that has not been played yet can still be used,
                    // faded in, all at once.
                    let skip = now.saturating_sub(due).min(partition_size as u64) as usize;
                    if skip < partition_size {
                        for (output_idx, ring) in
                            outputs.iter_mut().enumerate().take(shared.num_outputs)
                        {
                            let rest = &result(output_idx)[skip..];
                            ring.add_faded_in(now, rest, LATE_FADE_SAMPLES);
                        }
                    }
                    consume(&mut self.consumed, &mut self.added, shared);
                    continue;
                }
                shared.stats.consecutive_lates.store(0, Ordering::Relaxed);
                shared.stats.degraded.store(false, Ordering::Relaxed);
            }
            // On time: add what falls due before the horizon.
            let end = (horizon - due).min(partition_size as u64) as usize;
            for (output_idx, ring) in outputs.iter_mut().enumerate().take(shared.num_outputs) {
                ring.add(
                    due + self.added as u64,
                    &result(output_idx)[self.added..end],
                );
            }
            self.added = end;
            if end < partition_size {
                break;
            }
            consume(&mut self.consumed, &mut self.added, shared);
        }
    }
}

/// The oldest unconsumed job is fully in the output rings: its slot may be reused. Audio
/// thread.
fn consume(consumed: &mut u64, added: &mut usize, shared: &Shared) {
    *added = 0;
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

/// A level's running state on a worker thread: the overlap-save windows and where the chunks
/// stood, so gaps and resets are handled the same whether jobs come live or are replayed.
struct JobRunner {
    partition_size: usize,
    /// `[input][2P]`: the previous chunk followed by the current one.
    windows: Vec<Vec<f32>>,
    /// `[output][P]`: the last job's result.
    results: Vec<Vec<f32>>,
    last_chunk_end: Option<u64>,
    epoch: u64,
}

impl JobRunner {
    fn new(shared: &Shared) -> Self {
        let partition_size = shared.partition_size;
        Self {
            partition_size,
            windows: vec![vec![0.0; 2 * partition_size]; shared.num_inputs],
            results: vec![vec![0.0; partition_size]; shared.num_outputs],
            last_chunk_end: None,
            epoch: 0,
        }
    }

    /// Runs the chunk that ends at `chunk_end` through `level`; `chunk(input_idx)` is its
    /// input. The result is in `self.results`.
    fn run(
        &mut self,
        level: &mut UpolsLevel,
        chunk_end: u64,
        chunk_epoch: u64,
        chunk: impl Fn(usize) -> *const f32,
    ) {
        let partition_size = self.partition_size;
        if chunk_epoch != self.epoch {
            // The engine was reset: time starts again from zero with empty history.
            level.reset();
            self.windows.iter_mut().for_each(|w| w.fill(0.0));
            self.last_chunk_end = None;
            self.epoch = chunk_epoch;
        }
        // Chunks dropped by the audio thread leave a gap: the delay line gets silence for
        // them, and the window's older half is silence too.
        let expected = self
            .last_chunk_end
            .map_or(partition_size as u64, |end| end + partition_size as u64);
        if chunk_end != expected {
            let missing = (chunk_end.saturating_sub(expected) / partition_size as u64) as usize;
            level.push_silence(missing);
            self.windows
                .iter_mut()
                .for_each(|w| w[..partition_size].fill(0.0));
        }
        for (input_idx, window) in self.windows.iter_mut().enumerate() {
            // SAFETY: the caller hands a chunk of `P` samples that nobody writes meanwhile (a
            // submitted job's slot, or a history slot after the hand-over).
            let chunk = unsafe { std::slice::from_raw_parts(chunk(input_idx), partition_size) };
            window[partition_size..].copy_from_slice(chunk);
        }
        {
            let num_outputs = self.results.len();
            let mut window_refs: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
            for (slot, window) in window_refs.iter_mut().zip(&self.windows) {
                *slot = window;
            }
            let mut result_refs: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (slot, result) in result_refs.iter_mut().zip(self.results.iter_mut()) {
                *slot = result;
            }
            level.compute(
                &window_refs[..self.windows.len()],
                &mut result_refs[..num_outputs],
            );
        }
        // The current chunk becomes the older half of the next window.
        for window in &mut self.windows {
            window.copy_within(partition_size.., 0);
        }
        self.last_chunk_end = Some(chunk_end);
    }
}

/// The worker thread: runs jobs in order until stopped. A GPU level's worker is its standby
/// while the level is on the GPU (see "On the GPU" and "Moving back").
fn worker_main(
    mut level: UpolsLevel,
    shared: Arc<Shared>,
    level_idx: usize,
    home: Option<(GpuHome, GpuSpecSource)>,
) {
    let _ftz = crate::denormals::ScopedFtz::enable();
    raise_priority(level_idx);
    let partition_size = shared.partition_size;
    let mut runner = JobRunner::new(&shared);
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
            // `submitted > next_job` was seen with acquire, so the audio thread has finished
            // writing this slot and will not touch it until `completed` and `consumed` both
            // pass this job.
            runner.run(&mut level, chunk_end, chunk_epoch, |input_idx| {
                shared.input_slot(slot_idx, input_idx)
            });
            if shared.history.get().is_some() {
                keep_in_history(&shared, next_job, slot_idx, chunk_end, chunk_epoch);
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

/// Copies job `job`'s input chunk (in slot `slot_idx`) into the history, for the hub to warm
/// up on when the level goes back to the GPU. Worker thread, before it publishes the job.
fn keep_in_history(shared: &Shared, job: u64, slot_idx: usize, chunk_end: u64, chunk_epoch: u64) {
    let history_slot = (job % shared.history_chunks as u64) as usize;
    for input_idx in 0..shared.num_inputs {
        // SAFETY: the input slot is the worker's until it publishes the job. The history slot
        // is the worker's while it runs the level: the hub reads the history only for jobs
        // below `history_written`, and during a return the worker writes at most `n + 1`
        // chunks (`J .. J + n + 1`) into `n + 2` slots, so none it writes is one the hub may
        // still read.
        unsafe {
            std::ptr::copy_nonoverlapping(
                shared.input_slot(slot_idx, input_idx),
                shared.history_chunk(job, input_idx),
                shared.partition_size,
            );
        }
    }
    shared.history_ends[history_slot].store(chunk_end, Ordering::Relaxed);
    shared.history_epochs[history_slot].store(chunk_epoch, Ordering::Relaxed);
    shared.history_written.store(job + 1, Ordering::Release);
}

/// The standby of a level on the GPU: sleeps until the hub gives the level up, then rebuilds
/// the delay lines from the last `n + 1` chunks the hub finished and hands back the first job
/// it did not; `None` when stopped first.
fn standby(level: &mut UpolsLevel, shared: &Shared, runner: &mut JobRunner) -> Option<u64> {
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
        runner.run(level, chunk_end, chunk_epoch, |input_idx| {
            shared.history_chunk(job, input_idx)
        });
    }
    shared.history_written.store(next_job, Ordering::Release);
    shared.executor.store(ON_CPU, Ordering::SeqCst);
    Some(next_job)
}

/// What a try to go back to the GPU yields: the new place on a hub, its feed and the hub's
/// thread.
type ReturnTry = Result<(Registration, Arc<GpuFeed>, Thread), String>;

/// The worker's side of "Moving back": when to try, the try in flight, and the place on the
/// hub while the level warms up there or runs there.
struct Returns {
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
    fn new(home: GpuHome, source: GpuSpecSource) -> Self {
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
    fn left(&mut self, shared: &Shared) {
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
    fn poll(&mut self, shared: &Arc<Shared>, next_job: u64) -> bool {
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

/// The hub's side of one GPU level: takes submitted chunks from the slots, keeps them for the
/// standby, and publishes the hub's results as the worker would. On the way back it first takes
/// the chunks the worker ran from the history, and throws their results away.
struct GpuFeed {
    shared: Arc<Shared>,
    /// The standby worker, woken when the hub gives the level up.
    standby: Option<Thread>,
    /// Set when the hub gave this feed up.
    failed: AtomicBool,
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
    fn new(shared: Arc<Shared>, standby: Option<Thread>) -> Self {
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
        for (input_idx, dst) in inputs.chunks_exact_mut(partition_size).enumerate() {
            // SAFETY: a history chunk below `history_written` (acquire) is not written again
            // while the hub may read it (see `keep_in_history`). An input slot: `submitted >
            // job` was seen with acquire, the audio thread finished the slot and leaves it
            // alone until the job is completed and consumed; the history slot is the hub's
            // alone while the level is on the GPU.
            unsafe {
                match slot_idx {
                    None => {
                        let chunk = std::slice::from_raw_parts(
                            shared.history_chunk(job, input_idx),
                            partition_size,
                        );
                        dst.copy_from_slice(chunk);
                    }
                    Some(slot_idx) => {
                        let chunk = std::slice::from_raw_parts(
                            shared.input_slot(slot_idx, input_idx),
                            partition_size,
                        );
                        dst.copy_from_slice(chunk);
                        std::ptr::copy_nonoverlapping(
                            chunk.as_ptr(),
                            shared.history_chunk(job, input_idx),
                            partition_size,
                        );
                    }
                }
            }
        }
        if slot_idx.is_some() {
            shared.history_ends[history_slot].store(chunk_end, Ordering::Relaxed);
            shared.history_epochs[history_slot].store(chunk_epoch, Ordering::Relaxed);
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

/// What an idle worker knows of the chunks' timing (see "Waking" in the module docs).
#[derive(Debug, Default)]
struct ChunkClock {
    /// The last chunk seen: its job number and when the audio thread handed it over.
    last_arrival: Option<(u64, Instant)>,
    /// Estimated interval between chunks.
    interval: Option<Duration>,
}

impl ChunkClock {
    /// When the next chunk is expected: one interval after the last one came; `None` while the
    /// timing is unknown or was missed, when the worker sleeps until woken.
    fn expected(&self) -> Option<Instant> {
        Some(self.last_arrival?.1 + self.interval?)
    }

    /// A chunk came with no time (offline mode): the worker will be woken for the next one.
    fn forget(&mut self) {
        self.last_arrival = None;
    }

    /// Job `job` was handed over at `submitted_at` (stamped by the audio thread, so the time
    /// is exact however late the worker saw it).
    fn arrived(&mut self, job: u64, submitted_at: Instant) {
        if let Some((last_job, last_time)) = self.last_arrival
            && job > last_job
        {
            let measured =
                submitted_at.saturating_duration_since(last_time) / (job - last_job) as u32;
            // Smoothed, so one late host call does not move the next wake-up much.
            self.interval = Some(match self.interval {
                Some(interval) => (interval * 3 + measured) / 4,
                None => measured,
            });
        }
        self.last_arrival = Some((job, submitted_at));
    }

    /// How long an idle worker may sleep on its own timer at `now`: until shortly before the
    /// next chunk is expected, then a poll interval at a time; `None` when it must ask to be
    /// woken instead.
    fn own_sleep(&mut self, now: Instant) -> Option<Duration> {
        let (Some(expected), Some(interval)) = (self.expected(), self.interval) else {
            return None;
        };
        if now + WAKE_EARLY < expected {
            return Some(expected - WAKE_EARLY - now);
        }
        if now < expected + WAKE_WINDOW.min(interval / 4) {
            return Some(POLL_INTERVAL);
        }
        // Missed: the host stopped or calls irregularly, or the interval was learnt from a
        // burst of chunks after a stall. Start over, interval included, from the next two
        // arrivals; keeping a wrong interval would miss every chunk from then on, each costing
        // the audio thread a wake.
        *self = Self::default();
        None
    }
}

/// Sleeps until job `next_job` may have arrived: on the worker's own timer near the expected
/// time, or until woken when the timing is unknown or missed. Worker thread.
fn idle_wait(shared: &Shared, next_job: u64, clock: &mut ChunkClock) {
    if let Some(sleep) = clock.own_sleep(Instant::now()) {
        std::thread::park_timeout(sleep);
        return;
    }
    shared.needs_wake.store(true, Ordering::SeqCst);
    if shared.submitted.load(Ordering::SeqCst) <= next_job && !shared.stop.load(Ordering::Acquire) {
        std::thread::park_timeout(IDLE_TIMEOUT);
    }
    shared.needs_wake.store(false, Ordering::SeqCst);
}

/// Offline waiting for job `job`: sleeps on the `completed_seq` futex word until the worker
/// publishes it, so a bounce that waits for its workers costs no CPU while it waits (as
/// zita-convolver's `process(sync)` sleeps on a semaphore). Never used in real-time mode.
///
/// No wake-up is lost: the audio thread raises `waiting` before it reads the sequence word,
/// and the worker stores the word before it reads `waiting` (all `SeqCst`), so either the
/// worker sees `waiting` and wakes the futex, or the audio thread sees the new word and does
/// not sleep.
fn wait_for_completion(shared: &Shared, job: u64) {
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

/// Highest real-time priority a worker asks for (level 1); typical audio threads run above it.
const WORKER_PRIORITY: usize = 40;

/// Asks for real-time scheduling below typical audio threads (SCHED_FIFO, one step lower per
/// level); quietly keeps the default policy where the OS does not allow it.
///
/// The audio thread must run above the workers: on a machine with fewer free cores than busy
/// workers, a real-time worker otherwise takes the core from a default-policy audio thread for
/// a whole FFT round (milliseconds). Hosts give their audio threads 60-90 (JACK, Ardour).
fn raise_priority(level_idx: usize) {
    let priority = WORKER_PRIORITY.saturating_sub(level_idx).max(1) as u32;
    // Dropping the guard would restore the old policy; the worker keeps it until it exits.
    std::mem::forget(RealtimeGuard::raise(priority));
}

/// The calling thread at a SCHED_FIFO priority until dropped, then back to its old policy.
#[derive(Debug)]
pub struct RealtimeGuard {
    /// The priority the thread runs at.
    pub priority: u32,
    #[cfg(target_os = "linux")]
    old: (libc::c_int, libc::sched_param),
    /// Not `Send`: it must be dropped by the thread it raised.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl RealtimeGuard {
    /// Raises the calling thread to SCHED_FIFO `priority`; `None` where the OS refuses
    /// (no permission, no such policy). Not for the audio thread's `process()`: a system call.
    pub fn raise(priority: u32) -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            let mut old_policy = 0;
            let mut old_param = libc::sched_param { sched_priority: 0 };
            let param = libc::sched_param {
                sched_priority: priority as libc::c_int,
            };
            // SAFETY: plain system calls on the current thread with valid pointers; failure is
            // reported through the return values.
            let ok = unsafe {
                libc::pthread_getschedparam(libc::pthread_self(), &mut old_policy, &mut old_param)
                    == 0
                    && libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param)
                        == 0
            };
            ok.then_some(Self {
                priority,
                old: (old_policy, old_param),
                _thread_bound: std::marker::PhantomData,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = priority;
            None
        }
    }
}

impl Drop for RealtimeGuard {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: restores the policy read in `raise`, on the same thread (the guard is not
        // `Send`).
        unsafe {
            libc::pthread_setschedparam(libc::pthread_self(), self.old.0, &self.old.1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_level_has_slots_for_what_its_slack_holds_back() {
        // 1536 samples of slack at P = 512: three results due or playing, the chunk handed
        // over, the one being gathered, one late result.
        assert_eq!(num_slots(512, 1536), 6);
        assert_eq!(num_slots(512, 1537), 7);
        assert_eq!(num_slots(16_384, 16_384), MIN_SLOTS);
        assert_eq!(num_slots(512, 8192), 19);
    }

    #[test]
    fn the_chunk_clock_learns_the_interval_from_the_hand_over_times() {
        let start = Instant::now();
        let mut clock = ChunkClock::default();
        // The first chunk gives no interval yet: the worker will ask to be woken.
        clock.arrived(0, start);
        assert_eq!(clock.expected(), None);
        clock.arrived(1, start + 10 * MS);
        assert_eq!(clock.interval, Some(10 * MS));
        assert_eq!(clock.expected(), Some(start + 20 * MS));

        // A host call 2 ms late moves the estimate by a quarter of the error, and the next
        // chunk is expected one interval after this one came.
        clock.arrived(2, start + 22 * MS);
        assert_eq!(clock.interval, Some(10 * MS + MS / 2));
        assert_eq!(clock.expected(), Some(start + 32 * MS + MS / 2));

        // An offline chunk has no time: the worker asks to be woken. The next stamped chunk
        // starts the grid again with the interval it knew, and no interval is measured across
        // the gap.
        clock.forget();
        assert_eq!(clock.expected(), None);
        clock.arrived(3, start + 100 * MS);
        assert_eq!(clock.interval, Some(10 * MS + MS / 2));
        assert_eq!(clock.expected(), Some(start + 110 * MS + MS / 2));

        // Idle: on its timer until shortly before the next chunk, then polling, and past the
        // window it starts over and asks to be woken.
        let expected = clock.expected().unwrap();
        assert_eq!(
            clock.own_sleep(expected - 5 * MS),
            Some(5 * MS - WAKE_EARLY)
        );
        assert_eq!(clock.own_sleep(expected), Some(POLL_INTERVAL));
        assert_eq!(
            clock.own_sleep(expected + WAKE_WINDOW / 2),
            Some(POLL_INTERVAL)
        );
        assert_eq!(clock.own_sleep(expected + WAKE_WINDOW), None);
        assert_eq!(clock.interval, None);
        assert_eq!(clock.own_sleep(expected + WAKE_WINDOW), None);

        // A dropped chunk (no job for it) spreads its gap over the jobs in between.
        let mut clock = ChunkClock::default();
        clock.arrived(5, start);
        clock.arrived(7, start + 20 * MS);
        assert_eq!(clock.interval, Some(10 * MS));
    }
}
