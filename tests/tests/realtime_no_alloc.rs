//! The audio-thread side of every path runs under `assert_no_alloc` (nice-plug's allocator with
//! `assert_process_allocs`: any allocation, reallocation or free inside aborts the test):
//! ragged blocks, reset, engine swaps with their crossfade, the preparation thread's rings, and
//! non-finite input.

use std::time::{Duration, Instant};

use longtail::engine::{Engine, EngineConfig, LatencyMode, PlanLimits};
use longtail::ir::builtin::BuiltinIr;
use longtail::preparer::{Preparer, Request};
use longtail::processor::{Controls, Processor};
use longtail_tests::{Blocks, RNG_SEED, noise};
use nice_assert_no_alloc::assert_no_alloc;

const RATE: u32 = 48_000;
const MAX_BLOCK: usize = 300;

fn config(latency_mode: LatencyMode) -> EngineConfig {
    EngineConfig {
        max_block_size: MAX_BLOCK,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode,
        limits: PlanLimits::default(),
    }
}

fn engine(ir: BuiltinIr, latency_mode: LatencyMode) -> Box<Engine> {
    Box::new(Engine::new(&ir.generate(RATE), config(latency_mode)).unwrap())
}

/// Processes `num_samples` of noise in ragged blocks, each call under `assert_no_alloc`.
fn run(processor: &mut Processor, num_samples: usize, seed: u64, poison_input: bool) -> f32 {
    let mut left = noise(num_samples, 0.5, seed);
    let mut right = noise(num_samples, 0.5, seed + 1);
    if poison_input {
        left[num_samples / 2] = f32::NAN;
        right[num_samples / 3] = f32::INFINITY;
    }
    let mix = vec![0.7f32; MAX_BLOCK];
    let gain = vec![1.0f32; MAX_BLOCK];
    let mut start = 0;
    let mut peak = 0.0f32;
    for size in (Blocks::Random {
        max: MAX_BLOCK,
        seed,
    })
    .sizes(num_samples)
    {
        let (l, r) = (
            &mut left[start..start + size],
            &mut right[start..start + size],
        );
        let mut channels: [&mut [f32]; 2] = [l, r];
        assert_no_alloc(|| {
            processor.process(
                &mut channels,
                Controls {
                    mix: &mix[..size],
                    gain: &gain[..size],
                },
            );
        });
        for channel in &channels {
            for &sample in channel.iter() {
                assert!(sample.is_finite(), "non-finite output");
                peak = peak.max(sample.abs());
            }
        }
        start += size;
    }
    peak
}

#[test]
fn process_reset_and_swaps_never_allocate() {
    let mut processor = Processor::new(engine(BuiltinIr::SmallRoom, LatencyMode::Zero), 2_400);
    assert!(run(&mut processor, 20_000, RNG_SEED, false) > 0.0);
    assert_no_alloc(|| processor.reset());

    // A swap to an engine with another IR and latency mode, crossfaded without allocating.
    let incoming = engine(BuiltinIr::Plate, LatencyMode::LowCpu);
    let displaced = assert_no_alloc(|| processor.begin_swap(incoming));
    assert!(displaced.is_none());
    assert!(processor.is_swapping());
    run(&mut processor, 1_000, RNG_SEED + 2, false);
    // A second swap during the fade displaces the engine that was fading out.
    let hall = engine(BuiltinIr::Hall, LatencyMode::Zero);
    let displaced = assert_no_alloc(|| processor.begin_swap(hall));
    assert!(
        displaced.is_some(),
        "the outgoing engine must come back to be dropped off-thread"
    );
    drop(displaced);
    run(&mut processor, 5_000, RNG_SEED + 3, false);
    assert!(!processor.is_swapping());
    let finished = assert_no_alloc(|| processor.take_finished());
    assert!(finished.is_some());
    drop(finished);
    assert_eq!(processor.latency_samples(), 0);
}

#[test]
fn non_finite_input_never_reaches_the_output() {
    let mut processor = Processor::new(engine(BuiltinIr::Hall, LatencyMode::Zero), 2_400);
    run(&mut processor, 30_000, RNG_SEED + 4, true);
    // After the bad samples the engine still makes sound.
    assert!(run(&mut processor, 10_000, RNG_SEED + 5, false) > 0.0);
}

#[test]
fn preparation_thread_round_trip_without_allocating_on_the_audio_side() {
    let mut preparer = Preparer::spawn().unwrap();
    let mut processor = Processor::new(engine(BuiltinIr::SmallRoom, LatencyMode::Zero), 2_400);
    let request = Request {
        ir: BuiltinIr::Cathedral,
        sample_rate: RATE,
        config: config(LatencyMode::Zero),
        generation: 7,
    };
    assert!(assert_no_alloc(|| preparer.request(request)));

    let deadline = Instant::now() + Duration::from_secs(60);
    let prepared = loop {
        // The audio side polls between blocks; it never waits.
        if let Some(prepared) = assert_no_alloc(|| preparer.take_ready()) {
            break prepared;
        }
        run(&mut processor, 512, RNG_SEED + 6, false);
        assert!(Instant::now() < deadline, "no engine prepared within 60 s");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert_eq!(prepared.request, request);
    assert_eq!(prepared.engine.plan().ir_len, 480_000);

    let displaced = assert_no_alloc(|| processor.begin_swap(prepared.engine));
    assert!(displaced.is_none());
    run(&mut processor, 4_000, RNG_SEED + 7, false);
    let finished = assert_no_alloc(|| processor.take_finished()).expect("crossfade finished");
    // Retiring hands the engine to the preparation thread, which frees it there.
    assert!(assert_no_alloc(|| preparer.retire(finished)).is_ok());
}
