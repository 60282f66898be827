//! Matrices (N inputs x M outputs, up to 64 x 64) against the float64 matrix convolution:
//! dense, sparse and shared-IR matrices, on the inline and worker executors, every latency
//! mode, ragged host blocks, held to [`MIN_MATRIX_SNR_DB`]; a matrix on a bus of another size
//! is refused with the counts. The GPU's matrix test is in `engine_gpu.rs`.

use std::time::Duration;

use longtail::engine::{
    Engine, EngineConfig, EngineError, Executor, LatencyMode, PlanLimits, stagger_phase,
};
use longtail_tests::{
    AheadHost, Blocks, MIN_MATRIX_SNR_DB, MatrixFill, RNG_SEED, matrix_ir, matrix_reference, noise,
    run_engine, run_paced, run_without_latency, snr_db,
};

/// Runs `ir` on its own bus with every executor and latency mode over `blocks`, and checks
/// every output against the float64 matrix convolution.
fn check(ir_len: usize, input_len: usize, cases: &[(usize, usize, MatrixFill)], blocks: &[Blocks]) {
    for (case_idx, &(num_inputs, num_outputs, fill)) in cases.iter().enumerate() {
        let ir = matrix_ir(
            num_inputs,
            num_outputs,
            fill,
            ir_len,
            RNG_SEED + 97 * case_idx as u64,
        );
        let inputs: Vec<Vec<f32>> = (0..num_inputs)
            .map(|c| noise(input_len, 0.5, RNG_SEED + 7 * c as u64))
            .collect();
        let total = input_len + ir_len - 1;
        let expected = matrix_reference(&ir, &inputs, total);
        for latency_mode in [
            LatencyMode::Zero,
            LatencyMode::LowCpu,
            LatencyMode::Offload(2048),
        ] {
            for &blocks in blocks {
                for executor in [Executor::Inline, Executor::Workers] {
                    let config = EngineConfig {
                        max_block_size: blocks.max(),
                        num_inputs,
                        num_outputs,
                        latency_mode,
                        // Small levels, so a short IR still spans several of them.
                        limits: PlanLimits {
                            max_partition_size: 1024,
                            ..PlanLimits::default()
                        },
                        executor,
                    };
                    let mut engine = Engine::new(&ir, config).expect("engine");
                    engine.set_offline(true);
                    let got = run_without_latency(&mut engine, &inputs, blocks, false);
                    let case = format!(
                        "{num_inputs} x {num_outputs} {fill:?} {latency_mode:?} {blocks:?} \
                         {executor:?} plan=[{}]",
                        engine.plan().describe()
                    );
                    assert_eq!(got.len(), num_outputs, "{case}");
                    let worst = got
                        .iter()
                        .zip(&expected)
                        .map(|(actual, wanted)| snr_db(actual, wanted))
                        .fold(f64::INFINITY, f64::min);
                    eprintln!("{case}: worst output {worst:.1} dB");
                    for (output_idx, (actual, wanted)) in got.iter().zip(&expected).enumerate() {
                        let snr = snr_db(actual, wanted);
                        assert!(
                            snr >= MIN_MATRIX_SNR_DB,
                            "{case}: output {output_idx} SNR {snr:.1} dB"
                        );
                    }
                    assert_eq!(engine.late_stats(), Default::default(), "{case}");
                }
            }
        }
    }
}

#[test]
fn small_matrices_dense_sparse_and_shared() {
    check(
        12_000,
        5_000,
        &[
            (4, 4, MatrixFill::Dense),
            (1, 6, MatrixFill::Dense),
            (6, 1, MatrixFill::Sparse),
            (3, 5, MatrixFill::Sparse),
            (8, 8, MatrixFill::Shared),
        ],
        &[
            Blocks::Primes,
            Blocks::Random {
                max: 300,
                seed: RNG_SEED,
            },
        ],
    );
}

/// The dense 16 x 16 plans levels whose partitions span two hops (`Level::span`), on the audio
/// thread, on workers and as the offload mode's level 0.
#[test]
fn twelve_and_sixteen_square() {
    check(
        9_000,
        3_000,
        &[(12, 12, MatrixFill::Sparse), (16, 16, MatrixFill::Dense)],
        &[Blocks::Random {
            max: 200,
            seed: RNG_SEED + 1,
        }],
    );
}

#[test]
fn the_largest_matrix_64_by_64() {
    check(
        96,
        600,
        &[(64, 64, MatrixFill::Dense)],
        &[Blocks::Fixed(64)],
    );
}

/// A 6 x 6 matrix on worker threads in real-time mode, fed by a host that runs ahead of real
/// time, every call under `assert_no_alloc`: exactly the offline render, nothing late, twice
/// (the second time after a reset).
#[test]
fn ahead_of_real_time_a_matrix_equals_its_offline_render_without_allocating() {
    let ir = matrix_ir(6, 6, MatrixFill::Dense, 24_000, RNG_SEED + 5);
    let blocks = Blocks::Random {
        max: 256,
        seed: RNG_SEED + 2,
    };
    let config = EngineConfig {
        max_block_size: blocks.max(),
        num_inputs: 6,
        num_outputs: 6,
        latency_mode: LatencyMode::Zero,
        limits: PlanLimits::default(),
        executor: Executor::Workers,
    };
    let mut paced = Engine::new(&ir, config).unwrap();
    let mut offline = Engine::new(&ir, config).unwrap();
    let phase = stagger_phase(2, paced.plan().max_partition_size());
    for engine in [&mut paced, &mut offline] {
        engine.set_stagger(phase);
        engine.reset();
    }
    offline.set_offline(true);
    for round in 0..2 {
        paced.reset();
        offline.reset();
        ahead_equals_offline(
            &mut paced,
            &mut offline,
            6,
            blocks,
            RNG_SEED + 60 + 10 * round,
        );
    }
}

