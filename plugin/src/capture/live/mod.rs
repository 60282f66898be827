//! Capturing a room from inside the plugin (the editor's Capture tab) or the standalone
//! (`--capture`): the audio thread plays the sweep in place of the plugin's output and records
//! its inputs, and the preparation thread turns the recording into an IR.
//!
//! Three sides share one [`Desk`]:
//!
//! - the editor (or the standalone's `--capture`, at activation) starts a take
//!   ([`Desk::start`]): the sweep and every recording buffer are allocated there, at the rate and
//!   on the bus of the activation, and the take goes to the audio thread through a
//!   preallocated ring;
//! - the audio thread's [`Deck`] (owned by the plugin) picks it up, plays and records it in
//!   [`Deck::record`] and [`Deck::play`] (no allocation, lock or wait), publishes the progress
//!   and the input peaks as atomics, and sends it back through a second ring when it has ended:
//!   complete, cancelled ([`Desk::cancel`]), or interrupted by the host (a new activation: another
//!   rate or bus, a restart; an offline render). The plugin reports no change of latency, and
//!   its engines keep running under the sweep, so the IR that played plays on afterwards, faded
//!   back in over [`take::FADE_SECONDS`];
//! - the preparation thread calls [`Desk::service`], which drops ended takes, deconvolves a
//!   complete one ([`result::analyse`]: [`crate::capture::extract`]), keeps the outcome for the
//!   editor, and saves it to the library's first folder when asked ([`Desk::save`]).
//!
//! Files: [`take`] (the setup, and the take the audio thread moves through), [`result`] (the
//! analysis, the picture, the file written), [`autostart`] (the standalone's flags); this file
//! links them.

pub mod autostart;
pub mod result;
pub mod take;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard};

use rtrb::{Consumer, Producer, RingBuffer};

use crate::engine::MAX_CHANNELS;
use result::Captured;
pub use take::{Ended, Setup, Take};

/// Takes in flight each way: one runs at a time, so a few are plenty.
const RING_CAPACITY: usize = 4;

/// Where a capture stands, for the editor.
#[derive(Debug, Clone, PartialEq)]
pub enum Phase {
    /// Nothing started yet.
    Idle,
    /// Started, waiting for the host's next `process()` call.
    Waiting,
    /// Playing the sweep and recording, with the share done (0 to 1).
    Recording(f32),
    /// Deconvolving on the preparation thread.
    Analysing,
    /// The IR, and its figures.
    Done(Arc<Captured>),
    /// Why it gave no IR: refused (clipping, no sweep in the recording, ...) or interrupted.
    Failed(String),
    /// Cancelled by the user.
    Cancelled,
}

/// The last take's outcome, as the service left it.
#[derive(Debug, Clone)]
enum Outcome {
    Done(Arc<Captured>),
    Failed(String),
    Cancelled,
}

/// What the editor, the audio thread's [`Deck`] and the preparation thread share.
pub struct Desk {
    /// Takes to the audio thread (locked off the audio thread only).
    to_audio: Mutex<Producer<Box<Take>>>,
    /// Ended takes from the audio thread (locked off the audio thread only).
    from_audio: Mutex<Consumer<Box<Take>>>,
    /// The newest take started (0: none).
    started: AtomicU64,
    /// Takes up to this one are cancelled.
    cancelled: AtomicU64,
    /// The take the audio thread is playing or last played.
    playing: AtomicU64,
    /// The last take the audio thread sent back.
    ended: AtomicU64,
    /// Frames recorded of the playing take, and its whole length.
    progress: AtomicU64,
    length: AtomicU64,
    /// Each recorded input's peak since the editor last read it (`f32` bits).
    peaks: Box<[AtomicU32]>,
    /// The playing take's first clipped sample: `input << 40 | frame`, or `u64::MAX`.
    clipped: AtomicU64,
    /// The outcome of the take it names.
    outcome: Mutex<Option<(u64, Outcome)>>,
    /// Save the next complete take's IR as soon as it is there (the standalone's `--capture`).
    autosave: AtomicBool,
    /// A save asked for by [`Desk::save`], for the service to run.
    save_asked: AtomicBool,
    /// Where the last save went, or why it failed.
    saved: Mutex<Option<Result<PathBuf, String>>>,
    /// The newest take's setup and rate, for the editor (a take the standalone's `--capture`
    /// started included).
    setup: Mutex<Option<(Setup, u32)>>,
}

