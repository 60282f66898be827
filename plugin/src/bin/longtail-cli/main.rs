//! `longtail-cli`: offline render, IR inspection, benchmarks, the built-in demo, the soak test
//! and the status report, through the plugin's own engine.
//!
//! Every error prints one line on stderr and exits with status 1; nothing panics on bad input.
//!
//! This file parses the command line and hands each subcommand to its runner, through one
//! function per subcommand that turns its flags into the library's types: `args` defines the
//! command line (the `--help` texts live there; `edits`, render's IR edits and ducking), `audio`
//! runs the subcommands that read or write audio files (render, ir-info, demo), `capture` the
//! room measurement (sweep, deconvolve), `measure` the ones that measure the engine and
//! the machine (bench, bench-gpu, status, soak). Runners use the library (and its
//! `longtail::tools`) and the argument types of `args`, never each other.

// Proving the plugin's types `Send`/`Sync` goes through wgpu's deep types (as in lib.rs).
#![recursion_limit = "256"]

mod args;
mod audio;
mod capture;
mod edits;
mod measure;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use longtail::engine::Executor;
use longtail::render::RenderOptions;
use longtail::tools::bench::{BenchConfig, Pace};
use longtail::tools::status;

use args::{
    BenchArgs, BenchGpuArgs, Cli, Command, DeconvolveArgs, ExecutorArg, IrInfoArgs, RenderArgs,
    StatusArgs, SweepArgs,
};
use audio::{SecondIr, run_demo, run_ir_info, run_ir_list, run_render};
use longtail::ir::mapping::Bus;
use measure::{
    Workload, run_bench_generated, run_bench_gpu, run_bench_harness, run_soak, run_status,
};

