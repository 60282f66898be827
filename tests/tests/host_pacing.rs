//! The output does not depend on how the host paces its calls where the host leaves time
//! (`engine::realtime::pace`): a host that runs ahead of real time at each start of playback
//! (anticipative processing: 0.2, 0.5 and 1 s ahead, 3 starts), with blocks of 64, 128, 512
//! and 1024 samples and a ragged sequence, on every built-in IR (and the cathedral in the
//! offload mode, every level on a worker), and a bounce in real-time mode (60 s as fast as
//! possible), all get the offline render: >= 100 dB against it, no late result and no dropped
//! chunk. Every call runs under `assert_no_alloc`.
//!
//! The runs take real time (the host sleeps as it would), so each IR is its own test and the
//! harness runs two at a time.

use longtail::engine::plan::OFFLOAD_LATENCIES;
use longtail::engine::{Engine, EngineConfig, Executor, LatencyMode, PlanLimits, stagger_phase};
use longtail::ir::builtin::BuiltinIr;
use longtail_tests::ahead::{BLOCKS, LEADS_S, PACED_S, PAUSE, STARTS};
use longtail_tests::{AheadHost, Blocks, MIN_SNR_DB, RNG_SEED, noise, run_engine, run_paced};
use nice_assert_no_alloc::assert_no_alloc;

const RATE: u32 = 48_000;
fn config(blocks: Blocks) -> EngineConfig {
    config_in(blocks, LatencyMode::Zero)
}

fn config_in(blocks: Blocks, latency_mode: LatencyMode) -> EngineConfig {
    EngineConfig {
        max_block_size: blocks.max(),
        num_inputs: 2,
        num_outputs: 2,
        latency_mode,
        limits: PlanLimits::default(),
        executor: Executor::Workers,
    }
}

/// `actual` against `reference`, in dB (300 when identical).
fn snr_vs(actual: &[Vec<f32>], reference: &[Vec<f32>]) -> f64 {
    let (mut signal, mut noise) = (0.0f64, 0.0f64);
    for (a, r) in actual.iter().zip(reference) {
        for (&a, &r) in a.iter().zip(r) {
            signal += f64::from(r) * f64::from(r);
            noise += (f64::from(a) - f64::from(r)).powi(2);
        }
    }
    if noise == 0.0 {
        300.0
    } else {
        10.0 * (signal / noise).log10()
    }
}

fn ahead_of_real_time_equals_the_offline_render(builtin: BuiltinIr) {
    ahead_of_real_time_in(builtin, LatencyMode::Zero);
}

/// The offload mode, level 0 on a worker too: the same, on the longest built-in IR.
#[test]
fn offload_ahead_of_real_time_is_the_offline_render() {
    ahead_of_real_time_in(
        BuiltinIr::Cathedral,
        LatencyMode::Offload(OFFLOAD_LATENCIES[2]),
    );
}

fn ahead_of_real_time_in(builtin: BuiltinIr, latency_mode: LatencyMode) {
    let ir = builtin.generate(RATE);
    for blocks in BLOCKS {
        let mut paced = Engine::new(&ir, config_in(blocks, latency_mode)).unwrap();
        let mut offline = Engine::new(&ir, config_in(blocks, latency_mode)).unwrap();
        let phase = stagger_phase(3, paced.plan().max_partition_size());
        for engine in [&mut paced, &mut offline] {
            engine.set_stagger(phase);
            engine.reset();
        }
        offline.set_offline(true);
        for (idx, lead_s) in LEADS_S.into_iter().enumerate() {
            let mut host = AheadHost::new(RATE, lead_s, PACED_S, PAUSE);
            let total = host.total(STARTS);
            let inputs: Vec<Vec<f32>> = (0..2)
                .map(|c| noise(total, 0.5, RNG_SEED + 40 + 2 * idx as u64 + c))
                .collect();
            paced.reset();
            offline.reset();
            let expected = run_engine(&mut offline, &inputs, total, blocks, false);
            let before = paced.late_stats();
            let got = run_paced(&mut paced, &inputs, blocks, &mut host);
            let stats = paced.late_stats();
            let snr = snr_vs(&got, &expected);
            let case = format!(
                "{} {latency_mode:?} {blocks:?} {lead_s} s ahead x{STARTS}: {snr:.1} dB, {} \
                 late, {} dropped, {} waits (longest {:.2} ms)",
                builtin.id(),
                stats.late_results - before.late_results,
                stats.dropped_chunks - before.dropped_chunks,
                stats.waits - before.waits,
                stats.wait_max_ns as f64 / 1e6,
            );
            println!("{case}");
            assert!(snr >= MIN_SNR_DB, "{case}");
            assert_eq!(stats.late_results, before.late_results, "{case}");
            assert_eq!(stats.dropped_chunks, before.dropped_chunks, "{case}");
        }
    }
}

mod ahead_of_real_time_is_the_offline_render {
    longtail_tests::test_every_builtin_ir!(super::ahead_of_real_time_equals_the_offline_render);
}

/// A bounce the plugin is not told about: 60 s of audio as fast as the machine allows, in
/// real-time mode, is the offline render, and nothing is dropped.
#[test]
fn a_bounce_in_real_time_mode_equals_the_offline_render() {
    let ir = BuiltinIr::Cathedral.generate(RATE);
    let blocks = Blocks::Fixed(128);
    let total = 60 * RATE as usize;
    let inputs: Vec<Vec<f32>> = (0..2)
        .map(|c| noise(total, 0.5, RNG_SEED + 60 + c))
        .collect();
    let mut offline = Engine::new(&ir, config(blocks)).unwrap();
    offline.set_offline(true);
    let expected = run_engine(&mut offline, &inputs, total, blocks, false);
    drop(offline);
    let mut bounce = Engine::new(&ir, config(blocks)).unwrap();
    let started = std::time::Instant::now();
    let mut outputs = vec![vec![0.0f32; total]; 2];
    let mut start = 0;
    for size in blocks.sizes(total) {
        let ins: Vec<&[f32]> = inputs.iter().map(|x| &x[start..start + size]).collect();
        let mut outs: Vec<&mut [f32]> = outputs
            .iter_mut()
            .map(|y| &mut y[start..start + size])
            .collect();
        assert_no_alloc(|| bounce.process(&ins, &mut outs));
        start += size;
    }
    let stats = bounce.late_stats();
    let snr = snr_vs(&outputs, &expected);
    println!(
        "bounce of 60 s in {:?}: {snr:.1} dB, {stats:?}",
        started.elapsed()
    );
    assert!(snr >= MIN_SNR_DB, "{snr:.1} dB");
    assert_eq!(stats.late_results, 0, "{stats:?}");
    assert_eq!(stats.dropped_chunks, 0, "{stats:?}");
}
