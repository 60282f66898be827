//! `--duck`, `--duck-threshold`, `--duck-attack`, `--duck-release` and `--key`, measured on
//! what `render` writes at mix 100 %: the ducked render over the plain one is the ducking's
//! gain, sample by sample (the ducking scales the wet signal after the convolution).

use super::*;

const RATE: usize = 44_100;

/// A 1 kHz burst train at -12 dBFS: 0.5 s on, 1 s off, three times.
fn bursts() -> Vec<f32> {
    let amplitude = 10f32.powf(-12.0 / 20.0);
    (0..RATE * 9 / 2)
        .map(|i| {
            let on = (i % (RATE * 3 / 2)) < RATE / 2;
            let phase = std::f32::consts::TAU * 1000.0 * i as f32 / RATE as f32;
            if on { amplitude * phase.sin() } else { 0.0 }
        })
        .collect()
}

/// Noise decaying by 60 dB over a second: a wet signal that rings through the release.
fn room() -> Vec<f32> {
    let decay = 10f64.powf(-3.0 / RATE as f64);
    noise(RATE, 7, 0.5)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (f64::from(s) * decay.powi(i as i32)) as f32)
        .collect()
}

/// The gain of `ducked` over `plain` in dB at each sample where the plain render is not
/// silent (`None` there).
fn gain_db(ducked: &[f32], plain: &[f32]) -> Vec<Option<f64>> {
    ducked
        .iter()
        .zip(plain)
        .map(|(&d, &p)| (p.abs() > 1e-6).then(|| 20.0 * (f64::from(d) / f64::from(p)).log10()))
        .collect()
}

/// The targets of issue 87: 12 dB ± 0.5 during a burst after the attack, back within 1 dB of
/// unity at the release time ± 10 % after it; an amount of 0 dB is the plain render, bit for
/// bit.
#[test]
fn ducking_lowers_the_wet_signal_while_the_input_plays() {
    let dir = temp_dir("duck");
    write_float_wav(&dir.join("ir.wav"), RATE as u32, &[room()]);
    write_float_wav(&dir.join("in.wav"), RATE as u32, &[bursts()]);
    let (ir, input) = (dir.join("ir.wav"), dir.join("in.wav"));
    let plain = render(&dir, &ir, &input, &[]);
    let ducked = render(
        &dir,
        &ir,
        &input,
        &[
            "--duck",
            "12",
            "--duck-threshold",
            "-30",
            "--duck-attack",
            "10",
            "--duck-release",
            "250",
        ],
    );
    let gains = gain_db(&ducked[0], &plain[0]);
    for burst in 0..3 {
        let start = burst * RATE * 3 / 2;
        // After the attack (10 ms) to the burst's end.
        for (i, g) in gains[start + RATE / 50..start + RATE / 2]
            .iter()
            .enumerate()
        {
            if let Some(g) = g {
                assert!(
                    (g + 12.0).abs() <= 0.5,
                    "burst {burst}, sample {i}: {g:.2} dB"
                );
            }
        }
        let end = start + RATE / 2;
        let back = gains[end..]
            .iter()
            .position(|g| g.is_some_and(|g| g > -1.0))
            .expect("the gain comes back") as f64
            / RATE as f64;
        eprintln!("burst {burst}: back within 1 dB after {:.1} ms", back * 1e3);
        assert!((back / 0.25 - 1.0).abs() <= 0.10, "back after {back} s");
    }
    let zero = render(&dir, &ir, &input, &["--duck", "0"]);
    assert_eq!(zero, plain, "--duck 0 changes the render");
}

/// `--key`: the sidechain decides, not the input. A silent key leaves the render as it is; a
/// loud one ducks it while the input is silent too.
#[test]
fn the_key_file_decides_and_not_the_input() {
    let dir = temp_dir("duck-key");
    write_float_wav(&dir.join("ir.wav"), RATE as u32, &[room()]);
    write_float_wav(&dir.join("in.wav"), RATE as u32, &[bursts()]);
    let (ir, input) = (dir.join("ir.wav"), dir.join("in.wav"));
    let silent = dir.join("silent.wav");
    write_float_wav(&silent, RATE as u32, &[vec![0.0; RATE]]);
    let loud = dir.join("loud.wav");
    write_float_wav(
        &loud,
        RATE as u32,
        &[noise(RATE * 6, 3, 0.5), noise(RATE * 6, 4, 0.5)],
    );
    let plain = render(&dir, &ir, &input, &[]);
    let silent_key = ["--duck", "12", "--key", silent.to_str().unwrap()];
    assert_eq!(
        render(&dir, &ir, &input, &silent_key),
        plain,
        "a silent key ducks"
    );
    let loud_key = ["--duck", "12", "--key", loud.to_str().unwrap()];
    let ducked = render(&dir, &ir, &input, &loud_key);
    let gains = gain_db(&ducked[0], &plain[0]);
    // Between the first two bursts the input is silent, and the wet is still ducked.
    for g in gains[RATE * 3 / 4..RATE * 5 / 4].iter().flatten() {
        assert!((g + 12.0).abs() <= 0.5, "{g:.2} dB while the key plays");
    }
    let error = render_error(&dir, &ir, &input, &["--duck", "30"]);
    assert!(error.contains("not a ducking amount"), "{error}");
    let other_rate = dir.join("key-48k.wav");
    write_float_wav(&other_rate, 48_000, &[vec![0.0; 480]]);
    let error = render_error(
        &dir,
        &ir,
        &input,
        &["--duck", "6", "--key", other_rate.to_str().unwrap()],
    );
    assert!(error.contains("one rate"), "{error}");
}