/// The audio thread's side: the rings' other ends, and the take playing.
pub struct Deck {
    desk: Arc<Desk>,
    incoming: Consumer<Box<Take>>,
    outgoing: Producer<Box<Take>>,
    current: Option<Box<Take>>,
    /// The activation's rate and bus, and whether it renders offline.
    sample_rate: u32,
    num_inputs: usize,
    num_outputs: usize,
    offline: bool,
    /// Frames of the fade back in after a take, and its length (0: none running).
    fade_in: (usize, usize),
}

/// A desk and its deck.
pub fn link() -> (Arc<Desk>, Deck) {
    let (to_audio, incoming) = RingBuffer::new(RING_CAPACITY);
    let (outgoing, from_audio) = RingBuffer::new(RING_CAPACITY);
    let desk = Arc::new(Desk {
        to_audio: Mutex::new(to_audio),
        from_audio: Mutex::new(from_audio),
        started: AtomicU64::new(0),
        cancelled: AtomicU64::new(0),
        playing: AtomicU64::new(0),
        ended: AtomicU64::new(0),
        progress: AtomicU64::new(0),
        length: AtomicU64::new(0),
        peaks: (0..MAX_CHANNELS).map(|_| AtomicU32::new(0)).collect(),
        clipped: AtomicU64::new(u64::MAX),
        outcome: Mutex::new(None),
        autosave: AtomicBool::new(false),
        save_asked: AtomicBool::new(false),
        saved: Mutex::new(None),
        setup: Mutex::new(None),
    });
    let deck = Deck {
        desk: Arc::clone(&desk),
        incoming,
        outgoing,
        current: None,
        sample_rate: 0,
        num_inputs: 0,
        num_outputs: 0,
        offline: false,
        fade_in: (0, 0),
    };
    (desk, deck)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Desk {
    /// Starts a take of `setup` at the activation's `sample_rate` on its bus: checks it,
    /// allocates the sweep and the recording, and hands them to the audio thread. Off the audio
    /// thread. Errs, starting nothing, where the setup does not fit, or a take is running.
    pub fn start(
        &self,
        setup: Setup,
        sample_rate: u32,
        num_inputs: usize,
        num_outputs: usize,
    ) -> Result<(), String> {
        if sample_rate == 0 {
            return Err("the plugin is not active: start the host's audio first".into());
        }
        if self.running() {
            return Err("a capture is running: cancel it first".into());
        }
        setup.check(sample_rate, num_inputs, num_outputs)?;
        let id = self.started.load(Acquire) + 1;
        let take = Box::new(Take::new(
            id,
            setup.clone(),
            sample_rate,
            num_inputs,
            num_outputs,
        ));
        self.length.store(take.record_len() as u64, Relaxed);
        self.progress.store(0, Relaxed);
        self.clipped.store(u64::MAX, Relaxed);
        for peak in &self.peaks {
            peak.store(0, Relaxed);
        }
        *lock(&self.saved) = None;
        lock(&self.to_audio)
            .push(take)
            .map_err(|_| "the audio thread has not taken the last capture yet".to_string())?;
        *lock(&self.setup) = Some((setup, sample_rate));
        self.started.store(id, Release);
        Ok(())
    }

    /// The setup and the sample rate of the newest take started, if any.
    pub fn started_setup(&self) -> Option<(Setup, u32)> {
        lock(&self.setup).clone()
    }

    /// Cancels the take running (or waiting, or being analysed): the plugin's own output comes
    /// back, and its IR keeps playing. Off the audio thread.
    pub fn cancel(&self) {
        self.cancelled.store(self.started.load(Acquire), Release);
    }

    /// Whether the audio thread has given the newest take back: the output is the plugin's own
    /// again (after a fade of [`take::FADE_SECONDS`]). True when none was started.
    pub fn settled(&self) -> bool {
        self.ended.load(Acquire) == self.started.load(Acquire)
    }

    /// Whether a take is waiting, recording or being analysed.
    pub fn running(&self) -> bool {
        matches!(
            self.phase(),
            Phase::Waiting | Phase::Recording(_) | Phase::Analysing
        )
    }

    /// Where the newest take stands.
    pub fn phase(&self) -> Phase {
        let started = self.started.load(Acquire);
        if started == 0 {
            return Phase::Idle;
        }
        if let Some((id, outcome)) = &*lock(&self.outcome)
            && *id == started
        {
            return match outcome {
                Outcome::Done(captured) => Phase::Done(Arc::clone(captured)),
                Outcome::Failed(message) => Phase::Failed(message.clone()),
                Outcome::Cancelled => Phase::Cancelled,
            };
        }
        if self.cancelled.load(Acquire) >= started {
            Phase::Cancelled
        } else if self.ended.load(Acquire) == started {
            Phase::Analysing
        } else if self.playing.load(Acquire) == started {
            let length = self.length.load(Relaxed).max(1);
            Phase::Recording(self.progress.load(Relaxed) as f32 / length as f32)
        } else {
            Phase::Waiting
        }
    }

    /// Each recorded input's peak since the last call (linear), in the setup's order; resets
    /// them.
    pub fn take_peaks(&self, count: usize) -> Vec<f32> {
        self.peaks[..count.min(MAX_CHANNELS)]
            .iter()
            .map(|peak| f32::from_bits(peak.swap(0, Relaxed)))
            .collect()
    }

    /// The running take's first clipped sample: (the recorded input's index in the setup, the
    /// frame), if it has clipped.
    pub fn clipped(&self) -> Option<(usize, usize)> {
        match self.clipped.load(Relaxed) {
            u64::MAX => None,
            packed => Some(((packed >> 40) as usize, (packed & ((1 << 40) - 1)) as usize)),
        }
    }

    /// Asks the preparation thread to write the captured IR into the library's first folder
    /// ([`result::library_folder`]); [`Desk::saved`] says where, or why not.
    pub fn save(&self) {
        *lock(&self.saved) = None;
        self.save_asked.store(true, Release);
    }

    /// Saves every complete take as soon as it is analysed (the standalone's `--capture`).
    pub fn set_autosave(&self, autosave: bool) {
        self.autosave.store(autosave, Release);
    }

    /// Where the last save wrote the IR, or why it could not; `None` before it is done.
    pub fn saved(&self) -> Option<Result<PathBuf, String>> {
        lock(&self.saved).clone()
    }

    /// The preparation thread's share: drops the takes the audio thread has ended, analyses a
    /// complete one, and runs a save asked for. Returns whether it did anything.
    pub fn service(&self) -> bool {
        let ended = lock(&self.from_audio).pop().ok();
        let mut worked = ended.is_some();
        if let Some(mut take) = ended {
            let id = take.id;
            let outcome = match take.ended {
                _ if self.cancelled.load(Acquire) >= id => Outcome::Cancelled,
                Some(Ended::Complete) => match result::analyse(&mut take) {
                    Ok(captured) => Outcome::Done(Arc::new(captured)),
                    Err(message) => Outcome::Failed(message),
                },
                Some(Ended::Cancelled) => Outcome::Cancelled,
                Some(Ended::Interrupted(why)) => Outcome::Failed(why.to_string()),
                None => Outcome::Failed("the capture ended early".into()),
            };
            // The buffers are freed here, off the audio thread.
            drop(take);
            // Cancelled while it was analysed: say so, not the result.
            let outcome = if self.cancelled.load(Acquire) >= id {
                Outcome::Cancelled
            } else {
                outcome
            };
            // The figures, or why not: all a headless `--capture` shows of the take.
            match &outcome {
                Outcome::Done(captured) => {
                    let report = &captured.capture.report;
                    nice_plug::nice_log!(
                        "captured IR: {} channel(s), {:.3} s, peak-to-noise {:.1} dB, noise \
                         floor {:.1} dB, lag {} samples{}",
                        captured.capture.channels.len(),
                        report.length_samples as f64 / f64::from(captured.capture.sample_rate),
                        report.peak_to_noise_db,
                        report.noise_floor_db,
                        report.lag_samples,
                        if report.from_loopback {
                            " (loopback)"
                        } else {
                            ""
                        }
                    );
                }
                Outcome::Failed(message) => nice_plug::nice_log!("capture failed: {message}"),
                Outcome::Cancelled => nice_plug::nice_log!("capture cancelled"),
            }
            let done = matches!(outcome, Outcome::Done(_));
            *lock(&self.outcome) = Some((id, outcome));
            if done && self.autosave.load(Acquire) {
                self.save_asked.store(true, Release);
            }
        }
        if self.save_asked.swap(false, AcqRel) {
            worked = true;
            let saved = match self.phase() {
                Phase::Done(captured) => result::save_to_library(&captured),
                _ => Err("there is no captured IR to save".into()),
            };
            match &saved {
                Ok(path) => nice_plug::nice_log!("captured IR saved to {}", path.display()),
                Err(message) => nice_plug::nice_log!("captured IR not saved: {message}"),
            }
            *lock(&self.saved) = Some(saved);
        }
        worked
    }
}

impl Deck {
    /// The activation's rate and bus (main thread, in `activate()`). A take that was running
    /// ends: the host restarted the plugin, so its timeline has a gap or another rate.
    pub fn activate(
        &mut self,
        sample_rate: u32,
        num_inputs: usize,
        num_outputs: usize,
        offline: bool,
    ) {
        self.end(Ended::Interrupted(
            "the host restarted the plugin (a new sample rate, bus or buffer size) mid-capture",
        ));
        (self.sample_rate, self.num_inputs, self.num_outputs) =
            (sample_rate, num_inputs, num_outputs);
        self.offline = offline;
        self.fade_in = (0, 0);
    }

    /// Ends the running take (main thread: `deactivate()`, or [`Deck::activate`]).
    pub fn stop(&mut self) {
        self.end(Ended::Interrupted(
            "the host stopped the plugin mid-capture",
        ));
    }

    /// Whether a take is playing: the plugin's output is the sweep.
    pub fn is_playing(&self) -> bool {
        self.current.is_some()
    }

    /// Ends the running take, if any, and sends it back; the plugin's output fades back in.
    fn end(&mut self, why: Ended) {
        if let Some(take) = &mut self.current
            && take.ended.is_none()
        {
            take.ended = Some(why);
            self.fade_in = (0, take.fade_len());
        }
        self.send_back();
    }

    /// Sends the ended take back; keeps it (and tries again next block) when the ring is full.
    fn send_back(&mut self) {
        if let Some(take) = self.current.take_if(|take| take.ended.is_some()) {
            let id = take.id;
            match self.outgoing.push(take) {
                Ok(()) => self.desk.ended.store(id, Release),
                Err(rtrb::PushError::Full(take)) => self.current = Some(take),
            }
        }
    }

    /// Audio thread, before the plugin processes the block: picks up a new take, ends one that
    /// was cancelled or no longer fits the activation, and records `inputs` (`len` frames).
    /// Never allocates, locks or waits.
    pub fn record(&mut self, inputs: &[&mut [f32]], len: usize) {
        self.send_back();
        if self.current.is_none()
            && let Ok(take) = self.incoming.pop()
        {
            self.desk.playing.store(take.id, Release);
            self.current = Some(take);
            self.fade_in = (0, 0);
        }
        let cancelled = self.desk.cancelled.load(Acquire);
        let (rate, num_inputs, num_outputs, offline) = (
            self.sample_rate,
            self.num_inputs,
            self.num_outputs,
            self.offline,
        );
        // An ended take waits here only while the ring back is full.
        let Some(take) = self.current.as_mut().filter(|take| take.ended.is_none()) else {
            return;
        };
        if take.id <= cancelled {
            // The sweep fades out; `play` sends the take back once it has.
            take.stop(Ended::Cancelled);
        }
        let why = if take.ended.is_some() {
            take.ended
        } else if (take.sample_rate, take.num_inputs, take.num_outputs)
            != (rate, num_inputs, num_outputs)
        {
            Some(Ended::Interrupted(
                "the sample rate or the bus changed before the capture started",
            ))
        } else if offline {
            Some(Ended::Interrupted(
                "the host is rendering offline: capture while it plays in real time",
            ))
        } else {
            None
        };
        if let Some(why) = why {
            self.end(why);
            return;
        }
        take.record(inputs, len, &self.desk.peaks);
        self.desk.progress.store(take.position as u64, Relaxed);
        if let Some((input, frame)) = take.clipped {
            self.desk
                .clipped
                .store(((input as u64) << 40) | frame as u64, Relaxed);
        }
    }

    /// Audio thread, after the plugin processed the block: the sweep in place of the output
    /// while a take plays, then the fade back to the plugin's own output. Never allocates,
    /// locks or waits.
    pub fn play(&mut self, channels: &mut [&mut [f32]], len: usize) {
        if let Some(take) = self.current.as_mut().filter(|take| take.ended.is_none()) {
            take.play(channels, len);
            if take.ended.is_some() {
                self.fade_in = (0, take.fade_len());
                self.send_back();
            }
            return;
        }
        let (done, fade_len) = self.fade_in;
        if done < fade_len {
            let count = (fade_len - done).min(len);
            for channel in channels.iter_mut() {
                for (frame, sample) in channel[..count].iter_mut().enumerate() {
                    *sample *= 1.0 - take::fade_gain(done + frame, fade_len);
                }
                // Silence until the fade started: nothing of the sweep is left to cut.
            }
            self.fade_in.0 += count;
        }
    }
}
