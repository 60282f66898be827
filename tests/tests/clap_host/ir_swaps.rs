//! Engine swaps while playing (a new IR crossfades in), and edits that leave no IR.

use std::time::{Duration, Instant};

use longtail::ir::builtin::BuiltinIr;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, snr_db};

use super::*;

/// Changing the IR while playing: the new engine is built in the background and crossfaded in
/// without allocating on the audio thread; the tail extension follows, and once the new IR has
/// filled, the output is exactly the mix with the new IR.
#[test]
fn ir_change_while_playing_swaps_engines() {
    let room = BuiltinIr::SmallRoom.generate(SAMPLE_RATE);
    let (room_tail, hall_tail) = (
        tail_of(BuiltinIr::SmallRoom, 0),
        tail_of(BuiltinIr::Hall, 0),
    );
    let mut host = TestHost::new();
    let ir_param = host.param(IMPULSE_RESPONSE);
    host.activate(MAX_BLOCK);

    let chunk = SAMPLE_RATE as usize / 10;
    let max_len = 60 * SAMPLE_RATE as usize;
    let input = stereo_noise(max_len, RNG_SEED + 20);
    let mut outputs = [Vec::new(), Vec::new()];
    let mut swap_start = None;
    let mut pos = 0;
    let started = Instant::now();
    loop {
        if let Some(swap_start) = swap_start
            && pos >= swap_start + room.len() + SWAP_FADE_SAMPLES + chunk
        {
            break;
        }
        assert!(
            started.elapsed() < PATIENCE && pos + chunk <= max_len,
            "the new IR never took over"
        );
        let sizes = block_sizes(chunk, MAX_BLOCK as usize);
        let automation = if pos == 0 {
            vec![Automation {
                at: 1_000,
                param: ir_param,
                value: IR_SMALL_ROOM,
            }]
        } else {
            Vec::new()
        };
        let run = host.process(
            [&input[0][pos..pos + chunk], &input[1][pos..pos + chunk]],
            &sizes,
            &automation,
        );
        assert_finite(&run);
        assert_keeps_processing(&run);
        for ((&tail, block_start), size) in run.tails.iter().zip(block_starts(&sizes)).zip(&sizes) {
            match swap_start {
                None if tail == hall_tail => {}
                None if tail == room_tail => swap_start = Some(pos + block_start),
                Some(_) if tail == room_tail => {}
                _ => panic!("unexpected tail {tail:?} in a block of {size}"),
            }
        }
        for (output, run_output) in outputs.iter_mut().zip(&run.outputs) {
            output.extend_from_slice(run_output);
        }
        pos += chunk;
        std::thread::sleep(Duration::from_millis(2));
    }
    let swap_start = swap_start.unwrap();
    assert!(swap_start >= 1_000, "swapped before the parameter changed");
    assert_eq!(host.value(ir_param), IR_SMALL_ROOM);

    let settled = swap_start + room.len() + SWAP_FADE_SAMPLES;
    for channel in 0..2 {
        let x = &input[channel][..pos];
        let expected = mixed_reference(x, &room.channels[channel], DEFAULT_MIX);
        let snr = snr_db(&outputs[channel][settled..], &expected[settled..]);
        assert!(
            snr >= MIN_SNR_DB,
            "channel {channel}: SNR {snr:.1} dB after the swap"
        );
        // The crossfade itself stays at a sensible level (no dropout, no burst).
        let fade = &outputs[channel][swap_start..swap_start + SWAP_FADE_SAMPLES];
        let level = rms(fade) / rms(&x[swap_start..swap_start + SWAP_FADE_SAMPLES]);
        assert!(
            (0.3..3.0).contains(&level),
            "channel {channel}: crossfade level {level}"
        );
    }
    host.assert_threading_respected();
}

/// Edits that leave nothing of the IR (the start trimmed past its end, as clap-validator's
/// parameter fuzzing does) must not make activation fail: the plugin plays the built-in IR
/// unedited until the parameters change, and the output stays finite and wet.
#[test]
fn edits_that_leave_nothing_do_not_stop_activation() {
    let mut host = TestHost::new();
    let (trim_start, trim_end, mix) = (
        host.param("Trim start"),
        host.param("Trim end"),
        host.param(MIX),
    );
    host.flush(&[(trim_start, 1.0), (trim_end, 1.0), (mix, 1.0)]);
    host.activate(MAX_BLOCK);
    let input = stereo_noise(48_000, 11);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let energy: f64 = run.outputs[0].iter().map(|&s| f64::from(s).powi(2)).sum();
    assert!(energy > 1.0, "the fallback IR plays (energy {energy})");
}