fn main() -> ExitCode {
    // Our messages are the lines below; library logs (wgpu, nice-plug) only with LONGTAIL_LOG.
    longtail::logging::init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Render(args) => render(*args),
        Command::IrInfo(args) => ir_info(args),
        Command::IrList { folders, json } => run_ir_list(&folders, json),
        Command::Status(args) => status(args),
        Command::Demo {
            output,
            rate,
            block,
            mix,
        } => run_demo(&output, rate, block, mix),
        Command::Soak(args) => run_soak(&args),
        Command::Sweep(args) => sweep(args),
        Command::Deconvolve(args) => deconvolve(args),
        Command::BenchGpu(args) => bench_gpu(args),
        Command::Bench(args) => bench(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("longtail-cli: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `render`: the render's options from the flags.
fn render(args: RenderArgs) -> Result<(), String> {
    let RenderArgs {
        ir,
        input,
        output,
        block,
        mix,
        width,
        latency,
        backend,
        outputs,
        format,
        edits,
        duck,
        blend,
    } = args;
    let options = RenderOptions {
        blocks: block,
        mix,
        width: width / 100.0,
        latency_mode: latency.into(),
        executor: backend.executor(),
        outputs: outputs.map(usize::from),
        format: format.into(),
        duck: duck.settings(),
    };
    let ir: Vec<&Path> = ir.iter().map(PathBuf::as_path).collect();
    let key = duck.key.as_deref();
    let ir_b: Vec<&Path> = blend.ir_b.iter().map(PathBuf::as_path).collect();
    let second = (!ir_b.is_empty()).then(|| SecondIr {
        paths: &ir_b,
        blend: blend.blend / 100.0,
    });
    run_render(
        &ir,
        second,
        &input,
        key,
        &output,
        options,
        &edits.settings(),
    )
}

/// `sweep`: the sweep's settings from the flags.
fn sweep(args: SweepArgs) -> Result<(), String> {
    let SweepArgs {
        out,
        seconds,
        from,
        to,
        level,
        rate,
        tail,
        speakers,
    } = args;
    let spec = longtail::capture::sweep::SweepSpec {
        sample_rate: rate,
        seconds,
        from_hz: from,
        to_hz: to,
        level_db: level,
        tail_seconds: tail,
        num_speakers: usize::from(speakers),
    };
    capture::run_sweep(&spec, &out)
}

/// `deconvolve`: the extraction's options from the flags (the loopback counted from 0).
fn deconvolve(args: DeconvolveArgs) -> Result<(), String> {
    let DeconvolveArgs {
        sweep,
        recording,
        out,
        speakers,
        pre,
        loopback,
        json,
    } = args;
    let options = longtail::capture::extract::ExtractOptions {
        pre_ms: pre,
        loopback: loopback.map(|channel| usize::from(channel) - 1),
    };
    let files = capture::Files {
        sweep: &sweep,
        recording: &recording,
        out: &out,
    };
    capture::run_deconvolve(files, speakers.map(usize::from), options, json)
}

/// `ir-info`: the bus to map onto, where `--outputs` names one.
fn ir_info(args: IrInfoArgs) -> Result<(), String> {
    let IrInfoArgs {
        files,
        rate,
        auto_trim_db,
        inputs,
        outputs,
        format,
    } = args;
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let bus = outputs.map(|outputs| {
        let outputs = usize::from(outputs);
        Bus::new(inputs.map_or(outputs, usize::from), outputs, format.into())
    });
    run_ir_info(&files, rate, auto_trim_db, bus)
}

/// `status`: what to plan for, a dense matrix's paths where one is given.
fn status(args: StatusArgs) -> Result<(), String> {
    let StatusArgs {
        ir_seconds,
        block,
        rate,
        latency,
        paths,
        channels,
        outputs,
        backend,
        thermal_root,
        json,
    } = args;
    run_status(
        status::StatusRequest {
            ir_seconds,
            block,
            rate,
            latency_mode: latency.into(),
            // A dense matrix's paths, when one is given.
            paths: match (channels, outputs) {
                (Some(n), Some(m)) => usize::from(n) * usize::from(m),
                _ => paths,
            },
            matrix: channels
                .zip(outputs)
                .map(|(n, m)| (usize::from(n), usize::from(m))),
            executor: backend.executor(),
            thermal_root,
        },
        json,
    )
}

/// `bench-gpu`: the batch to time.
fn bench_gpu(args: BenchGpuArgs) -> Result<(), String> {
    let BenchGpuArgs {
        levels,
        inputs,
        outputs,
        partition,
        partitions,
        periods,
        kernels,
        json,
    } = args;
    run_bench_gpu(
        longtail_gpu::BenchBatch {
            levels,
            inputs,
            outputs,
            partition_size: partition,
            partitions,
        },
        periods,
        kernels,
        json,
    )
}

/// `bench`: the configuration every run starts from, then the harness's files or the
/// generated workload.
fn bench(args: BenchArgs) -> Result<(), String> {
    let BenchArgs {
        input,
        ir,
        block,
        rate,
        channels,
        outputs,
        ir_seconds,
        instances,
        seconds,
        max_wall,
        warmup_s,
        variant,
        out,
        paced,
        pace,
        check,
        audio_priority,
        backend,
        executor,
        latency,
        fixed_work_us,
        host_threads,
        json,
    } = args;
    let pace = if paced {
        Pace::Realtime
    } else {
        pace.unwrap_or(Pace::Offline)
    };
    let executor_name = match executor {
        ExecutorArg::Workers => "workers",
        ExecutorArg::Inline => "inline",
    };
    let template = BenchConfig {
        block: 0,
        rate,
        instances: 1,
        latency_mode: latency.into(),
        pace,
        check,
        audio_priority: (pace.realtime_mode() && audio_priority > 0).then_some(audio_priority),
        warmup_s,
        max_wall_s: (max_wall > 0.0).then_some(max_wall),
        executor: match executor {
            ExecutorArg::Workers => backend.executor(),
            ExecutorArg::Inline => Executor::Inline,
        },
        variant: variant.unwrap_or_else(|| {
            let pace = match pace {
                Pace::Realtime => "paced".to_string(),
                Pace::Offline => "fed".to_string(),
                other => other.name(),
            };
            match fixed_work_us {
                Some(micros) => format!("{pace}-fixed-work-{micros}us"),
                None => format!("{pace}-{executor_name}"),
            }
        }),
        fixed_work_us,
        call_cpu: true,
    };
    let channels = usize::from(channels);
    let outputs = outputs.map(usize::from);
    match (input, ir) {
        (Some(_), Some(_)) if host_threads > 1 => Err(
            "--host-threads applies to the generated workload, not the harness mode".to_string(),
        ),
        (Some(input), Some(ir)) => {
            let out = out.as_deref();
            let shape = (channels, outputs);
            run_bench_harness(&input, &ir, shape, seconds, &block, &template, out)
        }
        _ => {
            let seconds = seconds.unwrap_or(60.0);
            let workload = Workload {
                channels,
                outputs,
                ir_seconds: &ir_seconds,
                blocks: &block,
                instances: &instances,
                seconds,
                host_threads,
            };
            run_bench_generated(&workload, &template, json)
        }
    }
}
