//! What runs on the audio thread around the engine, and what it reports.
//!
//! Built in `activate()` (or by the command line's render) off the audio thread; the audio
//! thread then only runs, resets and reads it, and never allocates, locks or waits in it.
//!
//! # Parts
//!
//! - [`ducker`]: the wet signal lowered while a key (the input or a sidechain) plays.
//! - [`lane`]: one IR's engine and its swap crossfade, parked while its blend share rests at
//!   zero; the processor has one per IR slot.
//! - [`meters`]: the input and output meters (sample peak, RMS over 300 ms), published by
//!   atomics.
//! - [`monitor`]: the audio thread's numbers for the editor (atomics only): the running
//!   engine's shape, lateness and load, and why the plugin passes the dry signal through.
//! - [`passthrough`]: the dry path where no engine can run (a sample rate outside 1 kHz to
//!   768 kHz).
//! - [`processor`]: the signal path around the engine: wet width, dry/wet mix, output gain,
//!   the crossfaded engine swaps.

pub mod ducker;
pub mod lane;
pub mod meters;
pub mod monitor;
pub mod passthrough;
pub mod processor;
