//! The audio-thread side of every path runs under `assert_no_alloc` (nice-plug's allocator with
//! `assert_process_allocs`: any allocation, reallocation or free inside aborts the test):
//! ragged blocks, reset, engine swaps with their crossfade (ten library files stepped through,
//! and the shelves automated, without a click), the preparation thread's rings, non-finite
//! input, and a stalled worker (fault injection: the audio thread waits only within
//! the bound of `engine::realtime::pace`). On Linux the audio thread also takes no page fault: the
//! buffers it writes are backed where the engine is built.

use std::time::{Duration, Instant};

use longtail::audio::processor::{Controls, Processor};
use longtail::engine::plan::{MAX_SPREAD_PARTITION, OFFLOAD_LATENCIES};
use longtail::engine::{Engine, EngineConfig, Executor, LatencyMode, PlanLimits, route_plain};
use longtail::ir::Ir;
use longtail::ir::builtin::BuiltinIr;
use longtail::ir::edit::EditSettings;
use longtail::preparer::{IrSource, Preparer, Request};
use longtail_tests::{
    Blocks, MIN_SNR_DB, RNG_SEED, decaying_noise, noise, reference_convolution, snr_db,
};
use nice_assert_no_alloc::assert_no_alloc;

/// The tests of this file run in parallel threads, but the one that measures the engine's waits
/// against a real-time clock ([`a_stalled_worker_is_late_waits_stay_bounded_and_the_output_recovers`])
/// runs alone: on a 2-core machine the others' work shows in its clock as waits it did not
/// choose. The others share the lock.
static CLOCK: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A share of [`CLOCK`]: this test may run beside the others, but not beside the timed one.
fn beside_others() -> std::sync::RwLockReadGuard<'static, ()> {
    CLOCK
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

const RATE: u32 = 48_000;
/// A power of two: the largest quantum, 1024, whose head runs in two parts on ragged calls
/// (`engine::head`).
const MAX_BLOCK: usize = 1024;

fn config(latency_mode: LatencyMode) -> EngineConfig {
    EngineConfig {
        max_block_size: MAX_BLOCK,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode,
        limits: PlanLimits::default(),
        executor: Executor::Workers,
    }
}

fn engine(ir: BuiltinIr, latency_mode: LatencyMode) -> Box<Engine> {
    Box::new(Engine::new(&ir.generate(RATE), config(latency_mode)).unwrap())
}

