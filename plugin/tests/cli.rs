//! `longtail-cli` end to end: renders against a float64 direct convolution, and every bad input
//! exits non-zero with one clear line on stderr and no panic.

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

/// The Windows build renders what the Linux build renders (>= 100 dB), run by
/// `scripts/windows.sh` under Wine. `LONGTAIL_LINUX_RENDER` names a folder with the Linux
/// `longtail-cli demo` files `ir-hall.wav` and `dry.wav`, and `linux.wav`, the Linux
/// `render --ir ir-hall.wav --input dry.wav --output linux.wav`; unset (a plain `cargo test`),
/// there is nothing to compare with and the test passes.
#[test]
fn render_equals_the_linux_render() {
    let Some(reference) = std::env::var_os("LONGTAIL_LINUX_RENDER").map(PathBuf::from) else {
        return;
    };
    let dir = temp_dir("linux-render");
    let output = dir.join("out.wav");
    cli_stdout(&render_args(
        &reference.join("ir-hall.wav"),
        &reference.join("dry.wav"),
        &output,
        &[],
    ));
    let (spec, actual) = read_wav(&output);
    let (linux_spec, linux) = read_wav(&reference.join("linux.wav"));
    assert_eq!(spec, linux_spec);
    assert_eq!(actual.len(), linux.len());
    for (channel_idx, (actual, linux)) in actual.iter().zip(&linux).enumerate() {
        let expected: Vec<f64> = linux.iter().map(|&v| f64::from(v)).collect();
        let snr = snr_db(actual, &expected);
        println!("channel {channel_idx}: {snr:.1} dB against the Linux render");
        assert!(snr >= 100.0, "channel {channel_idx}: {snr:.1} dB");
    }
}

#[test]
fn render_matches_direct_convolution() {
    let dir = temp_dir("render");
    let ir = [noise(3000, 1, 0.3), noise(3000, 2, 0.3)];
    let input = [noise(5000, 3, 0.5), noise(5000, 4, 0.5)];
    write_float_wav(&dir.join("ir.wav"), 44_100, &ir);
    write_float_wav(&dir.join("in.wav"), 44_100, &input);
    let expected = [direct(&input[0], &ir[0]), direct(&input[1], &ir[1])];
    for extra in [
        &["--block", "64"][..],
        &["--block", "random", "--latency", "low"],
        &["--block", "1", "--backend", "cpu"],
    ] {
        let output = render(&dir, &dir.join("ir.wav"), &dir.join("in.wav"), extra);
        assert_eq!(output.len(), 2);
        for (actual, wanted) in output.iter().zip(&expected) {
            assert_eq!(actual.len(), 5000 + 3000 - 1, "{extra:?}");
            let snr = snr_db(actual, wanted);
            assert!(snr > 100.0, "{extra:?}: SNR {snr:.1} dB");
        }
    }
}

#[test]
fn mono_input_with_stereo_ir_gives_stereo_and_mix_is_linear() {
    let dir = temp_dir("mono");
    let ir = [noise(700, 5, 0.3), noise(700, 6, 0.3)];
    let input = [noise(2000, 7, 0.5)];
    write_float_wav(&dir.join("ir.wav"), 44_100, &ir);
    write_int16_wav(&dir.join("in.wav"), 44_100, &input);
    // The 16-bit input as the CLI reads it.
    let x: Vec<f32> = input[0]
        .iter()
        .map(|s| ((s * 32767.0) as i16) as f32 / 32768.0)
        .collect();

    let output = render(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("in.wav"),
        &["--mix", "0.25"],
    );
    assert_eq!(output.len(), 2);
    for (side, actual) in output.iter().enumerate() {
        let wet = direct(&x, &ir[side]);
        let expected: Vec<f64> = wet
            .iter()
            .enumerate()
            .map(|(i, w)| 0.25 * w + 0.75 * f64::from(x.get(i).copied().unwrap_or(0.0)))
            .collect();
        let snr = snr_db(actual, &expected);
        assert!(snr > 100.0, "side {side}: SNR {snr:.1} dB");
    }
}

