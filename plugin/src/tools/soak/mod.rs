//! `longtail-cli soak`: hours of audio through the plugin exactly as a host drives it, as fast
//! as the machine allows, watching for what only shows up after a long time: non-finite output,
//! memory growth, leaked threads or file descriptors.
//!
//! The soak is a small host of its own: it creates a [`Longtail`], activates it in real-time mode
//! (engines never wait for their workers, the late policy applies), and calls
//! [`Plugin::process`] with a nice-plug [`Buffer`], as the CLAP and VST3 wrappers do. Along the
//! way it
//!
//! - changes the host block size on every call (seeded, `1..=max_block`, sometimes 0 frames),
//! - automates mix and output gain at random (seeded) every 10 to 200 ms of audio,
//! - switches the impulse response every 2 to 6 s of audio, cycling through the built-in IRs
//!   (and the latency mode every seventh switch), so every switch is a real one: the plugin's
//!   preparation thread builds the engine and the processor crossfades to it,
//! - feeds noise, tones, clicks and silence at random levels, with a rare NaN or infinite input
//!   sample as a careless host might send,
//! - lets the plugin sleep as a CLAP host would: while the last call returned a sleep-able
//!   status ([`ProcessStatus::Normal`], `CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`) and the input is
//!   silent, `process()` is not called and the host outputs silence.
//!
//! Because blocks come much faster than real time, worker results miss their deadlines far more
//! often than in a host: they are reported (`late_results`), not judged. A block is late
//! (`late_blocks`) when its `process()` call took longer than the block lasts, which a host would
//! hear as a dropout; on a shared machine a few are expected, so they are reported too.
//!
//! Resident memory, file descriptors and threads are sampled at four points: before the plugin
//! exists (start), after the warm-up and at the end (both with the same IR and latency mode
//! playing, after the previous engine has been dropped, so the two states are comparable), and
//! after the plugin is dropped (final). The run fails when any output sample was NaN or infinite
//! (as the host received it, or as the processor's last guard caught it), when resident memory
//! grew by [`MAX_RSS_GROWTH_KB`] or more between warm-up and end, or when threads or file
//! descriptors grew (warm-up to end, or start to final).
//!
//! Runs on the calling thread, which plays the host's main and audio threads in turn. Each
//! `process()` call goes through the caller's `guard` (the tests wrap it in `assert_no_alloc`);
//! everything else here allocates freely.

use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nice_plug::context::process::SendEventError;
use nice_plug::params::internals::ParamPtr;
use nice_plug::prelude::*;

use crate::Longtail;
use crate::engine::LatencyMode;
use crate::ir::builtin::BuiltinIr;
use crate::processor::Health;
use crate::rng::Rng;

/// Resident memory growth between warm-up and end that fails the run, in KiB (1 MiB).
pub const MAX_RSS_GROWTH_KB: u64 = 1024;
/// Default length of the warm-up, in seconds of audio.
pub const DEFAULT_WARMUP_SECONDS: f64 = 60.0;
/// Shortest and longest time between IR switches, in seconds of audio.
const SWAP_INTERVAL_S: (f64, f64) = (2.0, 6.0);
/// Shortest and longest time between automation steps, in seconds of audio.
const AUTOMATION_INTERVAL_S: (f64, f64) = (0.01, 0.2);
/// One host call in this many has 0 frames.
const EMPTY_BLOCK_ODDS: u64 = 64;
/// One host call in this many carries a NaN or infinite input sample.
const NON_FINITE_INPUT_ODDS: u64 = 20_000;
/// The IR and latency mode playing at the warm-up and end checkpoints.
const CHECKPOINT_IR: BuiltinIr = BuiltinIr::Cathedral;
/// Longest wall time a checkpoint may wait for its engine to be built and swapped in.
const CHECKPOINT_TIMEOUT: Duration = Duration::from_secs(120);
/// How often progress is printed (with `progress`), in wall time.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(60);

/// What to run.
#[derive(Debug, Clone)]
pub struct SoakOptions {
    /// Seconds of audio to process.
    pub audio_seconds: f64,
    /// Seconds of audio before the warm-up checkpoint; at most a quarter of `audio_seconds`.
    pub warmup_seconds: f64,
    /// Session sample rate, in Hz.
    pub rate: u32,
    /// The host's maximum block size; each call carries `0..=max_block` frames.
    pub max_block: usize,
    /// Seed of every random choice (signal, block sizes, automation, switch times).
    pub seed: u64,
    /// Print a progress line on stderr every minute of wall time.
    pub progress: bool,
}

