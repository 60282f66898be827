//! Synthetic rooms through the whole chain, with a short sweep (3 s, 20 Hz to 20 kHz at 48 kHz)
//! so the debug build runs them in moments (the command line's tests take the full
//! size, 10 s): a known IR, delayed, recorded with noise, deconvolved, compared band-limited to
//! 100 Hz .. 10 kHz.

use super::error::CaptureError;
use super::extract::{Capture, ExtractOptions, extract};
use super::sweep::{Excitation, SweepSpec};
use super::synthetic::{DistortionFigures, band_limit, convolve, distort, distortion_figures};
use crate::ir::decode::Audio;
use crate::rng::Rng;

const RATE: u32 = 48_000;

fn spec(num_speakers: usize) -> SweepSpec {
    SweepSpec {
        sample_rate: RATE,
        seconds: 3.0,
        from_hz: 20.0,
        to_hz: 20_000.0,
        level_db: -6.0,
        tail_seconds: 1.0,
        num_speakers,
    }
}

/// `10 log10(truth energy / error energy)` over `range`.
pub(super) fn snr_db(estimate: &[f64], truth: &[f64], range: std::ops::Range<usize>) -> f64 {
    let signal: f64 = truth[range.clone()].iter().map(|t| t * t).sum();
    let error: f64 = estimate[range.clone()]
        .iter()
        .zip(&truth[range])
        .map(|(e, t)| (e - t) * (e - t))
        .sum();
    10.0 * (signal / error.max(1e-300)).log10()
}

/// Noise decaying by 60 dB over `len` samples (its RMS a fifth of `gain` at the start), after
/// a spike of `gain` at its peak (a direct sound, so the arrival is its first sample); most of
/// its energy is in the decay, as in a room.
fn decaying(len: usize, seed: u64, gain: f64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let decay = (-(1000f64.ln()) / len as f64).exp();
    let mut ir: Vec<f64> = (0..len)
        .map(|idx| gain * 0.2 * decay.powi(idx as i32) * rng.gaussian())
        .collect();
    ir[0] = gain;
    ir
}

/// What microphone `mic` records of `speakers` (one IR per loudspeaker to it, already
/// delayed): every slot's sweep through its IR, then white noise `noise_db` under the sweep's
/// RMS.
fn record(spec: &SweepSpec, paths: &[Vec<f64>], noise_db: f64, seed: u64) -> Vec<f32> {
    let sweep = spec.sweep();
    let rms = (sweep.iter().map(|s| s * s).sum::<f64>() / sweep.len() as f64).sqrt();
    let slot_len = spec.slot_len();
    let total = slot_len * spec.num_speakers;
    let mut out = vec![0.0f64; total];
    for (slot_idx, path) in paths.iter().enumerate() {
        let wet = convolve(&sweep, path);
        for (idx, s) in wet.into_iter().enumerate() {
            if let Some(o) = out.get_mut(slot_idx * slot_len + idx) {
                *o += s;
            }
        }
    }
    let mut rng = Rng::new(seed);
    let sigma = rms * 10f64.powf(noise_db / 20.0);
    out.iter()
        .map(|s| (s + sigma * rng.gaussian()) as f32)
        .collect()
}

fn delayed(ir: &[f64], delay: usize) -> Vec<f64> {
    let mut out = vec![0.0; delay];
    out.extend_from_slice(ir);
    out
}

fn run(
    spec: &SweepSpec,
    mics: Vec<Vec<f32>>,
    options: ExtractOptions,
) -> Result<Capture, CaptureError> {
    let excitation = Excitation::from_file(RATE, &spec.channels(), None).unwrap();
    let audio = Audio {
        sample_rate: RATE,
        channels: mics,
    };
    extract(&excitation, &audio, options)
}

/// The recovered channel against the known delayed IR, from 0.5 ms before `arrival` (in raw
/// samples) to the IR's end, both band-limited to 100 Hz .. 10 kHz.
fn compare(recovered: &[f32], truth: &[f64], lag: usize, arrival: usize) -> f64 {
    let len = truth.len() - lag;
    let mut estimate: Vec<f64> = recovered.iter().map(|&s| f64::from(s)).collect();
    estimate.resize(len, 0.0);
    let truth = band_limit(&truth[lag..], RATE, 100.0, 10_000.0);
    let estimate = band_limit(&estimate, RATE, 100.0, 10_000.0);
    let start = arrival - lag - (0.0005 * f64::from(RATE)) as usize;
    snr_db(&estimate, &truth, start..len)
}

#[test]
fn a_mono_room_comes_back_with_its_lag_exact() {
    let spec = spec(1);
    let ir = decaying(12_000, 7, 0.1);
    let delay = 300;
    let truth = delayed(&ir, delay);
    let mic = record(&spec, std::slice::from_ref(&truth), -60.0, 1);
    let capture = run(&spec, vec![mic], ExtractOptions::default()).unwrap();
    let pre = (0.005 * f64::from(RATE)) as usize;
    assert_eq!(capture.report.lag_samples, delay - pre);
    let snr = compare(
        &capture.channels[0],
        &truth,
        capture.report.lag_samples,
        delay,
    );
    // A 3 s sweep gains 5 dB less over the noise than the 10 s one of the command line's test
    // (where the target is 60 dB).
    eprintln!("mono: SNR {snr:.1} dB, {:?}", capture.report);
    assert!(snr >= 57.0, "SNR {snr:.1} dB, {:?}", capture.report);
    assert!(
        capture.report.peak_to_noise_db > 60.0,
        "{:?}",
        capture.report
    );
}

