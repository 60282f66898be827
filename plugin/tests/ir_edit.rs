//! Each editing step of `ir::edit::prepare`, checked numerically against what it must do.

use std::f64::consts::{PI, TAU};

use longtail::ir::edit::{self, EditSettings, output_energy};
use longtail::ir::{Ir, IrLayout};
use longtail::rng::Rng;

const RATE: u32 = 10_000;

fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| 0.5 * rng.bipolar()).collect()
}

fn mono(samples: Vec<f32>) -> Ir {
    Ir::new("test", RATE, vec![samples]).unwrap()
}

fn prepare(ir: &Ir, edits: EditSettings) -> Vec<Vec<f32>> {
    edit::prepare(ir, &edits, ir.sample_rate)
        .unwrap()
        .0
        .channels
}

#[test]
fn trims_cut_the_stated_milliseconds() {
    let source = noise(1000, 1);
    let ir = mono(source.clone());
    // 10 kHz: 1 ms is 10 frames.
    let out = prepare(
        &ir,
        EditSettings {
            trim_start_ms: 3.0,
            trim_end_ms: 5.0,
            ..EditSettings::NONE
        },
    );
    assert_eq!(out[0], source[30..950]);
    let err = edit::prepare(
        &ir,
        &EditSettings {
            trim_start_ms: 60.0,
            trim_end_ms: 40.0,
            ..EditSettings::NONE
        },
        RATE,
    )
    .unwrap_err();
    assert!(err.to_string().contains("remove the whole IR"), "{err}");
}

#[test]
fn auto_trim_cuts_after_the_last_frame_above_the_threshold() {
    // Peak 1.0; a -60 dB sample at frame 100, a -79 dB one at frame 300, -90 dB up to 999.
    let mut samples = vec![1e-4_f32.powf(90.0 / 80.0); 1000];
    samples[0] = 1.0;
    samples[100] = -1e-3;
    samples[300] = 10f32.powf(-79.0 / 20.0);
    let ir = mono(samples.clone());
    let at = |db: f64| {
        let (out, report) = edit::prepare(
            &ir,
            &EditSettings {
                auto_trim_db: Some(db),
                ..EditSettings::NONE
            },
            RATE,
        )
        .unwrap();
        (out.len(), report.auto_trim_at_s)
    };
    assert_eq!(at(-80.0), (301, Some(0.0301)));
    assert_eq!(at(-70.0), (101, Some(0.0101)));
    assert_eq!(at(-50.0), (1, Some(0.0001)));
    // Below the noise floor of -90 dB: nothing is cut.
    assert_eq!(at(-95.0), (1000, None));
    assert_eq!(edit::auto_trim_len(&[samples], -80.0), 301);
}

#[test]
fn predelay_reverse_and_fades() {
    let source = noise(400, 2);
    let ir = mono(source.clone());

    let out = prepare(
        &ir,
        EditSettings {
            predelay_ms: 5.0,
            ..EditSettings::NONE
        },
    );
    assert_eq!(out[0].len(), 450);
    assert!(out[0][..50].iter().all(|&s| s == 0.0));
    assert_eq!(out[0][50..], source[..]);

    let out = prepare(
        &ir,
        EditSettings {
            reverse: true,
            ..EditSettings::NONE
        },
    );
    let reversed: Vec<f32> = source.iter().rev().copied().collect();
    assert_eq!(out[0], reversed);

    // 2 ms fade in (20 frames), 3 ms fade out (30 frames): sin² from the silent end.
    let out = prepare(
        &ir,
        EditSettings {
            fade_in_ms: 2.0,
            fade_out_ms: 3.0,
            ..EditSettings::NONE
        },
    );
    let gain = |idx: usize, len: usize| (PI / 2.0 * idx as f64 / len as f64).sin().powi(2);
    for (idx, (&o, &s)) in out[0].iter().zip(&source).enumerate() {
        let expected = if idx < 20 {
            f64::from(s) * gain(idx, 20)
        } else if idx >= 400 - 30 {
            f64::from(s) * gain(399 - idx, 30)
        } else {
            f64::from(s)
        };
        assert!((f64::from(o) - expected).abs() < 1e-7, "frame {idx}");
    }
    assert_eq!(out[0][0], 0.0);
    assert_eq!(out[0][399], 0.0);
    assert!((f64::from(out[0][10]) - 0.5 * f64::from(source[10])).abs() < 1e-7);
}

