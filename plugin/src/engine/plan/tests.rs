//! The plan's invariants, its cost model and the offload mode's shape.

use super::*;

fn check_invariants(plan: &PartitionPlan) {
    // Levels tile the IR without gaps from the head (or 0) to at least the IR's end.
    let mut expected_offset = match plan.latency_mode {
        LatencyMode::Zero => plan.quantum,
        LatencyMode::LowCpu | LatencyMode::Offload(_) => 0,
    };
    for (level_idx, level) in plan.levels.iter().enumerate() {
        assert_eq!(
            level.ir_offset, expected_offset,
            "gap before level {level_idx}"
        );
        assert!(level.partition_size.is_power_of_two());
        assert!(level.num_partitions >= 1);
        assert!(
            plan.output_delay(level) >= level.partition_size,
            "level {level_idx} late"
        );
        if level_idx > 0 {
            // A period of slack, or none for a level summed ahead, due as its chunk completes.
            assert!(
                level.ir_offset >= 2 * level.partition_size || plan.runs_ahead(level_idx),
                "level {level_idx} slack"
            );
            assert!(level.partition_size > plan.levels[level_idx - 1].partition_size);
        }
        expected_offset = level.ir_end();
    }
    assert!(expected_offset >= plan.ir_len || plan.levels.is_empty());
    if plan.levels.is_empty() {
        assert_eq!(plan.latency_mode, LatencyMode::Zero);
        assert!(plan.ir_len <= plan.quantum);
    }
    // The last level covers less than one partition past the IR's end.
    if let Some(last) = plan.levels.last() {
        assert!(last.ir_end() - plan.ir_len < last.partition_taps());
    }
    // Partitions span 1 to [`MAX_SPAN`] hops; level 0 on the audio thread (the fused head's
    // level) spans one.
    for (level_idx, level) in plan.levels.iter().enumerate() {
        assert!((1..=MAX_SPAN).contains(&level.span));
        if level_idx == 0 && !plan.offloads() {
            assert_eq!(level.span, 1);
        }
    }
}

#[test]
fn quantum_follows_power_of_two_blocks() {
    assert_eq!(quantum_for_block_size(64), 64);
    assert_eq!(quantum_for_block_size(128), 128);
    assert_eq!(quantum_for_block_size(256), 256);
    assert_eq!(quantum_for_block_size(512), 512);
    assert_eq!(quantum_for_block_size(1024), 1024);
    assert_eq!(quantum_for_block_size(4096), MAX_QUANTUM);
    assert_eq!(quantum_for_block_size(1000), DEFAULT_QUANTUM);
    assert_eq!(quantum_for_block_size(8), MIN_QUANTUM);
    assert_eq!(quantum_for_block_size(1), MIN_QUANTUM);
    assert_eq!(quantum_for_block_size(100), DEFAULT_QUANTUM);
}

#[test]
fn short_irs_use_the_head_only_or_one_level() {
    let plan = PartitionPlan::new(1, 64, LatencyMode::Zero, PlanLimits::default());
    assert_eq!(plan.head_taps, 1);
    assert!(plan.levels.is_empty());
    let plan = PartitionPlan::new(64, 64, LatencyMode::Zero, PlanLimits::default());
    assert!(plan.levels.is_empty());
    let plan = PartitionPlan::new(65, 64, LatencyMode::Zero, PlanLimits::default());
    assert_eq!(
        plan.levels,
        vec![Level {
            partition_size: 64,
            span: 1,
            num_partitions: 1,
            ir_offset: 64
        }]
    );
    let plan = PartitionPlan::new(1, 64, LatencyMode::LowCpu, PlanLimits::default());
    assert_eq!(plan.head_taps, 0);
    assert_eq!(
        plan.levels,
        vec![Level {
            partition_size: 64,
            span: 1,
            num_partitions: 1,
            ir_offset: 0
        }]
    );
    assert_eq!(plan.latency_samples(), 64);
}

