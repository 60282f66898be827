//! The render's shaping options against float64: `--width`, `--early`, `--tail`,
//! `--crossover`, `--low-shelf` and `--high-shelf`, each measured on the output.

use super::*;

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

/// A mono IR rendered from a unit impulse at mix 100 % (no normalisation): the output is the
/// edited IR, so each edit is measured on what the render writes.
pub(super) fn impulse_render(dir: &Path, ir: &[f32], extra: &[&str]) -> Vec<f64> {
    let ir_path = dir.join("ir.wav");
    let input_path = dir.join("impulse.wav");
    write_float_wav(&ir_path, 44_100, &[ir.to_vec()]);
    let mut impulse = vec![0.0f32; 64];
    impulse[0] = 1.0;
    write_float_wav(&input_path, 44_100, &[impulse]);
    let mut args = vec!["--block", "64"];
    args.extend_from_slice(extra);
    let output = render(dir, &ir_path, &input_path, &args);
    output[0].iter().map(|&s| f64::from(s)).collect()
}

/// Noise decaying by 60 dB over its `len` samples.
fn decaying_ir(len: usize, seed: u64) -> Vec<f32> {
    let decay = (-(1000f64.ln()) / len as f64).exp();
    noise(len, seed, 0.5)
        .into_iter()
        .enumerate()
        .map(|(idx, s)| (f64::from(s) * decay.powi(idx as i32)) as f32)
        .collect()
}

/// `--early` and `--tail` change the energy before and after the crossover's fade by their dB
/// (within 0.2 dB), against the IR in float64.
#[test]
fn early_and_tail_levels_change_the_energy_on_each_side_of_the_crossover() {
    let dir = temp_dir("balance");
    let ir = decaying_ir(22_050, 60);
    let output = impulse_render(
        &dir,
        &ir,
        &["--early", "-6", "--tail", "4.5", "--crossover", "50"],
    );
    let ms = |ms: f64| (ms * 44.1) as usize;
    let energy_db = |range: std::ops::Range<usize>| {
        let out: f64 = output[range.clone()].iter().map(|s| s * s).sum();
        let reference: f64 = ir[range].iter().map(|&s| f64::from(s).powi(2)).sum();
        10.0 * (out / reference).log10()
    };
    // The crossfade is 10 ms each side of 50 ms.
    let (early, tail) = (energy_db(0..ms(40.0)), energy_db(ms(60.0)..ir.len()));
    eprintln!("early {early:+.3} dB, tail {tail:+.3} dB");
    assert!((early + 6.0).abs() <= 0.2, "early {early:+.3} dB");
    assert!((tail - 4.5).abs() <= 0.2, "tail {tail:+.3} dB");
    let error = render_error(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("impulse.wav"),
        &["--tail", "40"],
    );
    assert!(
        error.contains("tail level") && error.contains("out of range"),
        "{error}"
    );
}

/// `--low-shelf` and `--high-shelf`: the output's spectrum over the IR's reaches each shelf's
/// gain an octave and more beyond its corner, and half of it at the corner (within 0.5 dB).
#[test]
fn shelves_reach_their_gain_and_half_of_it_at_the_corner() {
    let dir = temp_dir("shelves");
    let ir = decaying_ir(44_100, 61);
    let output = impulse_render(
        &dir,
        &ir,
        &["--low-shelf", "200:-12", "--high-shelf", "4000Hz:6dB"],
    );
    // The spectrum at `hz`, by a direct DFT sum.
    let spectrum = |signal: &dyn Fn(usize) -> f64, len: usize, hz: f64| {
        let omega = std::f64::consts::TAU * hz / 44_100.0;
        let (re, im) = (0..len).fold((0.0, 0.0), |(re, im), n| {
            let phase = omega * n as f64;
            (re + signal(n) * phase.cos(), im - signal(n) * phase.sin())
        });
        (re * re + im * im).sqrt()
    };
    // The shelves' own response, through bands of ten bins so the IR's noise averages out.
    let gain_db = |hz: f64| {
        let (mut out, mut reference) = (0.0, 0.0);
        for bin in -5..5 {
            let f = hz + f64::from(bin);
            out += spectrum(&|n| output[n], output.len(), f).powi(2);
            reference += spectrum(&|n| f64::from(ir[n]), ir.len(), f).powi(2);
        }
        10.0 * (out / reference).log10()
    };
    for (hz, expected) in [
        (50.0, -12.0),
        (100.0, -12.0),
        (200.0, -6.0),
        (4000.0, 3.0),
        (8000.0, 6.0),
        (16_000.0, 6.0),
    ] {
        let gain = gain_db(hz);
        eprintln!("{hz} Hz: {gain:+.2} dB");
        assert!(
            (gain - expected).abs() <= 0.5,
            "{hz} Hz: {gain:+.2} dB, not {expected}"
        );
    }
    let error = render_error(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("impulse.wav"),
        &["--low-shelf", "200"],
    );
    assert!(error.contains("not a shelf"), "{error}");
}

/// `--predelay-note` at `--tempo`: an eighth is 250 ms at 120 BPM and 320.86 ms at 93.5 BPM,
/// within one sample on the output; a note without a tempo is refused.
#[test]
fn a_synced_pre_delay_is_the_note_at_the_tempo() {
    let dir = temp_dir("synced");
    let mut ir = vec![0.0f32; 2000];
    ir[0] = 1.0;
    for (bpm, ms) in [("120", 250.0), ("93.5", 60_000.0 / 93.5 / 2.0)] {
        let output = impulse_render(&dir, &ir, &["--tempo", bpm, "--predelay-note", "1/8"]);
        let first = output
            .iter()
            .position(|&s| s.abs() > 0.5)
            .expect("an impulse");
        let exact = ms * 44.1;
        eprintln!("{bpm} BPM: first sample at {first}, the note is {exact:.2} samples");
        assert!(
            (first as f64 - exact).abs() <= 1.0,
            "{bpm} BPM: {first} vs {exact:.2}"
        );
    }
    let output = impulse_render(&dir, &ir, &["--tempo", "120", "--predelay-note", "1/16."]);
    assert_eq!(
        output.iter().position(|&s| s.abs() > 0.5),
        Some(8269),
        "1/16. at 120 BPM"
    );
    let error = render_error(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("impulse.wav"),
        &["--predelay-note", "1/8"],
    );
    assert!(error.contains("--tempo"), "{error}");
    let error = render_error(
        &dir,
        &dir.join("ir.wav"),
        &dir.join("impulse.wav"),
        &["--tempo", "120", "--predelay-note", "1/3"],
    );
    assert!(error.contains("not a note value"), "{error}");
}