#[test]
fn stretch_scales_the_length_and_the_frequencies() {
    // 50 ms of a 1 kHz sine at 48 kHz, stretched by 1.5: 75 ms of a 667 Hz sine.
    let rate = 48_000;
    let samples: Vec<f32> = (0..2400)
        .map(|idx| (TAU * 1000.0 * idx as f64 / f64::from(rate)).sin() as f32)
        .collect();
    let ir = Ir::new("sine", rate, vec![samples]).unwrap();
    let (out, report) = edit::prepare(
        &ir,
        &EditSettings {
            stretch: 1.5,
            ..EditSettings::NONE
        },
        rate,
    )
    .unwrap();
    assert_eq!(out.sample_rate, rate);
    assert_eq!(out.len(), 3600);
    assert_eq!(report.resampled, Some((48_000, 72_000)));
    // The amplitude envelope is kept, the period is 1.5 times longer: 72 samples.
    let middle = &out.channels[0][1000..2600];
    let peak = middle.iter().fold(0.0f32, |p, s| p.max(s.abs()));
    assert!((peak - 1.0).abs() < 1e-3, "peak {peak}");
    let crossings: Vec<usize> = middle
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
        .map(|(idx, _)| idx)
        .collect();
    let period =
        (crossings[crossings.len() - 1] - crossings[0]) as f64 / (crossings.len() - 1) as f64;
    assert!((period - 72.0).abs() < 0.1, "period {period}");
    let err = edit::prepare(
        &ir,
        &EditSettings {
            stretch: 4.0,
            ..EditSettings::NONE
        },
        rate,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("stretch 4 is out of range"),
        "{err}"
    );
}

#[test]
fn normalisation_gives_unit_energy_per_output() {
    for num_channels in [1usize, 2, 4] {
        let channels: Vec<Vec<f32>> = (0..num_channels)
            .map(|c| noise(500, 10 + c as u64).iter().map(|s| s * 3.0).collect())
            .collect();
        let ir = Ir::new("n", RATE, channels.clone()).unwrap();
        let (out, report) = edit::prepare(
            &ir,
            &EditSettings {
                normalize: true,
                ..EditSettings::NONE
            },
            RATE,
        )
        .unwrap();
        let energy = output_energy(&out.channels, out.layout);
        assert!((energy - 1.0).abs() < 1e-5, "{num_channels} ch: {energy}");
        let total: f64 = channels
            .iter()
            .flatten()
            .map(|&s| f64::from(s).powi(2))
            .sum();
        let per_output = match out.layout {
            IrLayout::Mono => total,
            _ => total / 2.0,
        };
        let gain_db = report.normalize_gain_db.unwrap();
        assert!((gain_db + 10.0 * per_output.log10()).abs() < 1e-6);
        // One gain for all channels: the balance stays.
        let ratio = out.channels.last().unwrap()[7] / out.channels[0][7];
        let source_ratio = channels.last().unwrap()[7] / channels[0][7];
        assert!((ratio - source_ratio).abs() < 1e-4 * source_ratio.abs().max(1.0));
    }
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
fn cut_filters_follow_the_butterworth_response() {
    // A unit impulse, so the prepared IR is the filters' impulse response.
    let rate = 48_000;
    let mut impulse = vec![0.0f32; rate as usize];
    impulse[0] = 1.0;
    let ir = Ir::new("impulse", rate, vec![impulse]).unwrap();
    let (low_cut, high_cut) = (200.0, 5_000.0);
    let (out, _) = edit::prepare(
        &ir,
        &EditSettings {
            low_cut_hz: Some(low_cut),
            high_cut_hz: Some(high_cut),
            ..EditSettings::NONE
        },
        rate,
    )
    .unwrap();
    assert_eq!(out.len(), ir.len());
    // Second-order Butterworth through the bilinear transform: with w = tan(pi f / fs),
    // |H_lp|^2 = 1 / (1 + (w / w_c)^4) and |H_hp|^2 = 1 / (1 + (w_c / w)^4).
    let warp = |hz: f64| (PI * hz / f64::from(rate)).tan();
    let expected = |hz: f64| {
        -10.0 * (1.0 + (warp(hz) / warp(high_cut)).powi(4)).log10()
            - 10.0 * (1.0 + (warp(low_cut) / warp(hz)).powi(4)).log10()
    };
    for hz in [50.0, 100.0, 200.0, 1_000.0, 5_000.0, 10_000.0, 20_000.0] {
        let measured = response_db(&out.channels[0], rate, hz);
        let wanted = expected(hz);
        assert!(
            (measured - wanted).abs() < 0.01,
            "{hz} Hz: {measured:.3} dB, expected {wanted:.3} dB"
        );
    }
    // The familiar figures: -3 dB at each cutoff (within the other filter's small effect),
    // about -12 dB an octave below the low cut.
    assert!((response_db(&out.channels[0], rate, low_cut) + 3.01).abs() < 0.05);
    assert!((response_db(&out.channels[0], rate, 100.0) + 12.3).abs() < 0.1);

    let err = edit::prepare(
        &ir,
        &EditSettings {
            high_cut_hz: Some(30_000.0),
            ..EditSettings::NONE
        },
        rate,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("high cut 30000 Hz is out of range"),
        "{err}"
    );
}