/// Two loudspeakers, three microphones, each path its own delay: one lag (the earliest
/// arrival), the delays between paths kept, channel `k * 3 + n` for loudspeaker `k` to
/// microphone `n`.
#[test]
fn a_matrix_keeps_the_delays_between_its_paths() {
    let spec = spec(2);
    let delays = [[650, 690, 730], [800, 610, 760]];
    let truths: Vec<Vec<Vec<f64>>> = (0..2)
        .map(|k| {
            (0..3)
                .map(|n| {
                    delayed(
                        &decaying(12_000, 10 + 3 * k as u64 + n as u64, 0.1),
                        delays[k][n],
                    )
                })
                .collect()
        })
        .collect();
    let mics: Vec<Vec<f32>> = (0..3)
        .map(|n| {
            let paths: Vec<Vec<f64>> = (0..2).map(|k| truths[k][n].clone()).collect();
            record(&spec, &paths, -80.0, 20 + n as u64)
        })
        .collect();
    // 10 ms before the arrival: IRs whose energy starts at the arrival keep the in-band error
    // over 60 dB down only with a margin past 5 ms (see `extract`'s docs).
    let options = ExtractOptions {
        pre_ms: 10.0,
        loopback: None,
    };
    let capture = run(&spec, mics, options).unwrap();
    assert_eq!(
        (
            capture.num_speakers,
            capture.num_mics,
            capture.channels.len()
        ),
        (2, 3, 6)
    );
    let lag = capture.report.lag_samples;
    assert_eq!(lag, 610 - 480);
    for k in 0..2 {
        for n in 0..3 {
            let snr = compare(
                &capture.channels[k * 3 + n],
                &truths[k][n],
                lag,
                delays[k][n],
            );
            eprintln!("path {k} -> {n}: SNR {snr:.1} dB");
            assert!(snr >= 60.0, "path {k} -> {n}: SNR {snr:.1} dB");
        }
    }
}

/// With a loopback, the lag is the interface's latency, the loopback is left out, and the IR
/// keeps its propagation delay.
#[test]
fn a_loopback_sets_the_lag_and_is_left_out() {
    let spec = spec(1);
    let latency = 128;
    let mut loopback = vec![0.0; latency + 1];
    loopback[latency] = 0.9;
    let truth = delayed(&decaying(2_000, 5, 0.2), latency + 90);
    let mics = vec![
        record(&spec, std::slice::from_ref(&truth), -80.0, 2),
        record(&spec, &[loopback], -100.0, 3),
    ];
    let options = ExtractOptions {
        pre_ms: 5.0,
        loopback: Some(1),
    };
    let capture = run(&spec, mics.clone(), options).unwrap();
    assert_eq!(capture.channels.len(), 1);
    assert_eq!(capture.report.lag_samples, latency);
    assert!(capture.report.from_loopback);
    let peak_idx = capture.channels[0]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
        .0;
    assert_eq!(peak_idx, 90);
    let error = run(
        &spec,
        mics.clone(),
        ExtractOptions {
            loopback: Some(2),
            ..options
        },
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("--loopback 3") && error.to_string().contains("2 channels"),
        "{error}"
    );
    let error = run(
        &spec,
        mics[..1].to_vec(),
        ExtractOptions {
            loopback: Some(0),
            ..options
        },
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("only channel is the loopback"),
        "{error}"
    );
    // A loopback that recorded nothing.
    let silent = vec![mics[0].clone(), vec![0.0; mics[0].len()]];
    let error = run(&spec, silent, options).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("loopback channel 2 has no sweep"),
        "{error}"
    );
}

/// Noise alone, or a slot where the loudspeaker stayed silent, is refused, not turned into an
/// IR of noise.
#[test]
fn a_recording_without_a_sweep_is_refused() {
    let spec = spec(2);
    let len = 2 * spec.slot_len();
    let mut rng = Rng::new(9);
    let noise: Vec<f32> = (0..len).map(|_| 0.01 * rng.gaussian() as f32).collect();
    let error = run(&spec, vec![noise.clone()], ExtractOptions::default()).unwrap_err();
    assert!(matches!(error, CaptureError::NoSweep { .. }), "{error}");
    assert!(error.to_string().contains("slot 1 of 2"), "{error}");
    // The first loudspeaker played, the second did not.
    let truth = delayed(&decaying(1_000, 4, 0.2), 100);
    let mic = record(&spec, &[truth, vec![0.0]], -60.0, 4);
    let error = run(&spec, vec![mic], ExtractOptions::default()).unwrap_err();
    assert!(error.to_string().contains("slot 2 of 2"), "{error}");
}

