//! Buses past stereo end to end through `longtail-cli render` and `ir-info`: a stereo IR on a
//! 7.1.4 input by sides (the LFE dry, the output carrying 7.1.4's channel mask), one file per
//! input making a matrix, a 24-channel file (past what symphonia reads) as a 2 x 12 matrix,
//! and a channel mask that disagrees with the bus refused until the format says discrete;
//! each output against a float64 direct convolution of what the mapping says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use longtail::ir::wav;
use longtail::ir::wide_wav;
use longtail::rng::Rng;

const CLI: &str = env!("CARGO_BIN_EXE_longtail-cli");
const RATE: u32 = 48_000;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-matrix-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn noise(len: usize, seed: u64, amplitude: f32) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| amplitude * rng.bipolar()).collect()
}

fn cli(args: &[&str]) -> Output {
    Command::new(CLI).args(args).output().unwrap()
}

/// `sum of weight x (x * h)` over `terms`, float64.
fn convolve(terms: &[(&[f32], &[f32], f64)], len: usize) -> Vec<f64> {
    let mut out = vec![0.0f64; len];
    for &(x, h, w) in terms {
        for (i, &xi) in x.iter().enumerate() {
            for (j, &hj) in h.iter().enumerate() {
                if i + j < len {
                    out[i + j] += w * f64::from(xi) * f64::from(hj);
                }
            }
        }
    }
    out
}

fn snr_db(actual: &[f32], expected: &[f64]) -> f64 {
    let signal: f64 = expected.iter().map(|e| e * e).sum();
    let noise: f64 = actual
        .iter()
        .zip(expected)
        .map(|(&a, e)| (f64::from(a) - e).powi(2))
        .sum();
    10.0 * (signal / noise.max(1e-300)).log10()
}

/// Renders and returns the output's channels and its channel mask.
fn render(dir: &Path, irs: &[&Path], input: &Path, extra: &[&str]) -> (Vec<Vec<f32>>, Option<u32>) {
    let output = dir.join("out.wav");
    let mut args = vec!["render", "--input", input.to_str().unwrap()];
    args.extend(["--output", output.to_str().unwrap()]);
    args.extend(extra);
    args.push("--ir");
    args.extend(irs.iter().map(|p| p.to_str().unwrap()));
    let result = cli(&args);
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let bytes = std::fs::read(&output).unwrap();
    let mask = wide_wav::header(&bytes).and_then(|h| h.mask);
    let limits = longtail::ir::decode::Limits {
        max_channels: 64,
        max_seconds: None,
    };
    let (audio, _) = longtail::ir::decode::read(&output, limits).unwrap();
    std::fs::remove_file(&output).unwrap();
    (audio.channels, mask)
}

