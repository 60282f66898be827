//! The preparation thread: builds engines off the audio thread and drops retired ones.
//!
//! The audio thread talks to it only through three preallocated SPSC rings (rtrb): requests
//! (small `Copy` values), prepared engines, and engines to drop. Pushing and popping never
//! allocate, lock or wait; the thread polls every [`POLL_INTERVAL`], so the audio thread never
//! makes a system call to wake it. Building a 10 s stereo engine takes tens of milliseconds,
//! which this thread absorbs.
//!
//! IRs are prepared here too ([`prepare_ir`]): a built-in is generated at the session rate (the
//! last one is kept for the next engine, [`LAST_ROOM`]), a user file is taken from the shared
//! [`IrFileState`] (decoded when it was loaded, off the audio thread), and both go through the
//! edit step ([`crate::ir::edit::prepare`]). A request that
//! cannot be built (edits that leave nothing of the IR, say) is answered without an engine, so
//! the audio thread stops waiting and keeps the engine it plays; the message goes to the file
//! state's status line for the editor.
//!
//! The thread also deconvolves the recordings of captures ([`Desk::service`]).
//!
//! Requests name their IR slot ([`Slot`]: the first IR, or the second that Blend mixes in),
//! each with its own user file; the thread builds each slot's newest request.
//!
//! Dropping the [`Preparer`] (off the audio thread) stops and joins the thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rtrb::{Consumer, Producer, RingBuffer};

use crate::capture::live::Desk;
use crate::engine::{Engine, EngineConfig, stagger_phase};
use crate::ir::builtin::BuiltinIr;
use crate::ir::edit::{self, EditSettings};
use crate::ir::mapping::{Bus, ChannelFormat, check_file_mask};
use crate::ir::store::IrFileState;
use crate::ir::{Ir, IrError};

/// How often the thread looks for work.
pub const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// Capacity of each ring. One request is in flight at a time, so a few slots are plenty.
const RING_CAPACITY: usize = 8;

/// The built-in room generated last, with the rate and bus it was generated for. A room costs
/// about 50 ns per sample and channel of one core to generate (a 10 s stereo one at 192 kHz,
/// 0.18 s on one core, 0.12 s on two: [`BuiltinIr::generate_for`]); an edit
/// of it (a knob) and an activation at the same rate (a host's restart) build the engine again
/// from this one. One room per process, whichever instance asked last: it holds that room's
/// samples (1.3 MB for the default hall at 48 kHz), never touched by an audio thread.
static LAST_ROOM: RoomCache = RoomCache(Mutex::new(None));

/// A generated built-in room and what it was generated for.
struct Room {
    builtin: BuiltinIr,
    sample_rate: u32,
    bus: Bus,
    ir: Arc<Ir>,
}

/// The last room generated.
struct RoomCache(Mutex<Option<Room>>);

impl RoomCache {
    /// [`BuiltinIr::generate_for`], generated again only when the room, the rate or the bus
    /// differ from the last one's.
    fn room(&self, builtin: BuiltinIr, sample_rate: u32, bus: Bus) -> Arc<Ir> {
        if let Some(room) = &*self.0.lock().unwrap_or_else(PoisonError::into_inner)
            && (room.builtin, room.sample_rate, room.bus) == (builtin, sample_rate, bus)
        {
            return Arc::clone(&room.ir);
        }
        // Generated without the lock: another thread asking meanwhile generates too.
        let ir = Arc::new(builtin.generate_for(sample_rate, bus));
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(Room {
            builtin,
            sample_rate,
            bus,
            ir: Arc::clone(&ir),
        });
        ir
    }
}

/// Which IR an engine is built from: a small `Copy` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrSource {
    /// A built-in IR, generated at the session rate.
    Builtin(BuiltinIr),
    /// The user file of this [`IrFileState::generation`].
    File(u64),
}

/// Which IR slot an engine is for: the first IR, or the second one that Blend mixes in. Each
/// slot has its own user file ([`IrFileState`]); `IrSource::File` names the slot's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Slot {
    #[default]
    A,
    B,
}

impl Slot {
    /// 0 for A, 1 for B.
    pub fn index(self) -> usize {
        match self {
            Self::A => 0,
            Self::B => 1,
        }
    }
}

/// What to build: a small `Copy` value, safe to send from the audio thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Which slot the engine is for (whose file `IrSource::File` means).
    pub slot: Slot,
    /// Which IR.
    pub source: IrSource,
    /// The edits to apply to it.
    pub edits: EditSettings,
    /// Session sample rate, in Hz.
    pub sample_rate: u32,
    /// Engine configuration (channels, block size, latency mode).
    pub config: EngineConfig,
    /// What the channels of a bus wider than stereo are.
    pub format: ChannelFormat,
    /// Increments on every activation, so results for an old configuration are recognised.
    pub generation: u64,
    /// Which instance of the process asks, for the stagger phase of its big levels; `None`
    /// for offline rendering, where no phase is needed and bounces stay identical across
    /// instances.
    pub stagger_idx: Option<u64>,
}

