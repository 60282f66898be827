//! The runners of the subcommands that measure the engine and the machine: `bench` (harness
//! and generated workloads), `bench-gpu` (the GPU round trip alone), `status` (what this
//! machine offers and what Longtail would do) and `soak` (hours of audio through the plugin).
//!
//! Uses `longtail::tools` (bench, status, soak, JSON strings), the library's IRs and the GPU
//! crate, and the soak's arguments from `args`.

use std::borrow::Cow;
use std::path::Path;

use longtail::tools::bench::{self, BenchConfig};
use longtail::tools::soak::{self, SoakOptions};
use longtail::tools::status;

use crate::args::SoakArgs;

pub(crate) fn run_bench_harness(
    input_path: &Path,
    ir_path: &Path,
    (channels, outputs): (usize, Option<usize>),
    seconds: Option<f64>,
    blocks: &[usize],
    template: &BenchConfig,
    out: Option<&Path>,
) -> Result<(), String> {
    let max_frames = seconds.map(|s| (s * f64::from(template.rate)) as usize);
    let input = bench::read_raw_f32(input_path, channels, max_frames)
        .map_err(|err| format!("cannot read '{}': {err}", input_path.display()))?;
    let ir_channels = bench::read_raw_f32(ir_path, channels * outputs.unwrap_or(1), None)
        .map_err(|err| format!("cannot read '{}': {err}", ir_path.display()))?;
    let ir = bench::harness_ir(template.rate, channels, outputs, ir_channels)
        .map_err(|err| format!("IR: {err}"))?;
    let run_block = |ir: Cow<'_, _>, block: usize| -> Result<(), String> {
        // The peers' harnesses time their blocks by the monotonic clock alone; so does this one
        // ([`BenchConfig::call_cpu`]).
        let config = BenchConfig {
            block,
            call_cpu: false,
            ..template.clone()
        };
        let mut output = Vec::new();
        let result = bench::run(ir, &input, &config, out.is_some().then_some(&mut output))
            .map_err(|err| err.to_string())?;
        if let Some(out) = out {
            bench::write_raw_f32(out, &output)
                .map_err(|err| format!("cannot write '{}': {err}", out.display()))?;
        }
        println!("{}", result.to_json());
        Ok(())
    };
    // The last run owns the IR and drops it once its engines are built, as a host does: the
    // peak memory the harness driver reads is then the engine's, not the engine's and the IR's.
    let Some((&last, earlier)) = blocks.split_last() else {
        return Ok(());
    };
    for &block in earlier {
        run_block(Cow::Borrowed(&ir), block)?;
    }
    run_block(Cow::Owned(ir), last)?;
    Ok(())
}

/// The generated workload of `bench`: every combination of these, on `host_threads` threads.
pub(crate) struct Workload<'a> {
    pub(crate) channels: usize,
    /// Matrix mode's outputs (every input to every output); `None`: diagonal paths.
    pub(crate) outputs: Option<usize>,
    pub(crate) ir_seconds: &'a [f64],
    pub(crate) blocks: &'a [usize],
    pub(crate) instances: &'a [usize],
    pub(crate) seconds: f64,
    pub(crate) host_threads: u16,
}

pub(crate) fn run_bench_generated(
    workload: &Workload,
    template: &BenchConfig,
    json: bool,
) -> Result<(), String> {
    let Workload {
        channels,
        outputs,
        ir_seconds,
        blocks,
        instances,
        seconds,
        host_threads,
    } = *workload;
    let input = bench::noise_input(
        channels,
        (seconds * f64::from(template.rate)) as usize,
        20_240_601,
    );
    if !json {
        println!(
            "{:>6} {:>6} {:>4} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6} {:>7} {:>7} {:>10} {:>8}",
            "ir_s",
            "block",
            "inst",
            "rtf",
            "rtf_main",
            "audio_s",
            "blk_med_us",
            "blk_p99_us",
            "blk_max_us",
            "oncpu_max",
            "max/ddl",
            "late",
            "dropped",
            "waits",
            "wait_max_us",
            "snr_db"
        );
    }
    // Fixed work has no IR and no instances: one run per block size.
    let (ir_seconds, instances) = if template.fixed_work_us.is_some() {
        (&ir_seconds[..1], &[1][..])
    } else {
        (ir_seconds, instances)
    };
    for &ir_s in ir_seconds {
        let num_taps = (ir_s * f64::from(template.rate)).round().max(1.0) as usize;
        let ir = bench::decaying_noise_ir(channels, outputs, num_taps, template.rate, 777)
            .map_err(|err| format!("IR: {err}"))?;
        for &num_instances in instances {
            for &block in blocks {
                let config = BenchConfig {
                    block,
                    instances: num_instances,
                    ..template.clone()
                };
                let result = if host_threads > 1 && template.fixed_work_us.is_none() {
                    let (threads, session) =
                        bench::run_host_threads(&ir, &input, &config, usize::from(host_threads))
                            .map_err(|err| err.to_string())?;
                    if json {
                        for thread in &threads {
                            println!("{}", thread.to_json());
                        }
                    }
                    session
                } else {
                    bench::run(Cow::Borrowed(&ir), &input, &config, None)
                        .map_err(|err| err.to_string())?
                };
                if json {
                    println!("{}", result.to_json());
                } else {
                    println!(
                        "{:>6} {:>6} {:>4} {:>9.5} {:>9.5} {:>9.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8.3} {:>6} {:>7} {:>7} {:>10.1} {:>8}",
                        ir_s,
                        block,
                        num_instances,
                        result.rtf(),
                        result.cpu_main_s / result.audio_s,
                        result.audio_s,
                        result.blk_med_us,
                        result.blk_p99_us,
                        result.blk_max_us,
                        result.oncpu_max_us.unwrap_or(f64::NAN),
                        result.blk_max_us / result.deadline_us,
                        result.late_blocks,
                        result.dropped_chunks,
                        result.waits,
                        result.wait_max_us,
                        result
                            .snr_vs_offline_db
                            .map_or("-".to_owned(), |db| format!("{db:.1}"))
                    );
                }
            }
        }
    }
    Ok(())
}