#[test]
fn a_stereo_ir_on_7_1_4_plays_by_sides_with_the_lfe_dry_and_the_right_mask() {
    let dir = temp_dir("714");
    let ir = [noise(300, 1, 0.5), noise(300, 2, 0.5)];
    let ir_path = dir.join("stereo.wav");
    wav::write_f32(&ir_path, RATE, &ir).unwrap();
    let input: Vec<Vec<f32>> = (0..12).map(|c| noise(2000, 10 + c, 0.5)).collect();
    let input_path = dir.join("in-714.wav");
    wav::write_f32_masked(&input_path, RATE, &input, 0x2D63F).unwrap();
    let (output, mask) = render(&dir, &[&ir_path], &input_path, &[]);
    assert_eq!(output.len(), 12);
    assert_eq!(mask, Some(0x2D63F), "the output names 7.1.4's speakers");
    let len = output[0].len();
    // L, C, LFE, Rtr.
    let left = convolve(&[(&input[0], &ir[0], 1.0)], len);
    let centre = convolve(&[(&input[2], &ir[0], 0.5), (&input[2], &ir[1], 0.5)], len);
    let rtr = convolve(&[(&input[11], &ir[1], 1.0)], len);
    assert!(snr_db(&output[0], &left) > 100.0);
    assert!(snr_db(&output[2], &centre) > 100.0);
    assert!(snr_db(&output[11], &rtr) > 100.0);
    assert!(output[3].iter().all(|&s| s == 0.0), "the LFE stays dry");

    let info = cli(&["ir-info", ir_path.to_str().unwrap(), "--outputs", "12"]);
    let stdout = String::from_utf8_lossy(&info.stdout);
    assert!(info.status.success());
    assert!(
        stdout.contains("stereo IR on 7.1.4 (12 in / 12 out): 11 paths"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  C -> C: 0.5 x IR 1 + 0.5 x IR 2"),
        "{stdout}"
    );
}

#[test]
fn one_file_per_input_and_a_24_channel_file_are_matrices() {
    let dir = temp_dir("rows");
    let input = [noise(1500, 20, 0.5), noise(1500, 21, 0.5)];
    let input_path = dir.join("in.wav");
    wav::write_f32(&input_path, RATE, &input).unwrap();

    // Two rows of three outputs.
    let rows: Vec<Vec<Vec<f32>>> = (0..2)
        .map(|r| (0..3).map(|o| noise(200, 30 + 3 * r + o, 0.5)).collect())
        .collect();
    let paths: Vec<PathBuf> = (0..2).map(|r| dir.join(format!("row-{r}.wav"))).collect();
    for (path, row) in paths.iter().zip(&rows) {
        wav::write_f32(path, RATE, row).unwrap();
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let (output, _) = render(&dir, &refs, &input_path, &[]);
    assert_eq!(output.len(), 3);
    for (o, channel) in output.iter().enumerate() {
        let expected = convolve(
            &[(&input[0], &rows[0][o], 1.0), (&input[1], &rows[1][o], 1.0)],
            channel.len(),
        );
        assert!(snr_db(channel, &expected) > 100.0, "output {o}");
    }

    // 24 channels: 2 x 12, read past symphonia's limit.
    let wide: Vec<Vec<f32>> = (0..24).map(|c| noise(100, 50 + c, 0.5)).collect();
    let wide_path = dir.join("wide.wav");
    wav::write_f32_masked(&wide_path, RATE, &wide, 0).unwrap();
    let (output, mask) = render(&dir, &[&wide_path], &input_path, &["--format", "discrete"]);
    assert_eq!((output.len(), mask), (12, None));
    for (o, channel) in output.iter().enumerate() {
        let expected = convolve(
            &[(&input[0], &wide[o], 1.0), (&input[1], &wide[12 + o], 1.0)],
            channel.len(),
        );
        assert!(snr_db(channel, &expected) > 100.0, "output {o}");
    }
}

#[test]
fn a_mask_that_disagrees_with_the_bus_is_refused_until_the_format_is_discrete() {
    let dir = temp_dir("mask");
    // hound's own mask for 12 channels: the first twelve speaker bits, not 7.1.4.
    let ir: Vec<Vec<f32>> = (0..12).map(|c| noise(100, 60 + c, 0.5)).collect();
    let ir_path = dir.join("first-bits.wav");
    wav::write_f32(&ir_path, RATE, &ir).unwrap();
    let input: Vec<Vec<f32>> = (0..12).map(|c| noise(500, 80 + c, 0.5)).collect();
    let input_path = dir.join("in.wav");
    wav::write_f32(&input_path, RATE, &input).unwrap();
    let output = dir.join("never.wav");
    let result = cli(&[
        "render",
        "--input",
        input_path.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--ir",
        ir_path.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        stderr.contains("does not match the bus's speakers 7.1.4 (L R C LFE"),
        "{stderr}"
    );
    assert!(!output.exists());
    // Discrete: one channel per output, channel by channel.
    let (output, _) = render(&dir, &[&ir_path], &input_path, &["--format", "discrete"]);
    let expected = convolve(&[(&input[5], &ir[5], 1.0)], output[5].len());
    assert!(snr_db(&output[5], &expected) > 100.0);
}
