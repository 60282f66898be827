//! The engine against a float64 reference convolution: IR lengths around the quantum and
//! several seconds long, ragged host block sequences, every latency mode (the offload mode
//! asked for 512 samples, which no host block here allows: its plan takes more), every channel layout,
//! and again with every scratch buffer filled with NaN before each call.

use longtail::engine::plan::OFFLOAD_LATENCIES;
use longtail::engine::{Engine, EngineConfig, Executor, LatencyMode, PlanLimits, stagger_phase};
use longtail::ir::Ir;
use longtail_tests::{
    Blocks, LAYOUTS, MIN_SNR_DB, RNG_SEED, check_offload, decaying_noise, noise, reference_outputs,
    run_without_latency, snr_db,
};

const BLOCKS: [Blocks; 5] = [
    Blocks::Fixed(1),
    Blocks::Primes,
    Blocks::Fixed(256),
    Blocks::Random {
        max: 300,
        seed: RNG_SEED,
    },
    // The largest quantum, 1024: its head is split between the direct FIR and its FFT blocks.
    Blocks::Mixed(1024),
];

fn make_ir(num_channels: usize, len: usize) -> Ir {
    let channels = (0..num_channels)
        .map(|c| decaying_noise(len, RNG_SEED + 100 + c as u64))
        .collect();
    Ir::new("test", 48_000, channels).expect("valid IR")
}

/// The float64 reference for each output: the sum over that output's paths.
fn reference(ir: &Ir, inputs: &[Vec<f32>], num_outputs: usize) -> Vec<Vec<f64>> {
    reference_outputs(ir, inputs, num_outputs, inputs[0].len() + ir.len() - 1)
}

fn check(ir_len: usize, input_len: usize, layouts: &[(usize, usize, usize)], limits: PlanLimits) {
    for &(num_ir_channels, num_inputs, num_outputs) in layouts {
        let ir = make_ir(num_ir_channels, ir_len);
        let inputs: Vec<Vec<f32>> = (0..num_inputs)
            .map(|c| noise(input_len, 0.5, RNG_SEED + c as u64))
            .collect();
        let expected = reference(&ir, &inputs, num_outputs);
        for latency_mode in [
            LatencyMode::Zero,
            LatencyMode::LowCpu,
            LatencyMode::Offload(OFFLOAD_LATENCIES[0]),
        ] {
            for (blocks, executor) in BLOCKS
                .into_iter()
                .flat_map(|b| [(b, Executor::Inline), (b, Executor::Workers)])
            {
                let config = EngineConfig {
                    max_block_size: blocks.max(),
                    num_inputs,
                    num_outputs,
                    latency_mode,
                    limits,
                    executor,
                };
                let mut engine = Engine::new(&ir, config).expect("engine");
                // Offline: worker results are waited for, so the output is exact and
                // deterministic whatever the machine's load.
                engine.set_offline(true);
                if executor == Executor::Workers {
                    // Instances are staggered in the plugin; the output must not change.
                    engine.set_stagger(stagger_phase(1, engine.plan().max_partition_size()));
                }
                let clean = run_without_latency(&mut engine, &inputs, blocks, false);
                let case = format!(
                    "ir_len={ir_len} ir_ch={num_ir_channels} in={num_inputs} out={num_outputs} \
                     {latency_mode:?} {blocks:?} {executor:?} plan=[{}]",
                    engine.plan().describe()
                );
                for (output_idx, (actual, wanted)) in clean.iter().zip(&expected).enumerate() {
                    assert_eq!(actual.len(), wanted.len(), "{case}: output length");
                    let snr = snr_db(actual, wanted);
                    assert!(
                        snr >= MIN_SNR_DB,
                        "{case}: output {output_idx} SNR {snr:.1} dB"
                    );
                }

                assert_eq!(
                    engine.late_stats(),
                    Default::default(),
                    "{case}: lates offline"
                );

                // The same run from a reset engine with garbage in every scratch buffer must
                // give the same output, bit for bit (workers restart from a clean history too).
                engine.reset();
                let dirty = run_without_latency(&mut engine, &inputs, blocks, true);
                assert_eq!(clean, dirty, "{case}: output depends on scratch contents");
            }
        }
    }
}

#[test]
fn ir_lengths_around_the_quantum() {
    for ir_len in [1, 15, 16, 17, 63, 64, 65, 129] {
        check(ir_len, 3000, &LAYOUTS, PlanLimits::default());
    }
}

#[test]
fn medium_ir_with_many_small_levels() {
    check(
        20_000,
        12_000,
        &LAYOUTS[..4],
        PlanLimits {
            max_partition_size: 1024,
            ..PlanLimits::default()
        },
    );
}

#[test]
fn uniform_single_level_plan() {
    check(
        5_000,
        6_000,
        &LAYOUTS[..1],
        PlanLimits {
            max_partition_size: 16,
            ..PlanLimits::default()
        },
    );
}

#[test]
fn several_seconds_ir() {
    // 2.5 s at 48 kHz: every level of the default plan up to 16384-sample partitions.
    check(
        120_000,
        40_000,
        &[(2, 2, 2), (4, 1, 2)],
        PlanLimits::default(),
    );
}

/// The offload mode at 120 dB against float64 delayed by exactly its latency, stereo and a
/// dense 4 x 4 matrix, blocks of 1, 64, 480 and ragged, inline and on CPU workers (the GPU in
/// `engine_gpu.rs`).
#[test]
fn offload_is_the_reference_delayed_by_exactly_its_latency() {
    for executor in [Executor::Inline, Executor::Workers] {
        for line in check_offload(
            executor,
            PlanLimits::default(),
            OFFLOAD_LATENCIES[2],
            30_000,
        ) {
            println!("{line}");
        }
    }
}