pub(crate) fn run_status(request: status::StatusRequest, json: bool) -> Result<(), String> {
    if !(request.ir_seconds > 0.0 && request.ir_seconds <= longtail::ir::MAX_IR_SECONDS) {
        return Err(format!(
            "--ir-seconds must be above 0 and at most {}",
            longtail::ir::MAX_IR_SECONDS
        ));
    }
    if !(1..=1 << 16).contains(&request.block) {
        return Err("--block must be from 1 to 65536".to_owned());
    }
    if !(1..=1 << 16).contains(&request.paths) {
        return Err("--paths must be from 1 to 65536".to_owned());
    }
    let report = status::gather(request);
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

pub(crate) fn run_bench_gpu(
    batch: longtail_gpu::BenchBatch,
    periods: usize,
    kernels: Option<longtail_gpu::FftKernels>,
    json: bool,
) -> Result<(), String> {
    if !batch.partition_size.is_power_of_two()
        || !(longtail_gpu::MIN_PARTITION..=1 << 16).contains(&batch.partition_size)
    {
        return Err(format!(
            "--partition must be a power of two from {} to 65536",
            longtail_gpu::MIN_PARTITION
        ));
    }
    for (name, value, max) in [
        ("--levels", batch.levels, 4096),
        ("--inputs", batch.inputs, 64),
        ("--outputs", batch.outputs, 64),
        ("--partitions", batch.partitions, 4096),
        ("--periods", periods, 1_000_000),
    ] {
        if !(1..=max).contains(&value) {
            return Err(format!("{name} must be from 1 to {max}"));
        }
    }
    let mut options = longtail_gpu::OpenOptions::from_env();
    if let Some(kernels) = kernels {
        options.kernels = kernels;
    }
    let report = longtail_gpu::bench_round_trip(options, batch, 16, periods)
        .map_err(|err| err.to_string())?;
    let rt = report.round_trip;
    let paths = batch.levels * batch.inputs * batch.outputs;
    let kernels = match report.tile {
        Some(tile) => format!("tiled:{tile}"),
        None => "radix2".to_owned(),
    };
    let gpu = report.gpu_period;
    if json {
        let round = |value: f64| (value * 10.0).round() / 10.0;
        let line = GpuBenchLine {
            engine: "longtail-gpu",
            gpu_adapter: report.adapter.to_string(),
            kernels,
            levels: batch.levels,
            paths,
            partition: batch.partition_size,
            partitions: batch.partitions,
            periods: rt.count,
            dispatches_per_period: report.dispatches_per_period,
            rt_p50_us: round(rt.p50_us),
            rt_p99_us: round(rt.p99_us),
            rt_p999_us: round(rt.p999_us),
            rt_max_us: round(rt.max_us),
            gpu_period_us: gpu.map(|g| round(g.p50_us)),
            gpu_period_p99_us: gpu.map(|g| round(g.p99_us)),
        };
        println!(
            "{}",
            serde_json::to_string(&line).map_err(|err| err.to_string())?
        );
    } else {
        let on_gpu = gpu.map_or(String::from("no timestamp queries"), |g| {
            format!("on the GPU p50 {:.0} us, p99 {:.0} us", g.p50_us, g.p99_us)
        });
        println!(
            "{}: {paths} paths ({} levels of {}x{}), {} x {} partitions, {} periods, {kernels} \
             kernels, {} dispatches a period: round trip p50 {:.0} us, p99 {:.0} us, p99.9 {:.0} \
             us, max {:.0} us; {on_gpu}",
            report.adapter,
            batch.levels,
            batch.inputs,
            batch.outputs,
            batch.partitions,
            batch.partition_size,
            rt.count,
            report.dispatches_per_period,
            rt.p50_us,
            rt.p99_us,
            rt.p999_us,
            rt.max_us
        );
    }
    Ok(())
}

pub(crate) fn run_soak(args: &SoakArgs) -> Result<(), String> {
    let options = SoakOptions {
        audio_seconds: args.audio_seconds,
        warmup_seconds: args.warmup_seconds,
        rate: args.rate,
        max_block: args.max_block as usize,
        seed: args.seed,
        progress: true,
    };
    let report = soak::run(&options, |process| process())?;
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    match report.failures().as_slice() {
        [] => Ok(()),
        failures => Err(format!("soak failed: {}", failures.join("; "))),
    }
}

/// One `bench-gpu --json` line, its fields in this order.
#[derive(serde::Serialize)]
struct GpuBenchLine {
    engine: &'static str,
    gpu_adapter: String,
    kernels: String,
    levels: usize,
    paths: usize,
    partition: usize,
    partitions: usize,
    periods: usize,
    dispatches_per_period: usize,
    rt_p50_us: f64,
    rt_p99_us: f64,
    rt_p999_us: f64,
    rt_max_us: f64,
    gpu_period_us: Option<f64>,
    gpu_period_p99_us: Option<f64>,
}