/// Resident memory, file descriptors and threads of this process at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// Resident set size (`VmRSS` of `/proc/self/status`), in KiB.
    pub rss_kb: u64,
    /// Open file descriptors (entries of `/proc/self/fd`).
    pub fds: usize,
    /// Threads (entries of `/proc/self/task`).
    pub threads: usize,
}

impl Resources {
    /// Reads `/proc/self`. Allocates; Linux only (elsewhere every field reads 0).
    ///
    /// With glibc, first returns the allocator's free pages to the system (`malloc_trim`):
    /// glibc keeps freed memory of every thread's arena mapped at whatever high-water mark the
    /// largest engine left, so without this the resident size says more about the order of the
    /// IR switches than about what is still allocated.
    pub fn sample() -> Self {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: `malloc_trim` only releases free memory; it is safe at any time.
        unsafe {
            libc::malloc_trim(0);
        }
        let count = |path: &str| std::fs::read_dir(path).map_or(0, |dir| dir.count());
        let rss_kb = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmRSS:"))
                    .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0);
        Self {
            rss_kb,
            fds: count("/proc/self/fd"),
            threads: count("/proc/self/task"),
        }
    }
}

/// What a soak run saw.
#[derive(Debug, Clone, Default)]
pub struct SoakReport {
    /// Seconds of audio processed (including the checkpoints' settling).
    pub audio_s: f64,
    /// Wall seconds of the whole run.
    pub wall_s: f64,
    /// Host calls, including empty and skipped ones.
    pub blocks: u64,
    /// Calls with 0 frames.
    pub empty_blocks: u64,
    /// Calls skipped because the plugin could sleep and the input was silent.
    pub slept_blocks: u64,
    /// IR or latency-mode switches asked for.
    pub switches: u64,
    /// Automation steps (mix and gain together).
    pub automation_steps: u64,
    /// NaN or infinite samples fed to the input.
    pub non_finite_inputs: u64,
    /// `process()` calls that took longer than the audio they carried.
    pub late_blocks: u64,
    /// Longest `process()` call, in microseconds.
    pub max_block_us: f64,
    /// Worker lateness summed over every engine played (see the module docs).
    pub health: Health,
    /// NaN or infinite samples in the output as the host received it.
    pub non_finite_outputs: u64,
    /// Largest absolute output sample.
    pub peak_output: f32,
    /// Before the plugin existed.
    pub start: Resources,
    /// At the warm-up checkpoint.
    pub warm: Resources,
    /// At the end checkpoint, the plugin still active.
    pub end: Resources,
    /// After the plugin was dropped.
    pub after_drop: Resources,
}

