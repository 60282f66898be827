//! Auto for the whole process (`engine::placement::load_policy`): one small Auto engine stays on
//! the CPU; 32 of them under a (scripted) loaded CPU send their big levels to the GPU through the
//! warm hand-over; a hot GPU sends them back and gets none while hot, however loaded the CPU; once
//! cool it gets them again, and they come back when the load falls. Every output is the float64
//! reference convolution (>= 100 dB) through all the moves, every `process()` under
//! `assert_no_alloc`.
//!
//! Lavapipe stands in for a real GPU (`governor::set_cpu_adapter_pays`, and
//! `LONGTAIL_GPU_ALLOW_CPU=1` for the levels' way to it); the load is scripted
//! (`governor::set_cpu_load`), the measured one being the CI machine's business. The thermal
//! policy reads an empty sysfs tree, so the machine's own heat plays no part.

use std::time::{Duration, Instant};

use longtail::engine::placement::governor;
use longtail::engine::placement::load_policy::LoadDecision;
use longtail::engine::{
    Engine, EngineConfig, Executor, GpuPolicy, LatencyMode, PlanLimits, stagger_phase,
};
use longtail::ir::Ir;
use longtail::thermal::Placement;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, reference_outputs, stereo_decaying_ir, stereo_noise};
use nice_assert_no_alloc::assert_no_alloc;

const RATE: u32 = 48_000;
/// Largest partition: the big levels' slack (at least this) must hold lavapipe's round trip.
const MAX_PARTITION: usize = 8192;
const BLOCK: usize = 128;
/// Samples each engine processes per round.
const ROUND: usize = 2048;
const INSTANCES: usize = 32;
/// Lavapipe computes on the CPU: with the 32 instances' levels its round trip (p99.9) reaches
/// 100 to 170 ms here, and a level goes back to the GPU only when the round trip fits its
/// slack, so the worker levels get 256 ms of it (the default slack would give this plan's
/// 4096-sample level 85 ms, and the levels stayed on the CPU after the GPU cooled).
const MIN_WORKER_SLACK: usize = 12_288;
/// Audio each engine gets at most (the reference's length).
const TOTAL: usize = 40 * RATE as usize;

fn config() -> EngineConfig {
    EngineConfig {
        max_block_size: BLOCK,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode: LatencyMode::Zero,
        limits: PlanLimits {
            max_partition_size: MAX_PARTITION,
            min_worker_slack: MIN_WORKER_SLACK,
            ..PlanLimits::default()
        },
        executor: Executor::Gpu(GpuPolicy::Auto),
    }
}

/// One engine and its error against the reference so far, per output.
struct Instance {
    engine: Engine,
    signal: [f64; 2],
    noise: [f64; 2],
}

impl Instance {
    fn snr_db(&self) -> f64 {
        (0..2)
            .map(|ch| {
                if self.noise[ch] == 0.0 {
                    f64::INFINITY
                } else {
                    10.0 * (self.signal[ch] / self.noise[ch]).log10()
                }
            })
            .fold(f64::INFINITY, f64::min)
    }
}

/// Runs every instance over `[start, start + ROUND)` in host blocks, each under
/// `assert_no_alloc`, and adds up its error against the reference.
fn round(
    instances: &mut [Instance],
    inputs: &[Vec<f32>],
    reference: &[Vec<f64>],
    start: usize,
    scratch: &mut [Vec<f32>; 2],
) {
    for instance in instances.iter_mut() {
        let mut at = start;
        while at < start + ROUND {
            let input: [&[f32]; 2] = [&inputs[0][at..at + BLOCK], &inputs[1][at..at + BLOCK]];
            let [l, r] = scratch;
            let mut output: [&mut [f32]; 2] = [&mut l[..BLOCK], &mut r[..BLOCK]];
            assert_no_alloc(|| instance.engine.process(&input, &mut output));
            for ch in 0..2 {
                for (idx, &sample) in scratch[ch][..BLOCK].iter().enumerate() {
                    let expected = reference[ch][at + idx];
                    instance.signal[ch] += expected * expected;
                    let err = f64::from(sample) - expected;
                    instance.noise[ch] += err * err;
                }
            }
            at += BLOCK;
        }
    }
}

