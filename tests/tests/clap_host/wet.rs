//! The wet signal's controls through the host: Width, automated inside a block and on a block
//! boundary while a stereo sine plays, changes the output without a click and reaches its
//! values; Blend, automated from the first IR to the second, never clicks either.

use super::*;

/// A 220 Hz sine at a quarter of full scale, delayed by `phase` radians.
fn sine(total: usize, phase: f64) -> Vec<f32> {
    (0..total)
        .map(|idx| {
            let t = idx as f64 / f64::from(SAMPLE_RATE);
            (0.25 * (2.0 * std::f64::consts::PI * 220.0 * t - phase).sin()) as f32
        })
        .collect()
}

/// Largest sample-to-sample change of `signal(idx)` over `range` (from its second sample).
fn max_jump(range: std::ops::Range<usize>, signal: impl Fn(usize) -> f64) -> f64 {
    range
        .skip(1)
        .map(|idx| (signal(idx) - signal(idx - 1)).abs())
        .fold(0.0, f64::max)
}

/// Energy of `signal(idx)` over `range`.
fn energy(range: std::ops::Range<usize>, signal: impl Fn(usize) -> f64) -> f64 {
    range.map(|idx| signal(idx).powi(2)).sum()
}

/// Width from 100 % to 0 % at an offset inside a block, then to 200 % on a block boundary, mix
/// at 100 %. Against the same run without them: nothing differs before the first event; the
/// difference's sample-to-sample jumps stay within the wet side's own jumps plus 1e-3 (a step
/// without smoothing jumps by the side's whole amplitude, about 0.1 here); once smoothed, the
/// side is gone (under -100 dB of the mid) and then doubled (+6.02 dB within 0.1 dB), the mid
/// unchanged.
#[test]
fn width_automation_is_smooth_and_reaches_its_values() {
    let mut host = TestHost::new();
    let mix = host.param(MIX);
    let width = host.param(WIDTH);
    let mono = host.text_to_value(width, c"0 %");
    let doubled = host.text_to_value(width, c"200 %");
    host.activate(MAX_BLOCK);
    // Mix to 100 % first, smoothed and settled before both runs.
    let warm_up = 4 * SMOOTHING_SAMPLES;
    let silence = vec![0.0f32; warm_up];
    let to_wet = [Automation {
        at: 0,
        param: mix,
        value: 1.0,
    }];
    host.process([&silence, &silence], &block_sizes(warm_up, 512), &to_wet);
    host.reset();

    let total = 2 * SAMPLE_RATE as usize;
    // The right channel a quarter period behind: the wet signal has a side as large as its mid.
    let input = [sine(total, 0.0), sine(total, std::f64::consts::FRAC_PI_2)];
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let starts = block_starts(&sizes);
    let block = (0..sizes.len())
        .find(|&idx| starts[idx] >= SAMPLE_RATE as usize / 2 && sizes[idx] > 100)
        .expect("a long block");
    let to_mono = starts[block] + 100;
    let to_doubled = *starts
        .iter()
        .find(|&&start| start >= to_mono + SAMPLE_RATE as usize / 2)
        .expect("a later block");

    let plain = host.process([&input[0], &input[1]], &sizes, &[]);
    host.reset();
    let automation = [
        Automation {
            at: to_mono,
            param: width,
            value: mono,
        },
        Automation {
            at: to_doubled,
            param: width,
            value: doubled,
        },
    ];
    let automated = host.process([&input[0], &input[1]], &sizes, &automation);
    assert_finite(&automated);

    let sample = |run: &Run, channel: usize, idx: usize| f64::from(run.outputs[channel][idx]);
    let mid = |run: &Run, idx| 0.5 * (sample(run, 0, idx) + sample(run, 1, idx));
    let side = |run: &Run, idx| 0.5 * (sample(run, 0, idx) - sample(run, 1, idx));
    let side_jump = max_jump(0..total, |idx| side(&plain, idx));
    let side_peak = (0..total)
        .map(|idx| side(&plain, idx).abs())
        .fold(0.0, f64::max);
    eprintln!("wet side: peak {side_peak:.3}, largest jump {side_jump:.4}");
    assert!(
        side_peak > 0.05,
        "the test needs a wet side: peak {side_peak}"
    );
    for channel in 0..2 {
        let difference = |idx| sample(&automated, channel, idx) - sample(&plain, channel, idx);
        let first = (0..total).find(|&idx| difference(idx) != 0.0);
        assert!(
            first.is_some_and(|idx| idx >= to_mono),
            "channel {channel}: differs at {first:?}, before the first event ({to_mono})"
        );
        let jump = max_jump(0..total, difference);
        eprintln!("channel {channel}: largest jump of the difference {jump:.4}");
        assert!(
            jump <= side_jump + 1e-3,
            "channel {channel}: the difference jumps by {jump}, the side itself by {side_jump}"
        );
    }
    let settled_mono = to_mono + SMOOTHING_SAMPLES..to_doubled;
    let mono_side_db = 10.0
        * (energy(settled_mono.clone(), |idx| side(&automated, idx))
            / energy(settled_mono, |idx| mid(&automated, idx)))
        .log10();
    assert!(
        mono_side_db < -100.0,
        "side at 0 %: {mono_side_db:.1} dB of the mid"
    );
    let settled_doubled = to_doubled + SMOOTHING_SAMPLES..total;
    let ratio_db = |signal: &dyn Fn(&Run, usize) -> f64| {
        10.0 * (energy(settled_doubled.clone(), |idx| signal(&automated, idx))
            / energy(settled_doubled.clone(), |idx| signal(&plain, idx)))
        .log10()
    };
    let (side_db, mid_db) = (ratio_db(&side), ratio_db(&mid));
    eprintln!("at 200 %: side {side_db:+.3} dB, mid {mid_db:+.4} dB");
    assert!(
        (side_db - 20.0 * 2f64.log10()).abs() <= 0.1,
        "side at 200 %: {side_db:+.3} dB"
    );
    assert!(mid_db.abs() <= 0.01, "mid at 200 %: {mid_db:+.4} dB");
    host.assert_threading_respected();
}