/// Feeds `paced` (real-time mode) from a host that runs ahead of real time, every call under
/// `assert_no_alloc`, and `offline` (offline mode) the same `num_inputs` channels of noise
/// (seeds from `seed` on) over `blocks`: the outputs must be equal, nothing late or dropped.
fn ahead_equals_offline(
    paced: &mut Engine,
    offline: &mut Engine,
    num_inputs: u64,
    blocks: Blocks,
    seed: u64,
) {
    let mut host = AheadHost::new(48_000, 0.3, 0.4, Duration::from_millis(50));
    let total = host.total(2);
    let inputs: Vec<Vec<f32>> = (0..num_inputs)
        .map(|c| noise(total, 0.5, seed + c))
        .collect();
    let expected = run_engine(offline, &inputs, total, blocks, false);
    let got = run_paced(paced, &inputs, blocks, &mut host);
    assert_eq!(got, expected, "seed {seed}: {:?}", paced.late_stats());
    let stats = paced.late_stats();
    assert_eq!(
        (stats.late_results, stats.dropped_chunks),
        (0, 0),
        "{stats:?}"
    );
}

/// At blocks of 1024 where the GPU is never used, a dense 4 x 4 room runs its second level
/// on the audio thread at a delay of one partition, summed ahead over the period before its
/// chunk completes (`PartitionPlan::runs_ahead`, `engine::runner::ahead`): against the float64
/// matrix convolution with whole and ragged calls, and fed ahead of real time, every call under
/// `assert_no_alloc`, exactly its offline render.
#[test]
fn at_blocks_of_1024_a_level_runs_ahead_on_the_audio_thread() {
    let ir_len = 14_400;
    let input_len = 20_000;
    let ir = matrix_ir(4, 4, MatrixFill::Dense, ir_len, RNG_SEED + 11);
    let inputs: Vec<Vec<f32>> = (0..4)
        .map(|c| noise(input_len, 0.5, RNG_SEED + 30 + c))
        .collect();
    let expected = matrix_reference(&ir, &inputs, input_len + ir_len - 1);
    let config = EngineConfig {
        max_block_size: 1024,
        num_inputs: 4,
        num_outputs: 4,
        latency_mode: LatencyMode::Zero,
        limits: PlanLimits::default(),
        executor: Executor::Workers,
    };
    for blocks in [Blocks::Fixed(1024), Blocks::Mixed(1024)] {
        let mut engine = Engine::new(&ir, config).expect("engine");
        let plan = engine.plan().clone();
        assert!(
            plan.levels.len() >= 2 && plan.runs_ahead(1),
            "{}",
            plan.describe()
        );
        assert_eq!(
            plan.slack_samples(&plan.levels[1]),
            0,
            "{}",
            plan.describe()
        );
        engine.set_offline(true);
        let got = run_without_latency(&mut engine, &inputs, blocks, false);
        for (output_idx, (actual, wanted)) in got.iter().zip(&expected).enumerate() {
            let snr = snr_db(actual, wanted);
            assert!(
                snr >= MIN_MATRIX_SNR_DB,
                "{blocks:?} output {output_idx}: SNR {snr:.1} dB, plan {}",
                plan.describe()
            );
        }
    }

    let mut paced = Engine::new(&ir, config).unwrap();
    let mut offline = Engine::new(&ir, config).unwrap();
    offline.set_offline(true);
    ahead_equals_offline(
        &mut paced,
        &mut offline,
        4,
        Blocks::Mixed(1024),
        RNG_SEED + 40,
    );
}

#[test]
fn a_matrix_on_a_bus_of_another_size_is_refused_with_the_counts() {
    let ir = matrix_ir(4, 4, MatrixFill::Dense, 100, RNG_SEED);
    for (num_inputs, num_outputs) in [(2, 2), (4, 2), (2, 4), (4, 5)] {
        let config = EngineConfig {
            max_block_size: 64,
            num_inputs,
            num_outputs,
            latency_mode: LatencyMode::Zero,
            limits: PlanLimits::default(),
            executor: Executor::Inline,
        };
        let err = Engine::new(&ir, config).err().expect("refused");
        assert_eq!(
            err,
            EngineError::MatrixMismatch {
                inputs: 4,
                outputs: 4,
                num_inputs,
                num_outputs,
            }
        );
        assert_eq!(
            err.to_string(),
            format!(
                "a 4 x 4 matrix IR needs 4 inputs and 4 outputs, not {num_inputs} in / \
                 {num_outputs} out"
            )
        );
    }
    // Past 64 a side there is no matrix layout at all.
    assert!(longtail::ir::IrLayout::matrix(65, 1).is_none());
    assert!(longtail::ir::IrLayout::matrix(1, 0).is_none());
}
