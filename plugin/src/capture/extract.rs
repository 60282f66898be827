//! From a recording to an IR: every slot of every channel through the inverse filter, then one
//! window for them all.
//!
//! - **One lag for everything.** The raw response of slot `k` starts at the slot's first sample
//!   (the sweep file's sample `k * slot_len`). The lag, the samples cut from every raw response's
//!   start, is the earliest arrival over every microphone channel of every slot that holds a
//!   sweep, less `--pre` (never below 0): delays between microphones, and between loudspeakers,
//!   stay as they were recorded. With a loopback channel the lag is the loopback's arrival
//!   instead (the interface's own latency, the earliest over its slots), no `--pre`: the IR
//!   starts when the sound leaves the loudspeaker, its propagation delay kept; the loopback is
//!   left out of the IR.
//! - **Harmonic distortion left out.** A synchronised sweep puts the distortion of order `k`
//!   `L ln k` before the linear response (negative times, at the end of the circular response).
//!   The window is the lag to at most the end of the sweep's tail, all of it at positive times.
//! - **The end** is the latest end over the channels ([`super::response`]), faded over 10 ms:
//!   an IR file has one length. The start is not faded: what is kept before the arrival is the
//!   band limit's ringing, most of it the low frequencies the sweep does not reach (under
//!   about 25 Hz, spread tens of milliseconds around every arrival), and a fade would change
//!   the in-band content it overlaps. The margin sets how much of that ringing is kept: with a
//!   room whose energy starts at its arrival, 5 ms kept the in-band error 57 to 76 dB under the
//!   IR, 10 ms 67 to 78 dB, 20 ms 80 to 87 dB (four decaying-noise rooms at 48 kHz, a 3 s
//!   sweep, no noise; docs/capture.md has the command line's figures).
//!
//! Uses [`super::recording::check`] first, so no recording reaches the slicing unchecked.
//! Runs the transforms on one thread per core (at most one per slot and channel), each with its
//! own scratch; allocates the responses (the tail's samples per slot and channel, `f64`) and
//! the IR. Not the audio thread.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::deconvolve::InverseFilter;
use super::error::CaptureError;
use super::recording::check;
use super::response::{self, BLOCK_SECONDS, Figures, MIN_PEAK_TO_NOISE_DB, db};
use super::sweep::Excitation;
use crate::ir::MAX_IR_SECONDS;
use crate::ir::decode::Audio;

/// Default margin before the first arrival, in milliseconds (`--pre`).
pub const DEFAULT_PRE_MS: f64 = 5.0;

/// How to cut the IR.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExtractOptions {
    /// Margin kept before the first arrival, in milliseconds (unused with a loopback).
    pub pre_ms: f64,
    /// The recording's loopback channel, 0-based (the command line counts from 1).
    pub loopback: Option<usize>,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        Self {
            pre_ms: DEFAULT_PRE_MS,
            loopback: None,
        }
    }
}

/// The figures of one IR channel (one loudspeaker to one microphone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelReport {
    /// Its peak over its noise floor, in dB.
    pub peak_to_noise_db: f64,
    /// Its noise floor's RMS in dB re a sample of 1.0 (a unit impulse's peak).
    pub noise_floor_db: f64,
}

/// What the extraction measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The lowest peak-to-noise ratio of the IR's channels, in dB.
    pub peak_to_noise_db: f64,
    /// The highest noise floor of the IR's channels, in dB re a sample of 1.0.
    pub noise_floor_db: f64,
    /// Samples cut from the start of every raw response (sample 0: the slot's first sample of
    /// the sweep file).
    pub lag_samples: usize,
    /// The IR's length in samples.
    pub length_samples: usize,
    /// Whether the lag came from a loopback channel.
    pub from_loopback: bool,
    /// Each IR channel's figures, in the IR's channel order.
    pub channels: Vec<ChannelReport>,
}

/// The IR measured, and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Loudspeakers: the matrix's inputs.
    pub num_speakers: usize,
    /// Microphones: the matrix's outputs.
    pub num_mics: usize,
    /// `num_speakers * num_mics` channels, input-major: channel `k * num_mics + n` is loudspeaker
    /// `k` to microphone `n`.
    pub channels: Vec<Vec<f32>>,
    /// The figures.
    pub report: Report,
}