/// The ducking [`run`] applies: 12 dB while the key is over -20 dBFS.
const DUCKING: longtail::audio::ducker::DuckSettings = longtail::audio::ducker::DuckSettings {
    amount_db: 12.0,
    threshold_db: -20.0,
    attack_ms: 5.0,
    release_ms: 50.0,
};

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
    // A width ramp through every block: the stereo wet path's M/S step runs under the check.
    let width: Vec<f32> = (0..MAX_BLOCK)
        .map(|i| 2.0 * i as f32 / MAX_BLOCK as f32)
        .collect();
    // A blend ramp through every block: with a second IR, both lanes and their mix run.
    let blend: Vec<f32> = (0..MAX_BLOCK)
        .map(|i| i as f32 / MAX_BLOCK as f32)
        .collect();
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
        // The ducking runs too, keyed by the input and, every other call, by a sidechain.
        let sidechain: [&[f32]; 1] = [&width[..size]];
        let key = (start % 2 == 1).then_some(&sidechain[..]);
        assert_no_alloc(|| {
            processor.process(
                &mut channels,
                Controls {
                    mix: &mix[..size],
                    gain: &gain[..size],
                    width: &width[..size],
                    duck: DUCKING,
                    key,
                    blend: &blend[..size],
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
    let _clock = beside_others();
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

    // A second IR blended in, then swapped while both play: no allocation either.
    let second = engine(BuiltinIr::Plate, LatencyMode::Zero);
    assert!(assert_no_alloc(|| processor.begin_swap_second(second)).is_none());
    run(&mut processor, 3_000, RNG_SEED + 4, false);
    let second = engine(BuiltinIr::SmallRoom, LatencyMode::Zero);
    assert!(assert_no_alloc(|| processor.begin_swap_second(second)).is_none());
    run(&mut processor, 5_000, RNG_SEED + 5, false);
    let finished = assert_no_alloc(|| processor.take_finished());
    assert!(
        finished.is_some(),
        "the second lane's outgoing engine comes back"
    );
    drop(finished);

    // And to the offload mode's longest latency, every level on a worker: the dry path holds
    // it without growing.
    let offload = engine(
        BuiltinIr::Cathedral,
        LatencyMode::Offload(OFFLOAD_LATENCIES[3]),
    );
    let latency = offload.latency_samples();
    assert!(latency >= OFFLOAD_LATENCIES[3]);
    let displaced = assert_no_alloc(|| processor.begin_swap(offload));
    assert!(displaced.is_none());
    assert!(run(&mut processor, 20_000, RNG_SEED + 4, false) > 0.0);
    drop(assert_no_alloc(|| processor.take_finished()));
    assert_eq!(processor.latency_samples(), latency);
    assert_eq!(
        processor.engine().num_workers(),
        processor.engine().plan().levels.len()
    );
    assert_no_alloc(|| processor.reset());
}

#[test]
fn non_finite_input_never_reaches_the_output() {
    let _clock = beside_others();
    let mut processor = Processor::new(engine(BuiltinIr::Hall, LatencyMode::Zero), 2_400);
    run(&mut processor, 30_000, RNG_SEED + 4, true);
    // After the bad samples the engine still makes sound.
    assert!(run(&mut processor, 10_000, RNG_SEED + 5, false) > 0.0);
}

#[test]
fn preparation_thread_round_trip_without_allocating_on_the_audio_side() {
    let _clock = beside_others();
    let mut preparer = Preparer::spawn(Default::default(), Default::default()).unwrap();
    assert!(preparer.idle(), "nothing asked yet");
    let mut processor = Processor::new(engine(BuiltinIr::SmallRoom, LatencyMode::Zero), 2_400);
    let request = Request {
        slot: Default::default(),
        source: IrSource::Builtin(BuiltinIr::Cathedral),
        edits: EditSettings::NONE,
        sample_rate: RATE,
        config: config(LatencyMode::Zero),
        format: Default::default(),
        generation: 7,
        stagger_idx: Some(5),
    };
    assert!(assert_no_alloc(|| preparer.request(request)));
    // Until its answer is taken the thread is not at rest: the engine it builds holds workers.
    assert!(!assert_no_alloc(|| preparer.idle()));

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
    let engine = prepared.engine.expect("a built-in IR always builds");
    assert_eq!(engine.plan().ir_len, 480_000);
    // With the CPU backend its level after the first, of more than the slack rule's 512
    // samples, runs on the audio thread, spread over its period: run past its first periods.
    let plan = engine.plan();
    assert!(plan.levels[1].partition_size > MAX_SPREAD_PARTITION && plan.on_audio_thread(1));

    let displaced = assert_no_alloc(|| processor.begin_swap(engine));
    assert!(displaced.is_none());
    run(&mut processor, 20_000, RNG_SEED + 7, false);
    let finished = assert_no_alloc(|| processor.take_finished()).expect("crossfade finished");
    // Retiring hands the engine to the preparation thread, which frees it there.
    assert!(assert_no_alloc(|| preparer.retire(finished)).is_ok());
    // Then it is at rest: every request answered and taken, every retired engine dropped.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !assert_no_alloc(|| preparer.idle()) {
        assert!(
            Instant::now() < deadline,
            "the preparation thread not idle within 60 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Aborts the whole test binary if `done` is not set within `seconds`: a hang here means the
/// audio thread waited for a worker.
fn watchdog(seconds: u64) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&done);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        while !flag.load(std::sync::atomic::Ordering::Acquire) {
            if Instant::now() > deadline {
                eprintln!("watchdog: the audio thread blocked on a stalled worker");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    done
}

#[test]
fn a_stalled_worker_is_late_waits_stay_bounded_and_the_output_recovers() {
    // Alone: no other test of this file runs meanwhile (see `CLOCK`).
    let _clock = CLOCK
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Level 0 of 64 samples and the small levels on the audio thread, levels of 1024 samples
    // on workers (an IR long enough that the model wants them).
    let ir_len = 40_000;
    let ir = Ir::new(
        "stall",
        RATE,
        vec![decaying_noise(ir_len, 1), decaying_noise(ir_len, 2)],
    )
    .unwrap();
    let config = EngineConfig {
        max_block_size: 64,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode: LatencyMode::Zero,
        limits: PlanLimits {
            max_partition_size: 1024,
            ..PlanLimits::default()
        },
        executor: Executor::Workers,
    };
    let mut engine = Engine::new(&ir, config).unwrap();
    assert!(engine.num_workers() >= 1, "{}", engine.plan().describe());

    // A host at real-time pace that splits each device period of 1024 samples into 16 calls
    // of 64, back to back (`engine::realtime::pace`: the later calls of a period see a lead).
    const PERIOD: usize = 1024;
    let period = Duration::from_secs_f64(PERIOD as f64 / f64::from(RATE));
    let stall_len = 24 * PERIOD;
    let total = stall_len + 3 * ir_len;
    let inputs = [
        noise(total, 0.5, RNG_SEED + 8),
        noise(total, 0.5, RNG_SEED + 9),
    ];
    let mut outputs = [vec![0.0f32; total], vec![0.0f32; total]];
    let done = watchdog(60);

    // Phase 1, real time: the workers are stalled. A call waits for a due result only within
    // the lead the split period gives it, never past `period - WAIT_MARGIN` in all the
    // period's calls together; results that fall due are late and chunks that find no free
    // slot are dropped.
    engine.set_workers_stalled(true);
    let mut slowest_call = Duration::ZERO;
    // Per period: the waits the engine chose (their time up to each deadline), what the system
    // added past the deadlines, and how late the period's first call came.
    let (mut most_chosen, mut most_overshoot, mut most_jitter) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut released, mut degraded_while_stalled) = (false, false);
    let stall_start = Instant::now();
    let (mut seen_waited_ns, mut seen_overshoot_ns) = (0, 0);
    let mut close_period = |stats: longtail::engine::LateStats| {
        let overshoot = stats.wait_overshoot_ns - seen_overshoot_ns;
        let chosen = stats.wait_total_ns - seen_waited_ns - overshoot;
        most_chosen = most_chosen.max(Duration::from_nanos(chosen));
        most_overshoot = most_overshoot.max(Duration::from_nanos(overshoot));
        (seen_waited_ns, seen_overshoot_ns) = (stats.wait_total_ns, stats.wait_overshoot_ns);
    };
    let mut start = 0;
    for size in Blocks::Fixed(64).sizes(total) {
        if start < stall_len && start % PERIOD == 0 {
            close_period(engine.late_stats());
            let due = stall_start + period * (start / PERIOD) as u32;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            most_jitter = most_jitter.max(Instant::now().saturating_duration_since(due));
        }
        if start >= stall_len && !released {
            // Phase 2: the worker recovers; offline mode makes the rest deterministic.
            degraded_while_stalled = engine.late_stats().degraded;
            close_period(engine.late_stats());
            engine.set_workers_stalled(false);
            engine.set_offline(true);
            released = true;
        }
        let [l, r] = &inputs;
        let [out_l, out_r] = &mut outputs;
        let input: [&[f32]; 2] = [&l[start..start + size], &r[start..start + size]];
        let mut output: [&mut [f32]; 2] = [
            &mut out_l[start..start + size],
            &mut out_r[start..start + size],
        ];
        let call_start = Instant::now();
        assert_no_alloc(|| engine.process(&input, &mut output));
        if start < stall_len {
            slowest_call = slowest_call.max(call_start.elapsed());
        }
        start += size;
    }
    done.store(true, std::sync::atomic::Ordering::Release);

    let stats = engine.late_stats();
    println!(
        "stalled worker: {stats:?}, slowest audio-thread call while stalled: {slowest_call:?}; \
         most in one period: waited by choice {most_chosen:?}, past deadlines \
         {most_overshoot:?}, first call late by {most_jitter:?}"
    );
    // The bound of engine::realtime::pace holds for the waits the engine chose, up to the error its
    // docs name: a period's first call that comes late (jitter) makes the anchor read a lead
    // the host did not have. What a loaded machine adds past each deadline (a wake-up
    // latency: 10 ms under Wine while a build ran) is the system's: it is counted apart and
    // only checked to be far below the stall (24 periods), which an unbounded wait would show
    // (the watchdog stops one that never ends).
    let bound = period - longtail::engine::realtime::pace::WAIT_MARGIN;
    let clock_reads = Duration::from_millis(1);
    assert!(
        stats.waits > 0,
        "the split period's lead was not used: {stats:?}"
    );
    assert!(
        most_chosen <= bound + most_jitter + clock_reads,
        "chose to wait {most_chosen:?} in one period (bound {bound:?}, jitter {most_jitter:?})"
    );
    assert!(
        most_overshoot < 4 * period,
        "waits ran {most_overshoot:?} past their deadlines in one period"
    );
    assert!(stats.late_results > 0, "lates were not counted: {stats:?}");
    assert!(stats.dropped_chunks > 0, "no chunk was dropped: {stats:?}");
    assert!(degraded_while_stalled, "the degraded flag was not raised");
    assert!(
        !stats.degraded,
        "the degraded flag stayed up after recovery"
    );
    assert!(outputs.iter().flatten().all(|s| s.is_finite()));

    // Once the dropped chunks have left the delay lines (one IR length after the stall), the
    // output is the exact convolution again.
    let settled = stall_len + 2 * ir_len;
    for (path, taps) in route_plain(&ir, 2, 2).expect("stereo") {
        let expected = reference_convolution(&inputs[path.input_idx], &taps);
        let snr = snr_db(
            &outputs[path.output_idx][settled..],
            &expected[settled..total],
        );
        assert!(
            snr >= MIN_SNR_DB,
            "output {} after recovery: SNR {snr:.1} dB",
            path.output_idx
        );
    }
}

#[test]
fn publishing_to_a_busy_editor_never_allocates_or_waits() {
    let _clock = beside_others();
    use longtail::audio::monitor::{EngineMonitor, LoadMeter};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

    // The editor side: reads everything and reports errors (which locks and allocates) as
    // fast as it can, all the while the audio side publishes.
    let monitor = Arc::new(EngineMonitor::default());
    let stop = Arc::new(AtomicBool::new(false));
    let editor = std::thread::spawn({
        let monitor = Arc::clone(&monitor);
        let stop = Arc::clone(&stop);
        move || {
            let mut reads = 0u64;
            while !stop.load(Relaxed) {
                reads += monitor.late_results.load(Relaxed)
                    + u64::from(monitor.load_p99_permille.load(Relaxed));
                monitor.report_error(format!("editor message {}", reads % 3));
                if let Ok(mut errors) = monitor.errors.lock() {
                    // Hold the lock a while: the audio side must not care.
                    std::thread::sleep(Duration::from_micros(200));
                    errors.truncate(1);
                }
            }
        }
    });

    let mut processor = Processor::new(engine(BuiltinIr::Hall, LatencyMode::Zero), 2400);
    let mut meter = LoadMeter::new(50);
    let started = Instant::now();
    let mut slowest_publish = Duration::ZERO;
    for block in 0..400 {
        run(&mut processor, 128, RNG_SEED + block, false);
        let publish_start = Instant::now();
        assert_no_alloc(|| {
            let engine = processor.engine();
            monitor.publish_engine(
                engine.plan().ir_len,
                0,
                engine.plan().latency_mode,
                engine.num_workers(),
                engine.id(),
            );
            monitor.publish_lates(engine.late_stats(), engine.worker_busy_ns());
            meter.record(1_000 + block * 10, 2_666_000, &monitor);
        });
        slowest_publish = slowest_publish.max(publish_start.elapsed());
    }
    stop.store(true, Relaxed);
    editor.join().unwrap();
    println!(
        "slowest publish {slowest_publish:?} in {:?}",
        started.elapsed()
    );
    // Published values arrived (the meter's window is 50 callbacks).
    assert!(monitor.load_max_permille.load(Relaxed) > 0);
    assert_eq!(
        monitor.ir_len.load(Relaxed) as usize,
        processor.engine().plan().ir_len
    );
}

/// The largest sample-to-sample step of `signal`.
fn max_jump(signal: &[f32]) -> f32 {
    signal
        .windows(2)
        .map(|pair| (pair[1] - pair[0]).abs())
        .fold(0.0, f32::max)
}

/// Takes the next prepared engine, waiting for the preparation thread (offline: the step lands
/// where it was asked for).
fn wait_for_engine(preparer: &mut Preparer) -> Box<Engine> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(prepared) = assert_no_alloc(|| preparer.take_ready()) {
            return prepared.engine.expect("each step builds");
        }
        assert!(Instant::now() < deadline, "no engine prepared within 120 s");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A 440 Hz cosine at half scale plays through `steady` (one processor per sound, each from
/// the first sample to the last) and through one more that starts as the first sound and
/// steps to sound `k` a quarter second after the last step, taking its engine from `step_to(k)`
/// and crossfading it in. Every call runs under `assert_no_alloc`.
///
/// Asserts that the stepped render never jumps from one sample to the next by more than 1e-3
/// beyond the largest jump of the steady renders. A cosine, so each steady render starts as a
/// fresh reverb on a sounding signal, as every engine stepped to does (it starts without the
/// input's history). A step without the crossfade jumps by the difference of two wet signals.
fn assert_steps_never_click(
    steady: Vec<Processor>,
    first: Processor,
    preparer: &mut Preparer,
    mut step_to: impl FnMut(usize, &mut Preparer) -> Box<Engine>,
) {
    let count = steady.len();
    let mut processors = steady;
    processors.push(first);
    let stepping = count;
    let block = 256;
    let step_every = RATE as usize / 4;
    let total = (count + 1) * step_every;
    let sine: Vec<f32> = (0..total)
        .map(|i| 0.5 * (std::f32::consts::TAU * 440.0 * i as f32 / RATE as f32).cos())
        .collect();
    let ones = vec![1.0f32; block];
    let mut outputs = vec![[sine.clone(), sine.clone()]; processors.len()];
    let mut next = 1;
    for start in (0..total).step_by(block) {
        if next < count && start >= next * step_every {
            let engine = step_to(next, preparer);
            let processor = &mut processors[stepping];
            if let Some(old) = assert_no_alloc(|| processor.begin_swap(engine)) {
                assert!(preparer.retire(old).is_ok());
            }
            next += 1;
        }
        let end = (start + block).min(total);
        let size = end - start;
        for (processor, [left, right]) in processors.iter_mut().zip(&mut outputs) {
            let mut channels: [&mut [f32]; 2] = [&mut left[start..end], &mut right[start..end]];
            assert_no_alloc(|| {
                processor.process(
                    &mut channels,
                    Controls {
                        mix: &ones[..size],
                        gain: &ones[..size],
                        width: &ones[..size],
                        duck: longtail::audio::ducker::DuckSettings::OFF,
                        key: None,
                        blend: &[],
                    },
                )
            });
            if let Some(finished) = assert_no_alloc(|| processor.take_finished()) {
                assert!(preparer.retire(finished).is_ok());
            }
        }
    }
    assert_eq!(next, count, "every step was taken");
    for channel in 0..2 {
        let own = outputs[..stepping]
            .iter()
            .map(|output| max_jump(&output[channel]))
            .fold(0.0f32, f32::max);
        let stepped = &outputs[stepping][channel];
        let jump = max_jump(stepped);
        let change = stepped
            .iter()
            .zip(&outputs[0][channel])
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        eprintln!(
            "channel {channel}: largest jump {jump:.4}, the steady renders' {own:.4}, \
             away from the first sound's render by up to {change:.3}"
        );
        assert!(
            change > 3.0 * own,
            "the steps changed the sound too little to test"
        );
        assert!(
            jump <= own + 1e-3,
            "channel {channel}: the stepped render jumps by {jump}, the steady ones by {own}"
        );
    }
}

/// The Library tab's Next, ten times while a sine plays: each file is loaded into the file
/// state (as the editor's helper thread does), prepared on the preparation thread and
/// crossfaded in; no click ([`assert_steps_never_click`]: without the crossfade the stepped
/// render jumps by 0.40 against the steady renders' 0.04).
#[test]
fn stepping_through_ten_library_files_never_clicks() {
    let _clock = beside_others();
    use longtail::ir::store::IrFileState;
    use std::sync::Arc;

    let dir = std::env::temp_dir().join(format!("longtail-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths: Vec<std::path::PathBuf> = (0..10u64)
        .map(|k| {
            let path = dir.join(format!("room-{k}.wav"));
            let len = RATE as usize / 5;
            let channels: Vec<Vec<f32>> = (0..2)
                .map(|c| {
                    decaying_noise(len, RNG_SEED + 40 + 2 * k + c)
                        .iter()
                        .map(|s| 0.05 * s)
                        .collect()
                })
                .collect();
            longtail::ir::wav::write_f32(&path, RATE, &channels).unwrap();
            path
        })
        .collect();

    let files = Arc::new(IrFileState::default());
    let mut preparer = Preparer::spawn(Arc::clone(&files), Default::default()).unwrap();
    let processor = |path: &std::path::PathBuf| {
        files.load_paths(&[path.as_path()]).unwrap();
        let (file, _) = files.current().expect("loaded");
        let engine = Engine::new(&file.ir, config(LatencyMode::Zero)).unwrap();
        Processor::new(Box::new(engine), 2_400)
    };
    let steady: Vec<Processor> = paths.iter().map(processor).collect();
    let first = processor(&paths[0]);
    assert_steps_never_click(steady, first, &mut preparer, |k, preparer| {
        // Next: the editor's helper thread loads the file, the parameter asks for it.
        files.load_paths(&[paths[k].as_path()]).unwrap();
        let (_, generation) = files.current().expect("loaded");
        let request = Request {
            slot: Default::default(),
            source: IrSource::File(generation),
            edits: EditSettings::NONE,
            sample_rate: RATE,
            config: config(LatencyMode::Zero),
            format: Default::default(),
            generation: k as u64,
            stagger_idx: None,
        };
        assert!(assert_no_alloc(|| preparer.request(request)));
        // Until its answer is taken the thread is not at rest: the engine it builds holds workers.
        assert!(!assert_no_alloc(|| preparer.idle()));
        wait_for_engine(preparer)
    });
    std::fs::remove_dir_all(dir).unwrap();
}

/// The shelves automated while a sine plays, each change at a block boundary: the low shelf to
/// +12 dB, the high shelf to -12 dB, then both back and the low one to -12 dB, each edit
/// prepared on the preparation thread and crossfaded in, as the plugin does once a knob
/// rests; no click ([`assert_steps_never_click`]).
#[test]
fn automating_the_shelves_never_clicks() {
    let _clock = beside_others();
    use longtail::ir::edit::Shelf;

    let shelf = |hz: f64, db: f64| Some(Shelf { hz, db });
    let edits = [
        EditSettings::NONE,
        EditSettings {
            low_shelf: shelf(300.0, 12.0),
            ..EditSettings::NONE
        },
        EditSettings {
            low_shelf: shelf(300.0, 12.0),
            high_shelf: shelf(2_000.0, -12.0),
            ..EditSettings::NONE
        },
        EditSettings {
            low_shelf: shelf(600.0, -12.0),
            ..EditSettings::NONE
        },
    ];
    assert_edits_never_click(&edits);
}

/// The decay automated while a sine plays, as the shelves are: shorter, longer, longer lows with
/// shorter highs, back to the IR's own; no click.
#[test]
fn automating_the_decay_never_clicks() {
    let _clock = beside_others();
    use longtail::ir::decay::{BandScale, DecaySettings};

    let decay = |ratio: f64, low: f64, high: f64| EditSettings {
        decay: DecaySettings {
            ratio,
            low: Some(BandScale {
                hz: 400.0,
                factor: low,
            }),
            high: Some(BandScale {
                hz: 3_000.0,
                factor: high,
            }),
        },
        ..EditSettings::NONE
    };
    assert_edits_never_click(&[
        EditSettings::NONE,
        decay(0.5, 1.0, 1.0),
        decay(2.0, 1.0, 1.0),
        decay(1.0, 2.0, 0.5),
        EditSettings::NONE,
    ]);
}

/// Plays a sine through the Small room with each of `edits` in turn, each prepared on the
/// preparation thread and crossfaded in at a block boundary, as the plugin does once a knob
/// rests; no click ([`assert_steps_never_click`]).
fn assert_edits_never_click(edits: &[EditSettings]) {
    let mut preparer = Preparer::spawn(Default::default(), Default::default()).unwrap();
    let request = |k: usize| Request {
        slot: Default::default(),
        source: IrSource::Builtin(BuiltinIr::SmallRoom),
        edits: edits[k],
        sample_rate: RATE,
        config: config(LatencyMode::Zero),
        format: Default::default(),
        generation: k as u64,
        stagger_idx: None,
    };
    let prepare = |k: usize, preparer: &mut Preparer| {
        assert!(assert_no_alloc(|| preparer.request(request(k))));
        wait_for_engine(preparer)
    };
    let steady: Vec<Processor> = (0..edits.len())
        .map(|k| Processor::new(prepare(k, &mut preparer), 2_400))
        .collect();
    let first = Processor::new(prepare(0, &mut preparer), 2_400);
    assert_steps_never_click(steady, first, &mut preparer, prepare);
}

/// Minor page faults this thread has taken (`/proc/thread-self/stat`, field 10).
#[cfg(target_os = "linux")]
fn thread_minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // After the command name, which may hold spaces: state, ppid, pgrp, session, tty_nr,
    // tpgid, flags, minflt.
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split(' ').nth(7).unwrap().parse().unwrap()
}

/// The audio thread takes no page fault: what it writes was made resident where the engine was
/// built (`engine::memory::pages`), so its first calls do not wait for the kernel to back pages
/// (or, for huge ones, to zero 2 MiB and maybe compact memory). Level 0 with the fused head at
/// block 1024; at 64, the head's blocks and the spread levels; the cathedral's workers at both. An
/// engine run before it maps the code the calls run (its pages are not the engine's).
#[cfg(target_os = "linux")]
#[test]
fn the_audio_thread_takes_no_page_faults() {
    let _clock = beside_others();
    let ir = BuiltinIr::Cathedral.generate(RATE);
    // Long enough for every ring and FDL to wrap: the cathedral's longest partition is 32768
    // samples, in a few periods of it.
    let total = 8 * RATE as usize;
    let inputs = [
        noise(total, 0.5, RNG_SEED + 10),
        noise(total, 0.5, RNG_SEED + 11),
    ];
    for block in [64, 1024] {
        let config = EngineConfig {
            max_block_size: block,
            ..config(LatencyMode::Zero)
        };
        // Written here first (`vec!` of zeros would leave its pages for `process` to fault).
        let mut outputs = [vec![1.0f32; block], vec![1.0f32; block]];
        let mut run = |engine: &mut Engine, len: usize| {
            for start in (0..len).step_by(block) {
                let [l, r] = &inputs;
                let input: [&[f32]; 2] = [&l[start..start + block], &r[start..start + block]];
                let [out_l, out_r] = &mut outputs;
                assert_no_alloc(|| engine.process(&input, &mut [&mut out_l[..], &mut out_r[..]]));
            }
        };
        let mut warm = Engine::new(&ir, config).unwrap();
        warm.set_offline(true);
        run(&mut warm, total);
        drop(warm);
        let mut engine = Engine::new(&ir, config).unwrap();
        assert!(engine.num_workers() >= 1, "{}", engine.plan().describe());
        engine.set_offline(true);
        let before = thread_minor_faults();
        run(&mut engine, total);
        let faults = thread_minor_faults() - before;
        assert_eq!(faults, 0, "block {block}: {}", engine.plan().describe());
    }
}
