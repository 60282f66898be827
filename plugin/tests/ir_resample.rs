//! Resampling IRs to the session rate, against a float64 reference.
//!
//! The test IR is a continuous-time signal known in closed form: a sum of sinusoids below 90 % of
//! the lower Nyquist frequency under a smooth envelope (raised-cosine onset, exponential decay,
//! raised-cosine end), so its ideal resampling at any rate is the formula evaluated at the new
//! sample times, in float64. The resampler must match it within its stated accuracy
//! (`resample::ACCURACY_DB`), keep the frequency response within 0.1 dB, and the whole path (file
//! at 44.1 kHz, session at 48 kHz, engine) must match a float64 convolution with the ideal IR.

use std::f64::consts::{PI, TAU};

use longtail::engine::LatencyMode;
use longtail::ir::edit::{self, EditSettings};
use longtail::ir::resample::{self, ACCURACY_DB};
use longtail::ir::wav;
use longtail::render::{BlockSizes, RenderOptions, render};
use longtail::rng::Rng;

const SECONDS: f64 = 0.25;

/// The band-limited test IR: `(frequency_hz, amplitude, phase)` partials under an envelope.
struct Reference {
    partials: Vec<(f64, f64, f64)>,
}

impl Reference {
    fn new(max_hz: f64, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let partials = (0..60)
            .map(|_| {
                let hz = 40.0 + (max_hz - 40.0) * f64::from(rng.bipolar() * 0.5 + 0.5);
                let amplitude = 0.02 + 0.02 * f64::from(rng.bipolar());
                let phase = PI * f64::from(rng.bipolar());
                (hz, amplitude, phase)
            })
            .collect();
        Self { partials }
    }

    /// The continuous IR at `t` seconds.
    fn at(&self, t: f64) -> f64 {
        let (onset, end) = (0.01, 0.05);
        let envelope = if t <= 0.0 || t >= SECONDS {
            0.0
        } else {
            let rise = (t / onset).min(1.0);
            let fall = ((SECONDS - t) / end).min(1.0);
            (PI / 2.0 * rise).sin().powi(2) * (PI / 2.0 * fall).sin().powi(2) * (-t / 0.08).exp()
        };
        envelope
            * self
                .partials
                .iter()
                .map(|(hz, amplitude, phase)| amplitude * (TAU * hz * t + phase).sin())
                .sum::<f64>()
    }

    /// Samples at `rate`, scaled by `gain`.
    fn sampled(&self, rate: u32, gain: f64) -> Vec<f64> {
        let len = (SECONDS * f64::from(rate)).ceil() as usize;
        (0..len)
            .map(|idx| gain * self.at(idx as f64 / f64::from(rate)))
            .collect()
    }
}

fn error_db(actual: &[f32], expected: &[f64]) -> f64 {
    let len = actual.len().max(expected.len());
    let (mut signal, mut error) = (0.0, 0.0);
    for idx in 0..len {
        let a = actual.get(idx).map_or(0.0, |&v| f64::from(v));
        let e = expected.get(idx).copied().unwrap_or(0.0);
        signal += e * e;
        error += (a - e) * (a - e);
    }
    10.0 * (error / signal).log10()
}

/// `|H(f)|` in dB of an IR sampled at `rate`.
fn response_db(ir: &[f32], rate: u32, hz: f64) -> f64 {
    let (mut re, mut im) = (0.0, 0.0);
    for (idx, &h) in ir.iter().enumerate() {
        let phase = TAU * hz * idx as f64 / f64::from(rate);
        re += f64::from(h) * phase.cos();
        im -= f64::from(h) * phase.sin();
    }
    10.0 * (re * re + im * im).log10()
}

#[test]
fn conversions_match_the_float64_reference_and_keep_the_response() {
    // Partials below 90 % of the lower Nyquist frequency of every pair (44.1 kHz: 19.8 kHz;
    // 22.05 kHz: 9.9 kHz), leaving room for the envelope's spread.
    for (from, to) in [
        (44_100, 48_000),
        (48_000, 44_100),
        (96_000, 48_000),
        (22_050, 48_000),
    ] {
        let reference = if from == 22_050 {
            Reference::new(9_000.0, 12)
        } else {
            Reference::new(19_000.0, 11)
        };
        let source: Vec<f32> = reference
            .sampled(from, 1.0)
            .iter()
            .map(|&s| s as f32)
            .collect();
        let converted = resample::convert_rate(std::slice::from_ref(&source), from, to).unwrap();
        // Level rule: amplitude scaled by from / to, so the frequency response stays.
        let gain = f64::from(from) / f64::from(to);
        let expected = reference.sampled(to, gain);
        assert_eq!(
            converted[0].len(),
            (source.len() * to as usize).div_ceil(from as usize)
        );
        let error = error_db(&converted[0], &expected);
        println!("{from} -> {to} Hz: error {error:.1} dB");
        assert!(
            error < ACCURACY_DB,
            "{from} -> {to} Hz: error {error:.1} dB, stated accuracy {ACCURACY_DB} dB"
        );
        for hz in [100.0, 1_000.0, 5_000.0, 8_000.0] {
            let before = response_db(&source, from, hz);
            let after = response_db(&converted[0], to, hz);
            assert!(
                (after - before).abs() < 0.1,
                "{from} -> {to} Hz at {hz} Hz: {before:.3} dB became {after:.3} dB"
            );
        }
    }
}

/// A 44.1 kHz IR file in a 48 kHz session: the whole path (decode, prepare, engine) against a
/// float64 convolution with the ideally resampled IR.
#[test]
fn a_44k1_file_in_a_48k_session_matches_the_float64_reference() {
    let dir = std::env::temp_dir().join(format!("longtail-irrs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let reference = Reference::new(19_000.0, 13);
    let source: Vec<f32> = reference
        .sampled(44_100, 1.0)
        .iter()
        .map(|&s| s as f32)
        .collect();
    let path = dir.join("ir44.wav");
    wav::write_f32(&path, 44_100, &[source]).unwrap();
    let (file_ir, _) = longtail::ir::load(&[&path]).unwrap();
    assert_eq!(file_ir.sample_rate, 44_100);
    let (ir, report) = edit::prepare(&file_ir, &EditSettings::NONE, 48_000).unwrap();
    assert_eq!(report.resampled, Some((44_100, 48_000)));
    assert_eq!(ir.sample_rate, 48_000);

    let ideal = reference.sampled(48_000, 44_100.0 / 48_000.0);
    let mut rng = Rng::new(14);
    let input: Vec<f32> = (0..6000).map(|_| 0.5 * rng.bipolar()).collect();
    let options = RenderOptions {
        blocks: BlockSizes::Fixed(64),
        mix: 1.0,
        width: 1.0,
        latency_mode: LatencyMode::Zero,
        executor: longtail::engine::Executor::Workers,
        outputs: None,
        format: Default::default(),
        duck: longtail::audio::ducker::DuckSettings::OFF,
    };
    let (output, _) = render(&ir, std::slice::from_ref(&input), options).unwrap();
    let mut expected = vec![0.0f64; input.len() + ideal.len() - 1];
    for (i, &x) in input.iter().enumerate() {
        for (j, &h) in ideal.iter().enumerate() {
            expected[i + j] += f64::from(x) * h;
        }
    }
    let error = error_db(&output[0], &expected);
    println!("44.1 kHz IR in a 48 kHz session: error {error:.1} dB");
    assert!(error < ACCURACY_DB, "error {error:.1} dB");
}
