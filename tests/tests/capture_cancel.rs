//! A capture cancelled at random moments, 100 times, in a host of a few lines that drives the
//! plugin as nice-plug's wrappers do (in real time, ahead of the clock: blocks as fast as they
//! come): every `process()` call runs under `assert_no_alloc`; each cancel lands somewhere
//! else (before the audio thread took the take, in its lead-in, mid-sweep, in the tail, while
//! the preparation thread analyses it, or after); once the take has ended and the output has
//! faded back, the plugin plays what a second instance that never captured plays (its old IR,
//! the engines untouched: within the rounding of their sums, [`MIN_SNR_DB`]); and when both are dropped, no thread is left of them.
//!
//! About 15 s in a debug build.

use longtail::Longtail;
use longtail::capture::live::{Phase, Setup};
use longtail::layouts::Clap;
use longtail::tools::host_context::HostContext;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, noise};
use nice_assert_no_alloc::assert_no_alloc;
use nice_plug::prelude::*;

const RATE: u32 = 48_000;
const BLOCK: usize = 256;
const CANCELS: usize = 100;
/// The latest a cancel comes after the start: past the take's end (0.5 s of sweep, 0.1 s of
/// tail, 0.5 s of margin: about 206 blocks), so some land while it is analysed or done.
const LATEST_CANCEL: u64 = 240;

fn host() -> HostContext {
    HostContext::new(PluginApi::Clap, RATE)
}

/// Activates `plugin` in real time at [`RATE`] on the stereo bus, as the wrappers do.
fn activate(plugin: &mut Longtail, host: &mut HostContext) {
    let config = BufferConfig {
        sample_rate: RATE as f32,
        min_buffer_size: None,
        max_buffer_size: BLOCK as u32,
        process_mode: ProcessMode::Realtime,
    };
    assert!(plugin.activate(&Longtail::<Clap>::AUDIO_IO_LAYOUTS[0], &config, host));
    for (_, param, _) in plugin.params().param_map() {
        // SAFETY: the pointer points into the plugin's parameters, alive through the call.
        unsafe { param._internal_update_smoother(RATE as f32, true) };
    }
    plugin.reset();
}

/// One block of `input` (stereo, from `frame`) through `plugin`, under `assert_no_alloc`.
fn play(
    plugin: &mut Longtail,
    host: &mut HostContext,
    input: &[f32],
    frame: usize,
) -> [Vec<f32>; 2] {
    let mut left = input[frame..frame + BLOCK].to_vec();
    let mut right = left.clone();
    host.process_stereo(plugin, (&mut left, &mut right), |call| {
        assert_no_alloc(call)
    });
    [left, right]
}

/// This process's threads.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

#[test]
fn a_capture_cancelled_at_random_moments_leaves_the_old_ir_playing() {
    let threads_before = threads();
    let (mut capturing, mut plain) = (Longtail::default(), Longtail::default());
    let (mut host, mut plain_host) = (host(), host());
    activate(&mut capturing, &mut host);
    activate(&mut plain, &mut plain_host);
    let desk = capturing.capture_desk();
    let setup = Setup {
        sweep_seconds: 0.5,
        tail_seconds: 0.1,
        ..Setup::default()
    };

    let mut rng = longtail::rng::Rng::new(RNG_SEED);
    let input = noise(RATE as usize * 4, 0.25, RNG_SEED);
    let mut frame = 0;
    let mut next = |plugins: (&mut Longtail, &mut Longtail),
                    hosts: (&mut HostContext, &mut HostContext)| {
        if frame + BLOCK > input.len() {
            frame = 0;
        }
        let out = (
            play(plugins.0, hosts.0, &input, frame),
            play(plugins.1, hosts.1, &input, frame),
        );
        frame += BLOCK;
        out
    };
    let mut phases = std::collections::BTreeMap::<&str, usize>::new();
    let mut worst = f64::INFINITY;
    for cancel_idx in 0..CANCELS {
        desk.start(setup.clone(), RATE, 2, 2)
            .unwrap_or_else(|why| panic!("cancel {cancel_idx}: cannot start: {why}"));
        let blocks = rng.next_u64() % LATEST_CANCEL;
        for _ in 0..blocks {
            next((&mut capturing, &mut plain), (&mut host, &mut plain_host));
        }
        let phase = match desk.phase() {
            Phase::Waiting => "waiting",
            Phase::Recording(_) => "recording",
            Phase::Analysing => "analysing",
            Phase::Done(_) => "done",
            Phase::Failed(_) => "failed",
            Phase::Cancelled | Phase::Idle => "other",
        };
        *phases.entry(phase).or_default() += 1;
        desk.cancel();
        // The take ends (its sweep fading out), the preparation thread drops it, and the output
        // fades back: within a few blocks of audio, and the thread's polls.
        let mut waited = 0;
        while !desk.settled() {
            next((&mut capturing, &mut plain), (&mut host, &mut plain_host));
            waited += 1;
            assert!(
                waited < 10_000,
                "cancel {cancel_idx}: the capture never ended"
            );
        }
        for _ in 0..4 {
            next((&mut capturing, &mut plain), (&mut host, &mut plain_host));
        }
        let (heard, expected) = next((&mut capturing, &mut plain), (&mut host, &mut plain_host));
        // The two instances differ only in the rounding of their big levels' sums (each its
        // own stagger phase): far under the engine's accuracy bound.
        let (mut signal, mut error) = (0.0f64, 0.0f64);
        for (h, e) in heard.iter().flatten().zip(expected.iter().flatten()) {
            signal += f64::from(*e).powi(2);
            error += f64::from(h - e).powi(2);
        }
        let snr = 10.0 * (signal / error.max(1e-300)).log10();
        assert!(
            snr >= MIN_SNR_DB,
            "cancel {cancel_idx} ({phase}): the output is not the plugin's own ({snr:.1} dB)"
        );
        worst = worst.min(snr);
        // A take already analysed keeps its outcome (this room gives no IR: the input is
        // noise, with no sweep in it); any other is cancelled.
        let after = desk.phase();
        match phase {
            "done" | "failed" => assert!(!matches!(after, Phase::Cancelled), "{after:?}"),
            _ => assert_eq!(after, Phase::Cancelled, "cancel {cancel_idx} ({phase})"),
        }
    }
    eprintln!(
        "where the {CANCELS} cancels landed: {phases:?}; output after each against the plain instance: at least {worst:.1} dB"
    );
    assert!(phases.get("recording").is_some_and(|&n| n > CANCELS / 2));

    capturing.deactivate();
    plain.deactivate();
    drop((capturing, plain, desk));
    assert_eq!(threads(), threads_before, "a thread of the plugins is left");
}
