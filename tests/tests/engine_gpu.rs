//! The engine with its big levels on the GPU (lavapipe in CI): against the float64 reference
//! for every layout and ragged blocks, several engines sharing the hub while they come and go,
//! and the hub thread's priority. The injected faults are in `engine_gpu_faults.rs`, a process
//! of their own: a lost device breaks the process's hub for every engine in it.
//!
//! The paced test runs alone ([`alone`]); the others share the machine ([`shared`]).

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use longtail::engine::{
    Engine, EngineConfig, Executor, GPU_MIN_PARTITION, GpuPolicy, LatencyMode, PlanLimits, RunsOn,
};
use longtail::ir::Ir;
use longtail_tests::{
    Blocks, LAYOUTS, MIN_MATRIX_SNR_DB, MIN_SNR_DB, MatrixFill, RNG_SEED, decaying_noise,
    matrix_ir, matrix_reference, noise, reference_outputs, run_engine, run_without_latency, snr_db,
};

const RATE: u32 = 48_000;
const GPU: Executor = Executor::Gpu(GpuPolicy::Forced {
    allow_cpu_adapter: true,
});

/// The paced test's waits are bounded in wall-clock time, so it must not share the CPU with
/// the other tests: lavapipe computes on the CPU, and its round trips grow with every other
/// test's work (under Wine on CI's two cores they passed the bound at the start of a burst).
static CPU: RwLock<()> = RwLock::new(());

/// For a test that may run beside the others.
fn shared() -> RwLockReadGuard<'static, ()> {
    CPU.read().unwrap_or_else(PoisonError::into_inner)
}

/// For a test that runs alone.
fn alone() -> RwLockWriteGuard<'static, ()> {
    CPU.write().unwrap_or_else(PoisonError::into_inner)
}

fn make_ir(num_channels: usize, len: usize, seed: u64) -> Ir {
    let channels = (0..num_channels)
        .map(|c| decaying_noise(len, seed + c as u64))
        .collect();
    Ir::new("gpu test", RATE, channels).unwrap()
}

fn config(num_inputs: usize, num_outputs: usize, max_block_size: usize) -> EngineConfig {
    EngineConfig {
        max_block_size,
        num_inputs,
        num_outputs,
        latency_mode: LatencyMode::Zero,
        // Levels of 1024 and 2048 samples: big enough for the GPU, small enough for lavapipe.
        limits: PlanLimits {
            max_partition_size: 2048,
            ..PlanLimits::default()
        },
        executor: GPU,
    }
}

#[test]
fn gpu_levels_match_the_float64_reference_in_every_layout() {
    let _cpu = shared();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    for (idx, &(ir_channels, ins, outs)) in LAYOUTS.iter().enumerate() {
        let ir = make_ir(ir_channels, 30_000, RNG_SEED + 10 * idx as u64);
        let inputs: Vec<Vec<f32>> = (0..ins)
            .map(|c| noise(9_000, 0.5, RNG_SEED + c as u64))
            .collect();
        let blocks = if idx % 2 == 0 {
            Blocks::Primes
        } else {
            Blocks::Random {
                max: 300,
                seed: RNG_SEED,
            }
        };
        let mut engine = Engine::new(&ir, config(ins, outs, blocks.max())).unwrap();
        engine.set_offline(true);
        let report = engine.backend_report();
        assert!(
            report.gpu_levels >= 1,
            "{report:?} plan {}",
            engine.plan().describe()
        );
        // What the editor sees, level by level: the head's level and those with too little
        // slack for a worker on the audio thread, big levels on the GPU, the rest on CPU
        // workers.
        let probe = engine.backend_probe();
        let levels = probe.levels();
        assert_eq!(levels.len(), engine.plan().levels.len());
        assert_eq!(levels[0].runs_on, RunsOn::AudioThread);
        for (idx, level) in levels.iter().enumerate().skip(1) {
            let want = if engine.plan().on_audio_thread(idx) {
                RunsOn::AudioThread
            } else if level.partition_size >= GPU_MIN_PARTITION {
                RunsOn::Gpu
            } else {
                RunsOn::CpuWorker
            };
            assert_eq!(level.runs_on, want, "{levels:?}");
        }
        assert_eq!(probe.report(), report);
        assert_eq!(probe.engine_id(), engine.id());
        let total = inputs[0].len() + ir.len() - 1;
        let got = run_engine(&mut engine, &inputs, total, blocks, false);
        let want = reference_outputs(&ir, &inputs, outs, total);
        for (o, (g, w)) in got.iter().zip(&want).enumerate() {
            let snr = snr_db(g, w);
            assert!(
                snr >= MIN_SNR_DB,
                "layout {ir_channels}ch {ins}->{outs} output {o}: {snr:.1} dB ({report:?})"
            );
        }
        assert_eq!(engine.late_stats(), Default::default());
        assert_eq!(engine.backend_report().gpu_levels, report.gpu_levels);
    }
}