/// A memoryless non-linearity before the room (2nd and 3rd harmonics each 40 dB under the
/// fundamental): the distortion lands before the linear response, where the synchronised sweep
/// puts it (`L ln 2` early for the 2nd harmonic), and what it adds to the linear IR's window
/// (the distorted recording's IR less the clean one's, the gain fitted, band-limited) is 50 dB
/// or more under the IR's peak.
#[test]
fn harmonic_distortion_stays_out_of_the_linear_ir() {
    let spec = spec(1);
    let sweep = spec.sweep();
    let amplitude = sweep.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    // x + a2 x^2 + a3 x^3 at amplitude A: 2nd harmonic a2 A^2 / 2, 3rd a3 A^3 / 4, each 0.01 A.
    let (a2, a3) = (0.02 / amplitude, 0.04 / (amplitude * amplitude));
    let distorted = distort(&sweep, a2, a3);
    // 0.2 s: the 3 s sweep puts the 2nd harmonic 0.3 s before the linear response.
    let delay = 200;
    let truth = delayed(&decaying(9_600, 12, 0.1), delay);
    let record_through = |signal: &[f64]| -> Vec<f32> {
        let wet = convolve(signal, &truth);
        (0..spec.slot_len())
            .map(|idx| wet.get(idx).copied().unwrap_or(0.0) as f32)
            .collect()
    };
    let (clean_mic, dirty_mic) = (record_through(&sweep), record_through(&distorted));

    // Where the products are: the raw response of what the distortion added.
    let excitation = Excitation::from_file(RATE, &spec.channels(), None).unwrap();
    let filter = super::deconvolve::InverseFilter::new(&excitation.samples, RATE);
    // The 3rd-order term also lifts the fundamental by 3 a3 A^2 / 4 (3 %): not a product.
    let lift = (1.0 + 0.75 * a3 * amplitude * amplitude) as f32;
    let added: Vec<f32> = dirty_mic
        .iter()
        .zip(&clean_mic)
        .map(|(d, c)| d - lift * c)
        .collect();
    let mut raw = vec![0.0; filter.fft_len()];
    filter.process_with_scratch(&added, &mut raw, &mut filter.make_scratch());
    let loudest = raw
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
        .0;
    let second = filter.fft_len() + delay
        - (spec.rate_constant() * 2f64.ln() * f64::from(RATE)).round() as usize;
    let third = filter.fft_len() + delay
        - (spec.rate_constant() * 3f64.ln() * f64::from(RATE)).round() as usize;
    assert!(
        (third - 48..second + 9_600).contains(&loudest),
        "the loudest product at {loudest}; the 3rd harmonic's room from {third}, the 2nd's \
         from {second}"
    );
    // Band-limited, their energy where the 2nd and 3rd harmonics' rooms are against what
    // reaches the positive times the IR is cut from (measured: 89.9 dB apart).
    let raw = band_limit(&raw, RATE, 100.0, 10_000.0);
    let energy_in = |range: std::ops::Range<usize>| raw[range].iter().map(|s| s * s).sum::<f64>();
    let apart_db = 10.0
        * (energy_in(third - 48..second + 9_600) / energy_in(0..excitation.tail_len())).log10();
    assert!(apart_db >= 60.0, "the products {apart_db:.1} dB apart");

    let recover = |mic: Vec<f32>| {
        let capture = run(&spec, vec![mic], ExtractOptions::default()).unwrap();
        let ir: Vec<f64> = capture.channels[0].iter().map(|&s| f64::from(s)).collect();
        (
            band_limit(&ir, RATE, 100.0, 10_000.0),
            capture.report.lag_samples,
        )
    };
    let (clean, clean_lag) = recover(clean_mic);
    let (dirty, dirty_lag) = recover(dirty_mic);
    assert_eq!(clean_lag, dirty_lag);
    let DistortionFigures {
        gain,
        under_peak_db: under_db,
        under_energy_db: energy_db,
    } = distortion_figures(&clean, &dirty);
    assert!(
        under_db >= 50.0 && energy_db >= 50.0,
        "distortion {under_db:.1} dB under the IR's peak, {energy_db:.1} dB under its energy \
         (gain {gain})"
    );
}

/// A recording whose header lies (a data chunk stated at 4 GiB, a few samples there) is read
/// within its bounds: no allocation sized from the stated length, and the 64 samples that are
/// there come back.
#[test]
fn a_recording_whose_header_lies_is_read_within_bounds() {
    let mut wav = Vec::new();
    let samples: Vec<u8> = (0..64i16).flat_map(|s| (s * 100).to_le_bytes()).collect();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&u32::MAX.to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    // PCM, mono, 48 kHz, 96000 bytes a second, 2-byte frames, 16 bits.
    for field in [1u16, 1] {
        wav.extend_from_slice(&field.to_le_bytes());
    }
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes());
    for field in [2u16, 16] {
        wav.extend_from_slice(&field.to_le_bytes());
    }
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&u32::MAX.to_le_bytes());
    wav.extend_from_slice(&samples);
    let audio = super::recording::read_recording_bytes(&wav, "lies.wav").expect("reads");
    assert_eq!(audio.num_frames(), 64);
}