#[test]
fn true_stereo_ir_renders() {
    let dir = temp_dir("true-stereo");
    let ir: Vec<Vec<f32>> = (0..4).map(|c| noise(500, 10 + c, 0.3)).collect();
    let input = [noise(1500, 20, 0.5), noise(1500, 21, 0.5)];
    write_float_wav(&dir.join("ir.wav"), 44_100, &ir);
    write_float_wav(&dir.join("in.wav"), 44_100, &input);
    let output = render(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("in.wav"),
        &["--block", "97"],
    );
    // L out = L * LL + R * RL; R out = L * LR + R * RR.
    let sum = |a: Vec<f64>, b: Vec<f64>| a.iter().zip(&b).map(|(x, y)| x + y).collect::<Vec<f64>>();
    let left = sum(direct(&input[0], &ir[0]), direct(&input[1], &ir[2]));
    let right = sum(direct(&input[0], &ir[1]), direct(&input[1], &ir[3]));
    assert!(snr_db(&output[0], &left) > 100.0);
    assert!(snr_db(&output[1], &right) > 100.0);
}

/// `--width`: the wet signal's mid ± width x side against float64, on a true-stereo render (0 %
/// mono, 200 % the side doubled); a bus without stereo outputs refuses it.
#[test]
fn width_scales_the_side_of_the_wet_signal() {
    let dir = temp_dir("width");
    let ir: Vec<Vec<f32>> = (0..4).map(|c| noise(500, 30 + c, 0.3)).collect();
    let input = [noise(1500, 40, 0.5), noise(1500, 41, 0.5)];
    write_float_wav(&dir.join("ir.wav"), 44_100, &ir);
    write_float_wav(&dir.join("in.wav"), 44_100, &input);
    let sum = |a: Vec<f64>, b: Vec<f64>| a.iter().zip(&b).map(|(x, y)| x + y).collect::<Vec<f64>>();
    let left = sum(direct(&input[0], &ir[0]), direct(&input[1], &ir[2]));
    let right = sum(direct(&input[0], &ir[1]), direct(&input[1], &ir[3]));
    for (arg, width) in [("0", 0.0), ("50%", 0.5), ("200", 2.0)] {
        let output = render(
            &dir,
            &dir.join("ir.wav"),
            &dir.join("in.wav"),
            &["--width", arg, "--block", "97"],
        );
        let (mid, side): (Vec<f64>, Vec<f64>) = left
            .iter()
            .zip(&right)
            .map(|(l, r)| (0.5 * (l + r), 0.5 * (l - r) * width))
            .unzip();
        let expected_left: Vec<f64> = mid.iter().zip(&side).map(|(m, s)| m + s).collect();
        let expected_right: Vec<f64> = mid.iter().zip(&side).map(|(m, s)| m - s).collect();
        assert!(
            snr_db(&output[0], &expected_left) > 100.0,
            "--width {arg}: left"
        );
        assert!(
            snr_db(&output[1], &expected_right) > 100.0,
            "--width {arg}: right"
        );
        if width == 0.0 {
            assert_eq!(output[0], output[1], "--width 0 is mono");
        }
    }
    let mono_ir = dir.join("mono-ir.wav");
    write_float_wav(&mono_ir, 44_100, &[noise(50, 2, 0.5)]);
    let mono_in = dir.join("mono-in.wav");
    write_float_wav(&mono_in, 44_100, &[noise(100, 1, 0.5)]);
    let error = render_error(&dir, &mono_ir, &mono_in, &["--width", "50"]);
    assert!(
        error.contains("stereo outputs") && error.contains("1 -> 1"),
        "{error}"
    );
    let error = render_error(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("in.wav"),
        &["--width", "250"],
    );
    assert!(error.contains("not a width"), "{error}");
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

#[test]
fn bad_inputs_fail_with_one_clear_message() {
    let dir = temp_dir("errors");
    let good_in = dir.join("in.wav");
    write_float_wav(&good_in, 44_100, &[noise(100, 1, 0.5)]);
    let good_ir = dir.join("ir.wav");
    write_float_wav(&good_ir, 44_100, &[noise(50, 2, 0.5)]);

    let missing = dir.join("missing.wav");
    let text = dir.join("text.wav");
    std::fs::write(&text, "this is not audio").unwrap();
    let truncated = dir.join("truncated.wav");
    let bytes = std::fs::read(&good_ir).unwrap();
    std::fs::write(&truncated, &bytes[..30]).unwrap();
    let empty = dir.join("empty.wav");
    write_float_wav(&empty, 44_100, &[Vec::new()]);
    let nan = dir.join("nan.wav");
    write_float_wav(&nan, 44_100, &[vec![0.5, f32::NAN, 0.1]]);
    let inf = dir.join("inf.wav");
    write_float_wav(&inf, 44_100, &[vec![0.5, 0.2, f32::INFINITY]]);
    let three = dir.join("three.wav");
    write_float_wav(
        &three,
        44_100,
        &[vec![0.1; 10], vec![0.1; 10], vec![0.1; 10]],
    );
    let too_wide = dir.join("too-wide.wav");
    write_float_wav(&too_wide, 44_100, &vec![vec![0.1; 2]; 4097]);
    let wide_input = dir.join("wide-in.wav");
    write_float_wav(&wide_input, 44_100, &vec![vec![0.1; 10]; 65]);

    let cases: Vec<(&Path, &Path, &[&str], &str)> = vec![
        (&missing, &good_in, &[], "cannot read"),
        (&good_ir, &missing, &[], "cannot read"),
        (&text, &good_in, &[], "not a recognised audio file"),
        (&truncated, &good_in, &[], "cannot decode"),
        (&dir, &good_in, &[], "directory"),
        (&empty, &good_in, &[], "empty"),
        (&nan, &good_in, &[], "non-finite"),
        (&inf, &good_in, &[], "non-finite"),
        (&good_ir, &nan, &[], "non-finite"),
        (&good_ir, &empty, &[], "no samples"),
        // Three channels from a mono input are a 1 -> 3 row; asked for two outputs, refused.
        (
            &three,
            &good_in,
            &["--outputs", "2"],
            "a 3-channel IR (3 channels) cannot play on mono -> stereo (1 in / 2 out)",
        ),
        (&too_wide, &good_in, &[], "4097 channels"),
        (
            &good_ir,
            &wide_input,
            &[],
            "65 channels; supported are 1 to 64",
        ),
        (&good_ir, &good_in, &["--mix", "1.5"], "not a mix"),
        (&good_ir, &good_in, &["--block", "0"], "not a block size"),
        (&good_ir, &good_in, &["--latency", "huge"], "invalid value"),
    ];
    for (ir, input, extra, expected) in cases {
        let stderr = render_error(&dir, ir, input, extra);
        assert!(
            stderr.contains(expected),
            "ir {} input {} {extra:?}: expected '{expected}' in: {stderr}",
            ir.display(),
            input.display()
        );
        // One error line (argument errors may add clap's "try --help" hint after it).
        let error_lines = stderr.lines().filter(|line| line.contains("error")).count();
        assert_eq!(error_lines, 1, "expected one error line: {stderr}");
    }
}

#[test]
fn demo_renders_every_builtin_ir() {
    let dir = temp_dir("demo");
    let stdout = cli_stdout(&["demo", "--output", dir.to_str().unwrap()]);
    for id in ["room", "plate", "hall", "cathedral", "wide-hall"] {
        let (spec, channels) = read_wav(&dir.join(format!("demo-{id}.wav")));
        assert_eq!(spec.channels, 2);
        let peak = channels
            .iter()
            .flatten()
            .fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.01 && peak.is_finite(), "{id}: peak {peak}");
        let (ir_spec, _) = read_wav(&dir.join(format!("ir-{id}.wav")));
        assert_eq!(ir_spec.channels, if id == "wide-hall" { 4 } else { 2 });
    }
    assert!(stdout.contains("real-time factor"), "{stdout}");
    assert!(stdout.contains("plan q=64"), "{stdout}");
}

