//! The runners of the room measurement: `sweep` (write the sweep file) and `deconvolve` (a
//! recording of it into an IR file, and the figures).
//!
//! Uses the library's `longtail::capture` (the sweep, the recording's reader and checks, the
//! extraction) and its WAV writer.

use std::path::Path;
use std::time::Instant;

use longtail::capture::extract::{Capture, ExtractOptions, extract};
use longtail::capture::recording::{read_recording, read_sweep};
use longtail::capture::sweep::{Excitation, SweepSpec};
use longtail::ir::wav;

/// The files of one `deconvolve`.
pub(crate) struct Files<'a> {
    pub(crate) sweep: &'a Path,
    pub(crate) recording: &'a Path,
    pub(crate) out: &'a Path,
}

/// Writes the sweep file of `spec`.
pub(crate) fn run_sweep(spec: &SweepSpec, out: &Path) -> Result<(), String> {
    spec.validate().map_err(|err| err.to_string())?;
    let channels = spec.channels();
    write(out, spec.sample_rate, &channels)?;
    let rate = f64::from(spec.sample_rate);
    let num_frames = channels.first().map_or(0, Vec::len);
    println!(
        "wrote {}: {} channel{}, {num_frames} frames ({:.3} s at {} Hz)",
        out.display(),
        channels.len(),
        if channels.len() == 1 { "" } else { "s" },
        num_frames as f64 / rate,
        spec.sample_rate
    );
    println!(
        "  sweep {:.3} s ({} samples) from {} Hz to {} Hz, peak {} dBFS, then {:.3} s of silence{}",
        spec.sweep_seconds(),
        spec.sweep_len(),
        spec.from_hz,
        spec.to_hz,
        spec.level_db,
        (spec.slot_len() - spec.sweep_len()) as f64 / rate,
        match spec.num_speakers {
            1 => String::new(),
            k => format!(
                "; {k} slots of {} samples, slot k's sweep in channel k",
                spec.slot_len()
            ),
        }
    );
    Ok(())
}

/// Deconvolves the recording by the sweep, writes the IR and prints its figures (one JSON
/// object with `json`).
pub(crate) fn run_deconvolve(
    files: Files<'_>,
    num_speakers: Option<usize>,
    options: ExtractOptions,
    json: bool,
) -> Result<(), String> {
    let started = Instant::now();
    let sweep = read_sweep(files.sweep).map_err(|err| err.to_string())?;
    let excitation = Excitation::from_file(sweep.sample_rate, &sweep.channels, num_speakers)
        .map_err(|err| err.to_string())?;
    drop(sweep);
    let recording = read_recording(files.recording).map_err(|err| err.to_string())?;
    let capture = extract(&excitation, &recording, options).map_err(|err| err.to_string())?;
    drop(recording);
    write(files.out, capture.sample_rate, &capture.channels)?;
    let seconds = started.elapsed().as_secs_f64();
    if json {
        println!("{}", to_json(&capture, seconds));
    } else {
        print_report(&capture, files.out, seconds);
    }
    Ok(())
}

/// A 32-bit float WAV; past two channels with no speaker positions (mask 0): the channels are
/// loudspeakers or paths, not a speaker layout.
fn write(path: &Path, sample_rate: u32, channels: &[Vec<f32>]) -> Result<(), String> {
    wav::write_f32_masked(path, sample_rate, channels, 0)
        .map_err(|err| format!("cannot write '{}': {err}", path.display()))
}

/// What the IR's channels are, for users.
fn layout(capture: &Capture) -> String {
    match (capture.num_speakers, capture.num_mics) {
        (1, 1) => "mono".into(),
        (1, 2) => "stereo (one channel per microphone)".into(),
        (1, n) => format!("{n} channels, one per microphone"),
        (k, n) => format!("{k} x {n} matrix: channel k*{n} + n is loudspeaker k to microphone n"),
    }
}

fn print_report(capture: &Capture, out: &Path, seconds: f64) {
    let report = &capture.report;
    let rate = f64::from(capture.sample_rate);
    println!(
        "wrote {}: {}, {} frames ({:.3} s at {} Hz)",
        out.display(),
        layout(capture),
        report.length_samples,
        report.length_samples as f64 / rate,
        capture.sample_rate
    );
    println!(
        "peak-to-noise: {:.1} dB (the weakest channel)",
        report.peak_to_noise_db
    );
    println!(
        "noise floor:   {:.1} dB (the loudest channel's, re a unit impulse)",
        report.noise_floor_db
    );
    println!(
        "lag:           {} samples ({:.3} ms) cut from the start{}",
        report.lag_samples,
        report.lag_samples as f64 / rate * 1e3,
        if report.from_loopback {
            ", at the loopback's arrival"
        } else {
            ""
        }
    );
    println!(
        "length:        {} samples ({:.3} s)",
        report.length_samples,
        report.length_samples as f64 / rate
    );
    if report.channels.len() > 1 && report.channels.len() <= 16 {
        for (channel_idx, channel) in report.channels.iter().enumerate() {
            println!(
                "  channel {:>2} (loudspeaker {}, microphone {}): peak-to-noise {:.1} dB, noise floor {:.1} dB",
                channel_idx + 1,
                channel_idx / capture.num_mics + 1,
                channel_idx % capture.num_mics + 1,
                channel.peak_to_noise_db,
                channel.noise_floor_db
            );
        }
    }
    println!("took {seconds:.2} s");
}

fn to_json(capture: &Capture, seconds: f64) -> String {
    let report = &capture.report;
    let channels: Vec<serde_json::Value> = report
        .channels
        .iter()
        .map(|channel| {
            serde_json::json!({
                "peak_to_noise_db": channel.peak_to_noise_db,
                "noise_floor_db": channel.noise_floor_db,
            })
        })
        .collect();
    serde_json::json!({
        "peak_to_noise_db": report.peak_to_noise_db,
        "noise_floor_db": report.noise_floor_db,
        "lag_samples": report.lag_samples,
        "length_samples": report.length_samples,
        "lag_from_loopback": report.from_loopback,
        "sample_rate": capture.sample_rate,
        "speakers": capture.num_speakers,
        "microphones": capture.num_mics,
        "channels": channels,
        "seconds": seconds,
    })
    .to_string()
}