fn build(ir: &Ir, idx: usize) -> Instance {
    let mut engine = Engine::new(ir, config()).unwrap();
    engine.set_stagger(stagger_phase(
        idx as u64,
        engine.plan().max_partition_size(),
    ));
    // A level whose try to go to the GPU fails (lavapipe's round trip on a busy machine) tries
    // again soon.
    engine.set_gpu_retry_after(Duration::from_millis(200));
    // Offline: results are waited for, so the output is exact whatever lavapipe's pace.
    engine.set_offline(true);
    Instance {
        engine,
        signal: [0.0; 2],
        noise: [0.0; 2],
    }
}

/// Where the 32 instances' test stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The CPU is loaded: waiting for every instance to have a level on the GPU.
    Loaded,
    /// Every instance has; `true` the second time (after the GPU cooled).
    OnGpu(bool),
    /// The GPU is hot: waiting for every level to leave.
    Hot,
    /// Hot and loaded: none may go back.
    HotOnCpu,
    /// The GPU is cool again, the CPU still loaded: waiting for them to move again.
    Cooled,
    /// The load has fallen: waiting for every level to come back.
    Light,
    /// All back.
    Done,
}

fn load_decision(instance: &Instance) -> Option<LoadDecision> {
    instance.engine.backend_probe().load_decision()
}