#[test]
fn ten_second_ir_grows_to_the_cap() {
    let plan = PartitionPlan::new(480_000, 64, LatencyMode::Zero, PlanLimits::default());
    check_invariants(&plan);
    let sizes: Vec<usize> = plan.levels.iter().map(|l| l.partition_size).collect();
    assert_eq!(sizes, vec![64, 512, 4096, 16384]);
    // Level 1 starts at 2P = 1024 with less slack than a worker gets: it runs on the
    // audio thread, spread over its period; level 2 has a worker's slack.
    assert_eq!(
        plan.levels[0],
        Level {
            partition_size: 64,
            span: 1,
            num_partitions: 15,
            ir_offset: 64
        }
    );
    assert_eq!(plan.levels[1].ir_offset, 1024);
    assert!(plan.on_audio_thread(1));
    assert!(!plan.on_audio_thread(2));
    assert!(plan.slack_samples(&plan.levels[2]) >= DEFAULT_MIN_WORKER_SLACK);
    assert_eq!(plan.levels[3].ir_offset, 32768);
    assert_eq!(
        plan.levels[3].num_partitions,
        (480_000usize - 32768).div_ceil(16384)
    );
    assert_eq!(plan.slack_samples(&plan.levels[3]), 32768 - 16384);
}

/// zita-convolver's layout rule: x4 growth as soon as allowed, up to the cap.
fn fixed_growth_plan(ir_len: usize, quantum: usize, cap: usize) -> Vec<Level> {
    let mut levels = Vec::new();
    let (mut size, mut offset) = (quantum, quantum);
    while offset < ir_len {
        let next = (size * 4).min(cap);
        let end = if next > size && 2 * next < ir_len {
            2 * next
        } else {
            ir_len
        };
        let num_partitions = (end - offset).div_ceil(size);
        levels.push(Level {
            partition_size: size,
            span: 1,
            num_partitions,
            ir_offset: offset,
        });
        offset += num_partitions * size;
        size = next;
    }
    levels
}

#[test]
fn the_cost_model_picks_the_cheapest_chain() {
    for quantum in [16, 64, 512] {
        for ir_len in [1000, 4097, 48_000, 240_000, 480_000] {
            // zita's rule knows no least slack: compare under the same limits.
            let limits = PlanLimits {
                min_worker_slack: 0,
                ..PlanLimits::default()
            };
            let plan = PartitionPlan::new(ir_len, quantum, LatencyMode::Zero, limits);
            check_invariants(&plan);
            let fixed = PartitionPlan {
                levels: fixed_growth_plan(ir_len, quantum, DEFAULT_MAX_PARTITION_SIZE),
                ..plan.clone()
            };
            check_invariants(&fixed);
            assert!(
                plan.estimated_cost() <= fixed.estimated_cost() + 1e-9,
                "{} costs more than {}",
                plan.describe(),
                fixed.describe()
            );
            // Uniform (one level) is a candidate too.
            let uniform = level_cost(quantum, (ir_len - quantum).div_ceil(quantum), false);
            assert!(plan.estimated_cost() <= uniform + 1e-9);
        }
    }
    // The model's terms pull the right ways: more partitions and worker jobs cost more.
    assert!(level_cost(1024, 7, false) > level_cost(1024, 6, false));
    assert!(level_cost(1024, 6, true) > level_cost(1024, 6, false));
    assert!(level_cost(256, 6, true) - level_cost(256, 6, false) > 100.0);
}

#[test]
fn uniform_plan_when_capped_at_the_quantum() {
    let limits = PlanLimits {
        max_partition_size: 64,
        ..PlanLimits::default()
    };
    let plan = PartitionPlan::new(10_000, 64, LatencyMode::Zero, limits);
    check_invariants(&plan);
    assert_eq!(plan.levels.len(), 1);
    assert_eq!(
        plan.levels[0].num_partitions,
        (10_000usize - 64).div_ceil(64)
    );
}