/// The offload mode on the GPU at 4096 samples, where every level, level 0 included, is big
/// enough for it: 120 dB against float64 delayed by exactly the latency, stereo and a dense
/// 4 x 4 matrix, blocks of 1, 64, 480 and ragged.
#[test]
fn gpu_offload_is_the_reference_delayed_by_exactly_its_latency() {
    let _cpu = shared();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let limits = config(2, 2, 64).limits;
    for line in longtail_tests::check_offload(GPU, limits, 4096, 20_000) {
        println!("{line}");
    }
    // Level 0 is on the GPU there.
    let ir = make_ir(2, 20_000, RNG_SEED);
    let offload = EngineConfig {
        latency_mode: LatencyMode::Offload(4096),
        ..config(2, 2, 64)
    };
    let engine = Engine::new(&ir, offload).unwrap();
    let levels = engine.backend_probe().levels();
    assert!(
        levels.iter().all(|l| l.runs_on == RunsOn::Gpu),
        "{levels:?}"
    );
}

/// Matrices with their big levels on the GPU: dense, sparse and shared IRs, ragged blocks,
/// every latency mode, held to the matrix tolerance like the CPU executors.
#[test]
fn gpu_matrices_match_the_float64_matrix_convolution() {
    let _cpu = shared();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let cases = [
        (4, 4, MatrixFill::Dense),
        (6, 3, MatrixFill::Shared),
        (5, 5, MatrixFill::Sparse),
    ];
    for (idx, &(ins, outs, fill)) in cases.iter().enumerate() {
        let ir = matrix_ir(ins, outs, fill, 20_000, RNG_SEED + 31 * idx as u64);
        let inputs: Vec<Vec<f32>> = (0..ins)
            .map(|c| noise(6_000, 0.5, RNG_SEED + 3 * c as u64))
            .collect();
        let total = inputs[0].len() + ir.len() - 1;
        let want = matrix_reference(&ir, &inputs, total);
        for latency_mode in [
            LatencyMode::Zero,
            LatencyMode::LowCpu,
            LatencyMode::Offload(2048),
        ] {
            let blocks = Blocks::Random {
                max: 300,
                seed: RNG_SEED + idx as u64,
            };
            let mut engine = Engine::new(
                &ir,
                EngineConfig {
                    latency_mode,
                    ..config(ins, outs, blocks.max())
                },
            )
            .unwrap();
            engine.set_offline(true);
            let report = engine.backend_report();
            assert!(report.gpu_levels >= 1, "{report:?}");
            let got = run_without_latency(&mut engine, &inputs, blocks, false);
            for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                let snr = snr_db(g, w);
                eprintln!("{ins} x {outs} {fill:?} {latency_mode:?} output {o}: {snr:.1} dB");
                assert!(
                    snr >= MIN_MATRIX_SNR_DB,
                    "{ins} x {outs} {fill:?} {latency_mode:?} output {o}: {snr:.1} dB"
                );
            }
            assert_eq!(engine.late_stats(), Default::default());
        }
    }
}

/// Three engines on one hub, processed in turns; one is dropped halfway and a new one starts,
/// and every output stays exact.
#[test]
fn engines_share_the_hub_while_others_come_and_go() {
    let _cpu = shared();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let ir = make_ir(2, 30_000, RNG_SEED + 77);
    let len = 30_000;
    let inputs: Vec<Vec<Vec<f32>>> = (0..4)
        .map(|e| {
            (0..2)
                .map(|c| noise(len, 0.5, RNG_SEED + 1000 + 10 * e + c))
                .collect()
        })
        .collect();
    let mut engines: Vec<Option<Box<Engine>>> = (0..3)
        .map(|_| {
            let mut engine = Box::new(Engine::new(&ir, config(2, 2, 256)).unwrap());
            engine.set_offline(true);
            Some(engine)
        })
        .collect();
    let mut outputs = vec![vec![vec![0.0f32; len]; 2]; 4];
    let hub = engines[0].as_ref().unwrap().gpu_hub().unwrap().clone();
    for block in 0..len / 256 {
        if block == len / 512 {
            engines[1] = None;
            let mut late = Box::new(Engine::new(&ir, config(2, 2, 256)).unwrap());
            late.set_offline(true);
            engines.push(Some(late));
        }
        for (e, engine) in engines.iter_mut().enumerate() {
            let Some(engine) = engine else { continue };
            // The engine that joined starts its own input at time 0.
            let offset = if e == 3 { len / 512 * 256 } else { 0 };
            let start = block * 256 - offset;
            let ins: Vec<&[f32]> = inputs[e].iter().map(|x| &x[start..start + 256]).collect();
            let (left, right) = outputs[e].split_at_mut(1);
            let mut outs: Vec<&mut [f32]> = vec![
                &mut left[0][start..start + 256],
                &mut right[0][start..start + 256],
            ];
            engine.process(&ins, &mut outs);
        }
    }
    assert!(hub.stats().levels >= 3, "{:?}", hub.stats());
    for e in [0, 2, 3] {
        let done = if e == 3 { len / 2 } else { len / 256 * 256 };
        let want = reference_outputs(&ir, &inputs[e], 2, done);
        for (o, (g, w)) in outputs[e].iter().zip(&want).enumerate() {
            let snr = snr_db(&g[..done], w);
            assert!(snr >= MIN_SNR_DB, "engine {e} output {o}: {snr:.1} dB");
        }
    }
}

