//! `longtail-cli soak`: hours of audio through the plugin exactly as a host drives it, as fast
//! as the machine allows, watching for what only shows up after a long time: non-finite output,
//! memory growth, leaked threads or file descriptors.
//!
//! The soak is a small host of its own: it creates a [`Longtail`], activates it in real-time mode
//! (engines wait for their workers only while the host is ahead of real time, as it always is
//! here; see `engine::realtime::pace`), and calls
//! [`Plugin::process`] with a nice-plug [`Buffer`], as the CLAP and VST3 wrappers do. Along the
//! way it
//!
//! - changes the host block size on every call (seeded, `1..=max_block`, sometimes 0 frames),
//! - automates mix and output gain at random (seeded) every 10 to 200 ms of audio,
//! - switches the impulse response every 2 to 6 s of audio, cycling through the built-in IRs
//!   (and the latency mode every seventh switch), so every switch is a real one: the plugin's
//!   preparation thread builds the engine and the processor crossfades to it,
//! - feeds noise, tones, clicks and silence at random levels, with a rare NaN or infinite input
//!   sample as a careless host might send,
//! - restarts the plugin when it asks (`deactivate()`, `activate()`, `reset()` between two
//!   calls), as a CLAP host does: a latency switch asks for one, since CLAP lets a plugin
//!   report a new latency only inside `activate()`; a refused activation fails the run,
//! - lets the plugin sleep as a CLAP host would: while the last call returned a sleep-able
//!   status ([`ProcessStatus::Normal`], `CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`) and the input is
//!   silent, `process()` is not called and the host outputs silence.
//!
//! Blocks come much faster than real time, in real-time mode: a host far ahead of real time, for
//! which the engine waits for its workers (`engine::realtime::pace`). Late worker results are
//! reported (`late_results`; none expected); a dropped chunk fails the run. A block is late
//! (`late_blocks`) when its `process()` call took longer than the block lasts, which a host at
//! real-time pace would hear as a dropout; on a shared machine, and with the waits, a few are
//! expected, so they are reported, not judged.
//!
//! Resident memory, the heap in use (glibc's count), file descriptors (handles on Windows) and
//! threads ([`Resources`]) are sampled at four points: before the plugin exists (start), after
//! the warm-up and at the end (both with the same IR and latency mode playing, once every
//! engine before it has been dropped and its workers joined and none is being built, so the
//! two states are comparable), and after the plugin is dropped (final). The run fails when any
//! output sample was NaN or infinite (as the host received it, or as the processor's last guard
//! caught it), when the heap grew by [`MAX_HEAP_GROWTH_KB`] or resident memory by
//! [`MAX_RSS_GROWTH_KB`] or more between warm-up and end, or when threads or file descriptors
//! grew (warm-up to end, or start to final).
//!
//! Runs on the calling thread, which plays the host's main and audio threads in turn. Each
//! `process()` call goes through the caller's `guard` (the tests wrap it in `assert_no_alloc`);
//! everything else here allocates freely.
//!
//! # Layout
//!
//! - `host`: the host simulation: the plugin, its parameters and contexts, one call per block,
//!   the automation and switch schedule, the checkpoints,
//! - `signal`: the input segments,
//! - `report`: what a run saw ([`SoakReport`]) and how it is judged,
//! - resource readings come from [`super::resources`], shared with `bench`.
//!
//! Uses the library (the plugin, its processor and parameters, the built-in IRs); nothing in
//! the library uses it.
//!
//! [`Longtail`]: crate::Longtail
//! [`Buffer`]: nice_plug::prelude::Buffer
//! [`ProcessStatus::Normal`]: nice_plug::prelude::ProcessStatus::Normal

mod host;
mod report;
mod signal;

use std::time::{Duration, Instant};

use nice_plug::prelude::Plugin;

use super::resources::Resources;
use host::Host;
pub use report::{MAX_HEAP_GROWTH_KB, MAX_RSS_GROWTH_KB, SoakReport};

/// Default length of the warm-up, in seconds of audio.
pub const DEFAULT_WARMUP_SECONDS: f64 = 60.0;
/// How often progress is printed (with `progress`), in wall time.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(60);

/// What to run.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// Seconds of audio to process.
    pub audio_seconds: f64,
    /// Seconds of audio before the warm-up checkpoint; at most a quarter of `audio_seconds`.
    pub warmup_seconds: f64,
    /// Session sample rate, in Hz.
    pub rate: u32,
    /// The host's maximum block size; each call carries `0..=max_block` frames.
    pub max_block: usize,
    /// Seed of every random choice (signal, block sizes, automation, switch times).
    pub seed: u64,
    /// Print a progress line on stderr every minute of wall time.
    pub progress: bool,
}

/// Runs the soak. `guard` wraps every `process()` call (pass `|f| f()`, or a wrapper that checks
/// for allocations). Returns an error only when the run could not be carried out (activation
/// refused, a checkpoint's engine never arrived); a run that went wrong is a report whose
/// [`SoakReport::failures`] is not empty.
pub fn run(options: &SoakOptions, guard: fn(&mut dyn FnMut())) -> Result<SoakReport, String> {
    if options.audio_seconds.is_nan() || options.audio_seconds <= 0.0 || options.max_block == 0 {
        return Err("the soak needs a positive audio length and block size".into());
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes glibc's policy for arenas created from now on.
    unsafe {
        // One arena for every thread created from now on: glibc otherwise gives each thread
        // that allocates (the preparation thread, workers) an arena of its own, whose free
        // pages it keeps, so resident memory would wander with the order of the IR switches
        // and say nothing about what the plugin still holds.
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let mut report = SoakReport {
        start: Resources::sample(),
        ..SoakReport::default()
    };
    let wall_start = Instant::now();
    let mut host = Host::new(options)?;
    let warmup_seconds = options
        .warmup_seconds
        .clamp(0.0, options.audio_seconds / 4.0);
    let total_frames = (options.audio_seconds * f64::from(options.rate)) as u64;
    let warmup_frames = (warmup_seconds * f64::from(options.rate)) as u64;
    let mut warm_done = false;
    let mut next_progress = wall_start + PROGRESS_INTERVAL;

    while host.frames < total_frames {
        if !warm_done && host.frames >= warmup_frames {
            host.checkpoint(&mut report, guard)?;
            report.warm = Resources::sample();
            warm_done = true;
        }
        host.automate(&mut report);
        let num_frames = host.next_block_size(total_frames - host.frames);
        host.block(num_frames, &mut report, guard);
        if options.progress && Instant::now() >= next_progress {
            next_progress += PROGRESS_INTERVAL;
            eprintln!(
                "soak: {:.0} of {:.0} s of audio after {:.0} s",
                host.frames as f64 / f64::from(options.rate),
                options.audio_seconds,
                wall_start.elapsed().as_secs_f64()
            );
        }
    }
    host.checkpoint(&mut report, guard)?;
    report.end = Resources::sample();
    report.health = host.health();
    report.audio_s = host.frames as f64 / f64::from(options.rate);

    host.plugin.deactivate();
    drop(host);
    report.after_drop = Resources::sample();
    report.wall_s = wall_start.elapsed().as_secs_f64();
    Ok(report)
}
