//! Injected GPU faults in real-time mode, in a process of their own (a lost device breaks the
//! process's hub): a GPU that answers too late gets its levels taken away (counted lates, the
//! degraded flag, the hub fails them over); a lost device moves every level to its standby. The
//! audio thread never allocates or waits meanwhile, and once the standbys run, the output is
//! the exact convolution again: they rebuilt their delay lines from the history. Once the slow
//! GPU is fast again, the levels go back to it, and the output stays exact through the
//! hand-over. A GPU that gets hot has its levels moved to the CPU by the thermal policy, the
//! same way. The slow and the lost GPU again in the offload mode, where level 0 is on the GPU
//! and fails over at its first late.

use std::time::Duration;

use longtail::engine::{
    Engine, EngineConfig, Executor, GpuPolicy, LatencyMode, PlanLimits, route_plain,
};
use longtail::thermal::Placement;
use longtail_tests::{
    MIN_SNR_DB, RNG_SEED, reference_convolution, snr_db, stereo_decaying_ir, stereo_noise,
};
use nice_assert_no_alloc::assert_no_alloc;

const RATE: u32 = 48_000;
/// Largest partition: the GPU level's slack (at least this) must hold lavapipe's round trip
/// (tens of milliseconds on a busy machine) for the way back.
const MAX_PARTITION: usize = 8192;

fn config() -> EngineConfig {
    config_in(LatencyMode::Zero)
}

fn config_in(latency_mode: LatencyMode) -> EngineConfig {
    EngineConfig {
        max_block_size: 128,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode,
        limits: PlanLimits {
            max_partition_size: MAX_PARTITION,
            ..PlanLimits::default()
        },
        executor: Executor::Gpu(GpuPolicy::Forced {
            allow_cpu_adapter: true,
        }),
    }
}

/// One host block of `size` samples from `start`, under `assert_no_alloc`.
fn process(
    engine: &mut Engine,
    inputs: &[Vec<f32>; 2],
    outputs: &mut [Vec<f32>; 2],
    start: usize,
    size: usize,
) {
    let [l, r] = inputs;
    let [out_l, out_r] = outputs;
    let input: [&[f32]; 2] = [&l[start..start + size], &r[start..start + size]];
    let mut output: [&mut [f32]; 2] = [
        &mut out_l[start..start + size],
        &mut out_r[start..start + size],
    ];
    assert_no_alloc(|| engine.process(&input, &mut output));
}