/// A built engine and the request it answers.
pub struct Prepared {
    /// The request this engine was built for.
    pub request: Request,
    /// The engine, ready to play; `None` when the request could not be built (the reason is in
    /// the file state's status line).
    pub engine: Option<Box<Engine>>,
}

/// The IR a request describes, prepared for the session. Off the audio thread; allocates.
/// Errors when the session rate is one no IR may have, when the file of that generation is no
/// longer the current one, or when the edits fail.
pub fn prepare_ir(
    source: IrSource,
    edits: &EditSettings,
    sample_rate: u32,
    files: &IrFileState,
) -> Result<Ir, IrError> {
    let stereo = Bus::new(2, 2, ChannelFormat::Auto);
    prepare_ir_for(source, edits, sample_rate, files, stereo)
}

/// [`prepare_ir`] for `bus`: a built-in IR has a room per speaker past stereo
/// ([`BuiltinIr::generate_for`]); a file is the same on every bus.
pub fn prepare_ir_for(
    source: IrSource,
    edits: &EditSettings,
    sample_rate: u32,
    files: &IrFileState,
    bus: Bus,
) -> Result<Ir, IrError> {
    // A built-in IR cannot be generated at a rate no IR may have (the editor's preview asks
    // for the session's rate whatever it is).
    crate::ir::validate_sample_rate(sample_rate)?;
    // The high cut parameter reaches 20 kHz, above what a 32 kHz session can filter: there a
    // cut at or above 0.49 x the session rate leaves nothing to cut and is off.
    let mut edits = *edits;
    if let Some(hz) = edits.high_cut_hz
        && hz >= 0.49 * f64::from(sample_rate)
    {
        edits.high_cut_hz = None;
    }
    let edits = &edits;
    match source {
        IrSource::Builtin(builtin) => {
            let ir = LAST_ROOM.room(builtin, sample_rate, bus);
            if *edits == EditSettings::NONE {
                return Ok(Ir::clone(&ir));
            }
            edit::prepare(&ir, edits, sample_rate).map(|(ir, _)| ir)
        }
        IrSource::File(generation) => match files.current() {
            Some((file, current)) if current == generation => {
                edit::prepare(&file.ir, edits, sample_rate).map(|(ir, _)| ir)
            }
            _ => Err(IrError::InvalidEdit(
                "the IR file changed while it was being prepared".into(),
            )),
        },
    }
}

/// Builds the engine a request describes. Off the audio thread; allocates.
pub fn build(request: &Request, files: &IrFileState) -> Result<Engine, String> {
    let config = &request.config;
    let bus = Bus::new(config.num_inputs, config.num_outputs, request.format);
    // A file's speakers must be the bus's where they meet one for one.
    if let IrSource::File(_) = request.source
        && let Some((file, _)) = files.current()
    {
        check_file_mask(file.channel_mask, file.ir.channels.len(), bus)
            .map_err(|err| err.to_string())?;
    }
    let ir = prepare_ir_for(
        request.source,
        &request.edits,
        request.sample_rate,
        files,
        bus,
    )
    .map_err(|err| err.to_string())?;
    let mut engine =
        Engine::new_mapped(&ir, request.config, request.format).map_err(|err| err.to_string())?;
    if let Some(stagger_idx) = request.stagger_idx {
        let max_partition_size = engine.plan().max_partition_size();
        engine.set_stagger(stagger_phase(stagger_idx, max_partition_size));
    }
    Ok(engine)
}

