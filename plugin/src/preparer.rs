//! The preparation thread: builds engines off the audio thread and drops retired ones.
//!
//! The audio thread talks to it only through three preallocated SPSC rings (rtrb): requests
//! (small `Copy` values), prepared engines, and engines to drop. Pushing and popping never
//! allocate, lock or wait; the thread polls every [`POLL_INTERVAL`], so the audio thread never
//! makes a system call to wake it. Building a 10 s stereo engine takes tens of milliseconds,
//! which this thread absorbs.
//!
//! Dropping the [`Preparer`] (off the audio thread) stops and joins the thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rtrb::{Consumer, Producer, RingBuffer};

use crate::engine::{Engine, EngineConfig, stagger_phase};
use crate::ir::builtin::BuiltinIr;

/// How often the thread looks for work.
pub const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// Capacity of each ring. One request is in flight at a time, so a few slots are plenty.
const RING_CAPACITY: usize = 8;

/// What to build: a small `Copy` value, safe to send from the audio thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Which IR.
    pub ir: BuiltinIr,
    /// Session sample rate, in Hz.
    pub sample_rate: u32,
    /// Engine configuration (channels, block size, latency mode).
    pub config: EngineConfig,
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
    /// The engine, ready to play.
    pub engine: Box<Engine>,
}

/// The audio thread's side of the preparation thread.
pub struct Preparer {
    requests: Producer<Request>,
    ready: Consumer<Prepared>,
    retire: Producer<Box<Engine>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Preparer {
    /// Starts the thread. Allocates; call off the audio thread.
    pub fn spawn() -> std::io::Result<Self> {
        let (requests, mut request_rx) = RingBuffer::<Request>::new(RING_CAPACITY);
        let (mut ready_tx, ready) = RingBuffer::<Prepared>::new(RING_CAPACITY);
        let (retire, mut retire_rx) = RingBuffer::<Box<Engine>>::new(RING_CAPACITY);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("longtail-prepare".into())
            .spawn(move || {
                let _ftz = crate::denormals::ScopedFtz::enable();
                while !thread_stop.load(Ordering::Acquire) {
                    // Drop what the audio thread retired.
                    while retire_rx.pop().is_ok() {}
                    // Only the newest request matters: a knob may have moved several times.
                    let mut latest = None;
                    while let Ok(request) = request_rx.pop() {
                        latest = Some(request);
                    }
                    if let Some(request) = latest {
                        let ir = request.ir.generate(request.sample_rate);
                        // Built-in IRs always make a valid engine for a configuration that the
                        // plugin accepted in `activate()`; anything else is dropped.
                        if let Ok(mut engine) = Engine::new(&ir, request.config) {
                            if let Some(stagger_idx) = request.stagger_idx {
                                let max_partition_size = engine.plan().max_partition_size();
                                engine.set_stagger(stagger_phase(stagger_idx, max_partition_size));
                            }
                            let mut prepared = Prepared {
                                request,
                                engine: Box::new(engine),
                            };
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
                        }
                        continue;
                    }
                    std::thread::park_timeout(POLL_INTERVAL);
                }
            })?;
        Ok(Self {
            requests,
            ready,
            retire,
            stop,
            thread: Some(thread),
        })
    }

    /// Asks for an engine. Returns `false` when the ring is full. Never blocks or allocates.
    pub fn request(&mut self, request: Request) -> bool {
        self.requests.push(request).is_ok()
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
            .map_err(|rtrb::PushError::Full(engine)| engine)
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