impl SoakReport {
    /// Why the run failed; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.non_finite_outputs > 0 {
            failures.push(format!(
                "{} NaN or infinite output samples reached the host",
                self.non_finite_outputs
            ));
        }
        if self.health.non_finite_outputs > 0 {
            failures.push(format!(
                "{} output samples were NaN or infinite before the processor's guard",
                self.health.non_finite_outputs
            ));
        }
        let rss_growth_kb = self.end.rss_kb.saturating_sub(self.warm.rss_kb);
        if rss_growth_kb >= MAX_RSS_GROWTH_KB {
            failures.push(format!(
                "resident memory grew by {rss_growth_kb} KiB after the warm-up ({} -> {} KiB)",
                self.warm.rss_kb, self.end.rss_kb
            ));
        }
        let grew = |what: &str, from: usize, to: usize, when: &str| {
            (to > from).then(|| format!("{what} grew from {from} to {to} {when}"))
        };
        failures.extend(
            [
                grew(
                    "threads",
                    self.warm.threads,
                    self.end.threads,
                    "after the warm-up",
                ),
                grew(
                    "threads",
                    self.start.threads,
                    self.after_drop.threads,
                    "over the plugin's life",
                ),
                grew(
                    "file descriptors",
                    self.warm.fds,
                    self.end.fds,
                    "after the warm-up",
                ),
                grew(
                    "file descriptors",
                    self.start.fds,
                    self.after_drop.fds,
                    "over the plugin's life",
                ),
            ]
            .into_iter()
            .flatten(),
        );
        failures
    }

    /// One JSON line.
    pub fn to_json(&self) -> String {
        format!(
            concat!(
                "{{\"kind\":\"soak\",\"audio_s\":{:.1},\"wall_s\":{:.1},\"blocks\":{},",
                "\"empty_blocks\":{},\"slept_blocks\":{},\"switches\":{},\"automation_steps\":{},",
                "\"non_finite_inputs\":{},\"late_blocks\":{},\"max_block_us\":{:.1},",
                "\"late_results\":{},\"dropped_chunks\":{},\"non_finite_outputs\":{},",
                "\"guarded_outputs\":{},\"peak_output\":{:.4},",
                "\"rss_kb\":{{\"start\":{},\"warm\":{},\"end\":{},\"after_drop\":{}}},",
                "\"fds\":{{\"start\":{},\"warm\":{},\"end\":{},\"after_drop\":{}}},",
                "\"threads\":{{\"start\":{},\"warm\":{},\"end\":{},\"after_drop\":{}}},",
                "\"passed\":{}}}"
            ),
            self.audio_s,
            self.wall_s,
            self.blocks,
            self.empty_blocks,
            self.slept_blocks,
            self.switches,
            self.automation_steps,
            self.non_finite_inputs,
            self.late_blocks,
            self.max_block_us,
            self.health.late.late_results,
            self.health.late.dropped_chunks,
            self.non_finite_outputs,
            self.health.non_finite_outputs,
            self.peak_output,
            self.start.rss_kb,
            self.warm.rss_kb,
            self.end.rss_kb,
            self.after_drop.rss_kb,
            self.start.fds,
            self.warm.fds,
            self.end.fds,
            self.after_drop.fds,
            self.start.threads,
            self.warm.threads,
            self.end.threads,
            self.after_drop.threads,
            self.failures().is_empty(),
        )
    }

    /// A human-readable table.
    pub fn to_table(&self) -> String {
        let resources = |name: &str, get: &dyn Fn(&Resources) -> String| {
            format!(
                "{name:<22} start {:>8}  warm {:>8}  end {:>8}  after drop {:>8}\n",
                get(&self.start),
                get(&self.warm),
                get(&self.end),
                get(&self.after_drop)
            )
        };
        let mut table = String::new();
        let mut line = |name: &str, value: String| table.push_str(&format!("{name:<22} {value}\n"));
        line(
            "audio",
            format!(
                "{:.1} s in {:.1} s wall ({:.1}x real time)",
                self.audio_s,
                self.wall_s,
                self.audio_s / self.wall_s.max(1e-9)
            ),
        );
        line(
            "host calls",
            format!(
                "{} ({} empty, {} skipped while asleep)",
                self.blocks, self.empty_blocks, self.slept_blocks
            ),
        );
        line(
            "changes",
            format!(
                "{} IR/latency switches, {} automation steps, {} non-finite input samples",
                self.switches, self.automation_steps, self.non_finite_inputs
            ),
        );
        line(
            "late blocks",
            format!(
                "{} (longest call {:.1} us)",
                self.late_blocks, self.max_block_us
            ),
        );
        line(
            "late worker results",
            format!(
                "{} late, {} dropped chunks (blocks run faster than real time)",
                self.health.late.late_results, self.health.late.dropped_chunks
            ),
        );
        line(
            "non-finite output",
            format!(
                "{} at the host, {} caught by the guard",
                self.non_finite_outputs, self.health.non_finite_outputs
            ),
        );
        line("peak output", format!("{:.4}", self.peak_output));
        table.push_str(&resources("resident memory (KiB)", &|r| {
            r.rss_kb.to_string()
        }));
        table.push_str(&resources("file descriptors", &|r| r.fds.to_string()));
        table.push_str(&resources("threads", &|r| r.threads.to_string()));
        let failures = self.failures();
        if failures.is_empty() {
            table.push_str("result                 passed\n");
        } else {
            for failure in failures {
                table.push_str(&format!("FAILED: {failure}\n"));
            }
        }
        table
    }
}

