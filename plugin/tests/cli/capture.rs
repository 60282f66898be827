//! `sweep` and `deconvolve` at the full size (a 10 s sweep at 48 kHz): synthetic rooms
//! recorded through the sweep `sweep` wrote, with white noise 60 dB under the sweep's RMS,
//! recovered by `deconvolve` and compared with the known IR band-limited to 100 Hz .. 10 kHz,
//! from 0.5 ms before the arrival to the IR's end, after the lag it reports; a distorting
//! loudspeaker; and every refusal.

use longtail::capture::response;
use longtail::capture::synthetic::{self, convolve, distort};
use longtail::ir::builtin::BuiltinIr;

use super::*;

const RATE: u32 = 48_000;

/// `signal` band-limited to 100 Hz .. 10 kHz ([`synthetic::band_limit`]).
fn band_limit(signal: &[f64]) -> Vec<f64> {
    synthetic::band_limit(signal, RATE, 100.0, 10_000.0)
}

/// Writes the sweep through the command line and returns its channels and one slot's length.
fn write_sweep(dir: &Path, extra: &[&str]) -> (PathBuf, Vec<Vec<f32>>) {
    let path = dir.join("sweep.wav");
    let mut args = vec!["sweep", "--out", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    cli_stdout(&args);
    let (spec, channels) = read_wav(&path);
    assert_eq!(spec.sample_rate, RATE);
    assert_eq!(spec.sample_format, hound::SampleFormat::Float);
    (path, channels)
}

/// The RMS of the sweep (its non-zero stretch in channel 1).
fn sweep_rms(sweep: &[f32]) -> f64 {
    let last = sweep.iter().rposition(|s| *s != 0.0).unwrap();
    let energy: f64 = sweep[..=last].iter().map(|&s| f64::from(s).powi(2)).sum();
    (energy / (last + 1) as f64).sqrt()
}

/// What a microphone records: each loudspeaker's channel of the sweep file through its path
/// (`paths[k]`, already delayed), summed, then white noise 60 dB under the sweep's RMS.
fn record(sweep: &[Vec<f32>], paths: &[&[f64]], seed: u64) -> Vec<f32> {
    let len = sweep[0].len();
    let mut out = vec![0.0f64; len];
    for (channel, path) in sweep.iter().zip(paths) {
        let x: Vec<f64> = channel.iter().map(|&s| f64::from(s)).collect();
        for (o, s) in out.iter_mut().zip(convolve(&x, path)) {
            *o += s;
        }
    }
    let sigma = sweep_rms(&sweep[0]) * 1e-3;
    let mut rng = longtail::rng::Rng::new(seed);
    out.iter()
        .map(|s| (s + sigma * rng.gaussian()) as f32)
        .collect()
}

fn delayed(ir: &[f32], delay: usize) -> Vec<f64> {
    let mut out = vec![0.0; delay];
    out.extend(ir.iter().map(|&s| f64::from(s)));
    out
}

/// The arrival of a known (delayed) IR by `deconvolve`'s rule.
fn arrival(truth: &[f64]) -> usize {
    let peak = truth.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    response::arrival(truth, peak, 48)
}

/// Runs `deconvolve --json` and returns the IR's channels and the JSON object.
fn deconvolve(
    dir: &Path,
    sweep: &Path,
    recording: &Path,
    extra: &[&str],
) -> (Vec<Vec<f32>>, serde_json::Value) {
    let out = dir.join("ir.wav");
    let mut args = deconvolve_args(sweep, recording, &out);
    args.push("--json");
    args.extend_from_slice(extra);
    let stdout = cli_stdout(&args);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let (spec, channels) = read_wav(&out);
    assert_eq!(
        (spec.sample_format, spec.bits_per_sample),
        (hound::SampleFormat::Float, 32)
    );
    assert_eq!(
        channels[0].len() as u64,
        report["length_samples"].as_u64().unwrap()
    );
    (channels, report)
}

/// The recovered channel against the known one (raw time, delayed), both band-limited, from
/// 0.5 ms before `arrival` to the known IR's end, after `lag`.
fn snr_db(recovered: &[f32], truth: &[f64], lag: usize, arrival: usize) -> f64 {
    let len = truth.len() - lag;
    let mut estimate: Vec<f64> = recovered.iter().map(|&s| f64::from(s)).collect();
    estimate.resize(len, 0.0);
    let estimate = band_limit(&estimate);
    let truth = band_limit(&truth[lag..]);
    let start = arrival - lag - 24;
    let signal: f64 = truth[start..].iter().map(|t| t * t).sum();
    let error: f64 = estimate[start..]
        .iter()
        .zip(&truth[start..])
        .map(|(e, t)| (e - t).powi(2))
        .sum();
    10.0 * (signal / error).log10()
}

/// The built-in Hall (stereo: one path per microphone) with a direct sound in front of it, 300
/// samples away: each channel back at 60 dB SNR or better, the lag exact.
///
/// The Hall alone has no direct sound (its first reflections build up from -75 dB), so its
/// arrival is a matter of threshold; the direct sound, three times the Hall's peak, makes it a
/// sample: 300, and the lag 300 less 5 ms.
#[test]
fn a_hall_comes_back_at_60_db() {
    let dir = temp_dir("capture-hall");
    // -20 dBFS: the Hall at unit energy (its own scale) and its direct sound peak well over the
    // sweep (the noise is relative to the sweep's RMS whatever its level).
    let (sweep_path, sweep) = write_sweep(&dir, &["--level", "-20"]);
    let hall = BuiltinIr::Hall.generate(RATE);
    let truths: Vec<Vec<f64>> = hall
        .channels
        .iter()
        .map(|c| {
            let peak = c.iter().fold(0.0f32, |m, s| m.max(s.abs()));
            let mut room = c.clone();
            room[0] = 3.0 * peak;
            delayed(&room, 300)
        })
        .collect();
    let mics: Vec<Vec<f32>> = truths
        .iter()
        .enumerate()
        .map(|(n, truth)| record(&sweep, &[truth], 40 + n as u64))
        .collect();
    let recording = dir.join("recording.wav");
    write_float_wav(&recording, RATE, &mics);
    let (ir, report) = deconvolve(&dir, &sweep_path, &recording, &[]);
    assert_eq!(ir.len(), 2);
    let lag = report["lag_samples"].as_u64().unwrap() as usize;
    assert_eq!(lag, 300 - 240, "{report}");
    for n in 0..2 {
        assert_eq!(arrival(&truths[n]), 300);
        let snr = snr_db(&ir[n], &truths[n], lag, 300);
        eprintln!("hall channel {n}: SNR {snr:.1} dB, {report}");
        assert!(snr >= 60.0, "channel {n}: SNR {snr:.1} dB, {report}");
    }
    assert!(
        report["peak_to_noise_db"].as_f64().unwrap() > 60.0,
        "{report}"
    );
    // Noise 60 dB under the sweep's RMS (-23 dBFS at -20 dBFS peak), less the sweep's gain.
    let floor = report["noise_floor_db"].as_f64().unwrap();
    assert!((-130.0..-100.0).contains(&floor), "{report}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Four loudspeakers, two microphones, a decaying-noise room per path (a direct sound, then
/// 0.3 s of decay; unit energy), each its own delay: a 4 x 2 matrix, input-major, one lag (the
/// earliest arrival less 10 ms), every path at 60 dB or better.
#[test]
fn four_speakers_and_two_microphones_make_a_4_x_2_matrix() {
    let dir = temp_dir("capture-matrix");
    let (sweep_path, sweep) =
        write_sweep(&dir, &["--speakers", "4", "--tail", "1", "--level", "-12"]);
    assert_eq!(sweep.len(), 4);
    let delays = [[700, 760], [820, 650], [900, 720], [680, 980]];
    let truths: Vec<Vec<Vec<f64>>> = (0..4)
        .map(|k| {
            (0..2)
                .map(|n| {
                    let seed = 60 + 2 * k as u64 + n as u64;
                    let len = 14_400; // 0.3 s
                    let decay = (-(1000f64.ln()) / len as f64).exp();
                    let mut rng = longtail::rng::Rng::new(seed);
                    let mut ir: Vec<f32> = (0..len)
                        .map(|idx| (0.005 * decay.powi(idx) * rng.gaussian()) as f32)
                        .collect();
                    ir[0] = 0.03;
                    // Unit energy, as a room that keeps a signal's level.
                    let energy: f32 = ir.iter().map(|s| s * s).sum();
                    ir.iter_mut().for_each(|s| *s /= energy.sqrt());
                    delayed(&ir, delays[k][n])
                })
                .collect()
        })
        .collect();
    let mics: Vec<Vec<f32>> = (0..2)
        .map(|n| {
            let paths: Vec<&[f64]> = (0..4).map(|k| truths[k][n].as_slice()).collect();
            record(&sweep, &paths, 70 + n as u64)
        })
        .collect();
    let recording = dir.join("recording.wav");
    write_float_wav(&recording, RATE, &mics);
    // --pre 10: these rooms start at full level at their arrival, and a path keeps only the
    // margin of the band limit's low-frequency ringing before it; at the default 5 ms the paths
    // came back at 56.4 to 73.1 dB (the earliest arrival's the lowest), at 10 ms at 67.9 to 73.3.
    let (ir, report) = deconvolve(&dir, &sweep_path, &recording, &["--pre", "10"]);
    assert_eq!(ir.len(), 8);
    assert_eq!(
        (report["speakers"].as_u64(), report["microphones"].as_u64()),
        (Some(4), Some(2))
    );
    let lag = report["lag_samples"].as_u64().unwrap() as usize;
    assert_eq!(lag, 650 - 480, "{report}");
    for k in 0..4 {
        for n in 0..2 {
            let snr = snr_db(&ir[k * 2 + n], &truths[k][n], lag, delays[k][n]);
            eprintln!("path {k} -> {n}: SNR {snr:.1} dB");
            assert!(snr >= 60.0, "path {k} -> {n}: SNR {snr:.1} dB, {report}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A loudspeaker with 2nd and 3rd harmonics each 40 dB under the fundamental (the polynomial
/// at four times the rate, as an analog stage before the converter's anti-alias filter) before
/// a 0.4 s room: what the distortion adds to the linear IR's window (the IR of the distorted
/// recording less that of the clean one, the gain fitted, both band-limited) is 50 dB or more
/// under the IR, its largest sample under the IR's peak and its energy under the IR's. The
/// synchronised sweep puts the 2nd harmonic 1 s and the 3rd 1.6 s before the linear response,
/// clear of a 0.4 s room. Measured while writing this test: 140.4 dB (peak) and 139.7 dB
/// (energy); with a 1 s sweep (the 2nd harmonic 0.1 s early, its room reaching 0.3 s into the
/// window) 59.0 and 54.4 dB, with a 3 s sweep 91.2 and 86.1 dB. The polynomial applied at the
/// rate itself folds the top octaves' harmonics back as falling sweeps that land in the window
/// (56.0 dB in energy at 10 s, 45.5 at 1 to 3 s): a flaw of such a test, not of a loudspeaker.
#[test]
fn harmonic_distortion_stays_out_of_the_ir() {
    let dir = temp_dir("capture-distortion");
    let (sweep_path, sweep) = write_sweep(&dir, &["--tail", "1"]);
    let x: Vec<f64> = sweep[0].iter().map(|&s| f64::from(s)).collect();
    let amplitude = x.iter().fold(0.0f64, |m, s| m.max(s.abs()));
    // x + a2 x^2 + a3 x^3 at amplitude A: 2nd harmonic a2 A^2 / 2, 3rd a3 A^3 / 4, each 0.01 A.
    let (a2, a3) = (0.02 / amplitude, 0.04 / (amplitude * amplitude));
    let distorted = distort(&x, a2, a3);
    let len = 19_200; // 0.4 s
    let decay = (-(1000f64.ln()) / len as f64).exp();
    let mut rng = longtail::rng::Rng::new(5);
    let mut room: Vec<f32> = (0..len)
        .map(|idx| (0.005 * decay.powi(idx) * rng.gaussian()) as f32)
        .collect();
    room[0] = 0.03;
    let truth = delayed(&room, 400);
    let recover = |signal: &[f64], name: &str| {
        let wet = convolve(signal, &truth);
        let mic: Vec<f32> = wet[..x.len()].iter().map(|&s| s as f32).collect();
        let recording = dir.join(name);
        write_float_wav(&recording, RATE, &[mic]);
        let (ir, report) = deconvolve(&dir, &sweep_path, &recording, &[]);
        let ir: Vec<f64> = ir[0].iter().map(|&s| f64::from(s)).collect();
        (band_limit(&ir), report["lag_samples"].as_u64())
    };
    let (clean, clean_lag) = recover(&x, "clean.wav");
    let (dirty, dirty_lag) = recover(&distorted, "distorted.wav");
    assert_eq!(clean_lag, dirty_lag);
    // The gain is fitted (the 3rd-order term also lifts the fundamental); the products are
    // measured at their peak and in energy, in the IR's window.
    let synthetic::DistortionFigures {
        gain,
        under_peak_db: under_db,
        under_energy_db: energy_db,
    } = synthetic::distortion_figures(&clean, &dirty);
    eprintln!(
        "distortion: largest product {under_db:.1} dB under the IR's peak, their energy \
         {energy_db:.1} dB under the IR's (gain {gain:.4})"
    );
    assert!(under_db >= 50.0, "{under_db:.1} dB under the peak");
    assert!(energy_db >= 50.0, "{energy_db:.1} dB under the IR's energy");
    std::fs::remove_dir_all(&dir).ok();
}

/// `longtail-cli deconvolve`'s arguments for these files.
fn deconvolve_args<'a>(sweep: &'a Path, recording: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "deconvolve",
        "--sweep",
        sweep.to_str().unwrap(),
        "--recording",
        recording.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
}

/// Runs a `deconvolve` that must fail: one line on stderr, no panic, no IR written.
fn refused(dir: &Path, sweep: &Path, recording: &Path, extra: &[&str]) -> String {
    let out = dir.join("never.wav");
    let mut args = deconvolve_args(sweep, recording, &out);
    args.extend_from_slice(extra);
    let result = cli(&args);
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert_eq!(result.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!out.exists());
    stderr
}

/// Clipping (where), a short recording, another rate, no sweep, a loopback that is not there,
/// a --speakers the sweep file does not have: each refused with its reason; then the same
/// recording accepted, and with a loopback.
#[test]
fn bad_recordings_are_refused_with_their_reason() {
    let dir = temp_dir("capture-refusals");
    let (sweep_path, sweep) = write_sweep(&dir, &["--seconds", "1", "--tail", "0.5"]);
    let slot_len = sweep[0].len();
    let room = delayed(&[0.5, 0.1, -0.05], 200);
    let good = record(&sweep, &[&room], 1);
    let path = dir.join("rec.wav");

    let mut clipped = good.clone();
    clipped[24_000] = 1.0;
    write_float_wav(&path, RATE, &[good.clone(), clipped]);
    let error = refused(&dir, &sweep_path, &path, &[]);
    assert!(
        error.contains("clipped") && error.contains("channel 2") && error.contains("0.500 s"),
        "{error}"
    );

    write_int16_wav(&path, RATE, &[good[..slot_len - 1000].to_vec()]);
    let error = refused(&dir, &sweep_path, &path, &[]);
    assert!(
        error.contains("is 71000 samples") || error.contains("samples ("),
        "{error}"
    );
    assert!(error.contains("one slot"), "{error}");

    write_float_wav(&path, 44_100, std::slice::from_ref(&good));
    let error = refused(&dir, &sweep_path, &path, &[]);
    assert!(
        error.contains("44100 Hz") && error.contains("48000 Hz"),
        "{error}"
    );

    write_float_wav(&path, RATE, &[noise(slot_len, 3, 0.1)]);
    let error = refused(&dir, &sweep_path, &path, &[]);
    assert!(error.contains("no sweep in it"), "{error}");

    write_float_wav(&path, RATE, std::slice::from_ref(&good));
    let error = refused(&dir, &sweep_path, &path, &["--loopback", "2"]);
    assert!(
        error.contains("--loopback 2") && error.contains("1 channel"),
        "{error}"
    );
    let error = refused(&dir, &sweep_path, &path, &["--speakers", "3"]);
    assert!(
        error.contains("--speakers is 3") || error.contains("3 slots"),
        "{error}"
    );
    let error = refused(&dir, &sweep_path, &dir.join("missing.wav"), &[]);
    assert!(
        error.contains("recording") && error.contains("missing.wav"),
        "{error}"
    );

    // The one that works, for contrast.
    let (ir, report) = deconvolve(&dir, &sweep_path, &path, &[]);
    assert_eq!(ir.len(), 1);
    // The arrival (200) is inside the 5 ms margin: nothing is cut.
    assert_eq!(report["lag_samples"].as_u64(), Some(0));

    // Without --json, the four figures in words.
    let text = cli_stdout(&[
        "deconvolve",
        "--sweep",
        sweep_path.to_str().unwrap(),
        "--recording",
        path.to_str().unwrap(),
        "--out",
        dir.join("text.wav").to_str().unwrap(),
    ]);
    for figure in ["peak-to-noise:", "noise floor:", "lag:", "length:", "mono"] {
        assert!(text.contains(figure), "{text}");
    }

    // With a loopback (channel 2, 64 samples of latency): the lag is the latency, the IR keeps
    // the 136 samples of travel to the microphone and leaves the loopback out.
    let loopback = record(&sweep, &[&delayed(&[0.8], 64)], 2);
    write_float_wav(&path, RATE, &[good.clone(), loopback]);
    let (ir, report) = deconvolve(&dir, &sweep_path, &path, &["--loopback", "2"]);
    assert_eq!(ir.len(), 1);
    assert_eq!(report["lag_samples"].as_u64(), Some(64), "{report}");
    assert_eq!(report["lag_from_loopback"].as_bool(), Some(true));
    let peak_idx = ir[0]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
        .0;
    assert_eq!(peak_idx, 136);

    for args in [
        &["sweep", "--to", "30000"][..],
        &["sweep", "--level", "3"][..],
        &["sweep", "--tail", "0"][..],
        &["sweep", "--speakers", "0"][..],
    ] {
        let mut args = args.to_vec();
        let out = dir.join("bad-sweep.wav");
        args.extend(["--out", out.to_str().unwrap()]);
        let result = cli(&args);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(
            !result.status.success() && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
        assert!(!out.exists(), "{args:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
