//! The latency, reported and measured on the audio, a latency change while playing, the wet impulse
//! response, and the tail: sleep once rung out, wake on input.

use std::time::{Duration, Instant};

use clack_host::prelude::*;
use longtail::engine::LatencyMode;
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, snr_db};

use super::*;

/// Measures the latency of the dry path: with mix 0 the output is the input delayed by exactly
/// the latency, bit for bit. Returns the measured delay (first non-zero output sample minus the
/// impulse position), checked on both channels.
fn measure_dry_latency(host: &mut TestHost, latency: usize) -> usize {
    let at = 1_000;
    let len = at + latency + 3_000;
    let input = impulse(len, at, true);
    let sizes = block_sizes(len, host.max_frames as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let mut measured = Vec::new();
    for channel in 0..2 {
        let output = &run.outputs[channel];
        let first = output
            .iter()
            .position(|&s| s != 0.0)
            .expect("the impulse comes out");
        measured.push(first - at);
        let mut expected = vec![0.0f32; len];
        expected[at + latency] = 1.0;
        assert_eq!(
            output, &expected,
            "channel {channel}: dry path is not a pure delay"
        );
    }
    assert_eq!(measured[0], measured[1]);
    measured[0]
}

/// "Low CPU" set before activation: the reported latency is one quantum for several host
/// block sizes, the host is told, and the audio is delayed by exactly that much. "Zero
/// latency" reports and measures 0. "Offload" reports the latency its plan takes: 2048 where
/// 2048 is asked for and a worker has its slack, more where the host's block needs it, and
/// 2048 for 512.
#[test]
fn latency_is_reported_and_measured() {
    for (max_frames, mode) in [
        (MAX_BLOCK, LATENCY_ZERO),
        (MAX_BLOCK, LATENCY_LOW_CPU),
        (256, LATENCY_LOW_CPU),
        (100, LATENCY_LOW_CPU),
        (16, LATENCY_LOW_CPU),
        (64, LATENCY_OFFLOAD_2048),
        (MAX_BLOCK, LATENCY_OFFLOAD_2048),
        (64, LATENCY_OFFLOAD_512),
    ] {
        let expected = if mode == LATENCY_LOW_CPU {
            low_cpu_latency(max_frames)
        } else if mode == LATENCY_ZERO {
            0
        } else {
            offload_latency(mode, max_frames)
        };
        let mut host = TestHost::new();
        let (latency, mix) = (host.param(LATENCY), host.param(MIX));
        host.flush(&[(latency, mode), (mix, 0.0)]);
        // A stepped value of 6 comes back through the normalized f32 (1/5 is not exact).
        assert_eq!(host.value(latency).round(), mode);
        host.activate(max_frames);
        assert_eq!(host.latency(), expected, "reported, max block {max_frames}");
        // The host hears of a latency other than the initial 0 (after the restart that
        // nice-plug asks for, see `TestHost::activate`), and of nothing otherwise.
        if expected == 0 {
            assert_eq!(
                host.restarts, 0,
                "restart requested without a latency change"
            );
        }
        let told = host.notifications().latency_changed;
        assert_eq!(
            told,
            u32::from(expected != 0),
            "latency notifications, max block {max_frames}"
        );
        let measured = measure_dry_latency(&mut host, expected as usize);
        assert_eq!(
            measured, expected as usize,
            "measured, max block {max_frames}"
        );
        host.assert_threading_respected();
    }
    assert_eq!(
        low_cpu_latency(MAX_BLOCK),
        MAX_BLOCK,
        "a power-of-two block is the quantum"
    );
    assert_eq!(low_cpu_latency(100), 64);
    assert_eq!(offload_latency(LATENCY_OFFLOAD_2048, 64), 2048);
    assert_eq!(offload_latency(LATENCY_OFFLOAD_512, 64), 2048);
    assert!(offload_latency(LATENCY_OFFLOAD_2048, MAX_BLOCK) > 2048);
}

/// A host playing the dry signal alone (Mix 0) at zero latency; blocks of silence, and the
/// Latency control's switch to "Low CPU" to play inside them.
fn playing_dry_at_zero_latency() -> (TestHost, Vec<f32>, Vec<usize>, [Automation; 1]) {
    let mut host = TestHost::new();
    let (latency, mix) = (host.param(LATENCY), host.param(MIX));
    host.flush(&[(mix, 0.0)]);
    host.activate(MAX_BLOCK);
    assert_eq!(host.latency(), 0);
    let chunk = 4_096;
    let switch = [Automation {
        at: 777,
        param: latency,
        value: LATENCY_LOW_CPU,
    }];
    (
        host,
        vec![0.0f32; chunk],
        block_sizes(chunk, MAX_BLOCK as usize),
        switch,
    )
}

/// Switching to "Low CPU" while playing: the plugin builds the new engine in the background,
/// asks the host for a restart, and after it reports and has one quantum of latency.
#[test]
fn latency_change_while_playing_goes_through_a_restart() {
    let (mut host, silence, sizes, switch) = playing_dry_at_zero_latency();
    assert_eq!(measure_dry_latency(&mut host, 0), 0);
    let run = host.process([&silence, &silence], &sizes, &switch);
    assert_finite(&run);
    let started = Instant::now();
    while !host.take_restart_request() {
        assert!(
            started.elapsed() < PATIENCE,
            "the plugin never asked for a restart after the latency change"
        );
        std::thread::sleep(Duration::from_millis(2));
        let run = host.process([&silence, &silence], &sizes, &[]);
        assert_finite(&run);
    }
    assert_eq!(
        host.notifications().latency_changed,
        0,
        "told before the restart"
    );
    host.restart();
    assert_eq!(
        host.notifications().latency_changed,
        1,
        "not told after the restart"
    );
    let expected = low_cpu_latency(MAX_BLOCK);
    assert_eq!(host.latency(), expected);
    assert_eq!(
        measure_dry_latency(&mut host, expected as usize),
        expected as usize
    );
    host.assert_threading_respected();
}

/// A host that deactivates before its main thread serves what the latency change asked for
/// (clap-validator's fuzzer does): CLAP allows `latency.changed()` only inside `activate()`, so
/// the host hears of the new latency there, and only there.
#[test]
fn a_latency_change_is_told_inside_activate_when_the_host_deactivates_first() {
    let (mut host, silence, sizes, switch) = playing_dry_at_zero_latency();
    assert_finite(&host.process_unserved([&silence, &silence], &sizes, &switch));
    // Until the new engine plays: then the plugin asks for a restart (or, told the old way,
    // its reported latency moves before any restart).
    let started = Instant::now();
    while !host.take_restart_request() && host.latency() == 0 {
        assert!(
            started.elapsed() < PATIENCE,
            "the new latency never took effect"
        );
        std::thread::sleep(Duration::from_millis(2));
        assert_finite(&host.process_unserved([&silence, &silence], &sizes, &[]));
    }
    // The host stops first; its main thread serves the plugin's callbacks after that.
    host.deactivate();
    host.activate(MAX_BLOCK);
    let expected = low_cpu_latency(MAX_BLOCK);
    assert_eq!(host.latency(), expected);
    assert_eq!(host.notifications().latency_changed, 1);
    assert_eq!(
        measure_dry_latency(&mut host, expected as usize),
        expected as usize
    );
    host.assert_threading_respected();
}

/// The wet path, fully wet: an impulse on the left input comes out as the Hall IR's L -> L
/// channel, shifted by the latency, in every latency mode; nothing crosses to the right.
#[test]
fn wet_impulse_response_is_the_ir_shifted_by_the_latency() {
    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    let ir = &hall.channels[0];
    let ir_peak = peak(ir);
    let ir_onset = ir.iter().position(|s| s.abs() > 1e-3 * ir_peak).unwrap();
    for (mode, latency_mode) in [
        (LATENCY_ZERO, LatencyMode::Zero),
        (LATENCY_LOW_CPU, LatencyMode::LowCpu),
        (LATENCY_OFFLOAD_2048, LatencyMode::Offload(2048)),
    ] {
        let mut host = TestHost::new();
        let (latency_param, mix) = (host.param(LATENCY), host.param(MIX));
        host.flush(&[(latency_param, mode), (mix, 1.0)]);
        host.activate(MAX_BLOCK);
        let latency = host.latency() as usize;
        let expected = if mode == LATENCY_LOW_CPU {
            low_cpu_latency(MAX_BLOCK)
        } else if mode == LATENCY_ZERO {
            0
        } else {
            offload_latency(mode, MAX_BLOCK)
        };
        assert_eq!(latency, expected as usize);

        // Long enough for the output to be exactly silent at the end.
        let at = 1_234;
        let len = at + horizon_of(&hall, MAX_BLOCK, latency_mode) + 1_000;
        let input = impulse(len, at, false);
        let sizes = block_sizes(len, MAX_BLOCK as usize);
        let run = host.process([&input[0], &input[1]], &sizes, &[]);
        assert_finite(&run);
        let quiet = assert_sleeps_exactly_when_rung_out(
            &run,
            [&input[0], &input[1]],
            &sizes,
            &hall,
            MAX_BLOCK,
            latency_mode,
        );
        assert!(quiet.first() == Some(&true) && quiet.last() == Some(&true));

        let [left, right] = &run.outputs;
        let onset = left
            .iter()
            .position(|s| s.abs() > 1e-3 * ir_peak)
            .expect("the reverb comes out");
        assert_eq!(
            onset,
            at + latency + ir_onset,
            "wet onset, latency {latency}"
        );
        let mut expected = vec![0.0f32; len];
        expected[at + latency..at + latency + ir.len()].copy_from_slice(ir);
        let error = longtail_tests::max_abs_diff(left, &expected);
        assert!(
            error <= 1e-5 * ir_peak,
            "latency {latency}: max error {error} against an IR peak of {ir_peak}"
        );
        let crosstalk = peak(right);
        assert!(
            crosstalk <= 1e-5 * ir_peak,
            "latency {latency}: right channel {crosstalk}"
        );
        host.assert_threading_respected();
    }
}

/// Silence: once the input has been silent for the whole tail the plugin offers to sleep and
/// its output is exactly zero; the host stops calling it (sleeps), and when input returns the
/// plugin wakes at once and plays it as a fresh instance would.
#[test]
fn sleeps_once_rung_out_and_wakes_on_input() {
    use LatencyMode::Zero;
    let room = BuiltinIr::SmallRoom.generate(SAMPLE_RATE);
    let mut host = TestHost::new();
    let ir = host.param(IMPULSE_RESPONSE);
    host.flush(&[(ir, IR_SMALL_ROOM)]);
    host.activate(MAX_BLOCK);

    // Silence, a burst of noise, and silence for longer than the tail.
    let (lead, burst) = (2_000, SAMPLE_RATE as usize / 5);
    let len = lead + burst + horizon_of(&room, MAX_BLOCK, Zero) + 3_000;
    let mut input = stereo_noise(len, RNG_SEED + 50);
    for channel in &mut input {
        channel[..lead].fill(0.0);
        channel[lead + burst..].fill(0.0);
    }
    let sizes = block_sizes(len, MAX_BLOCK as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let inputs = [&input[0][..], &input[1][..]];
    let quiet = assert_sleeps_exactly_when_rung_out(&run, inputs, &sizes, &room, MAX_BLOCK, Zero);
    assert!(quiet[0] && *quiet.last().unwrap() && quiet.contains(&false));

    // The host lets it sleep for a while (no calls), then input comes back.
    std::thread::sleep(Duration::from_millis(20));
    let wake = stereo_noise(SAMPLE_RATE as usize / 4, RNG_SEED + 51);
    let sizes = block_sizes(wake[0].len(), MAX_BLOCK as usize);
    let run = host.process([&wake[0], &wake[1]], &sizes, &[]);
    assert_finite(&run);
    assert_eq!(
        run.statuses[0],
        ProcessStatus::Continue,
        "no wake on the first block with input"
    );
    let inputs = [&wake[0][..], &wake[1][..]];
    assert_sleeps_exactly_when_rung_out(&run, inputs, &sizes, &room, MAX_BLOCK, Zero);
    for (channel, x) in wake.iter().enumerate() {
        let expected = mixed_reference(x, &room.channels[channel], DEFAULT_MIX);
        let snr = snr_db(&run.outputs[channel], &expected);
        assert!(
            snr >= MIN_SNR_DB,
            "channel {channel}: SNR {snr:.1} dB after waking"
        );
    }
    host.assert_threading_respected();
}