#[test]
fn invariants_hold_for_many_shapes() {
    let modes = [
        LatencyMode::Zero,
        LatencyMode::LowCpu,
        LatencyMode::Offload(512),
        LatencyMode::Offload(2048),
        LatencyMode::Offload(3000),
    ];
    for latency_mode in modes {
        for max_block in [1, 7, 16, 64, 100, 128, 256, 512, 4096] {
            for max_partition_size in [16, 64, 1024, 16384, 65536] {
                for (ir_len, may_use_gpu) in [1, 15, 63, 64, 65, 129, 1000, 4097, 48_000, 480_001]
                    .into_iter()
                    .flat_map(|ir_len| [(ir_len, true), (ir_len, false)])
                {
                    let limits = PlanLimits {
                        max_partition_size,
                        ..PlanLimits::default()
                    }
                    .for_gpu(may_use_gpu);
                    let plan = PartitionPlan::new(ir_len, max_block, latency_mode, limits);
                    check_invariants(&plan);
                    if let LatencyMode::Offload(requested) = latency_mode {
                        check_offload(&plan, requested, max_block);
                    }
                    // Every level after the first has a period of slack at least: a
                    // spread level finishes within it; a worker level has the least
                    // slack a worker gets. Where the GPU is never used, levels of a few
                    // quanta may stay on the audio thread with more.
                    if may_use_gpu {
                        // The GPU runs FFTs of `2P` only.
                        assert!(plan.levels.iter().all(|level| level.span == 1));
                    }
                    for (idx, level) in plan.levels.iter().enumerate().skip(1) {
                        let slack = plan.slack_samples(level);
                        let short = slack < DEFAULT_MIN_WORKER_SLACK;
                        if plan.runs_ahead(idx) {
                            // Only for big quanta where the GPU is never used, span 1, and
                            // within the bound on its period.
                            assert!(!may_use_gpu && plan.quantum >= AHEAD_MIN_QUANTUM);
                            assert!(plan.on_audio_thread(idx) && level.span == 1);
                            assert!(
                                level_spectra_bytes(level, CostWeights::STEREO.streams)
                                    <= AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE * plan.quantum
                            );
                            assert!(slack < level.partition_size, "{}", plan.describe());
                            continue;
                        }
                        assert!(slack >= level.partition_size, "{}", plan.describe());
                        if may_use_gpu {
                            assert_eq!(plan.on_audio_thread(idx), short, "{}", plan.describe());
                        } else {
                            let few_quanta =
                                level.partition_size <= CPU_SPREAD_MAX_QUANTA * plan.quantum;
                            assert!(!short || plan.on_audio_thread(idx));
                            assert!(!plan.on_audio_thread(idx) || short || few_quanta);
                        }
                    }
                }
            }
        }
    }
}

/// The offload mode's plan: level 0 at offset 0 with the partition [`offload_shape`] picks,
/// a worker's slack after a host block, no level on the audio thread, and at least the
/// latency asked for.
fn check_offload(plan: &PartitionPlan, requested: usize, max_block: usize) {
    let latency = plan.latency_samples();
    assert!(latency >= requested, "{}", plan.describe());
    let first = plan.levels[0];
    assert_eq!(first.ir_offset, 0);
    assert!(first.partition_size >= plan.quantum);
    assert!(
        plan.slack_samples(&first) >= DEFAULT_MIN_WORKER_SLACK + max_block,
        "{}",
        plan.describe()
    );
    assert_eq!(plan.head_taps, 0);
    assert!(plan.offloads());
    for idx in 0..plan.levels.len() {
        assert!(!plan.on_audio_thread(idx), "{}", plan.describe());
    }
}

#[test]
fn offload_takes_the_latency_asked_for_where_a_worker_has_its_slack() {
    let limits = PlanLimits::default();
    // Block 64: L - P0 >= 1536 + 64 gives P0 = 256 at L = 2048, 2048 at 4096.
    assert_eq!(offload_shape(2048, 64, limits), (2048, 256));
    assert_eq!(offload_shape(4096, 64, limits), (4096, 2048));
    // 512 and 1024 leave no room for a worker: the next power of two that does.
    assert_eq!(offload_shape(512, 64, limits), (2048, 256));
    assert_eq!(offload_shape(1024, 64, limits), (2048, 256));
    // A latency that is no power of two is kept where it fits.
    assert_eq!(offload_shape(3000, 64, limits), (3000, 1024));
    // Blocks of 1024 (quantum 1024) and 480 (quantum 64) need 4096.
    assert_eq!(offload_shape(2048, 1024, limits), (4096, 1024));
    assert_eq!(offload_shape(2048, 480, limits), (4096, 2048));
    assert_eq!(offload_shape(4096, 480, limits), (4096, 2048));
    // Level 0 keeps to the partition cap, and the latency to its own.
    let capped = PlanLimits {
        max_partition_size: 128,
        ..limits
    };
    assert_eq!(offload_shape(4096, 64, capped), (4096, 128));
    assert_eq!(offload_shape(usize::MAX, 64, limits).0, MAX_OFFLOAD_LATENCY);

    let plan = PartitionPlan::new(480_000, 64, LatencyMode::Offload(2048), limits);
    check_invariants(&plan);
    check_offload(&plan, 2048, 64);
    assert_eq!(plan.latency_samples(), 2048);
    assert_eq!(plan.levels[0].partition_size, 256);
}