/// The audio thread's side of the preparation thread.
pub struct Preparer {
    requests: Producer<Request>,
    ready: Consumer<Prepared>,
    retire: Producer<Box<Engine>>,
    /// Engines handed to [`Self::retire`] so far.
    retired: u64,
    /// Engines the thread has dropped so far.
    dropped: Arc<AtomicU64>,
    /// Requests handed to [`Self::request`] so far.
    requested: u64,
    /// Requests the thread has answered so far (several at once where it took only the
    /// newest), counted once the answer is in the ready ring.
    answered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Preparer {
    /// Starts the thread, which reads user files from `files` and offers the probe of every
    /// engine it builds to `monitor`. Allocates; call off the audio thread. Slot B has no file.
    pub fn spawn(
        files: Arc<IrFileState>,
        monitor: Arc<crate::audio::monitor::EngineMonitor>,
    ) -> std::io::Result<Self> {
        Self::spawn_slots(
            [files, Arc::default()],
            monitor,
            crate::capture::live::link().0,
        )
    }

    /// [`Self::spawn`] with each slot's user file, A's first, and the capture desk whose
    /// recordings the thread deconvolves ([`Desk::service`]).
    pub fn spawn_slots(
        files: [Arc<IrFileState>; 2],
        monitor: Arc<crate::audio::monitor::EngineMonitor>,
        desk: Arc<Desk>,
    ) -> std::io::Result<Self> {
        let (requests, mut request_rx) = RingBuffer::<Request>::new(RING_CAPACITY);
        let (mut ready_tx, ready) = RingBuffer::<Prepared>::new(RING_CAPACITY);
        let (retire, mut retire_rx) = RingBuffer::<Box<Engine>>::new(RING_CAPACITY);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let dropped = Arc::new(AtomicU64::new(0));
        let thread_dropped = Arc::clone(&dropped);
        let answered = Arc::new(AtomicU64::new(0));
        let thread_answered = Arc::clone(&answered);
        let thread = std::thread::Builder::new()
            .name("longtail-prepare".into())
            .spawn(move || {
                let _ftz = crate::engine::realtime::denormals::ScopedFtz::enable();
                while !thread_stop.load(Ordering::Acquire) {
                    // Drop what the audio thread retired (its workers stop and are joined).
                    while let Ok(engine) = retire_rx.pop() {
                        drop(engine);
                        thread_dropped.fetch_add(1, Ordering::Release);
                    }
                    // Only each slot's newest request matters: a knob may have moved several
                    // times.
                    let mut latest: [Option<Request>; 2] = [None, None];
                    let mut taken = [0u64; 2];
                    while let Ok(request) = request_rx.pop() {
                        latest[request.slot.index()] = Some(request);
                        taken[request.slot.index()] += 1;
                    }
                    let mut worked = false;
                    for (request, taken) in latest.into_iter().zip(taken) {
                        let Some(request) = request else { continue };
                        worked = true;
                        let files = &files[request.slot.index()];
                        let engine = match build(&request, files) {
                            Ok(engine) => {
                                monitor.offer_backend(engine.backend_probe());
                                Some(Box::new(engine))
                            }
                            Err(message) => {
                                // A request for a file that has been replaced since is simply
                                // stale (a newer request follows); anything else is news.
                                let stale = matches!(request.source,
                                    IrSource::File(generation) if generation != files.generation());
                                if !stale {
                                    files.set_status(format!("{message}; kept the current IR"));
                                }
                                None
                            }
                        };
                        let mut prepared = Prepared { request, engine };
                        // The audio thread drains this ring every block; wait for room.
                        loop {
                            match ready_tx.push(prepared) {
                                Ok(()) => break,
                                Err(rtrb::PushError::Full(back)) => prepared = back,
                            }
                            if thread_stop.load(Ordering::Acquire) {
                                return;
                            }
                            std::thread::sleep(POLL_INTERVAL);
                        }
                        thread_answered.fetch_add(taken, Ordering::Release);
                    }
                    // A capture's recording, deconvolved here (a second for a long one).
                    if worked || desk.service() {
                        continue;
                    }
                    std::thread::park_timeout(POLL_INTERVAL);
                }
            })?;
        Ok(Self {
            requests,
            ready,
            retire,
            retired: 0,
            dropped,
            requested: 0,
            answered,
            stop,
            thread: Some(thread),
        })
    }

    /// Asks for an engine. Returns `false` when the ring is full. Never blocks or allocates.
    pub fn request(&mut self, request: Request) -> bool {
        let pushed = self.requests.push(request).is_ok();
        self.requested += u64::from(pushed);
        pushed
    }

    /// A prepared engine, if one is ready. Never blocks or allocates.
    pub fn take_ready(&mut self) -> Option<Prepared> {
        self.ready.pop().ok()
    }

    /// Hands an engine to the thread to be dropped. Gives it back when the ring is full, so
    /// the caller can keep it and try again later. Never blocks, allocates or frees.
    pub fn retire(&mut self, engine: Box<Engine>) -> Result<(), Box<Engine>> {
        self.retire
            .push(engine)
            .map_err(|rtrb::PushError::Full(engine)| engine)?;
        self.retired += 1;
        Ok(())
    }

    /// Whether every engine handed to [`Self::retire`] has been dropped (and its workers
    /// joined). Never blocks or allocates.
    pub fn all_retired_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire) == self.retired
    }

    /// Whether the thread is at rest: every engine handed to [`Self::retire`] dropped, every
    /// request answered and every answer taken ([`Self::take_ready`]). An engine being built
    /// for a request, even one that will be dropped unplayed (an earlier activation's), holds
    /// its workers and memory until then. Never blocks or allocates.
    pub fn idle(&self) -> bool {
        self.all_retired_dropped()
            && self.answered.load(Ordering::Acquire) == self.requested
            && self.ready.is_empty()
    }
}

impl Drop for Preparer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_is_generated_again_only_for_another_room_rate_or_bus() {
        let cache = RoomCache(Mutex::new(None));
        let stereo = Bus::new(2, 2, ChannelFormat::Auto);
        let first = cache.room(BuiltinIr::SmallRoom, 22_050, stereo);
        assert_eq!(*first, BuiltinIr::SmallRoom.generate_for(22_050, stereo));
        assert!(Arc::ptr_eq(
            &first,
            &cache.room(BuiltinIr::SmallRoom, 22_050, stereo)
        ));
        let others = [
            (BuiltinIr::Plate, 22_050, stereo),
            (BuiltinIr::SmallRoom, 24_000, stereo),
            (
                BuiltinIr::SmallRoom,
                22_050,
                Bus::new(6, 6, ChannelFormat::Auto),
            ),
        ];
        for (builtin, rate, bus) in others {
            let room = cache.room(builtin, rate, bus);
            assert_eq!(*room, builtin.generate_for(rate, bus));
            assert!(!Arc::ptr_eq(&first, &room));
        }
    }
}
