//! A lone reverb on the default backend (Auto) loads no GPU driver: three 1 s stereo engines, at
//! zero latency, in Low CPU and in the offload mode (at 4096 samples, where every level could
//! go to the GPU), run for three of the governor's polls, and the process
//! then maps no Vulkan, GL or LLVM library (`/proc/self/maps`). Lavapipe is installed in CI, so
//! an adapter lookup would map `libvulkan` and the driver; the test ends by making that lookup
//! and checking that the same scan sees it, so the check cannot pass by not seeing.
//!
//! Its own binary: no other test may touch the GPU in this process. The thermal policy reads an
//! empty sysfs tree and the load is scripted as light, so neither the machine's heat nor a busy
//! CI machine makes a policy ask for the GPU (which would load it on purpose).

use std::time::{Duration, Instant};

use longtail::engine::placement::governor;
use longtail::engine::{Engine, EngineConfig, Executor, GpuPolicy, LatencyMode, PlanLimits};
use longtail_tests::{RNG_SEED, stereo_decaying_ir, stereo_noise};
use nice_assert_no_alloc::assert_no_alloc;

const RATE: u32 = 48_000;
const BLOCK: usize = 128;

/// The lines of `/proc/self/maps` that name a graphics library: the Vulkan loader, a Vulkan or
/// GL driver, or the LLVM that lavapipe and the Mesa drivers load.
fn graphics_maps() -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    let mut found: Vec<String> = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| {
            let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
            [
                "vulkan", "libgl", "libegl", "llvm", "lvp", "mesa", "nvidia", "radeon", "amdgpu",
            ]
            .iter()
            .any(|needle| name.contains(needle))
        })
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn engine(latency_mode: LatencyMode) -> Engine {
    let ir = stereo_decaying_ir("lone", RATE, RATE as usize, RNG_SEED + 45);
    Engine::new(
        &ir,
        EngineConfig {
            max_block_size: BLOCK,
            num_inputs: 2,
            num_outputs: 2,
            latency_mode,
            limits: PlanLimits::default(),
            executor: Executor::Gpu(GpuPolicy::Auto),
        },
    )
    .expect("build the engine")
}

#[cfg(target_os = "linux")]
#[test]
fn a_lone_auto_reverb_maps_no_graphics_library() {
    let thermal_root =
        std::env::temp_dir().join(format!("longtail-lone-thermal-{}", std::process::id()));
    std::fs::create_dir_all(&thermal_root).unwrap();
    governor::set_thermal_root(Some(thermal_root.clone()));
    governor::set_cpu_load(Some(0.01));
    assert!(
        graphics_maps().is_empty(),
        "mapped before any engine: {:?}",
        graphics_maps()
    );

    let mut engines = [
        engine(LatencyMode::Zero),
        engine(LatencyMode::LowCpu),
        engine(LatencyMode::Offload(4096)),
    ];
    for engine in &engines {
        assert!(
            engine.backend_probe().can_use_gpu(),
            "the test needs an engine with a way to the GPU: {:?}",
            engine.backend_report()
        );
    }
    // Real-time pace, three polls of the governor (one a second).
    let input = stereo_noise(RATE as usize, RNG_SEED + 46);
    let mut out = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
    let started = Instant::now();
    let mut at = 0;
    while started.elapsed() < Duration::from_millis(3_300) {
        for engine in &mut engines {
            let from = at % (RATE as usize - BLOCK);
            let inputs: [&[f32]; 2] =
                [&input[0][from..from + BLOCK], &input[1][from..from + BLOCK]];
            let [l, r] = &mut out;
            let mut outputs: [&mut [f32]; 2] = [l, r];
            assert_no_alloc(|| engine.process(&inputs, &mut outputs));
            assert!(outputs.iter().all(|ch| ch.iter().all(|s| s.is_finite())));
        }
        at += BLOCK;
        std::thread::sleep(Duration::from_secs_f64(BLOCK as f64 / f64::from(RATE)));
    }
    for engine in &engines {
        let probe = engine.backend_probe();
        // The governor watched them (it ran its policies) and still loaded nothing.
        let decision = probe
            .thermal_decision()
            .expect("the governor watches the engine");
        eprintln!("{:?}: {decision:?}", engine.backend_report());
        assert_eq!(engine.backend_report().gpu_levels, 0);
        assert_eq!(probe.gpu_known(), None, "the adapters were looked up");
    }
    let mapped = graphics_maps();
    assert!(mapped.is_empty(), "a lone Auto reverb mapped {mapped:?}");

    // The control: the lookup the engines did not make maps the Vulkan loader, where one is
    // installed, and the scan above sees it.
    let probe = engines[0].backend_probe();
    let available = probe.gpu_available();
    let adapters = longtail_gpu::list_adapters();
    let mapped = graphics_maps();
    eprintln!(
        "after the lookup: GPU usable {available}, {} adapters, {mapped:?}",
        adapters.len()
    );
    if !adapters.is_empty() {
        assert!(
            mapped.iter().any(|path| path.contains("libvulkan")),
            "the scan missed the Vulkan loader: {mapped:?}"
        );
    } else if std::env::var_os("CI").is_some() {
        panic!("CI installs lavapipe: the control needs an adapter");
    }
    drop(engines);
    let _ = std::fs::remove_dir_all(thermal_root);
}