#[test]
fn without_a_gpu_small_levels_with_a_worker_slack_stay_on_the_audio_thread() {
    let gpu = PlanLimits::default().for_gpu(true);
    let cpu = PlanLimits::default().for_gpu(false);
    // A stereo 1 s reverb at block 512: its 4096 x 10 level (1.3 MiB of spectra) goes to a
    // worker where the GPU may take it, and stays on the audio thread where it never does.
    let on_gpu = PartitionPlan::new(48_000, 512, LatencyMode::Zero, gpu);
    let on_cpu = PartitionPlan::new(48_000, 512, LatencyMode::Zero, cpu);
    assert_eq!(
        on_cpu.describe(),
        "q=512 latency=0 head=512 | 512x15@512 4096x10@8192"
    );
    assert_eq!(on_gpu.levels, on_cpu.levels);
    assert!(!on_gpu.on_audio_thread(1));
    assert!(on_cpu.on_audio_thread(1) && !on_cpu.runs_ahead(1));
    assert!(on_cpu.estimated_cost() < on_gpu.estimated_cost());
    // A 10 s one: its 16384 x 28 tail (14 MiB) keeps its worker.
    let long = PartitionPlan::new(480_000, 512, LatencyMode::Zero, cpu);
    let last = long.levels.len() - 1;
    assert_eq!(long.levels[last].partition_size, 16384);
    assert!(long.on_audio_thread(1) && !long.on_audio_thread(last));
    // At block 64 a 4096 level is 64 quanta: it keeps its worker.
    let small_blocks = PartitionPlan::new(48_000, 64, LatencyMode::Zero, cpu);
    let last = small_blocks.levels.len() - 1;
    assert_eq!(small_blocks.levels[last].partition_size, 4096);
    assert!(!small_blocks.on_audio_thread(last));
    // The offload mode convolves nothing on the audio thread.
    let offload = PartitionPlan::new(48_000, 1024, LatencyMode::Offload(4096), cpu);
    assert!((0..offload.levels.len()).all(|idx| !offload.on_audio_thread(idx)));
}

/// From a quantum of 1024 where the GPU is never used, a level after the first may start at a
/// delay of one partition, due as its chunk completes, and run summed ahead on the audio
/// thread within the bound on its spectra; the level before it then covers fewer partitions.
#[test]
fn at_big_blocks_without_a_gpu_a_level_runs_ahead_as_its_chunk_completes() {
    let gpu = PlanLimits::default().for_gpu(true);
    let cpu = PlanLimits::default().for_gpu(false);
    // A dense 4 x 4 room of 2 s: level 0 covers 3 partitions instead of 7.
    let weights = CostWeights::for_paths(4, 4, 16);
    let room = PartitionPlan::new_weighted(96_000, 1024, LatencyMode::Zero, cpu, weights);
    assert_eq!(
        room.describe(),
        "q=1024 latency=0 head=1024 | 1024x3@1024 4096x7@4096 16384x4@32768"
    );
    assert!(room.runs_ahead(1) && room.on_audio_thread(1));
    assert_eq!(room.slack_samples(&room.levels[1]), 0);
    assert!(
        level_spectra_bytes(&room.levels[1], weights.streams)
            <= AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE * 1024
    );
    assert!(!room.runs_ahead(2) && !room.on_audio_thread(2));
    // Not where a GPU may take the levels, nor at a quantum of 512, nor in the offload mode.
    let on_gpu = PartitionPlan::new_weighted(96_000, 1024, LatencyMode::Zero, gpu, weights);
    let smaller = PartitionPlan::new_weighted(96_000, 512, LatencyMode::Zero, cpu, weights);
    let offload =
        PartitionPlan::new_weighted(96_000, 1024, LatencyMode::Offload(4096), cpu, weights);
    for plan in [&on_gpu, &smaller, &offload] {
        assert!(
            (0..plan.levels.len()).all(|idx| !plan.runs_ahead(idx)),
            "{}",
            plan.describe()
        );
    }
    // The bound holds the level back where its spectra would outgrow it: a dense 12 x 12
    // room's levels (156 spectra a partition) keep their workers.
    let weights = CostWeights::for_paths(12, 12, 144);
    let big = PartitionPlan::new_weighted(96_000, 1024, LatencyMode::Zero, cpu, weights);
    for (idx, level) in big.levels.iter().enumerate() {
        assert!(
            !big.runs_ahead(idx)
                || level_spectra_bytes(level, weights.streams)
                    <= AHEAD_MAX_BYTES_PER_QUANTUM_SAMPLE * 1024,
            "{}",
            big.describe()
        );
    }
    // A stereo 1 s reverb at 1024 takes one too: `8192x5` summed ahead for `4096x10` spread.
    let stereo = PartitionPlan::new(48_000, 1024, LatencyMode::Zero, cpu);
    assert_eq!(
        stereo.describe(),
        "q=1024 latency=0 head=1024 | 1024x7@1024 8192x5@8192"
    );
    assert!(stereo.runs_ahead(1));
}