/// Checks `recording` against `excitation` ([`super::recording::check`]: the rate, the length,
/// clipping), deconvolves every slot and channel and cuts the IR (see the module docs), at most
/// [`MAX_IR_SECONDS`] long.
pub fn extract(
    excitation: &Excitation,
    recording: &Audio,
    options: ExtractOptions,
) -> Result<Capture, CaptureError> {
    check(recording, excitation)?;
    let num_channels = recording.channels.len();
    if let Some(loopback) = options.loopback
        && loopback >= num_channels
    {
        return Err(CaptureError::Loopback(format!(
            "--loopback {}: the recording has {num_channels} channel{}",
            loopback + 1,
            if num_channels == 1 { "" } else { "s" }
        )));
    }
    let mics: Vec<usize> = (0..num_channels)
        .filter(|&idx| Some(idx) != options.loopback)
        .collect();
    if mics.is_empty() {
        return Err(CaptureError::Loopback(
            "the recording's only channel is the loopback: record a microphone too".into(),
        ));
    }
    if !(options.pre_ms.is_finite() && (0.0..=1_000.0).contains(&options.pre_ms)) {
        return Err(CaptureError::Setting(format!(
            "--pre {}: from 0 to 1000 ms",
            options.pre_ms
        )));
    }
    let rate = excitation.sample_rate;
    let num_speakers = excitation.num_speakers;
    let slot_len = excitation.slot_len();
    let tail_len = excitation.tail_len();
    let filter = InverseFilter::new(&excitation.samples, rate);

    // Every (slot, channel) through the filter: the tail's samples of each raw response.
    let jobs: Vec<(usize, usize)> = (0..num_speakers)
        .flat_map(|slot_idx| (0..num_channels).map(move |channel_idx| (slot_idx, channel_idx)))
        .collect();
    let responses = deconvolve_all(&filter, recording, &jobs, slot_len, tail_len);
    let figures: Vec<Figures> = responses
        .iter()
        .map(|response| response::analyse(response, rate))
        .collect();
    let job_idx = |slot_idx: usize, channel_idx: usize| slot_idx * num_channels + channel_idx;

    // Each slot must hold a sweep in some microphone.
    for slot_idx in 0..num_speakers {
        let best = mics
            .iter()
            .map(|&mic| figures[job_idx(slot_idx, mic)].peak_to_noise_db())
            .fold(f64::NEG_INFINITY, f64::max);
        if best < MIN_PEAK_TO_NOISE_DB {
            let slot = match num_speakers {
                1 => "the recording".to_string(),
                _ => format!(
                    "slot {} of {num_speakers} (loudspeaker {})",
                    slot_idx + 1,
                    slot_idx + 1
                ),
            };
            return Err(CaptureError::NoSweep {
                slot,
                peak_to_noise_db: best.max(-300.0),
                min_db: MIN_PEAK_TO_NOISE_DB,
            });
        }
    }

    // One lag for every slot and channel.
    let first_arrival = (0..num_speakers)
        .flat_map(|slot_idx| mics.iter().map(move |&mic| job_idx(slot_idx, mic)))
        .map(|idx| figures[idx])
        .filter(Figures::has_sweep)
        .map(|f| f.arrival)
        .min()
        .unwrap_or(0);
    let lag = match options.loopback {
        Some(loopback) => (0..num_speakers)
            .map(|slot_idx| figures[job_idx(slot_idx, loopback)])
            .filter(Figures::has_sweep)
            .map(|f| f.arrival)
            .min()
            .ok_or_else(|| {
                CaptureError::Loopback(format!(
                    "the loopback channel {} has no sweep in it: check its routing",
                    loopback + 1
                ))
            })?,
        None => {
            let pre = (options.pre_ms * 1e-3 * f64::from(rate)).round() as usize;
            first_arrival.saturating_sub(pre)
        }
    };
    let block_len = ((BLOCK_SECONDS * f64::from(rate)).round() as usize).max(1);
    let end = (0..num_speakers)
        .flat_map(|slot_idx| mics.iter().map(move |&mic| job_idx(slot_idx, mic)))
        .map(|idx| figures[idx].end)
        .max()
        .unwrap_or(0)
        .max(lag + block_len)
        .min(tail_len)
        .min(lag + (MAX_IR_SECONDS * f64::from(rate)) as usize);
    if end <= lag {
        return Err(CaptureError::BadSweep(format!(
            "leaves no room for the IR: the lag ({lag} samples) passes the tail ({tail_len} \
             samples); write the sweep with a longer --tail"
        )));
    }

    let mut channels = Vec::with_capacity(num_speakers * mics.len());
    let mut reports = Vec::with_capacity(num_speakers * mics.len());
    for slot_idx in 0..num_speakers {
        for &mic in &mics {
            let idx = job_idx(slot_idx, mic);
            let mut channel: Vec<f32> =
                responses[idx][lag..end].iter().map(|&s| s as f32).collect();
            response::fade_out(&mut channel, block_len);
            channels.push(channel);
            reports.push(ChannelReport {
                peak_to_noise_db: figures[idx].peak_to_noise_db(),
                noise_floor_db: db(figures[idx].noise_rms),
            });
        }
    }
    let report = Report {
        peak_to_noise_db: reports
            .iter()
            .map(|r| r.peak_to_noise_db)
            .fold(f64::INFINITY, f64::min),
        noise_floor_db: reports
            .iter()
            .map(|r| r.noise_floor_db)
            .fold(f64::NEG_INFINITY, f64::max),
        lag_samples: lag,
        length_samples: end - lag,
        from_loopback: options.loopback.is_some(),
        channels: reports,
    };
    Ok(Capture {
        sample_rate: rate,
        num_speakers,
        num_mics: mics.len(),
        channels,
        report,
    })
}

/// The raw responses of `jobs` (slot, channel), each the first `tail_len` samples, on up to
/// one thread per core.
fn deconvolve_all(
    filter: &InverseFilter,
    recording: &Audio,
    jobs: &[(usize, usize)],
    slot_len: usize,
    tail_len: usize,
) -> Vec<Vec<f64>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let num_threads = cores.min(jobs.len()).max(1);
    let next = AtomicUsize::new(0);
    let run = || {
        let mut scratch = filter.make_scratch();
        let mut done = Vec::new();
        loop {
            let job_idx = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(slot_idx, channel_idx)) = jobs.get(job_idx) else {
                return done;
            };
            let start = slot_idx * slot_len;
            let slot = &recording.channels[channel_idx][start..start + slot_len];
            let mut response = vec![0.0; tail_len];
            filter.process_with_scratch(slot, &mut response, &mut scratch);
            done.push((job_idx, response));
        }
    };
    let mut responses = vec![Vec::new(); jobs.len()];
    let finished: Vec<Vec<(usize, Vec<f64>)>> = if num_threads == 1 {
        vec![run()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..num_threads).map(|_| scope.spawn(run)).collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    };
    for (job_idx, response) in finished.into_iter().flatten() {
        responses[job_idx] = response;
    }
    responses
}
