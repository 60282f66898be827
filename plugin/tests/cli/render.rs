//! `render` against float64, its refusals, and the demo.

use super::*;

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
        // The offload mode: every level on a worker, 4096 samples late (2048 leaves no room
        // for a block of 480), cut off again.
        &["--block", "480", "--latency", "2048", "--backend", "cpu"],
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
        (
            &good_ir,
            &good_in,
            &["--latency", "0"],
            "a number of samples from 1",
        ),
        (&good_ir, &good_in, &["--latency", "65537"], "to 65536"),
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
