//! `longtail-cli` end to end: renders against a float64 direct convolution, and every bad input
//! exits non-zero with one clear line on stderr and no panic. The helpers (WAV and raw files,
//! signals, running the CLI) are here; the tests are grouped by subcommand: `render` (and the
//! demo), `shape` (the render's width, early/late balance and shelves), `library` (`ir-list`),
//! `capture` (`sweep` and `deconvolve`), `bench`, and `status`, the rates and the version below.

mod bench;
mod blend;
mod capture;
mod decay;
mod duck;
mod library;
mod render;
mod shape;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use longtail::rng::Rng;

const CLI: &str = env!("CARGO_BIN_EXE_longtail-cli");

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The same 32-bit float WAV writer `render` uses for its output.
fn write_float_wav(path: &Path, rate: u32, channels: &[Vec<f32>]) {
    longtail::ir::wav::write_f32(path, rate, channels).unwrap();
}

fn write_int16_wav(path: &Path, rate: u32, channels: &[Vec<f32>]) {
    let spec = hound::WavSpec {
        channels: channels.len() as u16,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec).unwrap();
    for frame in 0..channels[0].len() {
        for channel in channels {
            writer
                .write_sample((channel[frame] * 32767.0) as i16)
                .unwrap();
        }
    }
    writer.finalize().unwrap();
}

fn read_wav(path: &Path) -> (hound::WavSpec, Vec<Vec<f32>>) {
    let mut reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    let samples: Vec<f32> = reader.samples::<f32>().map(Result::unwrap).collect();
    (spec, deinterleave(&samples, usize::from(spec.channels)))
}

/// Writes `channels` as the harness contract's raw files: little-endian f32, interleaved.
fn write_raw(path: &Path, channels: &[Vec<f32>]) {
    let bytes: Vec<u8> = (0..channels[0].len())
        .flat_map(|frame| channels.iter().map(move |c| c[frame]))
        .flat_map(f32::to_le_bytes)
        .collect();
    std::fs::write(path, bytes).unwrap();
}

/// Reads a raw file of the harness contract as `num_channels` channels.
fn read_raw(path: &Path, num_channels: usize) -> Vec<Vec<f32>> {
    let samples: Vec<f32> = std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    deinterleave(&samples, num_channels)
}

/// Interleaved samples as one `Vec` per channel.
fn deinterleave(samples: &[f32], num_channels: usize) -> Vec<Vec<f32>> {
    (0..num_channels)
        .map(|c| {
            samples
                .iter()
                .skip(c)
                .step_by(num_channels)
                .copied()
                .collect()
        })
        .collect()
}

fn noise(len: usize, seed: u64, amplitude: f32) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| amplitude * rng.bipolar()).collect()
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

/// Runs `longtail-cli` and returns its standard output; fails with its error output unless it
/// succeeded.
fn cli_stdout(args: &[&str]) -> String {
    let result = cli(args);
    assert!(
        result.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    String::from_utf8_lossy(&result.stdout).into_owned()
}

/// The arguments of `longtail-cli render` for these files, then `extra`.
fn render_args<'a>(
    ir: &'a Path,
    input: &'a Path,
    output: &'a Path,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "render",
        "--ir",
        ir.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ];
    args.extend(["--output", output.to_str().unwrap()]);
    args.extend_from_slice(extra);
    args
}

fn render(dir: &Path, ir: &Path, input: &Path, extra: &[&str]) -> Vec<Vec<f32>> {
    let output = dir.join("out.wav");
    let args = render_args(ir, input, &output, extra);
    let result = cli(&args);
    assert!(
        result.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let (spec, channels) = read_wav(&output);
    assert_eq!(spec.sample_format, hound::SampleFormat::Float);
    assert_eq!(spec.bits_per_sample, 32);
    assert_eq!(spec.sample_rate, 44_100);
    channels
}

/// Runs a render that must fail and returns its stderr.
fn render_error(dir: &Path, ir: &Path, input: &Path, extra: &[&str]) -> String {
    let output = dir.join("never.wav");
    let args = render_args(ir, input, &output, extra);
    let result = cli(&args);
    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
    assert!(!result.status.success(), "{args:?} should fail");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(!output.exists(), "{args:?} wrote an output");
    stderr
}

/// `status` and `bench` print their own lines and nothing else, even where the Vulkan loader's
/// layers would complain: without `XDG_RUNTIME_DIR` (Wayland's client library prints an error
/// when a layer looks for a Wayland display) and with the library logs off. `status` opens the
/// GPU as Auto would and `bench --backend gpu` uses it, when there is one.
#[test]
fn status_and_bench_print_nothing_but_their_own_lines() {
    for args in [
        &["status"][..],
        &[
            "bench",
            "--ir-seconds",
            "0.5",
            "--block",
            "64",
            "--seconds",
            "1",
            "--backend",
            "gpu",
        ][..],
    ] {
        let result = Command::new(CLI)
            .args(args)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("LONGTAIL_LOG")
            .output()
            .expect("run longtail-cli");
        let stdout = String::from_utf8_lossy(&result.stdout);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(result.status.success(), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} printed to stderr:\n{stderr}");
        assert!(!stdout.is_empty(), "{args:?} printed nothing");
        assert!(!stdout.contains("XDG_RUNTIME_DIR"), "{args:?}:\n{stdout}");
    }
}

/// A `--rate` Longtail does not convolve at is refused with one clear line, not a panic (the
/// built-in IRs cannot be generated there).
#[test]
fn rates_outside_the_range_are_refused_clearly() {
    for args in [
        &[
            "demo",
            "--rate",
            "3000000",
            "--output",
            "/nonexistent/longtail-demo",
        ][..],
        &["status", "--rate", "1"][..],
        &["bench", "--rate", "999"][..],
    ] {
        let result = cli(args);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(!result.status.success(), "{args:?} should fail");
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        assert!(stderr.contains("1000 to 768000"), "{args:?}: {stderr}");
    }
}

/// `--version` names the commit next to the version: the checkout's HEAD where git can tell
/// (the build script reads it the same way), else 12 hex digits or `unknown`.
#[test]
fn version_names_the_commit() {
    let output = Command::new(CLI).arg("--version").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let expected_start = format!("longtail-cli {} (commit ", env!("CARGO_PKG_VERSION"));
    let commit = text
        .trim()
        .strip_prefix(&expected_start)
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("--version printed {text:?}"));
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "--version's commit is {commit:?}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    if let Ok(head) = head
        && head.status.success()
        && std::env::var_os("LONGTAIL_COMMIT").is_none()
    {
        assert_eq!(commit, String::from_utf8_lossy(&head.stdout).trim());
    }
}