#[test]
fn gpu_faults_fail_over_to_the_cpu_without_allocating() {
    if !longtail_gpu::available_for_tests() {
        return;
    }
    // Levels the thermal policy sends to the GPU open it as Auto does, which refuses lavapipe
    // unless told otherwise.
    // SAFETY: the only test of this binary, before it starts any thread of its own.
    unsafe { std::env::set_var(longtail_gpu::ALLOW_CPU_ENV, "1") };
    let ir = stereo_decaying_ir("faults", RATE, 60_000, RNG_SEED + 5);
    // Long enough for the way back after the slow GPU (tried 100 ms after the failover; the
    // hub then measures its health, and the GPU warms up for `n + 1` chunks).
    let total = 8 * RATE as usize;
    let inputs = stereo_noise(total, RNG_SEED + 8);
    // The thermal policy reads a fake sysfs tree: a GPU zone, cool for now.
    let thermal_root =
        std::env::temp_dir().join(format!("longtail-faults-thermal-{}", std::process::id()));
    let gpu_zone = thermal_root.join("class/thermal/thermal_zone0");
    std::fs::create_dir_all(&gpu_zone).unwrap();
    let set_gpu_temp = |celsius: i64| {
        std::fs::write(gpu_zone.join("temp"), format!("{}\n", celsius * 1000)).unwrap();
    };
    std::fs::write(gpu_zone.join("type"), "amdgpu\n").unwrap();
    set_gpu_temp(50);
    longtail::engine::placement::governor::set_thermal_root(Some(thermal_root.clone()));

    // The offload mode at 4096 samples puts level 0 (2048 samples from IR offset 0) on the GPU
    // too: its first late moves it to its standby.
    let offload = LatencyMode::Offload(4096);
    for (fault, latency_mode) in [
        ("slow", LatencyMode::Zero),
        ("hot", LatencyMode::Zero),
        ("lost", LatencyMode::Zero),
        ("slow", offload),
        ("lost", offload),
    ] {
        // Where a crash in the driver happened, with --nocapture.
        eprintln!("fault: {fault} {latency_mode:?}");
        let mut engine = Engine::new(&ir, config_in(latency_mode)).unwrap();
        let latency = engine.latency_samples();
        if latency_mode == offload {
            let level_0 = &engine.backend_probe().levels()[0];
            assert_eq!(
                level_0.runs_on,
                longtail::engine::RunsOn::Gpu,
                "{level_0:?}"
            );
        }
        let hub = engine.gpu_hub().unwrap().clone();
        match fault {
            "slow" => engine.set_gpu_retry_after(Duration::from_millis(100)),
            // Forced engines are not watched by themselves (Auto ones are).
            "hot" => engine.watch_thermal(),
            _ => {}
        }
        let gpu_levels = engine.backend_report().gpu_levels;
        assert!(gpu_levels >= 1);
        let mut outputs = [vec![0.0f32; total], vec![0.0f32; total]];
        let mut migrated_at = None;
        let mut injected = false;
        let mut start = 0;
        while start < total {
            let size = 128.min(total - start);
            if start >= RATE as usize / 2 && !injected {
                injected = true;
                match fault {
                    "slow" => hub.inject_delay(Duration::from_millis(300)),
                    // Critical by the default thresholds: the policy moves the levels.
                    "hot" => set_gpu_temp(95),
                    _ => hub.inject_device_loss(),
                }
            }
            if migrated_at.is_none() && engine.backend_report().gpu_levels == 0 {
                migrated_at = Some(start);
                hub.inject_delay(Duration::ZERO);
                // From here on results are waited for: the comparison below is exact.
                engine.set_offline(true);
            }
            if fault != "slow" && start >= total / 2 {
                break;
            }
            process(&mut engine, &inputs, &mut outputs, start, size);
            start += size;
            if migrated_at.is_none()
                || (fault == "slow" && engine.backend_report().gpu_returns == 0)
            {
                // Roughly real time, so a healthy GPU keeps up before the fault, and the way
                // back has time to happen.
                std::thread::sleep(Duration::from_micros(2_000));
            }
        }
        let report = engine.backend_report();
        let stats = engine.late_stats();
        println!("{fault} {latency_mode:?}: {report:?} {stats:?} migrated at {migrated_at:?}");
        let migrated_at = migrated_at.unwrap_or_else(|| panic!("{fault}: never left the GPU"));
        if fault == "slow" {
            assert!(stats.late_results > 0, "lates not counted: {stats:?}");
            assert!(
                report.gpu_returns >= 1 && report.gpu_levels >= 1,
                "never went back: {report:?}"
            );
        } else if fault == "hot" {
            assert!(report.reason.contains("thermal policy"), "{report:?}");
            let decision = engine.backend_probe().thermal_decision().unwrap();
            assert_eq!(decision.placement, Placement::Cpu, "{decision:?}");
        } else {
            assert!(report.reason.contains("left the GPU"), "{report:?}");
        }
        assert!(hub.stats().levels_failed_over >= gpu_levels as u64);
        let total = start;
        assert!(outputs.iter().flatten().all(|s| s.is_finite()));
        // Chunks dropped while the GPU was stuck (every slot busy) left silence in the delay
        // lines, as on the CPU; once they have passed (one IR length) and the standby's
        // results are due, the output is exact: its delay lines were rebuilt from the history.
        let dropped = if stats.dropped_chunks > 0 {
            ir.len()
        } else {
            0
        };
        let settled = migrated_at + dropped + 2 * MAX_PARTITION + 256 + latency;
        for (path, taps) in route_plain(&ir, 2, 2).expect("stereo") {
            let want = reference_convolution(&inputs[path.input_idx], &taps);
            let got = &outputs[path.output_idx][settled..total];
            let snr = snr_db(got, &want[settled - latency..total - latency]);
            assert!(
                snr >= MIN_SNR_DB,
                "{fault} {latency_mode:?}: after failover {snr:.1} dB"
            );
        }
    }

    // A hot CPU and a cool GPU: an engine Auto kept on the CPU (a small one) sends its big
    // levels to the GPU, and its output stays exact through the hand-over.
    set_gpu_temp(50);
    let cpu_zone = thermal_root.join("class/thermal/thermal_zone1");
    std::fs::create_dir_all(&cpu_zone).unwrap();
    std::fs::write(cpu_zone.join("type"), "x86_pkg_temp\n").unwrap();
    std::fs::write(cpu_zone.join("temp"), "97000\n").unwrap();
    longtail::engine::placement::governor::set_return_after_polls(1);
    let auto = EngineConfig {
        executor: Executor::Gpu(GpuPolicy::Auto),
        ..config()
    };
    let mut engine = Engine::new(&ir, auto).unwrap();
    let before = engine.backend_report();
    assert_eq!(before.gpu_levels, 0, "{before:?}");
    assert!(before.reason.contains("small engine"), "{before:?}");
    engine.set_offline(true);
    let mut outputs = [vec![0.0f32; total], vec![0.0f32; total]];
    let mut start = 0;
    let mut sent_at = None;
    while start < total {
        let size = 128.min(total - start);
        process(&mut engine, &inputs, &mut outputs, start, size);
        start += size;
        if sent_at.is_none() {
            if engine.backend_report().gpu_levels > 0 {
                sent_at = Some(start);
            } else {
                std::thread::sleep(Duration::from_micros(2_000));
            }
        }
    }
    let report = engine.backend_report();
    println!("cpu-hot: {report:?} sent at {sent_at:?}");
    assert!(sent_at.is_some(), "never went to the GPU: {report:?}");
    assert!(report.reason.contains("thermal policy"), "{report:?}");
    let decision = engine.backend_probe().thermal_decision().unwrap();
    assert_eq!(decision.placement, Placement::Gpu, "{decision:?}");
    for (path, taps) in route_plain(&ir, 2, 2).expect("stereo") {
        let want = reference_convolution(&inputs[path.input_idx], &taps);
        let snr = snr_db(&outputs[path.output_idx], &want[..total]);
        assert!(snr >= MIN_SNR_DB, "cpu-hot: {snr:.1} dB");
    }
    let _ = std::fs::remove_dir_all(&thermal_root);
}
