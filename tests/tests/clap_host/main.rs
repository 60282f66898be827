//! End to end through a real CLAP host: `clack-host` loads the built plugin library
//! (`liblongtail.so`, the file the bundler ships as `Longtail.clap`) in-process, as a DAW does,
//! and drives it through the CLAP API only: the factory and its descriptor, the parameters,
//! activation, processing on a separate audio thread with ragged block sizes and
//! sample-accurate automation events, the latency (reported, and measured on the audio),
//! engine swaps while playing, the tail extension and sleep, state save and load (also from the
//! main thread while the audio thread plays), activation cycles at other sample rates and block
//! sizes, activation at any rate a host sets (the dry signal outside 1 kHz to 768 kHz), 0-frame
//! calls, parameter flushes while inactive, many instances created and destroyed without
//! leaving threads or file descriptors behind, a session that prints nothing to the host's
//! stdout or stderr, and a host in real-time mode that runs ahead of real time (its output is
//! the offline render's).
//!
//! The plugin library is the one cargo builds for this test binary, with `assert_process_allocs`:
//! any allocation inside `process()` aborts this test binary (see [`plugin_library`]).
//!
//! The host: [`TestHost`] owns one plugin instance on the test's own thread, which is the CLAP
//! main thread of that instance. Everything CLAP puts on the audio thread (`start_processing`,
//! `process`, `reset`, `stop_processing`, the tail query) runs on a scoped thread that the
//! host's thread-check extension reports as the audio thread. The main-thread callbacks the
//! plugin asks for (`request_callback`) are serviced by [`TestHost::poll`]; restart requests are
//! honoured right after activation by [`TestHost::activate`], and during playback by the test
//! that expects one; host callbacks that the CLAP specification reserves for the main thread
//! are counted when they arrive on another thread, and every test requires that count to stay
//! zero.
//!
//! One test binary: the host and the signals are shared modules, and the tests are grouped by
//! behaviour, one file each.

mod activation;
mod allocations_and_instances;
mod host;
mod ir_swaps;
mod latency_and_tail;
mod layouts;
mod loading_and_parameters;
mod machine;
mod pacing;
mod signals;
mod state;
mod wet;

use std::ffi::CStr;
use std::time::Duration;

use host::*;
use machine::alone;
use signals::*;

const PLUGIN_ID: &CStr = c"audio.longtail.convolver";
const SAMPLE_RATE: u32 = 48_000;
/// The host's maximum block size unless a test says otherwise.
const MAX_BLOCK: u32 = 512;
/// Block sizes the host cycles through (each capped by the maximum block size): 1, primes,
/// powers of two, the maximum and one short of it.
const BLOCK_CYCLE: [usize; 10] = [1, 7, 64, 509, 512, 100, 13, 256, 2, 511];
/// Mix and output gain smoothing: 20 ms at 48 kHz.
const SMOOTHING_SAMPLES: usize = 960;
/// Crossfade between engines when the IR changes: 50 ms at 48 kHz.
const SWAP_FADE_SAMPLES: usize = 2400;
/// Default wet share.
const DEFAULT_MIX: f32 = 0.35;
/// How long a test waits for work the plugin does on its own threads before it fails. Not a
/// performance bound: only a guard against waiting forever.
const PATIENCE: Duration = Duration::from_secs(120);

// Parameter names as the plugin shows them, and the CLAP values of the enum entries (nice-plug
// exposes an enum parameter as its index).
const MIX: &str = "Mix";
const GAIN: &str = "Output gain";
const WIDTH: &str = "Width";
const PREDELAY_SYNC: &str = "Pre-delay sync";
const PREDELAY_NOTE: &str = "Pre-delay note";
const IMPULSE_RESPONSE: &str = "Impulse response";
const LATENCY: &str = "Latency";
const BACKEND: &str = "Backend";
// The IR source and edit parameters (their behaviour is tested in ir_state.rs and the plugin's
// ir_* tests).
const IR_SOURCE: &str = "IR source";
const REVERSE: &str = "Reverse";
const NORMALIZE: &str = "Normalize";
const CHANNEL_FORMAT: &str = "Channel format";
const IR_EDIT_FLOATS: [&str; 21] = [
    "Trim start",
    "Trim end",
    "Auto trim",
    "Pre-delay",
    "Fade in",
    "Fade out",
    "Stretch",
    "Low cut",
    "High cut",
    "Early level",
    "Tail level",
    "Crossover",
    "Low shelf",
    "Low shelf gain",
    "High shelf",
    "High shelf gain",
    "Decay",
    "Decay low corner",
    "Decay low",
    "Decay high corner",
    "Decay high",
];
/// The second IR's parameters: where it comes from, its built-in, and the Blend.
const SECOND_IR: [&str; 3] = ["IR B source", "Impulse response B", "Blend"];
/// The ducking's parameters (run-time, not IR edits).
const DUCKING: [&str; 5] = [
    "Duck",
    "Duck threshold",
    "Duck attack",
    "Duck release",
    "Duck key",
];
const IR_SMALL_ROOM: f64 = 0.0;
const IR_PLATE: f64 = 1.0;
const IR_CATHEDRAL: f64 = 3.0;
const LATENCY_ZERO: f64 = 0.0;
const LATENCY_LOW_CPU: f64 = 1.0;
/// "Offload 512" and "Offload 2048" (the parameter's values 2 to 5 are 512 to 4096).
const LATENCY_OFFLOAD_512: f64 = 2.0;
const LATENCY_OFFLOAD_2048: f64 = 4.0;