/// A second IR (the Plate) blended with the first (the Hall), mix at 100 %: Blend automated
/// from 0 to 100 % over 2 s while a sine plays (an event every 512 samples, then smoothed) never
/// jumps from one sample to the next by more than 1e-3 beyond the two steady renders' own
/// largest jumps (issue 46's measure); and the automated run ends where the steady render at
/// 100 % is, the first IR's engine at rest.
#[test]
fn blend_automation_never_clicks() {
    let mut host = TestHost::new();
    let (mix, source_b, blend) = (
        host.param(MIX),
        host.param("IR B source"),
        host.param("Blend"),
    );
    let total = 3 * SAMPLE_RATE as usize;
    let input = [sine(total, 0.0), sine(total, 0.0)];
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let mut steady = Vec::new();
    for share in [0.0, 1.0] {
        host.flush(&[(mix, 1.0), (source_b, 1.0), (blend, share)]);
        host.activate(MAX_BLOCK);
        steady.push(host.process([&input[0], &input[1]], &sizes, &[]));
        host.deactivate();
    }
    host.flush(&[(blend, 0.0)]);
    host.activate(MAX_BLOCK);
    let ramp_end = 2 * SAMPLE_RATE as usize;
    let automation: Vec<Automation> = (0..ramp_end)
        .step_by(512)
        .map(|at| Automation {
            at,
            param: blend,
            value: ((at + 512) as f64 / ramp_end as f64).min(1.0),
        })
        .collect();
    let moving = host.process([&input[0], &input[1]], &sizes, &automation);
    assert_finite(&moving);
    for channel in 0..2 {
        let own = steady
            .iter()
            .map(|run| max_jump(0..total, |idx| f64::from(run.outputs[channel][idx])))
            .fold(0.0, f64::max);
        let jump = max_jump(0..total, |idx| f64::from(moving.outputs[channel][idx]));
        let apart = (0..total)
            .map(|idx| (steady[0].outputs[channel][idx] - steady[1].outputs[channel][idx]).abs())
            .fold(0.0f32, f32::max);
        eprintln!(
            "channel {channel}: largest jump {jump:.4}, the steady renders' {own:.4}, \
             the two apart by up to {apart:.3}"
        );
        assert!(apart > 0.05, "the two IRs sound too alike to test");
        assert!(
            jump <= own + 1e-3,
            "channel {channel}: jumps by {jump}, the steady renders by {own}"
        );
        // After the ramp and the second engine's rest, the first one has parked: the output is
        // the second IR's alone, as the steady render at 100 % plays it (from silence, so the
        // tail of what came before has died away by the end).
        let tail = total - SAMPLE_RATE as usize / 4..total;
        let differ = tail
            .map(|idx| (moving.outputs[channel][idx] - steady[1].outputs[channel][idx]).abs())
            .fold(0.0f32, f32::max);
        eprintln!("channel {channel}: at the end, {differ:.2e} from the steady render at 100 %");
        assert!(
            differ <= 1e-6,
            "channel {channel}: {differ} from the render at 100 %"
        );
    }
    host.assert_threading_respected();
}
