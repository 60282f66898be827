//! `longtail-cli`: offline render, IR inspection, benchmarks, the built-in demo, the soak test
//! and the status report, through the plugin's own engine.
//!
//! Every error prints one line on stderr and exits with status 1; nothing panics on bad input.

// Proving the plugin's types `Send`/`Sync` goes through wgpu's deep types (as in lib.rs).
#![recursion_limit = "256"]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use longtail::bench::{self, BenchConfig};
use longtail::demo;
use longtail::engine::LatencyMode;
use longtail::engine::{Executor, GpuPolicy};
use longtail::ir::builtin::BuiltinIr;
use longtail::ir::decode::{self, Limits};
use longtail::ir::edit::{self, DEFAULT_AUTO_TRIM_DB, EditSettings};
use longtail::ir::{self, Ir, IrError, wav};
use longtail::params::DEFAULT_MIX;
use longtail::render::{BlockSizes, RenderOptions, RenderReport, render};
use longtail::soak::{self, SoakOptions};

#[derive(Debug, Parser)]
#[command(
    name = "longtail-cli",
    version,
    about = "Longtail convolution: offline render, IR inspection, benchmarks, the demo, soak and status"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convolve an audio file with an IR, exactly as the plugin would, into a 32-bit float WAV.
    ///
    /// The output has the input's sample rate, input length + IR length - 1 frames (IR length
    /// after resampling and edits), and is time-aligned with the input (no latency offset). It
    /// is stereo when the input or the IR is stereo. Without edit flags the IR is applied exactly
    /// as stored (only resampled when its rate differs from the input's); edits apply only when
    /// their flags are given, in the order of `longtail::ir::edit`.
    Render {
        /// Impulse response: WAV, FLAC, AIFF or Ogg Vorbis with 1 (mono), 2 (stereo) or 4 (true
        /// stereo: LL, LR, RL, RR) channels, at any rate (resampled to the input's). Give two
        /// stereo files for true stereo: the left input's (LL, LR), then the right input's (RL,
        /// RR).
        #[arg(long, required = true, num_args = 1..=2)]
        ir: Vec<PathBuf>,
        /// Dry signal: a mono or stereo audio file (WAV, FLAC, AIFF or Ogg Vorbis).
        #[arg(long)]
        input: PathBuf,
        /// Where to write the result (32-bit float WAV).
        #[arg(long)]
        output: PathBuf,
        /// Host block size: a number of samples, or `random` (seeded sizes from 1 to 1024).
        #[arg(long, default_value = "512", value_parser = parse_blocks)]
        block: BlockSizes,
        /// Wet share from 0 to 1, linear: out = mix x wet + (1 - mix) x dry.
        #[arg(long, default_value_t = 1.0, value_parser = parse_mix)]
        mix: f32,
        /// `zero`: no latency (direct-form head); `low`: one quantum of latency, less CPU.
        #[arg(long, value_enum, default_value_t = LatencyArg::Zero)]
        latency: LatencyArg,
        /// Where the tail runs: `auto` (the GPU for big IRs on a real GPU whose round trip
        /// fits, else the CPU), `cpu`, or `gpu` (every level of 1024+ samples on the GPU;
        /// LONGTAIL_GPU_ALLOW_CPU=1 accepts a CPU adapter such as lavapipe).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        #[command(flatten)]
        edits: EditArgs,
    },
    /// Describe an IR file (or two stereo files making true stereo): format, rate, channels,
    /// length, peak, layout, and what the plugin's default edits would do to it (where the
    /// automatic end trim would cut, the normalisation gain).
    IrInfo {
        /// The IR file; a second stereo file makes a true-stereo pair (left input's first).
        #[arg(required = true, num_args = 1..=2)]
        files: Vec<PathBuf>,
        /// Session rate in Hz to describe the preparation for, 1000 to 768000 (default: the
        /// file's own rate).
        #[arg(long, value_parser = parse_rate)]
        rate: Option<u32>,
        /// Threshold of the automatic end trim, in dB below the peak.
        #[arg(long, default_value_t = DEFAULT_AUTO_TRIM_DB, allow_hyphen_values = true)]
        auto_trim_db: f64,
    },
    /// Measure the engine like a host would: blocks fed back to back (engines wait for their
    /// workers, as offline) or, with --paced, at real-time pace (real-time mode, lates
    /// counted). Prints one JSON line per configuration with --json (the harness contract of
    /// shared/bench/peers/RESULTS.md), else a table.
    ///
    /// Generated workload (default): seeded white noise through seeded decaying-noise IRs of
    /// --ir-seconds. Harness mode (--input and --ir): raw f32 interleaved files as the peer
    /// benchmark driver passes them; --out writes the output for its accuracy pass.
    Bench {
        /// Harness mode: raw f32 LE interleaved input with --channels channels.
        #[arg(long, requires = "ir")]
        input: Option<PathBuf>,
        /// Harness mode: raw f32 LE interleaved IR, channel c for path c -> c.
        #[arg(long, requires = "input")]
        ir: Option<PathBuf>,
        /// Host block sizes, comma separated.
        #[arg(long, default_value = "64", value_delimiter = ',')]
        block: Vec<usize>,
        /// Sample rate in Hz, 1000 to 768000.
        #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
        rate: u32,
        /// Channels (paths: 1 mono, 2 stereo).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
        channels: u8,
        /// IR lengths in seconds for the generated workload, comma separated.
        #[arg(long, default_value = "10", value_delimiter = ',')]
        ir_seconds: Vec<f64>,
        /// Plugin instances per block (each its own engine), comma separated.
        #[arg(long, default_value = "1", value_delimiter = ',')]
        instances: Vec<usize>,
        /// Seconds of audio (harness mode: at most this much of the input).
        #[arg(long)]
        seconds: Option<f64>,
        /// Stop once the timed loop has run this many seconds (0: no cap).
        #[arg(long, default_value_t = 0.0)]
        max_wall: f64,
        /// Blocks in the first seconds are left out of the per-block statistics.
        #[arg(long, default_value_t = 1.0)]
        warmup_s: f64,
        /// Name of the configuration in the output.
        #[arg(long)]
        variant: Option<String>,
        /// Harness mode: write the output (raw f32 interleaved) here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Release blocks at real-time pace (real-time mode: lates are possible and counted).
        #[arg(long)]
        paced: bool,
        /// With --paced, run the measuring thread at this SCHED_FIFO priority, as a host's audio
        /// thread runs (JACK and DAWs use 60-90), above Longtail's workers (40 and below). 0
        /// leaves the thread as it is. Quietly ignored where the OS refuses.
        #[arg(long, default_value_t = 70)]
        audio_priority: u32,
        /// Where the tail runs: `auto`, `cpu` or `gpu` (as for render). The JSON line then
        /// has `gpu_adapter` and the GPU round trip (`gpu_rt_p50_us`, `gpu_rt_p99_us`,
        /// `gpu_rt_max_us`).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Where levels after the first run: worker threads, or inline on the audio thread
        /// (the single-thread reference).
        #[arg(long, value_enum, default_value_t = ExecutorArg::Workers)]
        executor: ExecutorArg,
        /// `zero` or `low` latency.
        #[arg(long, value_enum, default_value_t = LatencyArg::Zero)]
        latency: LatencyArg,
        /// Measure the machine instead of the engine: no engine runs, and each call spins this
        /// many microseconds over a 512 KiB buffer, timed, paced and prioritised exactly as the
        /// engines are. With --paced it shows the per-call tail (blk_p99_us, blk_max_us) that
        /// the machine adds to a job of known length, to read an engine's figures against.
        /// The JSON line says "engine":"fixed-work"; --ir-seconds and --instances are unused.
        #[arg(long, value_parser = parse_fixed_work)]
        fixed_work_us: Option<f64>,
        /// One JSON line per configuration instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Time the GPU alone (no engine, no audio thread): the round trip of one period's batch
    /// (upload, FFTs, MAC, download, in one submit) for --levels levels of --inputs x
    /// --outputs paths, each --partitions partitions of --partition samples, random data. The
    /// defaults are the round-trip target: 64 paths (16 true-stereo levels) of P = 8192.
    /// LONGTAIL_GPU_ALLOW_CPU=1 accepts a CPU adapter such as lavapipe.
    BenchGpu {
        /// Levels (instances) in the batch.
        #[arg(long, default_value_t = 16)]
        levels: usize,
        /// Inputs of each level.
        #[arg(long, default_value_t = 2)]
        inputs: usize,
        /// Outputs of each level.
        #[arg(long, default_value_t = 2)]
        outputs: usize,
        /// Partition size P (a power of two from 64 to 65536).
        #[arg(long, default_value_t = 8192)]
        partition: usize,
        /// Partitions per path.
        #[arg(long, default_value_t = 4)]
        partitions: usize,
        /// Periods measured (after 16 to warm up).
        #[arg(long, default_value_t = 1000)]
        periods: usize,
        /// One JSON line instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Render a built-in dry signal (plucks, drums, a voice-like tone) through every built-in
    /// IR and print what ran: backend, partition plan, real-time factor. Also writes each
    /// built-in IR as a WAV file.
    Demo {
        /// Directory for dry.wav, and per built-in IR the IR itself (ir-<id>.wav, usable with
        /// `render --ir`) and the render (demo-<id>.wav).
        #[arg(long, default_value = "demo-out")]
        output: PathBuf,
        /// Sample rate of the demo in Hz, 1000 to 768000.
        #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
        rate: u32,
        /// Host block size in samples.
        #[arg(long, default_value = "64", value_parser = parse_blocks)]
        block: BlockSizes,
        /// Wet share from 0 to 1 (the plugin's default when inserted).
        #[arg(long, default_value_t = DEFAULT_MIX, value_parser = parse_mix)]
        mix: f32,
    },
    /// What this machine offers and what Longtail would do: executors, the GPU adapters found
    /// and, unless `--backend cpu`, the one the backend would use (opened and calibrated as an
    /// engine would: round trip and cost per partition), the partition plan for an IR length,
    /// path count and block size with where each level runs, thermal readings (Linux thermal
    /// zones and hwmon, NVIDIA GPUs through NVML when its library is present) and the thermal
    /// policy's decision.
    Status {
        /// IR length the plan is shown for, in seconds.
        #[arg(long, default_value_t = 10.0)]
        ir_seconds: f64,
        /// Host block size the plan is shown for.
        #[arg(long, default_value_t = 64)]
        block: usize,
        /// Sample rate in Hz, 1000 to 768000.
        #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
        rate: u32,
        /// `zero` or `low` latency.
        #[arg(long, value_enum, default_value_t = LatencyArg::Zero)]
        latency: LatencyArg,
        /// Paths of the engine: 2 for a stereo IR on a stereo track, 4 for true stereo, more
        /// for a matrix of instances (Auto weighs paths times IR length).
        #[arg(long, default_value_t = 2)]
        paths: usize,
        /// The backend to report on: `auto`, `cpu` or `gpu` (as for render).
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Read thermal sensors from this directory instead of /sys (a fake sysfs tree).
        #[arg(long)]
        thermal_root: Option<PathBuf>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the plugin's real-time path through hours of audio as fast as the machine allows,
    /// with random block sizes (some empty), automation, IR switches and sleep, and check that
    /// the output stays finite and memory, threads and file descriptors do not grow. Exits
    /// with status 1 when a check fails.
    Soak(SoakArgs),
}

#[derive(Debug, clap::Args)]
struct SoakArgs {
    /// Seconds of audio to process (default: 8 hours).
    #[arg(long, default_value_t = 28_800.0)]
    audio_seconds: f64,
    /// Seconds of audio before the warm-up checkpoint (at most a quarter of the run).
    #[arg(long, default_value_t = soak::DEFAULT_WARMUP_SECONDS)]
    warmup_seconds: f64,
    /// Sample rate in Hz, 1000 to 768000.
    #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
    rate: u32,
    /// The host's maximum block size; each call carries 0 to this many frames.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    max_block: u32,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One JSON line instead of a table.
    #[arg(long)]
    json: bool,
}

/// IR edits of `render`; each applies only when its flag is given.
#[derive(Debug, Clone, clap::Args)]
struct EditArgs {
    /// Cut this many milliseconds from the start of the IR (file time).
    #[arg(long, value_name = "MS")]
    trim_start_ms: Option<f64>,
    /// Cut this many milliseconds from the end of the IR (file time).
    #[arg(long, value_name = "MS")]
    trim_end_ms: Option<f64>,
    /// Cut the end where the IR stays below this level relative to its peak (the plugin uses
    /// -80).
    #[arg(long, value_name = "DB", allow_hyphen_values = true)]
    auto_trim_db: Option<f64>,
    /// Silence in front of the IR, in milliseconds.
    #[arg(long, value_name = "MS")]
    predelay_ms: Option<f64>,
    /// Raised-cosine fade in over this many milliseconds.
    #[arg(long, value_name = "MS")]
    fade_in_ms: Option<f64>,
    /// Raised-cosine fade out over the last milliseconds.
    #[arg(long, value_name = "MS")]
    fade_out_ms: Option<f64>,
    /// Play the IR backwards.
    #[arg(long)]
    reverse: bool,
    /// Time-scale the IR (0.5 to 2; 2 is twice as long), through the resampler.
    #[arg(long, value_name = "FACTOR")]
    stretch: Option<f64>,
    /// Scale the IR to unit energy per output (as the plugin does by default).
    #[arg(long)]
    normalize: bool,
    /// Wet low cut: 12 dB/octave high-pass at this frequency.
    #[arg(long, value_name = "HZ")]
    low_cut_hz: Option<f64>,
    /// Wet high cut: 12 dB/octave low-pass at this frequency.
    #[arg(long, value_name = "HZ")]
    high_cut_hz: Option<f64>,
}

impl EditArgs {
    fn settings(&self) -> EditSettings {
        let none = EditSettings::NONE;
        EditSettings {
            trim_start_ms: self.trim_start_ms.unwrap_or(none.trim_start_ms),
            trim_end_ms: self.trim_end_ms.unwrap_or(none.trim_end_ms),
            auto_trim_db: self.auto_trim_db,
            predelay_ms: self.predelay_ms.unwrap_or(none.predelay_ms),
            fade_in_ms: self.fade_in_ms.unwrap_or(none.fade_in_ms),
            fade_out_ms: self.fade_out_ms.unwrap_or(none.fade_out_ms),
            reverse: self.reverse,
            stretch: self.stretch.unwrap_or(none.stretch),
            normalize: self.normalize,
            low_cut_hz: self.low_cut_hz,
            high_cut_hz: self.high_cut_hz,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LatencyArg {
    Zero,
    Low,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExecutorArg {
    Workers,
    Inline,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BackendArg {
    Auto,
    Cpu,
    Gpu,
}

impl BackendArg {
    /// The engine executor for this backend (`LONGTAIL_GPU_ALLOW_CPU=1` lets `gpu` use a CPU
    /// adapter such as lavapipe).
    fn executor(self) -> Executor {
        match self {
            Self::Auto => Executor::Gpu(GpuPolicy::Auto),
            Self::Cpu => Executor::Workers,
            Self::Gpu => Executor::Gpu(GpuPolicy::Forced {
                allow_cpu_adapter: false,
            }),
        }
    }
}

impl From<LatencyArg> for LatencyMode {
    fn from(arg: LatencyArg) -> Self {
        match arg {
            LatencyArg::Zero => LatencyMode::Zero,
            LatencyArg::Low => LatencyMode::LowCpu,
        }
    }
}

fn parse_blocks(text: &str) -> Result<BlockSizes, String> {
    if text == "random" {
        return Ok(BlockSizes::Random);
    }
    match text.parse::<usize>() {
        Ok(size) if (1..=1 << 16).contains(&size) => Ok(BlockSizes::Fixed(size)),
        _ => Err(format!(
            "'{text}' is not a block size: use 1 to 65536, or 'random'"
        )),
    }
}

fn parse_mix(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(mix) if (0.0..=1.0).contains(&mix) => Ok(mix),
        _ => Err(format!("'{text}' is not a mix: use a number from 0 to 1")),
    }
}

fn parse_rate(text: &str) -> Result<u32, String> {
    let (min, max) = (ir::MIN_SAMPLE_RATE_HZ, ir::MAX_SAMPLE_RATE_HZ);
    match text.parse::<u32>() {
        Ok(rate) if (min..=max).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a sample rate Longtail convolves at: use whole hertz from {min} to {max}"
        )),
    }
}

fn main() -> ExitCode {
    // Our messages are the lines below; library logs (wgpu, nice-plug) only with LONGTAIL_LOG.
    longtail::logging::init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Render {
            ir,
            input,
            output,
            block,
            mix,
            latency,
            backend,
            edits,
        } => {
            let options = RenderOptions {
                blocks: block,
                mix,
                latency_mode: latency.into(),
                executor: backend.executor(),
            };
            let ir: Vec<&Path> = ir.iter().map(PathBuf::as_path).collect();
            run_render(&ir, &input, &output, options, &edits.settings())
        }
        Command::IrInfo {
            files,
            rate,
            auto_trim_db,
        } => {
            let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
            run_ir_info(&files, rate, auto_trim_db)
        }
        Command::Status {
            ir_seconds,
            block,
            rate,
            latency,
            paths,
            backend,
            thermal_root,
            json,
        } => run_status(
            longtail::status::StatusRequest {
                ir_seconds,
                block,
                rate,
                latency_mode: latency.into(),
                paths,
                executor: backend.executor(),
                thermal_root,
            },
            json,
        ),
        Command::Demo {
            output,
            rate,
            block,
            mix,
        } => run_demo(&output, rate, block, mix),
        Command::Soak(args) => run_soak(&args),
        Command::BenchGpu {
            levels,
            inputs,
            outputs,
            partition,
            partitions,
            periods,
            json,
        } => run_bench_gpu(
            longtail_gpu::BenchBatch {
                levels,
                inputs,
                outputs,
                partition_size: partition,
                partitions,
            },
            periods,
            json,
        ),
        Command::Bench {
            input,
            ir,
            block,
            rate,
            channels,
            ir_seconds,
            instances,
            seconds,
            max_wall,
            warmup_s,
            variant,
            out,
            paced,
            audio_priority,
            backend,
            executor,
            latency,
            fixed_work_us,
            json,
        } => {
            let executor_name = match executor {
                ExecutorArg::Workers => "workers",
                ExecutorArg::Inline => "inline",
            };
            let template = BenchConfig {
                block: 0,
                rate,
                instances: 1,
                latency_mode: latency.into(),
                paced,
                audio_priority: (paced && audio_priority > 0).then_some(audio_priority),
                warmup_s,
                max_wall_s: (max_wall > 0.0).then_some(max_wall),
                executor: match executor {
                    ExecutorArg::Workers => backend.executor(),
                    ExecutorArg::Inline => Executor::Inline,
                },
                variant: variant.unwrap_or_else(|| {
                    let pace = if paced { "paced" } else { "fed" };
                    match fixed_work_us {
                        Some(micros) => format!("{pace}-fixed-work-{micros}us"),
                        None => format!("{pace}-{executor_name}"),
                    }
                }),
                fixed_work_us,
            };
            let channels = usize::from(channels);
            match (input, ir) {
                (Some(input), Some(ir)) => {
                    let out = out.as_deref();
                    run_bench_harness(&input, &ir, channels, seconds, &block, &template, out)
                }
                _ => {
                    let seconds = seconds.unwrap_or(60.0);
                    run_bench_generated(
                        channels,
                        &ir_seconds,
                        &block,
                        &instances,
                        seconds,
                        &template,
                        json,
                    )
                }
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("longtail-cli: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run_render(
    ir_paths: &[&Path],
    input_path: &Path,
    output_path: &Path,
    options: RenderOptions,
    edits: &EditSettings,
) -> Result<(), String> {
    let (source, _) = longtail::ir::load(ir_paths).map_err(|err| format!("IR: {err}"))?;
    let limits = Limits {
        max_channels: 2,
        max_seconds: None,
    };
    let (input, _) = decode::read(input_path, limits).map_err(|err| match err {
        IrError::UnsupportedChannels(n) => {
            format!(
                "input '{}' has {n} channels; supported are 1 (mono) and 2 (stereo)",
                input_path.display()
            )
        }
        other => format!("input: {other}"),
    })?;
    if input.num_frames() == 0 {
        return Err(format!("input '{}' has no samples", input_path.display()));
    }
    if let Some((channel, frame)) = first_non_finite(&input.channels) {
        return Err(format!(
            "input '{}' contains a non-finite sample (NaN or infinity) at frame {frame}, channel {channel}",
            input_path.display()
        ));
    }
    // The IR follows the input's rate, as it follows the session's rate in the plugin.
    let (ir, report) =
        edit::prepare(&source, edits, input.sample_rate).map_err(|err| format!("IR: {err}"))?;
    let (output, render_report) =
        render(&ir, &input.channels, options).map_err(|err| err.to_string())?;
    wav::write_f32(output_path, input.sample_rate, &output)
        .map_err(|err| format!("cannot write '{}': {err}", output_path.display()))?;
    println!(
        "rendered {} -> {} ({} ch, {} frames, IR {} ch {} taps, {})",
        input_path.display(),
        output_path.display(),
        output.len(),
        output.first().map_or(0, Vec::len),
        ir.channels.len(),
        ir.len(),
        ir.layout.name()
    );
    if let Some((from, to)) = report.resampled {
        println!("  IR resampled from {from} Hz to {to} Hz");
    }
    print_report(&render_report);
    Ok(())
}

fn run_ir_info(paths: &[&Path], rate: Option<u32>, auto_trim_db: f64) -> Result<(), String> {
    let (ir, infos) = longtail::ir::load(paths).map_err(|err| err.to_string())?;
    for (path, info) in paths.iter().zip(&infos) {
        println!("file:       {}", path.display());
        println!("format:     {} ({} bytes)", info.format, info.file_bytes);
        println!("rate:       {} Hz", info.sample_rate);
        println!("channels:   {}", info.num_channels);
    }
    let peak = edit::peak(&ir.channels);
    println!("length:     {} frames ({:.3} s)", ir.len(), ir.seconds());
    println!("peak:       {:.2} dBFS", 20.0 * peak.max(1e-30).log10());
    let layout = match (ir.layout, paths.len()) {
        (longtail::ir::IrLayout::TrueStereo, 2) => {
            "true stereo from two files (LL, LR from the first; RL, RR from the second)".into()
        }
        (longtail::ir::IrLayout::TrueStereo, _) => "true stereo (LL, LR, RL, RR)".into(),
        (layout, _) => layout.name().to_string(),
    };
    println!("layout:     {layout}");
    let session_rate = rate.unwrap_or(ir.sample_rate);
    let edits = EditSettings {
        auto_trim_db: Some(auto_trim_db),
        ..EditSettings::FILE_DEFAULT
    };
    let (prepared, report) =
        edit::prepare(&ir, &edits, session_rate).map_err(|err| err.to_string())?;
    match report.auto_trim_at_s {
        Some(at) => println!(
            "auto trim:  at {auto_trim_db} dB would cut at {at:.3} s (keeps {:.1} % of the length)",
            100.0 * at / ir.seconds()
        ),
        None => println!("auto trim:  at {auto_trim_db} dB would cut nothing"),
    }
    if let Some((from, to)) = report.resampled {
        println!("resample:   {from} Hz -> {to} Hz");
    }
    if let Some(gain_db) = report.normalize_gain_db {
        println!("normalise:  {gain_db:+.2} dB (unit energy per output)");
    }
    println!(
        "prepared:   {} frames ({:.3} s) at {session_rate} Hz",
        prepared.len(),
        prepared.seconds()
    );
    Ok(())
}

fn run_bench_harness(
    input_path: &Path,
    ir_path: &Path,
    channels: usize,
    seconds: Option<f64>,
    blocks: &[usize],
    template: &BenchConfig,
    out: Option<&Path>,
) -> Result<(), String> {
    let max_frames = seconds.map(|s| (s * f64::from(template.rate)) as usize);
    let input = bench::read_raw_f32(input_path, channels, max_frames)
        .map_err(|err| format!("cannot read '{}': {err}", input_path.display()))?;
    let ir_channels = bench::read_raw_f32(ir_path, channels, None)
        .map_err(|err| format!("cannot read '{}': {err}", ir_path.display()))?;
    let ir = Ir::new("bench", template.rate, ir_channels).map_err(|err| format!("IR: {err}"))?;
    for &block in blocks {
        let config = BenchConfig {
            block,
            ..template.clone()
        };
        let mut output = Vec::new();
        let result = bench::run(&ir, &input, &config, out.is_some().then_some(&mut output))
            .map_err(|err| err.to_string())?;
        if let Some(out) = out {
            bench::write_raw_f32(out, &output)
                .map_err(|err| format!("cannot write '{}': {err}", out.display()))?;
        }
        println!("{}", result.to_json());
    }
    Ok(())
}

fn run_bench_generated(
    channels: usize,
    ir_seconds: &[f64],
    blocks: &[usize],
    instances: &[usize],
    seconds: f64,
    template: &BenchConfig,
    json: bool,
) -> Result<(), String> {
    let input = bench::noise_input(
        channels,
        (seconds * f64::from(template.rate)) as usize,
        20_240_601,
    );
    if !json {
        println!(
            "{:>6} {:>6} {:>4} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>6} {:>7}",
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
            "threads"
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
        let ir = bench::decaying_noise_ir(channels, num_taps, template.rate, 777);
        for &num_instances in instances {
            for &block in blocks {
                let config = BenchConfig {
                    block,
                    instances: num_instances,
                    ..template.clone()
                };
                let result =
                    bench::run(&ir, &input, &config, None).map_err(|err| err.to_string())?;
                if json {
                    println!("{}", result.to_json());
                } else {
                    println!(
                        "{:>6} {:>6} {:>4} {:>9.5} {:>9.5} {:>9.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8.3} {:>6} {:>7}",
                        ir_s,
                        block,
                        num_instances,
                        result.rtf(),
                        result.cpu_main_s / result.audio_s,
                        result.audio_s,
                        result.blk_med_us,
                        result.blk_p99_us,
                        result.blk_max_us,
                        result.oncpu_max_us,
                        result.blk_max_us / result.deadline_us,
                        result.late_blocks,
                        result.threads
                    );
                }
            }
        }
    }
    Ok(())
}

fn parse_fixed_work(text: &str) -> Result<f64, String> {
    let micros: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of microseconds"))?;
    if micros.is_finite() && (0.0..=1_000_000.0).contains(&micros) {
        Ok(micros)
    } else {
        Err("must be from 0 to 1000000 microseconds".to_owned())
    }
}

fn run_status(request: longtail::status::StatusRequest, json: bool) -> Result<(), String> {
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
    let report = longtail::status::gather(request);
    if json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

fn run_bench_gpu(
    batch: longtail_gpu::BenchBatch,
    periods: usize,
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
    let (adapter, rt) =
        longtail_gpu::bench_round_trip(longtail_gpu::OpenOptions::from_env(), batch, 16, periods)
            .map_err(|err| err.to_string())?;
    let paths = batch.levels * batch.inputs * batch.outputs;
    if json {
        println!(
            "{{\"engine\":\"longtail-gpu\",\"gpu_adapter\":{},\"levels\":{},\"paths\":{paths},\"partition\":{},\"partitions\":{},\"periods\":{},\"rt_p50_us\":{:.1},\"rt_p99_us\":{:.1},\"rt_p999_us\":{:.1},\"rt_max_us\":{:.1}}}",
            longtail::status::json_string(&adapter.to_string()),
            batch.levels,
            batch.partition_size,
            batch.partitions,
            rt.count,
            rt.p50_us,
            rt.p99_us,
            rt.p999_us,
            rt.max_us
        );
    } else {
        println!(
            "{adapter}: {paths} paths ({} levels of {}x{}), {} x {} partitions, {} periods: \
             round trip p50 {:.0} us, p99 {:.0} us, p99.9 {:.0} us, max {:.0} us",
            batch.levels,
            batch.inputs,
            batch.outputs,
            batch.partitions,
            batch.partition_size,
            rt.count,
            rt.p50_us,
            rt.p99_us,
            rt.p999_us,
            rt.max_us
        );
    }
    Ok(())
}

fn run_demo(dir: &Path, rate: u32, blocks: BlockSizes, mix: f32) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|err| format!("cannot create '{}': {err}", dir.display()))?;
    let dry = demo::dry_signal(rate);
    let dry_path = dir.join("dry.wav");
    wav::write_f32(&dry_path, rate, &dry)
        .map_err(|err| format!("cannot write '{}': {err}", dry_path.display()))?;
    println!(
        "dry signal: {} ({:.1} s, stereo, {rate} Hz)",
        dry_path.display(),
        demo::DRY_SECONDS
    );
    let options = RenderOptions {
        blocks,
        mix,
        latency_mode: LatencyMode::Zero,
        executor: Executor::Gpu(GpuPolicy::Auto),
    };
    for builtin in BuiltinIr::ALL {
        let ir = builtin.generate(rate);
        let (output, report) = render(&ir, &dry, options).map_err(|err| err.to_string())?;
        let ir_path = dir.join(format!("ir-{}.wav", builtin.id()));
        wav::write_f32(&ir_path, rate, &ir.channels)
            .map_err(|err| format!("cannot write '{}': {err}", ir_path.display()))?;
        let path = dir.join(format!("demo-{}.wav", builtin.id()));
        wav::write_f32(&path, rate, &output)
            .map_err(|err| format!("cannot write '{}': {err}", path.display()))?;
        println!(
            "{} ({}, {:.1} s) -> {}",
            builtin.name(),
            ir.layout.name(),
            ir.seconds(),
            path.display()
        );
        print_report(&report);
    }
    Ok(())
}

fn run_soak(args: &SoakArgs) -> Result<(), String> {
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

fn print_report(report: &RenderReport) {
    println!(
        "  {} ({} worker threads) | plan {} | {} paths | {:.1} s audio in {:.3} s CPU \
         (audio thread {:.3} s), real-time factor {:.4}",
        report.backend.reason,
        report.num_workers,
        report.plan,
        report.num_paths,
        report.audio_seconds,
        report.cpu_seconds,
        report.audio_thread_cpu_seconds,
        report.real_time_factor()
    );
}

fn first_non_finite(channels: &[Vec<f32>]) -> Option<(usize, usize)> {
    channels.iter().enumerate().find_map(|(channel, samples)| {
        samples
            .iter()
            .position(|s| !s.is_finite())
            .map(|frame| (channel, frame))
    })
}
