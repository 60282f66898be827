//! The command line of `longtail-cli`: every subcommand, flag and default, and the `--help`
//! texts clap derives from their doc comments, plus the parsers and conversions of flag values.
//!
//! Uses the library only for the types and defaults of flag values; runs nothing.

// The doc comments here are clap's --help texts, where `<id>` is literal text, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use longtail::capture::{extract, sweep};
use longtail::engine::LatencyMode;
use longtail::engine::plan::{MAX_OFFLOAD_LATENCY, OFFLOAD_LATENCIES};
use longtail::engine::{Executor, GpuPolicy};
use longtail::ir;
use longtail::ir::edit::DEFAULT_AUTO_TRIM_DB;
use longtail::ir::mapping::ChannelFormat;
use longtail::params::DEFAULT_MIX;
use longtail::render::BlockSizes;
use longtail::tools::bench::Pace;
use longtail::tools::soak;

use crate::edits::{BlendArgs, DuckArgs, EditArgs};

#[derive(Debug, Parser)]
#[command(
    name = "longtail-cli",
    version = longtail::VERSION_TEXT,
    about = "Longtail convolution: offline render, IR inspection, room capture (sweep, deconvolve), benchmarks, the demo, soak and status"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Convolve an audio file with an IR, exactly as the plugin would, into a 32-bit float WAV.
    ///
    /// The output has the input's sample rate, input length + IR length - 1 frames (IR length
    /// after resampling and edits), and is time-aligned with the input (no latency offset). It
    /// is stereo when the input or the IR is stereo. Without edit flags the IR is applied exactly
    /// as stored (only resampled when its rate differs from the input's); edits apply only when
    /// their flags are given, in the order of `longtail::ir::edit`.
    Render(Box<RenderArgs>),
    /// Describe an IR file (or two stereo files making true stereo): format, rate, channels,
    /// length, peak, layout, and what the plugin's default edits would do to it (where the
    /// automatic end trim would cut, the normalisation gain), and the decay time (T60) of each
    /// octave band from 125 Hz to 8 kHz as the Decay edit reads it. With --outputs, how it plays
    /// on that bus: the rule, and which IR channels feed each path (or why it cannot play there).
    IrInfo(IrInfoArgs),
    /// List the IR files under folders as the plugin's IR library does: one line per file
    /// (name, channels, length, sample rate, folder, read from the header without decoding the
    /// samples), or the one-line reason a file cannot play. At most 20,000 files and 16
    /// folders deep; a symlink loop is entered once. Exits with status 1 when a folder cannot
    /// be read. Without folders, the editor's library: the folders of the user's library
    /// settings file (library.json in the config folder, or LONGTAIL_CONFIG_DIR).
    IrList {
        /// The folders to scan (none: the library's).
        folders: Vec<PathBuf>,
        /// One JSON object per line: path, name, folder, channels, frames, seconds,
        /// sample_rate and format, or path, name, folder and error.
        #[arg(long)]
        json: bool,
    },
    /// Measure the engine like a host would: blocks fed back to back (engines wait for their
    /// workers, as offline) or, with --paced, at real-time pace (real-time mode, lates
    /// counted). Prints one JSON line per configuration with --json (the harness contract of
    /// shared/bench/peers/RESULTS.md), else a table.
    ///
    /// Generated workload (default): seeded white noise through seeded decaying-noise IRs of
    /// --ir-seconds. Harness mode (--input and --ir): raw f32 interleaved files as the peer
    /// benchmark driver passes them; --out writes the output for its accuracy pass. It times
    /// its calls by the monotonic clock alone, as the peers' harnesses do: its per-call CPU
    /// fields (oncpu_*, offcpu_max_us, rtf_process) are null.
    ///
    /// Matrix mode (--outputs M): N = --channels inputs to M outputs, every path present; the
    /// IR has N*M channels, channel i*M+o for the path from input i to output o, and the output
    /// M channels. Without --outputs the paths are diagonal (channel c for c -> c).
    Bench(BenchArgs),
    /// Time the GPU alone (no engine, no audio thread): the round trip of one period's batch
    /// (upload, FFTs, MAC, download, in one submit) for --levels levels of --inputs x
    /// --outputs paths, each --partitions partitions of --partition samples, random data. The
    /// defaults are the round-trip target: 64 paths (16 true-stereo levels) of P = 8192.
    /// Also reports the compute dispatches per period and, where the adapter has timestamp
    /// queries, a period's time on the GPU itself. LONGTAIL_GPU_ALLOW_CPU=1 accepts a CPU
    /// adapter such as lavapipe.
    BenchGpu(BenchGpuArgs),
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
    Status(StatusArgs),
    /// Write an exponential sine sweep to measure a room with (play it, record it, then
    /// `deconvolve`): a synchronised sweep (its harmonics start in phase, so `deconvolve` can
    /// set its distortion apart) with raised-cosine fades, peaking at --level dBFS, then --tail
    /// seconds of silence for the room to ring out. With --speakers K, K channels and K slots
    /// one after another: slot k holds the sweep in channel k only. A 32-bit float WAV. See
    /// docs/capture.md.
    Sweep(SweepArgs),
    /// Turn a recording of `sweep`'s file into an IR (32-bit float WAV): one IR channel per
    /// recorded channel, or with --speakers K a K x N matrix of N microphones (channel k*N + n
    /// for loudspeaker k to microphone n, the order Longtail's matrix mode plays). Deconvolves
    /// in 64-bit float, leaves the harmonic distortion out, cuts the start --pre ms before the
    /// first arrival (or at a --loopback channel's arrival) with one lag for every channel and
    /// slot, and the end where the IR meets its noise floor. Prints the peak-to-noise ratio, the
    /// noise floor, the lag and the length. Refuses a recording that clipped, is shorter than
    /// every slot, is at another rate, or holds no sweep.
    Deconvolve(DeconvolveArgs),
    /// Run the plugin's real-time path through hours of audio as fast as the machine allows,
    /// with random block sizes (some empty), automation, IR switches and sleep, and check that
    /// the output stays finite and memory, threads and file descriptors do not grow. Exits
    /// with status 1 when a check fails.
    Soak(SoakArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    /// Impulse response: WAV, FLAC, AIFF or Ogg Vorbis at any rate (resampled to the
    /// input's): 1 (mono), 2 (stereo) or 4 (true stereo: LL, LR, RL, RR) channels, or any
    /// count up to 4096 whose meaning comes from the bus (one channel per output, or
    /// inputs x outputs channels, input-major; see docs/plugin.md, "Mapping"). Or one file per
    /// input, each with one channel per output (two stereo files: true stereo, the left
    /// input's LL, LR, then the right input's RL, RR).
    #[arg(long, required = true, num_args = 1..=64)]
    pub(crate) ir: Vec<PathBuf>,
    /// Dry signal: an audio file (WAV, FLAC, AIFF or Ogg Vorbis) of 1 to 64 channels.
    #[arg(long)]
    pub(crate) input: PathBuf,
    /// Output channels, 1 to 64 (default: a matrix IR's outputs; the input's channels past
    /// stereo; an IR of input x M channels its M; else stereo when the input or the IR is,
    /// else mono). The output WAV's channel mask names the speakers of --format.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) outputs: Option<u8>,
    /// What the channels of a bus wider than stereo are: `auto` (the speaker set of the
    /// width, else Ambisonics where it is a square, else discrete), `speakers`,
    /// `ambisonics` (ACN, SN3D) or `discrete`.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub(crate) format: FormatArg,
    /// Where to write the result (32-bit float WAV).
    #[arg(long)]
    pub(crate) output: PathBuf,
    /// Host block size: a number of samples, or `random` (seeded sizes from 1 to 1024).
    #[arg(long, default_value = "512", value_parser = parse_blocks)]
    pub(crate) block: BlockSizes,
    /// Wet share from 0 to 1, linear: out = mix x wet + (1 - mix) x dry.
    #[arg(long, default_value_t = 1.0, value_parser = parse_mix)]
    pub(crate) mix: f32,
    /// Stereo width of the wet signal in percent, 0 to 200: 0 mono, 100 the IR as
    /// recorded, 200 the side doubled (mid ± width x side). Stereo outputs only (1 -> 2
    /// and 2 -> 2 buses).
    #[arg(long, default_value_t = 100.0, value_parser = parse_width)]
    pub(crate) width: f32,
    /// `zero`: no latency (direct-form head); `low`: one quantum of latency, less CPU; a
    /// number of samples N: the offload mode, nothing convolving on the audio thread, with
    /// a latency of N or more where a worker needs it (the output is time-aligned either
    /// way).
    #[arg(long, default_value = "zero", value_parser = parse_latency)]
    pub(crate) latency: LatencyArg,
    /// Where the tail runs: `auto` (the GPU for big IRs on a real GPU whose round trip
    /// fits, else the CPU), `cpu`, or `gpu` (every level of 1024+ samples on the GPU;
    /// LONGTAIL_GPU_ALLOW_CPU=1 accepts a CPU adapter such as lavapipe).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub(crate) backend: BackendArg,
    #[command(flatten)]
    pub(crate) edits: EditArgs,
    #[command(flatten)]
    pub(crate) duck: DuckArgs,
    #[command(flatten)]
    pub(crate) blend: BlendArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct IrInfoArgs {
    /// The IR file, or one file per input (each a row: one channel per output; two stereo
    /// files make true stereo, the left input's first).
    #[arg(required = true, num_args = 1..=64)]
    pub(crate) files: Vec<PathBuf>,
    /// Bus inputs, 1 to 64 (default: as many as --outputs).
    #[arg(long, requires = "outputs", value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) inputs: Option<u8>,
    /// Bus outputs, 1 to 64: print the mapping onto this bus.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) outputs: Option<u8>,
    /// What the bus's channels are (as for render).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub(crate) format: FormatArg,
    /// Session rate in Hz to describe the preparation for, 1000 to 768000 (default: the
    /// file's own rate).
    #[arg(long, value_parser = parse_rate)]
    pub(crate) rate: Option<u32>,
    /// Threshold of the automatic end trim, in dB below the peak.
    #[arg(long, default_value_t = DEFAULT_AUTO_TRIM_DB, allow_hyphen_values = true)]
    pub(crate) auto_trim_db: f64,
}

#[derive(Debug, clap::Args)]
pub(crate) struct BenchArgs {
    /// Harness mode: raw f32 LE interleaved input with --channels channels.
    #[arg(long, requires = "ir")]
    pub(crate) input: Option<PathBuf>,
    /// Harness mode: raw f32 LE interleaved IR, channel c for path c -> c (matrix mode:
    /// N*M channels, channel i*M+o for input i to output o).
    #[arg(long, requires = "input")]
    pub(crate) ir: Option<PathBuf>,
    /// Host block sizes, comma separated.
    #[arg(long, default_value = "64", value_delimiter = ',')]
    pub(crate) block: Vec<usize>,
    /// Sample rate in Hz, 1000 to 768000.
    #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
    pub(crate) rate: u32,
    /// Input channels, 1 to 64 (without --outputs, diagonal paths: 1 mono, 2 stereo, more
    /// a matrix with only its diagonal).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) channels: u8,
    /// Matrix mode: output channels, 1 to 64, every input feeding every output.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) outputs: Option<u8>,
    /// IR lengths in seconds for the generated workload, comma separated.
    #[arg(long, default_value = "10", value_delimiter = ',')]
    pub(crate) ir_seconds: Vec<f64>,
    /// Plugin instances per block (each its own engine), comma separated.
    #[arg(long, default_value = "1", value_delimiter = ',')]
    pub(crate) instances: Vec<usize>,
    /// Spread the instances over this many host audio threads, as a DAW runs its tracks on
    /// several: each thread has its own engines, pace and deadline statistics. With --json
    /// each thread prints its line ("host_thread": its index), then the session's line
    /// ("host_thread": null: the process's CPU, the worst thread's per-call figures, the
    /// sums of instances and lates); the table shows the session. Generated workload only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(crate) host_threads: u16,
    /// Seconds of audio (harness mode: at most this much of the input).
    #[arg(long)]
    pub(crate) seconds: Option<f64>,
    /// Stop once the timed loop has run this many seconds (0: no cap).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) max_wall: f64,
    /// Blocks in the first seconds are left out of the per-block statistics.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) warmup_s: f64,
    /// Name of the configuration in the output.
    #[arg(long)]
    pub(crate) variant: Option<String>,
    /// Harness mode: write the output (raw f32 interleaved) here.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Release blocks at real-time pace (real-time mode: lates are possible and counted);
    /// the same as --pace realtime.
    #[arg(long, conflicts_with = "pace")]
    pub(crate) paced: bool,
    /// How the host releases blocks: `offline` (back to back, engines wait: the default),
    /// `realtime` (each at its deadline), `fast` (back to back in real-time mode: a bounce
    /// the plugin is not told about), `ahead:SECONDS[xSTARTS]` (anticipative processing:
    /// STARTS times the host stops for 250 ms, then runs SECONDS ahead as fast as it can and
    /// keeps that lead) or `split:PERIOD` (each device period of PERIOD samples as calls of
    /// --block back to back, PERIOD announced as the largest block). Every pace but offline runs the engines in real-time mode,
    /// where a call waits for a late result only while the host is ahead of real time
    /// ("waits", "wait_max_us"; see docs/plugin.md, "Host pacing").
    #[arg(long, value_parser = Pace::parse)]
    pub(crate) pace: Option<Pace>,
    /// Also render the first instance's input offline and report its output's distance from
    /// that render ("snr_vs_offline_db"; 300 when identical): how much the pace cost.
    #[arg(long)]
    pub(crate) check: bool,
    /// With --paced, run the measuring thread at this SCHED_FIFO priority, as a host's audio
    /// thread runs (JACK and DAWs use 60-90), above Longtail's workers (40 and below); on
    /// Windows any value above 40 joins MMCSS "Pro Audio" at critical, above the workers. 0
    /// leaves the thread as it is. Quietly ignored where the OS refuses.
    #[arg(long, default_value_t = 70)]
    pub(crate) audio_priority: u32,
    /// Where the tail runs: `auto`, `cpu` or `gpu` (as for render). The JSON line then
    /// has `gpu_adapter`, the GPU round trip (`gpu_rt_p50_us`, `gpu_rt_p99_us`,
    /// `gpu_rt_max_us`), where it went (`gpu_periods`: submit, wait and the wait's CPU
    /// share, periods that napped, readback, round trips by the batch's largest
    /// partition) and the hub
    /// thread's CPU seconds (`gpu_hub_cpu_s`).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub(crate) backend: BackendArg,
    /// Where levels after the first run (and level 0 in the offload mode): worker threads
    /// (levels of up to 512 samples with too little slack for one run on the audio
    /// thread, spread over their period; with the CPU backend at blocks of 1024, a level
    /// planned at a delay of one partition runs on it summed ahead of its chunk), or
    /// inline on the audio thread, each whole when its chunk completes (the single-thread
    /// reference).
    #[arg(long, value_enum, default_value_t = ExecutorArg::Workers)]
    pub(crate) executor: ExecutorArg,
    /// `zero` or `low` latency, or a number of samples N: the offload mode, whose latency
    /// is N or more where a worker needs it (`latency_samples` says which).
    #[arg(long, default_value = "zero", value_parser = parse_latency)]
    pub(crate) latency: LatencyArg,
    /// Measure the machine instead of the engine: no engine runs, and each call spins this
    /// many microseconds over a 512 KiB buffer, timed, paced and prioritised exactly as the
    /// engines are. With --paced it shows the per-call tail (blk_p99_us, blk_max_us) that
    /// the machine adds to a job of known length, to read an engine's figures against.
    /// The JSON line says "engine":"fixed-work"; --ir-seconds and --instances are unused.
    #[arg(long, value_parser = parse_fixed_work)]
    pub(crate) fixed_work_us: Option<f64>,
    /// One JSON line per configuration instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct BenchGpuArgs {
    /// Levels (instances) in the batch.
    #[arg(long, default_value_t = 16)]
    pub(crate) levels: usize,
    /// Inputs of each level.
    #[arg(long, default_value_t = 2)]
    pub(crate) inputs: usize,
    /// Outputs of each level.
    #[arg(long, default_value_t = 2)]
    pub(crate) outputs: usize,
    /// Partition size P (a power of two from 64 to 65536).
    #[arg(long, default_value_t = 8192)]
    pub(crate) partition: usize,
    /// Partitions per path.
    #[arg(long, default_value_t = 4)]
    pub(crate) partitions: usize,
    /// Periods measured (after 16 to warm up).
    #[arg(long, default_value_t = 1000)]
    pub(crate) periods: usize,
    /// FFT kernels: `tiled` (in workgroup memory, 3 to 6 dispatches a period; the
    /// default where the device has the memory), `tiled:TILE` (a smaller tile), or
    /// `radix2` (one dispatch per stage, the fallback). Default: LONGTAIL_GPU_KERNELS, else
    /// tiled.
    #[arg(long, value_parser = parse_kernels)]
    pub(crate) kernels: Option<longtail_gpu::FftKernels>,
    /// One JSON line instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    /// IR length the plan is shown for, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub(crate) ir_seconds: f64,
    /// Host block size the plan is shown for.
    #[arg(long, default_value_t = 64)]
    pub(crate) block: usize,
    /// Sample rate in Hz, 1000 to 768000.
    #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
    pub(crate) rate: u32,
    /// `zero` or `low` latency, or a number of samples N: the offload mode, whose latency
    /// is N or more where a worker needs it (`latency_samples` says which).
    #[arg(long, default_value = "zero", value_parser = parse_latency)]
    pub(crate) latency: LatencyArg,
    /// Paths of the engine: 2 for a stereo IR on a stereo track, 4 for true stereo, more
    /// for a matrix of instances (Auto weighs paths times IR length).
    #[arg(long, default_value_t = 2)]
    pub(crate) paths: usize,
    /// A dense matrix instead of --paths: this many inputs (1 to 64), with --outputs.
    #[arg(long, requires = "outputs", conflicts_with = "paths",
          value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) channels: Option<u8>,
    /// A dense matrix instead of --paths: this many outputs (1 to 64), with --channels;
    /// the plan is shown for its --channels x --outputs paths.
    #[arg(long, requires = "channels", value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) outputs: Option<u8>,
    /// The backend to report on: `auto`, `cpu` or `gpu` (as for render).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub(crate) backend: BackendArg,
    /// Read thermal sensors from this directory instead of /sys (a fake sysfs tree).
    #[arg(long)]
    pub(crate) thermal_root: Option<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SweepArgs {
    /// Where to write the sweep (32-bit float WAV).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Length of the sweep in seconds, 0.5 to 120 (rounded to the nearest synchronised
    /// length: within half a period of --from times ln(to / from)). Longer sweeps rise further
    /// over steady background noise: 3 dB per doubling.
    #[arg(long, default_value_t = sweep::DEFAULT_SECONDS)]
    pub(crate) seconds: f64,
    /// Start frequency in Hz (at least 1).
    #[arg(long, default_value_t = sweep::DEFAULT_FROM_HZ)]
    pub(crate) from: f64,
    /// End frequency in Hz, below half the rate.
    #[arg(long, default_value_t = sweep::DEFAULT_TO_HZ)]
    pub(crate) to: f64,
    /// Peak level in dBFS, -60 to 0.
    #[arg(long, default_value_t = sweep::DEFAULT_LEVEL_DB, allow_hyphen_values = true)]
    pub(crate) level: f64,
    /// Sample rate in Hz, 1000 to 768000: record at this rate.
    #[arg(long, default_value_t = sweep::DEFAULT_RATE_HZ, value_parser = parse_rate)]
    pub(crate) rate: u32,
    /// Silence after each sweep in seconds, 0.1 to 60: longer than the room takes to decay into
    /// its noise, plus the interface's latency (the IR is at most this long).
    #[arg(long, default_value_t = sweep::DEFAULT_TAIL_SECONDS)]
    pub(crate) tail: f64,
    /// Loudspeakers, 1 to 64: one channel each, played one after another.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) speakers: u8,
}

#[derive(Debug, clap::Args)]
pub(crate) struct DeconvolveArgs {
    /// The sweep file `sweep` wrote (any exponential sweep followed by silence works: a mono
    /// file is one slot, played once per loudspeaker).
    #[arg(long)]
    pub(crate) sweep: PathBuf,
    /// The recording: WAV, FLAC, AIFF or Ogg Vorbis at the sweep's rate, up to 65 channels and
    /// 20 minutes, started with the sweep's playback (sample-locked: same interface and clock).
    #[arg(long)]
    pub(crate) recording: PathBuf,
    /// Where to write the IR (32-bit float WAV).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Loudspeakers (slots in the recording), 1 to 64 (default: the sweep file's channels).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=64))]
    pub(crate) speakers: Option<u8>,
    /// Milliseconds kept before the first arrival, 0 to 1000 (ignored with --loopback). The
    /// band limit rings around every arrival; 10 ms or more keeps more of it (see
    /// docs/capture.md).
    #[arg(long, default_value_t = extract::DEFAULT_PRE_MS)]
    pub(crate) pre: f64,
    /// The recording's loopback channel, counted from 1 (the interface's output wired to one of
    /// its inputs): the IR starts at its arrival, so the interface's latency is removed and
    /// the sound's travel time kept. It is left out of the IR.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=65))]
    pub(crate) loopback: Option<u16>,
    /// One JSON object: peak_to_noise_db, noise_floor_db, lag_samples, length_samples and more.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SoakArgs {
    /// Seconds of audio to process (default: 8 hours).
    #[arg(long, default_value_t = 28_800.0)]
    pub(crate) audio_seconds: f64,
    /// Seconds of audio before the warm-up checkpoint (at most a quarter of the run).
    #[arg(long, default_value_t = soak::DEFAULT_WARMUP_SECONDS)]
    pub(crate) warmup_seconds: f64,
    /// Sample rate in Hz, 1000 to 768000.
    #[arg(long, default_value_t = 48_000, value_parser = parse_rate)]
    pub(crate) rate: u32,
    /// The host's maximum block size; each call carries 0 to this many frames.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub(crate) max_block: u32,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// One JSON line instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `--latency`: `zero`, `low`, or the offload mode's latency in samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LatencyArg {
    Zero,
    Low,
    Offload(usize),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
    Auto,
    Speakers,
    Ambisonics,
    Discrete,
}

impl From<FormatArg> for ChannelFormat {
    fn from(format: FormatArg) -> Self {
        match format {
            FormatArg::Auto => Self::Auto,
            FormatArg::Speakers => Self::Speakers,
            FormatArg::Ambisonics => Self::Ambisonics,
            FormatArg::Discrete => Self::Discrete,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ExecutorArg {
    Workers,
    Inline,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BackendArg {
    Auto,
    Cpu,
    Gpu,
}

impl BackendArg {
    /// The engine executor for this backend (`LONGTAIL_GPU_ALLOW_CPU=1` lets `gpu` use a CPU
    /// adapter such as lavapipe).
    pub(crate) fn executor(self) -> Executor {
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
            LatencyArg::Offload(samples) => LatencyMode::Offload(samples),
        }
    }
}

fn parse_latency(text: &str) -> Result<LatencyArg, String> {
    match text {
        "zero" => Ok(LatencyArg::Zero),
        "low" => Ok(LatencyArg::Low),
        _ => match text.parse::<usize>() {
            Ok(samples) if (1..=MAX_OFFLOAD_LATENCY).contains(&samples) => {
                Ok(LatencyArg::Offload(samples))
            }
            _ => Err(format!(
                "`{text}`: --latency takes `zero`, `low` or a number of samples from 1 to \
                 {MAX_OFFLOAD_LATENCY} (the offload mode, e.g. {})",
                OFFLOAD_LATENCIES.map(|n| n.to_string()).join(", ")
            )),
        },
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

fn parse_rate(text: &str) -> Result<u32, String> {
    let (min, max) = (ir::MIN_SAMPLE_RATE_HZ, ir::MAX_SAMPLE_RATE_HZ);
    match text.parse::<u32>() {
        Ok(rate) if (min..=max).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "'{text}' is not a sample rate Longtail convolves at: use whole hertz from {min} to {max}"
        )),
    }
}

fn parse_mix(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(mix) if (0.0..=1.0).contains(&mix) => Ok(mix),
        _ => Err(format!("'{text}' is not a mix: use a number from 0 to 1")),
    }
}

fn parse_width(text: &str) -> Result<f32, String> {
    match text.trim_end_matches('%').parse::<f32>() {
        Ok(width) if (0.0..=200.0).contains(&width) => Ok(width),
        _ => Err(format!(
            "'{text}' is not a width: use a percentage from 0 (mono) to 200"
        )),
    }
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

fn parse_kernels(text: &str) -> Result<longtail_gpu::FftKernels, String> {
    longtail_gpu::FftKernels::parse(text)
        .ok_or_else(|| format!("'{text}': expected radix2, tiled or tiled:TILE"))
}
