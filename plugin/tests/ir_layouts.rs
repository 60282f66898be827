//! IR layouts and formats end to end through `longtail-cli render` and `ir-info`: mono, stereo,
//! true stereo as one 4-channel file and as two stereo files, each against a float64 direct
//! convolution; unsupported layouts refused with what is supported; edits and resampling.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use longtail::ir::edit::{self, EditSettings};
use longtail::ir::wav;
use longtail::rng::Rng;

const CLI: &str = env!("CARGO_BIN_EXE_longtail-cli");
const RATE: u32 = 44_100;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-irlay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn noise(len: usize, seed: u64, amplitude: f32) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| amplitude * rng.bipolar()).collect()
}

fn write_int24(path: &Path, rate: u32, channels: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let spec = hound::WavSpec {
        channels: channels.len() as u16,
        sample_rate: rate,
        bits_per_sample: 24,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    let mut stored = vec![Vec::new(); channels.len()];
    for frame in 0..channels[0].len() {
        for (channel_idx, channel) in channels.iter().enumerate() {
            let value = (channel[frame] * 8_388_608.0).round() as i32;
            writer.write_sample(value).unwrap();
            stored[channel_idx].push(value as f32 / 8_388_608.0);
        }
    }
    writer.finalize().unwrap();
    stored
}

fn direct(x: &[f32], h: &[f32]) -> Vec<f64> {
    let mut y = vec![0.0; x.len() + h.len() - 1];
    for (i, &xi) in x.iter().enumerate() {
        for (j, &hj) in h.iter().enumerate() {
            y[i + j] += f64::from(xi) * f64::from(hj);
        }
    }
    y
}

fn sum(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

fn snr_db(actual: &[f32], expected: &[f64]) -> f64 {
    assert_eq!(actual.len(), expected.len());
    let signal: f64 = expected.iter().map(|e| e * e).sum();
    let noise: f64 = actual
        .iter()
        .zip(expected)
        .map(|(a, e)| (f64::from(*a) - e).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-300)).log10()
}

fn cli(args: &[&str]) -> Output {
    Command::new(CLI)
        .args(args)
        .output()
        .expect("run longtail-cli")
}

fn read_output(path: &Path) -> Vec<Vec<f32>> {
    let (audio, _) = longtail::ir::decode::read(
        path,
        longtail::ir::decode::Limits {
            max_channels: 2,
            max_seconds: None,
        },
    )
    .unwrap();
    audio.channels
}

/// Renders `input` through the IR files with `extra` arguments; returns the output channels.
fn render(dir: &Path, irs: &[&Path], input: &Path, extra: &[&str]) -> Vec<Vec<f32>> {
    let output = dir.join("out.wav");
    let mut args = vec!["render", "--input", input.to_str().unwrap()];
    args.extend(["--output", output.to_str().unwrap(), "--ir"]);
    args.extend(irs.iter().map(|p| p.to_str().unwrap()));
    args.extend_from_slice(extra);
    let result = cli(&args);
    assert!(
        result.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    read_output(&output)
}

#[test]
fn every_layout_matches_direct_convolution() {
    let dir = temp_dir("layouts");
    let stereo_in = [noise(3000, 1, 0.5), noise(3000, 2, 0.5)];
    let input = dir.join("in.wav");
    wav::write_f32(&input, RATE, &stereo_in).unwrap();
    let mono_in = dir.join("mono-in.wav");
    wav::write_f32(&mono_in, RATE, &stereo_in[..1]).unwrap();

    // Mono IR, 24-bit WAV, mono input: mono output.
    let mono_ir = dir.join("mono.wav");
    let h = write_int24(&mono_ir, RATE, &[noise(700, 3, 0.4)]);
    let out = render(&dir, &[&mono_ir], &mono_in, &[]);
    assert_eq!(out.len(), 1);
    assert!(snr_db(&out[0], &direct(&stereo_in[0], &h[0])) > 100.0);

    // Stereo IR from the FLAC fixture: L -> L, R -> R.
    let (flac, _) = longtail::ir::load(&[&fixture("ir-16.flac")]).unwrap();
    let out = render(
        &dir,
        &[&fixture("ir-16.flac")],
        &input,
        &["--block", "random"],
    );
    assert_eq!(out.len(), 2);
    for side in 0..2 {
        let snr = snr_db(&out[side], &direct(&stereo_in[side], &flac.channels[side]));
        assert!(snr > 100.0, "stereo side {side}: {snr:.1} dB");
    }

    // True stereo: one 4-channel file and the same as two stereo files.
    let ts: Vec<Vec<f32>> = (0..4)
        .map(|c| noise(600 + 50 * c, 10 + c as u64, 0.3))
        .collect();
    let len = 750;
    let ts: Vec<Vec<f32>> = ts
        .into_iter()
        .map(|mut c| {
            c.resize(len, 0.0);
            c
        })
        .collect();
    let four = dir.join("ts.wav");
    wav::write_f32(&four, RATE, &ts).unwrap();
    // Two formats: the left input's file in 24-bit integer, the right input's in float.
    let right_file = dir.join("ts-right.wav");
    wav::write_f32(&right_file, RATE, &ts[2..4]).unwrap();
    let left_wav = dir.join("ts-left.wav");
    let stored_left = write_int24(&left_wav, RATE, &ts[..2]);
    let expected_left = sum(
        &direct(&stereo_in[0], &stored_left[0]),
        &direct(&stereo_in[1], &ts[2]),
    );
    let expected_right = sum(
        &direct(&stereo_in[0], &stored_left[1]),
        &direct(&stereo_in[1], &ts[3]),
    );
    let two = render(&dir, &[&left_wav, &right_file], &input, &["--block", "64"]);
    assert_eq!(two.len(), 2);
    assert!(snr_db(&two[0], &expected_left) > 100.0);
    assert!(snr_db(&two[1], &expected_right) > 100.0);

    let expected_left = sum(
        &direct(&stereo_in[0], &ts[0]),
        &direct(&stereo_in[1], &ts[2]),
    );
    let expected_right = sum(
        &direct(&stereo_in[0], &ts[1]),
        &direct(&stereo_in[1], &ts[3]),
    );
    let one = render(&dir, &[&four], &input, &["--block", "7"]);
    assert!(snr_db(&one[0], &expected_left) > 100.0);
    assert!(snr_db(&one[1], &expected_right) > 100.0);
}

#[test]
fn unsupported_layouts_say_what_is_supported() {
    let dir = temp_dir("unsupported");
    let input = dir.join("in.wav");
    wav::write_f32(&input, RATE, &[noise(100, 1, 0.5)]).unwrap();
    let mono = dir.join("mono.wav");
    wav::write_f32(&mono, RATE, &[noise(50, 2, 0.5)]).unwrap();
    let stereo = dir.join("stereo.wav");
    wav::write_f32(&stereo, RATE, &[noise(50, 3, 0.5), noise(50, 4, 0.5)]).unwrap();
    let stereo_48k = dir.join("stereo48.wav");
    wav::write_f32(&stereo_48k, 48_000, &[noise(50, 5, 0.5), noise(50, 6, 0.5)]).unwrap();
    let three = dir.join("three.wav");
    wav::write_f32(&three, RATE, &vec![noise(50, 7, 0.5); 3]).unwrap();
    let output = dir.join("never.wav");
    let cases: Vec<(Vec<&Path>, &[&str], &str)> = vec![
        (
            vec![&three],
            &["--outputs", "2"],
            "a 3-channel IR (3 channels) cannot play on mono -> stereo (1 in / 2 out)",
        ),
        (
            vec![&stereo, &mono],
            &[],
            "stereo.wav' has 2 channels and '",
        ),
        (
            vec![&stereo, &stereo_48k],
            &[],
            "sample rates differ (44100 Hz and 48000 Hz",
        ),
    ];
    for (irs, extra, expected) in cases {
        let mut args = vec!["render", "--input", input.to_str().unwrap()];
        args.extend(extra);
        args.extend(["--output", output.to_str().unwrap(), "--ir"]);
        args.extend(irs.iter().map(|p| p.to_str().unwrap()));
        let result = cli(&args);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success());
        assert!(stderr.contains(expected), "{irs:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!output.exists());
    }
    let result = cli(&[
        "render",
        "--input",
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--ir",
        mono.to_str().unwrap(),
        mono.to_str().unwrap(),
        mono.to_str().unwrap(),
    ]);
    // Three mono files are a 3 x 1 matrix: it needs three inputs.
    assert!(
        !result.status.success(),
        "a 3 x 1 matrix on a mono input is refused"
    );
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("a 3 x 1 matrix IR needs 3 inputs"),
        "{stderr}"
    );
}

/// An IR at another rate is resampled to the input's; edit flags apply the edit step.
#[test]
fn render_resamples_and_applies_edit_flags() {
    let dir = temp_dir("edits");
    let input_signal = noise(2000, 1, 0.5);
    let input = dir.join("in.wav");
    wav::write_f32(&input, RATE, std::slice::from_ref(&input_signal)).unwrap();
    let ir_path = dir.join("ir48.wav");
    wav::write_f32(&ir_path, 48_000, &[noise(900, 2, 0.4)]).unwrap();
    let (source, _) = longtail::ir::load(&[&ir_path]).unwrap();

    let output = dir.join("out.wav");
    let args = [
        "render",
        "--input",
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--ir",
        ir_path.to_str().unwrap(),
        "--reverse",
        "--predelay-ms",
        "2",
        "--fade-out-ms",
        "3",
        "--low-cut-hz",
        "150",
        "--normalize",
    ];
    let result = cli(&args);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(
        stdout.contains("IR resampled from 48000 Hz to 44100 Hz"),
        "{stdout}"
    );
    let edits = EditSettings {
        reverse: true,
        predelay_ms: 2.0,
        fade_out_ms: 3.0,
        low_cut_hz: Some(150.0),
        normalize: true,
        ..EditSettings::NONE
    };
    let (prepared, _) = edit::prepare(&source, &edits, RATE).unwrap();
    assert_eq!(prepared.len(), 827 + 88);
    let out = read_output(&output);
    assert!(snr_db(&out[0], &direct(&input_signal, &prepared.channels[0])) > 100.0);

    // A bad edit is one clear line.
    let result = cli(&[
        "render",
        "--input",
        input.to_str().unwrap(),
        "--output",
        dir.join("never.wav").to_str().unwrap(),
        "--ir",
        ir_path.to_str().unwrap(),
        "--stretch",
        "9",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        stderr.contains("stretch 9 is out of range; use 0.5 to 2"),
        "{stderr}"
    );
}

#[test]
fn ir_info_describes_the_file_and_the_default_edits() {
    let dir = temp_dir("info");
    // 0.5 s: a decay reaching -80 dB at 0.2 s, then a -100 dB floor.
    let samples: Vec<f32> = (0..22_050)
        .map(|idx| {
            let t = idx as f64 / f64::from(RATE);
            let level = (10f64.powf(-4.0 * t / 0.2)).max(1e-5);
            (level * if idx % 2 == 0 { 1.0 } else { -1.0 }) as f32
        })
        .collect();
    let path = dir.join("decay.wav");
    wav::write_f32(&path, RATE, &[samples.clone(), samples]).unwrap();
    let result = cli(&["ir-info", path.to_str().unwrap(), "--rate", "48000"]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    for expected in [
        "format:     WAV, 32-bit float",
        "rate:       44100 Hz",
        "channels:   2",
        "length:     22050 frames (0.500 s)",
        "peak:       0.00 dBFS",
        "layout:     stereo",
        "auto trim:  at -80 dB would cut at 0.200 s",
        "resample:   44100 Hz -> 48000 Hz",
        "normalise:",
    ] {
        assert!(
            stdout.contains(expected),
            "missing '{expected}' in:\n{stdout}"
        );
    }

    let result = cli(&[
        "ir-info",
        fixture("ir-16.flac").to_str().unwrap(),
        fixture("ir-24.aiff").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(stdout.contains("format:     FLAC, 16-bit"), "{stdout}");
    assert!(
        stdout.contains("format:     AIFF, 24-bit integer"),
        "{stdout}"
    );
    assert!(stdout.contains("true stereo from two files"), "{stdout}");
}
