//! Why a sweep could not be written or a recording could not be turned into an IR. Messages are
//! for users: one line, what is wrong, where, and what would work.

use thiserror::Error;

use crate::ir::IrError;

/// A refusal of [`super::sweep`], [`super::recording`] or [`super::measure`].
#[derive(Debug, Error)]
pub enum CaptureError {
    /// A sweep setting out of range (`what` names the flag and the range).
    #[error("{0}")]
    Setting(String),
    /// The sweep file or the recording cannot be read or decoded.
    #[error("{which}: {error}")]
    File {
        /// `sweep` or `recording`.
        which: &'static str,
        error: IrError,
    },
    /// The sweep file holds no sweep this tool can use.
    #[error("the sweep file {0}")]
    BadSweep(String),
    /// The recording and the sweep are at different rates.
    #[error(
        "the recording is at {recording} Hz and the sweep at {sweep} Hz; record at the sweep's \
         rate (or write the sweep at the recording's with `sweep --rate`)"
    )]
    RateMismatch { recording: u32, sweep: u32 },
    /// The recording ends before the last slot does.
    #[error(
        "the recording is {found} samples ({found_s:.3} s) long; {slots} of sweep plus tail need \
         {needed} samples ({needed_s:.3} s): record until the last tail has ended"
    )]
    TooShort {
        found: usize,
        found_s: f64,
        needed: usize,
        needed_s: f64,
        slots: String,
    },
    /// A sample at or past full scale.
    #[error(
        "the recording clipped: channel {channel} reaches {level_dbfs:.2} dBFS at {seconds:.3} s \
         (sample {frame}); lower the sweep's level or the input gain and record again"
    )]
    Clipped {
        /// 1-based, as users count channels.
        channel: usize,
        frame: usize,
        seconds: f64,
        level_dbfs: f64,
    },
    /// NaN or infinity in the recording.
    #[error(
        "the recording contains a non-finite sample (NaN or infinity) at channel {channel}, \
         sample {frame}"
    )]
    NonFinite { channel: usize, frame: usize },
    /// A slot in which no channel rises above the noise.
    #[error(
        "{slot} has no sweep in it: its best channel peaks {peak_to_noise_db:.1} dB over its \
         noise, and a sweep needs at least {min_db:.0} dB; check the routing, the levels and \
         that the recording starts with the sweep"
    )]
    NoSweep {
        slot: String,
        peak_to_noise_db: f64,
        min_db: f64,
    },
    /// `--loopback` names a channel the recording does not have, or leaves no microphone.
    #[error("{0}")]
    Loopback(String),
    /// `--speakers` does not fit the sweep file or the recording.
    #[error("{0}")]
    Speakers(String),
}
