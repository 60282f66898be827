//! The engine's memory for what it streams every period: buffers packed into huge pages, and
//! the sample rings of the audio thread.
//!
//! Everything here is allocated when an engine is built (off the audio thread), at its final
//! size; the audio thread and the workers only read, write and clear it in place.
//!
//! # Parts
//!
//! - [`pages`]: buffers streamed every period (spectra, FFT buffers, rings, result slots),
//!   packed into transparent huge pages where the OS offers them.
//! - [`rings`]: the input history and output accumulator rings of the head and the levels on
//!   the audio thread, in those pages.

pub mod pages;
pub mod rings;