/// Runs the soak. `guard` wraps every `process()` call (pass `|f| f()`, or a wrapper that checks
/// for allocations). Returns an error only when the run could not be carried out (activation
/// refused, a checkpoint's engine never arrived); a run that went wrong is a report whose
/// [`SoakReport::failures`] is not empty.
pub fn run(options: &SoakOptions, guard: fn(&mut dyn FnMut())) -> Result<SoakReport, String> {
    if options.audio_seconds.is_nan() || options.audio_seconds <= 0.0 || options.max_block == 0 {
        return Err("the soak needs a positive audio length and block size".into());
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes glibc's policy for arenas created from now on.
    unsafe {
        // One arena for every thread created from now on: glibc otherwise gives each thread
        // that allocates (the preparation thread, workers) an arena of its own, whose free
        // pages it keeps, so resident memory would wander with the order of the IR switches
        // and say nothing about what the plugin still holds.
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let mut report = SoakReport {
        start: Resources::sample(),
        ..SoakReport::default()
    };
    let wall_start = Instant::now();
    let mut host = Host::new(options)?;
    let warmup_seconds = options
        .warmup_seconds
        .clamp(0.0, options.audio_seconds / 4.0);
    let total_frames = (options.audio_seconds * f64::from(options.rate)) as u64;
    let warmup_frames = (warmup_seconds * f64::from(options.rate)) as u64;
    let mut warm_done = false;
    let mut next_progress = wall_start + PROGRESS_INTERVAL;

    while host.frames < total_frames {
        if !warm_done && host.frames >= warmup_frames {
            host.checkpoint(&mut report, guard)?;
            report.warm = Resources::sample();
            warm_done = true;
        }
        host.automate(&mut report);
        let num_frames = host.next_block_size(total_frames - host.frames);
        host.block(num_frames, &mut report, guard);
        if options.progress && Instant::now() >= next_progress {
            next_progress += PROGRESS_INTERVAL;
            eprintln!(
                "soak: {:.0} of {:.0} s of audio after {:.0} s",
                host.frames as f64 / f64::from(options.rate),
                options.audio_seconds,
                wall_start.elapsed().as_secs_f64()
            );
        }
    }
    host.checkpoint(&mut report, guard)?;
    report.end = Resources::sample();
    report.health = host.health();
    report.audio_s = host.frames as f64 / f64::from(options.rate);

    host.plugin.deactivate();
    drop(host);
    report.after_drop = Resources::sample();
    report.wall_s = wall_start.elapsed().as_secs_f64();
    Ok(report)
}

/// The parameters the soak moves, as the wrappers reach them.
struct ParamHandles {
    mix: ParamPtr,
    gain: ParamPtr,
    ir: ParamPtr,
    latency: ParamPtr,
    /// Every parameter, for the smoothers' sample rate.
    all: Vec<ParamPtr>,
}

/// The host: the plugin, its buffers and the random streams.
struct Host {
    plugin: Longtail,
    /// Keeps the `ParamPtr`s valid: they point into this object.
    _params: Arc<dyn Params>,
    handles: ParamHandles,
    context: Context,
    rate: u32,
    max_block: usize,
    /// The host's channel buffers (stereo), input in place, as nice-plug passes them.
    channels: [Vec<f32>; 2],
    signal: Signal,
    rng: Rng,
    /// Frames processed (or slept through) so far.
    frames: u64,
    next_switch_frame: u64,
    next_automation_frame: u64,
    ir_idx: usize,
    latency_mode: LatencyMode,
    /// Whether the last `process()` call returned a status that lets the host sleep.
    may_sleep: bool,
}

impl Host {
    fn new(options: &SoakOptions) -> Result<Self, String> {
        let mut plugin = Longtail::default();
        let params = plugin.params();
        let find = |id: &str| {
            params
                .param_map()
                .into_iter()
                .find(|(param_id, _, _)| param_id == id)
                .map(|(_, ptr, _)| ptr)
                .ok_or_else(|| format!("the plugin has no parameter '{id}'"))
        };
        let handles = ParamHandles {
            mix: find("mix")?,
            gain: find("gain")?,
            ir: find("ir")?,
            latency: find("latency")?,
            all: params.param_map().into_iter().map(|(_, p, _)| p).collect(),
        };
        let rate = options.rate;
        let mut context = Context::new(rate);
        let buffer_config = BufferConfig {
            sample_rate: rate as f32,
            min_buffer_size: None,
            max_buffer_size: options.max_block as u32,
            process_mode: ProcessMode::Realtime,
        };
        let layout = Longtail::AUDIO_IO_LAYOUTS[0];
        if !plugin.activate(&layout, &buffer_config, &mut context) {
            return Err(format!(
                "the plugin refused to activate at {rate} Hz, {} frames",
                options.max_block
            ));
        }
        for param in &handles.all {
            // SAFETY: the pointers point into `params`, which `Host` keeps alive.
            unsafe { param._internal_update_smoother(rate as f32, true) };
        }
        plugin.reset();
        // SAFETY: as above.
        let ir_idx = unsafe { handles.ir.unmodulated_plain_value() } as usize;
        let mut rng = Rng::new(options.seed);
        let signal = Signal::new(rng.next_u64(), rate);
        let mut host = Self {
            plugin,
            _params: params,
            handles,
            context,
            rate,
            max_block: options.max_block,
            channels: [vec![0.0; options.max_block], vec![0.0; options.max_block]],
            signal,
            rng,
            frames: 0,
            next_switch_frame: 0,
            next_automation_frame: 0,
            ir_idx,
            latency_mode: LatencyMode::Zero,
            may_sleep: false,
        };
        host.next_switch_frame = host.frames_after(SWAP_INTERVAL_S);
        Ok(host)
    }

    /// A random time within `interval` (seconds of audio) from now, as a frame count.
    fn frames_after(&mut self, interval: (f64, f64)) -> u64 {
        let seconds = interval.0 + (interval.1 - interval.0) * self.rng.next_f64();
        self.frames + (seconds * f64::from(self.rate)) as u64
    }

    /// Sets a parameter from the "host", as a wrapper does between blocks.
    fn set_param(&self, param: ParamPtr, normalized: f32) {
        // SAFETY: the pointers point into `_params`, which lives as long as `self`.
        unsafe {
            param._internal_set_normalized_value(normalized);
            param._internal_update_smoother(self.rate as f32, false);
        }
    }

    fn set_enum(&self, param: ParamPtr, index: usize) {
        // SAFETY: as in `set_param`.
        let normalized = unsafe { param.preview_normalized(index as f32) };
        self.set_param(param, normalized);
    }

    fn set_engine_params(&self, ir: BuiltinIr, latency_mode: LatencyMode) {
        let ir_idx = BuiltinIr::ALL.iter().position(|&i| i == ir).unwrap_or(0);
        self.set_enum(self.handles.ir, ir_idx);
        self.set_enum(
            self.handles.latency,
            usize::from(latency_mode == LatencyMode::LowCpu),
        );
    }

    /// Moves mix and gain when their time has come, and switches the IR when its time has come.
    fn automate(&mut self, report: &mut SoakReport) {
        if self.frames >= self.next_automation_frame {
            let (mix, gain) = (self.rng.next_f64() as f32, self.rng.next_f64() as f32);
            self.set_param(self.handles.mix, mix);
            self.set_param(self.handles.gain, gain);
            report.automation_steps += 1;
            self.next_automation_frame = self.frames_after(AUTOMATION_INTERVAL_S);
        }
        if self.frames >= self.next_switch_frame {
            report.switches += 1;
            self.ir_idx = (self.ir_idx + 1) % BuiltinIr::ALL.len();
            if report.switches.is_multiple_of(7) {
                self.latency_mode = match self.latency_mode {
                    LatencyMode::Zero => LatencyMode::LowCpu,
                    LatencyMode::LowCpu => LatencyMode::Zero,
                };
            }
            self.set_engine_params(BuiltinIr::ALL[self.ir_idx], self.latency_mode);
            self.next_switch_frame = self.frames_after(SWAP_INTERVAL_S);
        }
    }

    fn next_block_size(&mut self, frames_left: u64) -> usize {
        if self.rng.next_u64().is_multiple_of(EMPTY_BLOCK_ODDS) {
            return 0;
        }
        self.rng
            .range(1, self.max_block)
            .min(frames_left.try_into().unwrap_or(usize::MAX))
    }

    /// One host call of `num_frames` frames: fill the input, call `process()` (or sleep), check
    /// the output.
    fn block(&mut self, num_frames: usize, report: &mut SoakReport, guard: fn(&mut dyn FnMut())) {
        report.blocks += 1;
        if num_frames == 0 {
            report.empty_blocks += 1;
        }
        let [left, right] = &mut self.channels;
        let (left, right) = (&mut left[..num_frames], &mut right[..num_frames]);
        self.signal.fill(left, right);
        if num_frames > 0 && self.rng.next_u64().is_multiple_of(NON_FINITE_INPUT_ODDS) {
            let poison = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][self.rng.range(0, 2)];
            left[self.rng.range(0, num_frames - 1)] = poison;
            report.non_finite_inputs += 1;
        }
        let silent = left.iter().chain(right.iter()).all(|&s| s == 0.0);
        self.frames += num_frames as u64;
        if self.may_sleep && silent {
            // A CLAP host may stop calling a plugin that said it can sleep while its input is
            // quiet; the track's output is silence meanwhile.
            report.slept_blocks += 1;
            return;
        }

        let mut buffer = Buffer::default();
        // SAFETY: both slices live until `buffer` is dropped at the end of this function, and
        // they have `num_frames` samples each.
        unsafe {
            buffer.set_slices(num_frames, |slices| {
                slices.clear();
                slices.push(left);
                slices.push(right);
            });
        }
        let mut aux = AuxiliaryBuffers {
            inputs: &mut [],
            outputs: &mut [],
        };
        let (plugin, context) = (&mut self.plugin, &mut self.context);
        let mut status = ProcessStatus::Normal;
        let started = Instant::now();
        guard(&mut || status = plugin.process(&mut buffer, &mut aux, context));
        let elapsed = started.elapsed().as_secs_f64();
        drop(buffer);
        self.may_sleep = status == ProcessStatus::Normal;

        report.max_block_us = report.max_block_us.max(elapsed * 1e6);
        if elapsed > num_frames as f64 / f64::from(self.rate) && num_frames > 0 {
            report.late_blocks += 1;
        }
        for &sample in self.channels.iter().flat_map(|c| &c[..num_frames]) {
            if sample.is_finite() {
                report.peak_output = report.peak_output.max(sample.abs());
            } else {
                report.non_finite_outputs += 1;
            }
        }
    }

    fn health(&self) -> Health {
        self.plugin
            .processor()
            .map(|processor| processor.health())
            .unwrap_or_default()
    }

    /// Brings the plugin to the checkpoint state ([`CHECKPOINT_IR`], zero latency, the engine
    /// that played before dropped) while audio keeps flowing, so resources can be compared.
    fn checkpoint(
        &mut self,
        report: &mut SoakReport,
        guard: fn(&mut dyn FnMut()),
    ) -> Result<(), String> {
        let ir_len = CHECKPOINT_IR.generate(self.rate).len();
        self.set_engine_params(CHECKPOINT_IR, LatencyMode::Zero);
        let started = Instant::now();
        loop {
            let arrived = self.plugin.processor().is_some_and(|processor| {
                let engine = processor.engine();
                engine.plan().ir_len == ir_len
                    && engine.config().latency_mode == LatencyMode::Zero
                    && !processor.is_swapping()
            });
            if arrived {
                break;
            }
            if started.elapsed() > CHECKPOINT_TIMEOUT {
                return Err(format!(
                    "the checkpoint engine was not swapped in within {} s",
                    CHECKPOINT_TIMEOUT.as_secs()
                ));
            }
            let num_frames = self.max_block;
            self.block(num_frames, report, guard);
            // Leave the machine to the preparation thread between blocks.
            std::thread::sleep(Duration::from_millis(1));
        }
        // The outgoing engine leaves the processor on the next calls and the preparation
        // thread drops it within a few of its polls.
        for _ in 0..4 {
            let num_frames = self.max_block;
            self.block(num_frames, report, guard);
            std::thread::sleep(crate::preparer::POLL_INTERVAL * 4);
        }
        // The switch schedule goes on from the checkpoint's state.
        self.ir_idx = BuiltinIr::ALL
            .iter()
            .position(|&ir| ir == CHECKPOINT_IR)
            .unwrap_or(0);
        self.latency_mode = LatencyMode::Zero;
        Ok(())
    }
}

/// The process and activate context of the soak's host: no events, no transport, latency
/// changes recorded.
struct Context {
    transport: Transport,
    /// Latency the plugin reported last, in samples.
    latency_samples: Cell<u32>,
}

impl Context {
    fn new(rate: u32) -> Self {
        Self {
            transport: Transport::new(rate as f32),
            latency_samples: Cell::new(0),
        }
    }
}

impl ProcessContext<Longtail> for Context {
    fn plugin_api(&self) -> PluginApi {
        // The soak sleeps the plugin as a CLAP host would.
        PluginApi::Clap
    }

    fn execute_background(&self, _task: ()) {}

    fn execute_gui(&self, _task: ()) {}

    fn transport(&self) -> &Transport {
        &self.transport
    }

    fn next_event(&mut self) -> Option<PluginNoteEvent<Longtail>> {
        None
    }

    fn try_send_event(
        &mut self,
        event: PluginNoteEvent<Longtail>,
    ) -> Result<(), (PluginNoteEvent<Longtail>, SendEventError)> {
        Err((event, SendEventError::NoOutputBuffer))
    }

    fn set_latency_samples(&self, samples: u32) {
        self.latency_samples.set(samples);
    }

    fn request_restart(&self) {}

    fn set_current_voice_capacity(&self, _capacity: u32) {}
}

impl ActivateContext<Longtail> for Context {
    fn plugin_api(&self) -> PluginApi {
        // The soak sleeps the plugin as a CLAP host would.
        PluginApi::Clap
    }

    fn execute(&self, _task: ()) {}

    fn set_latency_samples(&self, samples: u32) {
        self.latency_samples.set(samples);
    }

    fn set_current_voice_capacity(&self, _capacity: u32) {}
}

/// The soak's input: segments of noise, tones, clicks and silence at random levels.
struct Signal {
    rng: Rng,
    /// Sample rate, in Hz.
    rate: f64,
    kind: SignalKind,
    /// Samples left in the current segment.
    remaining: u64,
    /// Peak level of the current segment, linear.
    level: f32,
    /// Tone: phase in radians and its increment per sample.
    phase: f64,
    phase_step: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignalKind {
    Noise,
    Tone,
    Clicks,
    Silence,
}

impl Signal {
    fn new(seed: u64, rate: u32) -> Self {
        Self {
            rng: Rng::new(seed),
            rate: f64::from(rate),
            kind: SignalKind::Silence,
            remaining: 0,
            level: 0.0,
            phase: 0.0,
            phase_step: 0.0,
        }
    }

    fn next_segment(&mut self) {
        self.kind = [
            SignalKind::Noise,
            SignalKind::Tone,
            SignalKind::Clicks,
            SignalKind::Silence,
        ][self.rng.range(0, 3)];
        // 50 ms to 4 s, levels from -60 to 0 dBFS.
        self.remaining = ((0.05 + 3.95 * self.rng.next_f64()) * self.rate) as u64;
        self.level = 10f32.powf(-3.0 * self.rng.next_f64() as f32);
        let frequency_hz = 20.0 * 1000f64.powf(self.rng.next_f64());
        self.phase_step = std::f64::consts::TAU * frequency_hz / self.rate;
    }

    fn fill(&mut self, left: &mut [f32], right: &mut [f32]) {
        for (l, r) in left.iter_mut().zip(right.iter_mut()) {
            if self.remaining == 0 {
                self.next_segment();
            }
            self.remaining -= 1;
            (*l, *r) = match self.kind {
                SignalKind::Noise => (
                    self.level * self.rng.bipolar(),
                    self.level * self.rng.bipolar(),
                ),
                SignalKind::Tone => {
                    self.phase = (self.phase + self.phase_step) % std::f64::consts::TAU;
                    let sample = self.level * self.phase.sin() as f32;
                    (sample, -sample)
                }
                SignalKind::Clicks => {
                    let click = self.rng.next_u64().is_multiple_of(4800);
                    let sample = if click { self.level } else { 0.0 };
                    (sample, sample)
                }
                SignalKind::Silence => (0.0, 0.0),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_read_this_process() {
        let resources = Resources::sample();
        assert!(resources.rss_kb > 0 && resources.fds >= 3 && resources.threads >= 1);
    }

    #[test]
    fn failures_name_each_broken_limit() {
        let healthy = Resources {
            rss_kb: 50_000,
            fds: 5,
            threads: 4,
        };
        let mut report = SoakReport {
            start: healthy,
            warm: healthy,
            end: healthy,
            after_drop: healthy,
            ..SoakReport::default()
        };
        assert!(report.failures().is_empty());
        report.end.rss_kb += MAX_RSS_GROWTH_KB - 1;
        assert!(report.failures().is_empty());
        report.end.rss_kb += 1;
        report.after_drop.threads += 1;
        report.non_finite_outputs = 1;
        let failures = report.failures();
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(report.to_json().ends_with("\"passed\":false}"));
    }
}