/// The GPU's results come through the same slots as a worker's, so the rule of
/// `engine::realtime::pace` holds for them: a host 0.2 s ahead of real time at 3 starts, in
/// real-time mode, gets the offline render with no late result. At each start the engine's estimate
/// of the lead begins at 0, so there a result may take the level's slack minus the margin (over 30
/// ms here, 4 times lavapipe's p99.9 round trip) and no more: the test runs alone ([`alone`]).
#[test]
fn gpu_levels_wait_while_the_host_is_ahead() {
    let _cpu = alone();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let ir = make_ir(2, 30_000, RNG_SEED + 90);
    let blocks = Blocks::Fixed(128);
    let mut host =
        longtail_tests::AheadHost::new(RATE, 0.2, 0.25, std::time::Duration::from_millis(100));
    let total = host.total(3);
    let inputs: Vec<Vec<f32>> = (0..2)
        .map(|c| noise(total, 0.5, RNG_SEED + 91 + c))
        .collect();
    let mut offline = Engine::new(&ir, config(2, 2, blocks.max())).unwrap();
    offline.set_offline(true);
    let expected = run_engine(&mut offline, &inputs, total, blocks, false);
    let mut engine = Engine::new(&ir, config(2, 2, blocks.max())).unwrap();
    assert!(
        engine.backend_report().gpu_levels >= 1,
        "{:?}",
        engine.backend_report()
    );
    let outputs = longtail_tests::run_paced(&mut engine, &inputs, blocks, &mut host);
    let stats = engine.late_stats();
    let report = engine.backend_report();
    println!("host ahead, GPU levels: {stats:?} {report:?}");
    assert!(
        report.gpu_levels >= 1,
        "the levels left the GPU: {report:?}"
    );
    assert_eq!(
        (stats.late_results, stats.dropped_chunks),
        (0, 0),
        "{stats:?}"
    );
    for (channel, (got, want)) in outputs.iter().zip(&expected).enumerate() {
        let want: Vec<f64> = want.iter().map(|&s| f64::from(s)).collect();
        let snr = snr_db(got, &want);
        assert!(
            snr >= MIN_SNR_DB,
            "channel {channel}: {snr:.1} dB against the offline render"
        );
    }
}

/// The hub an engine opens runs the plugin's start hook on its thread: real-time priority at
/// `GPU_HUB_PRIORITY` where the OS allows it (on Linux the thread's policy says so), the default
/// policy where it refuses (no permission, as in CI), and the hub serves either way (the tests
/// above).
#[test]
fn the_hub_thread_asks_for_real_time_priority() {
    let _cpu = shared();
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let ir = make_ir(2, 30_000, RNG_SEED + 5);
    let engine = Engine::new(&ir, config(2, 2, 256)).unwrap();
    let stats = engine.gpu_hub().expect("the engine opened the hub").stats();
    let Some(realtime) = stats.realtime else {
        panic!("the hub's thread ran no start hook: {stats:?}");
    };
    eprintln!("the hub's thread at real-time priority: {realtime}");
    #[cfg(target_os = "linux")]
    {
        // Fields 40 and 41 of /proc/.../stat (rt_priority, policy), counted after the name.
        let hub_thread = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(Result::ok)
            .find(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim_end() == longtail_gpu::hub::THREAD_NAME)
            })
            .expect("a thread named longtail-gpu");
        let stat = std::fs::read_to_string(hub_thread.path().join("stat")).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        // `after_name` starts at field 3.
        let (rt_priority, policy): (u32, u32) = (
            fields[40 - 3].parse().unwrap(),
            fields[41 - 3].parse().unwrap(),
        );
        // SCHED_FIFO is policy 1, SCHED_OTHER 0.
        let want = if realtime {
            (1, longtail::engine::realtime::priority::GPU_HUB_PRIORITY)
        } else {
            (0, 0)
        };
        assert_eq!(
            (policy, rt_priority),
            want,
            "the hub thread's (policy, priority)"
        );
    }
}
