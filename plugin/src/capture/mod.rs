//! Capturing a room: an exponential sine sweep to play, and the deconvolution of its recording
//! into an IR, one microphone per output channel and, with `K` loudspeakers played one after
//! another, a `K x N` matrix (input-major, as [`crate::ir::IrLayout::Matrix`] plays it).
//! `longtail-cli sweep` and `longtail-cli deconvolve` are these functions; docs/capture.md is
//! the user's guide.
//!
//! Files by concept, each using only those before it in this list:
//!
//! - [`error`]: the refusals, one line each;
//! - [`sweep`]: the synchronised sweep, its slots, and what a sweep file holds
//!   ([`sweep::Excitation`]);
//! - [`recording`]: reading the sweep file and the recording within their own bounds, and the
//!   recording's checks (rate, length, clipping);
//! - [`deconvolve`]: the regularised inverse filter (`f64`, realfft);
//! - [`response`]: one raw response's peak, noise floor, arrival and end;
//! - [`synthetic`]: measuring tools for synthetic rooms (convolution, band limit, distortion),
//!   for the tests;
//! - [`extract`]: the recording's checks, every slot and channel through the filter, one lag
//!   and one window for them all, the harmonic distortion left out, the figures;
//! - [`live`]: capturing from inside the plugin and the standalone: the take the audio thread
//!   plays and records, and its analysis on the preparation thread.
//!
//! Off the audio thread (the command line; the preparation thread in a plugin), and
//! everything allocates, but for [`live`]'s audio-thread side.

pub mod deconvolve;
pub mod error;
pub mod extract;
pub mod live;
pub mod recording;
pub mod response;
pub mod sweep;
pub mod synthetic;

#[cfg(test)]
mod tests;