#[test]
fn auto_moves_many_small_engines_to_the_gpu_under_load_and_back() {
    if !longtail_gpu::available_for_tests() {
        return;
    }
    // SAFETY: the only test of this binary, before it starts any thread of its own.
    unsafe { std::env::set_var(longtail_gpu::ALLOW_CPU_ENV, "1") };
    // The thermal policy reads a fake sysfs tree: a GPU zone, cool for now.
    let thermal_root =
        std::env::temp_dir().join(format!("longtail-auto-thermal-{}", std::process::id()));
    let gpu_zone = thermal_root.join("class/thermal/thermal_zone0");
    std::fs::create_dir_all(&gpu_zone).unwrap();
    std::fs::write(gpu_zone.join("type"), "amdgpu\n").unwrap();
    let set_gpu_temp = |celsius: i64| {
        std::fs::write(gpu_zone.join("temp"), format!("{}\n", celsius * 1000)).unwrap();
    };
    set_gpu_temp(50);
    governor::set_thermal_root(Some(thermal_root.clone()));
    governor::set_cpu_adapter_pays(true);
    governor::set_load_polls(2, 3);
    // A GPU that was hot gets levels again after 2 cool polls (instead of 30).
    governor::set_return_after_polls(2);

    let ir = stereo_decaying_ir("auto", RATE, 60_000, RNG_SEED + 21);
    let inputs = stereo_noise(TOTAL, RNG_SEED + 23);
    let reference = reference_outputs(&ir, &inputs, 2, TOTAL);
    let mut scratch = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];

    // One small instance, the CPU as loaded as it really is: it stays there.
    let mut lone = vec![build(&ir, 0)];
    assert!(
        lone[0].engine.backend_probe().can_use_gpu(),
        "no way to the GPU"
    );
    let started = Instant::now();
    let mut start = 0;
    while started.elapsed() < Duration::from_millis(3_500) {
        round(&mut lone, &inputs, &reference, start, &mut scratch);
        start += ROUND;
        std::thread::sleep(Duration::from_millis(20));
    }
    let decision = load_decision(&lone[0]).expect("the load policy watches a small Auto engine");
    let report = lone[0].engine.backend_report();
    eprintln!("1 instance: {report:?}; SNR {:.1} dB", lone[0].snr_db());
    assert_eq!(decision.placement, Placement::Cpu, "{decision}");
    // Measured, not scripted: small but not nothing.
    eprintln!(
        "1 instance: measured CPU load {:.5}",
        decision.sample.cpu_load
    );
    assert!(decision.sample.cpu_load > 0.0 && decision.sample.cpu_load < 0.3);
    assert_eq!(report.gpu_levels, 0, "{report:?}");
    assert!(lone[0].snr_db() >= MIN_SNR_DB);
    drop(lone);

    // 32 instances, the CPU loaded (scripted): their big levels go to the GPU. A hot GPU sends
    // them back whatever the load, and gets them again once cool; then the load falls, and
    // they return.
    governor::set_cpu_load(Some(0.9));
    let mut instances: Vec<Instance> = (0..INSTANCES).map(|idx| build(&ir, idx)).collect();
    let started = Instant::now();
    let mut start = 0;
    let mut phase = Phase::Loaded;
    let mut phase_since = Duration::ZERO;
    let mut seen = Vec::new();
    let mut most_on_gpu = 0;
    loop {
        let now = started.elapsed();
        assert!(start + ROUND <= TOTAL, "ran out of audio in {phase:?}");
        assert!(
            now < Duration::from_secs(50),
            "stuck in {phase:?} after {seen:?}: {:?}",
            instances[0].engine.backend_report()
        );
        round(&mut instances, &inputs, &reference, start, &mut scratch);
        start += ROUND;
        let on_gpu: Vec<usize> = instances
            .iter()
            .map(|i| i.engine.backend_report().gpu_levels)
            .collect();
        let levels_on_gpu: usize = on_gpu.iter().sum();
        most_on_gpu = most_on_gpu.max(levels_on_gpu);
        let all_moved = on_gpu.iter().all(|&n| n > 0);
        let next = match phase {
            Phase::Loaded | Phase::Cooled if all_moved => {
                let report = instances[0].engine.backend_report();
                assert!(report.reason.contains("load policy"), "{report:?}");
                eprintln!(
                    "{phase:?}: all {INSTANCES} moved ({levels_on_gpu} levels on the GPU): {report:?}"
                );
                Some(Phase::OnGpu(phase == Phase::Cooled))
            }
            Phase::OnGpu(false) if now > phase_since + Duration::from_secs(1) => {
                set_gpu_temp(95);
                Some(Phase::Hot)
            }
            Phase::OnGpu(true) if now > phase_since + Duration::from_secs(1) => {
                governor::set_cpu_load(Some(0.05));
                Some(Phase::Light)
            }
            Phase::Hot | Phase::Light if levels_on_gpu == 0 => {
                let decision = load_decision(&instances[0]).unwrap();
                let report = instances[0].engine.backend_report();
                eprintln!("{phase:?}: all back on the CPU: {report:?}");
                assert_eq!(decision.placement, Placement::Cpu);
                assert!(
                    report.reason.contains("load policy brought it back"),
                    "{report:?}"
                );
                Some(if phase == Phase::Hot {
                    Phase::HotOnCpu
                } else {
                    Phase::Done
                })
            }
            Phase::HotOnCpu => {
                // Loaded and hot: nothing goes to the GPU.
                assert_eq!(levels_on_gpu, 0, "a level went to a hot GPU");
                if now > phase_since + Duration::from_millis(2_500) {
                    set_gpu_temp(50);
                    Some(Phase::Cooled)
                } else {
                    None
                }
            }
            Phase::Done if now > phase_since + Duration::from_secs(1) => break,
            _ => None,
        };
        if let Some(next) = next {
            seen.push((phase, now));
            phase = next;
            phase_since = now;
        }
        // Roughly real time: the governor polls once a second.
        let ahead = Duration::from_secs_f64(start as f64 / f64::from(RATE)).saturating_sub(now);
        std::thread::sleep(ahead.min(Duration::from_millis(50)));
    }
    eprintln!("phases: {seen:?}");
    let returns: u64 = instances
        .iter()
        .map(|i| i.engine.backend_report().gpu_returns)
        .sum();
    let worst = instances
        .iter()
        .map(Instance::snr_db)
        .fold(f64::INFINITY, f64::min);
    let lates: u64 = instances
        .iter()
        .map(|i| i.engine.late_stats().late_results)
        .sum();
    eprintln!(
        "{INSTANCES} instances, {:.1} s of audio each: at most {most_on_gpu} levels on the GPU, \
         {returns} hand-overs to it, {lates} late, \
         worst SNR {worst:.1} dB",
        start as f64 / f64::from(RATE)
    );
    assert!(returns >= 2 * INSTANCES as u64);
    assert!(worst >= MIN_SNR_DB, "worst SNR {worst:.1} dB");
    governor::set_cpu_load(None);
    drop(instances);
    let _ = std::fs::remove_dir_all(&thermal_root);
}