#[test]
fn bench_prints_the_harness_contract_fields() {
    let stdout = cli_stdout(&[
        "bench",
        "--ir-seconds",
        "0.5",
        "--block",
        "64,100",
        "--seconds",
        "1",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for field in [
        "\"kind\":\"perf\"",
        "\"engine\":\"longtail\"",
        "\"variant\":",
        "\"backend\":\"cpu\"",
        "\"block\":64",
        "\"rate\":48000",
        "\"channels\":2",
        "\"ir_taps\":24000",
        "\"instances\":1",
        "\"audio_s\":",
        "\"cpu_s\":",
        "\"rtf\":",
        "\"threads\":",
        "\"blk_med_us\":",
        "\"blk_p99_us\":",
        "\"blk_max_us\":",
        "\"oncpu_p99_us\":",
        "\"oncpu_max_us\":",
        "\"offcpu_max_us\":",
        "\"steal_ms\":",
        "\"deadline_us\":1333.33",
        "\"max_over_deadline\":",
        "\"latency_samples\":0",
        "\"late_blocks\":0",
        // Offline mode wakes the workers as it waits for them; only real-time wakes count.
        "\"wakes_per_s\":0.0",
    ] {
        assert!(lines[0].contains(field), "{field} missing in {}", lines[0]);
    }
    // The layout is the plan's, head first.
    let plan = longtail::engine::PartitionPlan::new(
        24_000,
        64,
        longtail::engine::LatencyMode::Zero,
        longtail::engine::PlanLimits::default(),
    );
    let levels: Vec<String> = plan
        .levels
        .iter()
        .map(|l| format!("{}x{}", l.partition_size, l.num_partitions))
        .collect();
    let layout = format!("\"layout\":\"head64 {}\"", levels.join(" "));
    assert!(
        lines[0].contains(&layout),
        "{layout} missing in {}",
        lines[0]
    );
    assert!(lines[1].contains("\"block\":100"));
}

/// `--host-threads` spreads the instances over paced host threads: one line per thread with its
/// own share and deadline statistics, then the session's line with the sums.
#[test]
fn bench_spreads_instances_over_host_threads() {
    let stdout = cli_stdout(&[
        "bench",
        "--ir-seconds",
        "0.2",
        "--instances",
        "5",
        "--host-threads",
        "2",
        "--block",
        "128",
        "--seconds",
        "0.5",
        "--paced",
        "--backend",
        "cpu",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].contains("\"host_threads\":2,\"host_thread\":0"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\"host_threads\":2,\"host_thread\":1"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("\"host_threads\":2,\"host_thread\":null"),
        "{}",
        lines[2]
    );
    assert_eq!(json_number(lines[0], "instances"), 3.0);
    assert_eq!(json_number(lines[1], "instances"), 2.0);
    assert_eq!(json_number(lines[2], "instances"), 5.0);
    let worst_p99 = json_number(lines[0], "blk_p99_us").max(json_number(lines[1], "blk_p99_us"));
    assert_eq!(json_number(lines[2], "blk_p99_us"), worst_p99);
    let lates = json_number(lines[0], "late_blocks") + json_number(lines[1], "late_blocks");
    assert_eq!(json_number(lines[2], "late_blocks"), lates);
    assert_eq!(json_number(lines[2], "audio_s"), 0.5);

    let refused = cli(&["bench", "--host-threads", "0", "--json"]);
    assert!(!refused.status.success());
}

/// `--pace` names how the host releases blocks, and `--check` compares the first instance's
/// output with its offline render: an offline run is that render exactly. (Whether a faster host
/// loses results depends on the machine's timing, so only the fields are checked for it.)
#[test]
fn bench_paces_like_the_hosts_and_checks_against_the_offline_render() {
    let run = |pace: &str| {
        let stdout = cli_stdout(&[
            "bench",
            "--ir-seconds",
            "0.3",
            "--block",
            "64",
            "--seconds",
            "0.5",
            "--backend",
            "cpu",
            "--pace",
            pace,
            "--check",
            "--json",
        ]);
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        stdout.trim().to_string()
    };
    let offline = run("offline");
    assert!(
        offline.contains("\"pace\":\"offline\",\"snr_vs_offline_db\":300.0"),
        "{offline}"
    );
    assert!(offline.contains("\"paced\":false"), "{offline}");
    for pace in ["fast", "split:256", "ahead:0.1x2"] {
        let line = run(pace);
        assert!(line.contains(&format!("\"pace\":\"{pace}\"")), "{line}");
        assert!(line.contains("\"paced\":true"), "{line}");
        let snr = json_number(&line, "snr_vs_offline_db");
        assert!((-300.0..=300.0).contains(&snr), "{line}");
    }
    let plain = cli_stdout(&["bench", "--ir-seconds", "0.1", "--seconds", "0.1", "--json"]);
    assert!(plain.contains("\"snr_vs_offline_db\":null"), "{plain}");
    for bad in ["ahead:x", "ahead:0.2x0", "split:0", "slow"] {
        let refused = cli(&["bench", "--pace", bad]);
        assert!(!refused.status.success(), "{bad} was taken");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("is not a pace"), "{bad}: {stderr}");
    }
}

/// A number field of a JSON line.
fn json_number(line: &str, field: &str) -> f64 {
    let key = format!("\"{field}\":");
    let start = line
        .find(&key)
        .unwrap_or_else(|| panic!("{field} missing in {line}"))
        + key.len();
    let rest = &line[start..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|_| panic!("{field} is not a number in {line}"))
}

#[test]
fn bench_fixed_work_measures_the_machine_with_the_same_fields() {
    let stdout = cli_stdout(&[
        "bench",
        "--fixed-work-us",
        "50",
        "--block",
        "64",
        "--seconds",
        "0.5",
        "--warmup-s",
        "0",
        "--json",
    ]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    let line = lines[0];
    assert!(line.contains("\"engine\":\"fixed-work\""), "{line}");
    assert!(line.contains("\"layout\":\"fixed work 50.0 us\""), "{line}");
    assert_eq!(json_number(line, "ir_taps"), 0.0);
    assert_eq!(json_number(line, "threads"), 1.0);
    // Every call spins at least its 50 us, and the thread's own CPU time covers the work.
    assert!(json_number(line, "blk_med_us") >= 50.0, "{line}");
    assert!(json_number(line, "oncpu_max_us") > 0.0, "{line}");
    assert!(json_number(line, "offcpu_max_us") >= 0.0, "{line}");

    let refused = cli(&["bench", "--fixed-work-us=-3", "--json"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--fixed-work-us") && stderr.contains("microseconds"),
        "{stderr}"
    );
}

#[test]
fn bench_harness_mode_writes_the_convolution() {
    let dir = temp_dir("bench");
    let input = [noise(4800, 30, 0.1), noise(4800, 31, 0.1)];
    let ir = [noise(1000, 32, 0.2), noise(1000, 33, 0.2)];
    write_raw(&dir.join("in.f32"), &input);
    write_raw(&dir.join("ir.f32"), &ir);
    let out = dir.join("out.f32");
    let stdout = cli_stdout(&[
        "bench",
        "--input",
        dir.join("in.f32").to_str().unwrap(),
        "--ir",
        dir.join("ir.f32").to_str().unwrap(),
        "--block",
        "128",
        "--rate",
        "48000",
        "--channels",
        "2",
        "--warmup-s",
        "0",
        "--variant",
        "t",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.contains("\"variant\":\"t\""));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 4800 * 2 * 4);
    let got = read_raw(&out, 2);
    for (channel, actual) in got.iter().enumerate() {
        let mut expected = direct(&input[channel], &ir[channel]);
        expected.truncate(4800);
        let snr = snr_db(actual, &expected);
        assert!(snr > 100.0, "channel {channel}: SNR {snr:.1} dB");
    }
}

/// Matrix mode of the harness contract: `--channels 3 --outputs 2` reads an IR of 6 channels
/// (channel i*2+o for input i to output o) and writes 2 output channels, each the sum of its
/// paths; without `--outputs`, 3 channels are the diagonal. The JSON line says both.
#[test]
fn bench_matrix_mode_convolves_every_path() {
    let dir = temp_dir("bench-matrix");
    let input: Vec<Vec<f32>> = (0..3).map(|c| noise(2400, 40 + c, 0.1)).collect();
    let ir: Vec<Vec<f32>> = (0..6).map(|c| noise(700, 50 + c, 0.2)).collect();
    write_raw(&dir.join("in.f32"), &input);
    for (outputs, ir_channels) in [(Some("2"), 6), (None, 3)] {
        write_raw(&dir.join("ir.f32"), &ir[..ir_channels]);
        let (input_path, ir_path, out) =
            (dir.join("in.f32"), dir.join("ir.f32"), dir.join("out.f32"));
        let mut args = vec![
            "bench",
            "--input",
            input_path.to_str().unwrap(),
            "--ir",
            ir_path.to_str().unwrap(),
            "--block",
            "100",
            "--channels",
            "3",
            "--warmup-s",
            "0",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(outputs.map(|m| ["--outputs", m]).into_iter().flatten());
        let line: serde_json::Value = serde_json::from_str(cli_stdout(&args).trim()).unwrap();
        let num_outputs = if outputs.is_some() { 2 } else { 3 };
        assert_eq!(line["channels"], 3, "{line}");
        assert_eq!(line["outputs"], num_outputs, "{line}");
        assert_eq!(line["paths"], ir_channels, "{line}");
        let got = read_raw(&out, num_outputs);
        for (o, actual) in got.iter().enumerate() {
            let mut expected = vec![0.0f64; 2400];
            for (i, x) in input.iter().enumerate() {
                let h = if outputs.is_some() {
                    &ir[i * 2 + o]
                } else if i == o {
                    &ir[i]
                } else {
                    continue;
                };
                expected
                    .iter_mut()
                    .zip(direct(x, h))
                    .for_each(|(e, v)| *e += v);
            }
            let snr = snr_db(actual, &expected);
            assert!(snr > 120.0, "{outputs:?} output {o}: SNR {snr:.1} dB");
        }
    }
    // More than 64 a side is refused by the arguments.
    let result = cli(&["bench", "--channels", "65", "--outputs", "2"]);
    assert!(!result.status.success());
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