#[test]
fn long_partitions_only_for_few_paths_that_never_use_the_gpu() {
    let stereo = CostWeights::STEREO;
    let true_stereo = CostWeights::for_paths(2, 2, 4);
    let room = CostWeights::for_paths(4, 4, 16);
    let cap = |may_use_gpu, weights| {
        PlanLimits::default()
            .for_executor(may_use_gpu, weights)
            .max_partition_size
    };
    assert_eq!(cap(false, stereo), CPU_MAX_PARTITION_SIZE);
    assert_eq!(cap(false, true_stereo), CPU_MAX_PARTITION_SIZE);
    assert_eq!(cap(true, stereo), DEFAULT_MAX_PARTITION_SIZE);
    assert_eq!(cap(false, room), DEFAULT_MAX_PARTITION_SIZE);
    // A cap of the caller's own stays; the rest is `for_gpu`'s.
    let own = PlanLimits {
        max_partition_size: 1024,
        ..PlanLimits::default()
    };
    assert_eq!(own.for_executor(false, stereo), own.for_gpu(false));
    // A stereo 10 s reverb on the CPU alone ends in 32768-sample partitions, where the GPU
    // may take it in 16384s; both keep the invariants.
    for may_use_gpu in [false, true] {
        let limits = PlanLimits::default().for_executor(may_use_gpu, stereo);
        let plan = PartitionPlan::new(480_000, 1024, LatencyMode::Zero, limits);
        check_invariants(&plan);
        let last = plan.levels.last().unwrap().partition_size;
        let expected = if may_use_gpu { 16384 } else { 32768 };
        assert_eq!(last, expected, "{}", plan.describe());
    }
}

#[test]
fn only_a_level_with_a_period_of_slack_is_spread() {
    // A spread level takes its period's steps over the quanta of its slack: a level of 4096
    // whose result is due 2048 samples after its chunk (D = P + 2048) has half a period, and
    // spread it played half of each result wrong (tried with a throw-away `level_start`,
    // 2026-12-05). Small enough to spread otherwise, it goes to a worker.
    let placement = Placement::new(0, DEFAULT_MIN_WORKER_SLACK, 1024, CPU_SPREAD_MAX_BYTES, 1);
    let level = |ir_offset| Level {
        partition_size: 4096,
        span: 1,
        num_partitions: 3,
        ir_offset,
    };
    assert!(runs_on_worker(false, &level(4096 + 2048), &placement));
    assert!(!runs_on_worker(false, &level(2 * 4096), &placement));
    // With no slack at all it runs summed ahead; with a worker's, it does not.
    assert!(runs_ahead(false, &level(4096), &placement));
    assert!(!runs_on_worker(false, &level(4096), &placement));
    assert!(!runs_ahead(false, &level(4096 + 2048), &placement));
    assert!(!runs_ahead(false, &level(2 * 4096), &placement));
}
