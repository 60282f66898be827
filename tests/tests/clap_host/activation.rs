//! Activation cycles at other sample rates and block sizes, and at any rate a host sets (the dry
//! signal outside 1 kHz to 768 kHz).

use longtail::engine::LatencyMode;
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::RNG_SEED;

use super::*;

// ------------------------------------------------------------------------------------------
// Host behaviour: activation cycles, empty calls, sleep, concurrent saves, many instances
// ------------------------------------------------------------------------------------------

/// Parameters flushed before the first activation (and between activations) hold; then
/// activate, play and deactivate at changing sample rates and maximum block sizes, once
/// without playing at all. Every activation plays the IR generated at its own rate, exactly,
/// and the plugin offers to sleep once it has rung out.
#[test]
fn reactivates_at_other_sample_rates_and_block_sizes() {
    let mut host = TestHost::new();
    let (mix, ir, gain) = (
        host.param(MIX),
        host.param(IMPULSE_RESPONSE),
        host.param(GAIN),
    );
    let unity = host.text_to_value(gain, c"0 dB");
    // Flushed on an instance that was never activated.
    host.flush(&[(mix, 1.0), (ir, IR_SMALL_ROOM), (gain, unity)]);
    assert_eq!((host.value(mix), host.value(ir)), (1.0, IR_SMALL_ROOM));

    for (sample_rate, max_frames, play) in [
        (44_100, 512, true),
        (96_000, 64, true),
        (48_000, 4_096, false),
        (44_100, 1, true),
        (96_000, 1_024, true),
        (48_000, 17, true),
    ] {
        host.activate_at(sample_rate, max_frames);
        assert_eq!(host.latency(), 0, "{sample_rate} Hz, {max_frames} frames");
        if play {
            let room = BuiltinIr::SmallRoom.generate(sample_rate);
            let at = 333;
            let len = at + horizon_of(&room, max_frames, LatencyMode::Zero) + 2_000;
            let input = impulse(len, at, false);
            let sizes = block_sizes(len, max_frames as usize);
            let run = host.process([&input[0], &input[1]], &sizes, &[]);
            assert_finite(&run);
            let inputs = [&input[0][..], &input[1][..]];
            assert_sleeps_exactly_when_rung_out(
                &run,
                inputs,
                &sizes,
                &room,
                max_frames,
                LatencyMode::Zero,
            );
            let mut expected = vec![0.0f32; len];
            expected[at..at + room.len()].copy_from_slice(&room.channels[0]);
            let error = longtail_tests::max_abs_diff(&run.outputs[0], &expected);
            let ir_peak = peak(&room.channels[0]);
            assert!(
                error <= 1e-5 * ir_peak,
                "{sample_rate} Hz, {max_frames} frames: max error {error}, IR peak {ir_peak}"
            );
            assert_eq!(peak(&run.outputs[1]), 0.0, "nothing crosses to the right");
        }
        host.deactivate();
        // Flushed while inactive, between activations: the next one starts with it.
        host.flush(&[(mix, 1.0)]);
    }
    host.assert_threading_respected();
}

/// Activation succeeds at any sample rate a host sets. Outside 1 kHz to 768 kHz (1 Hz,
/// 1 234 567.8 Hz, 3 MHz, 0 Hz) the plugin reports no latency and plays the input unchanged,
/// whatever the mix; at 1 kHz and at a fractional 44 100.4 Hz it convolves, with finite output. Each activation processes
/// noise in ragged blocks (nothing in `process()` may allocate: this library aborts if it does),
/// and a later activation at 48 kHz convolves again.
#[test]
fn activates_at_any_sample_rate() {
    let mut host = TestHost::new();
    let mix = host.param(MIX);
    host.flush(&[(mix, 1.0)]);
    let input = stereo_noise(8_192, RNG_SEED + 80);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    for (rate, passes_through) in [
        (1.0, true),
        (1_000.0, false),
        (1_234_567.8, true),
        (3e6, true),
        (0.0, true),
        (44_100.4, false),
        (f64::from(SAMPLE_RATE), false),
    ] {
        host.activate_at_hz(rate, MAX_BLOCK);
        assert_eq!(host.latency(), 0, "{rate} Hz");
        let run = host.process([&input[0], &input[1]], &sizes, &[]);
        assert_finite(&run);
        let dry = run.outputs == input;
        assert_eq!(dry, passes_through, "{rate} Hz: the output is the input");
        if !passes_through {
            assert!(
                rms(&run.outputs[0]) > 0.01,
                "{rate} Hz: the wet signal plays"
            );
        }
        host.deactivate();
    }
    host.assert_threading_respected();
}
