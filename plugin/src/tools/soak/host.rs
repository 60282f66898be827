//! The soak's host: the plugin with its parameters, process and activate contexts and channel
//! buffers, driven block by block as the CLAP and VST3 wrappers drive it, with the random
//! schedule of block sizes, automation and IR or latency switches, and the checkpoints that
//! bring it to a comparable state.
//!
//! Uses the library (the plugin, its processor, the built-in IRs, the preparation thread's poll
//! interval), the soak's [`Signal`] and its [`SoakReport`], which it fills.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nice_plug::params::internals::ParamPtr;
use nice_plug::prelude::*;

use super::signal::Signal;
use super::{SoakOptions, SoakReport};
use crate::Longtail;
use crate::audio::processor::Health;
use crate::engine::LatencyMode;
use crate::engine::plan::OFFLOAD_LATENCIES;
use crate::ir::builtin::BuiltinIr;
use crate::layouts::Clap;
use crate::params::LatencyModeParam;
use crate::rng::Rng;
use crate::tools::host_context::HostContext;

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
pub(super) struct Host {
    pub(super) plugin: Longtail,
    /// Keeps the `ParamPtr`s valid: they point into this object.
    _params: Arc<dyn Params>,
    handles: ParamHandles,
    context: HostContext,
    rate: u32,
    max_block: usize,
    /// The host's channel buffers (stereo), input in place, as nice-plug passes them.
    channels: [Vec<f32>; 2],
    signal: Signal,
    rng: Rng,
    /// Frames processed (or slept through) so far.
    pub(super) frames: u64,
    next_switch_frame: u64,
    next_automation_frame: u64,
    ir_idx: usize,
    latency_mode: LatencyMode,
    /// Whether the last `process()` call returned a status that lets the host sleep.
    may_sleep: bool,
}

impl Host {
    pub(super) fn new(options: &SoakOptions) -> Result<Self, String> {
        let plugin = Longtail::default();
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
        // SAFETY: the pointers point into `params`, which `Host` keeps alive.
        let ir_idx = unsafe { handles.ir.unmodulated_plain_value() } as usize;
        let mut rng = Rng::new(options.seed);
        let signal = Signal::new(rng.next_u64(), rate);
        let mut host = Self {
            plugin,
            _params: params,
            handles,
            // The soak sleeps the plugin as a CLAP host would.
            context: HostContext::new(PluginApi::Clap, rate),
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
        host.activate()?;
        host.next_switch_frame = host.frames_after(SWAP_INTERVAL_S);
        Ok(host)
    }

    /// Activates the plugin as the wrappers do: `activate()`, every parameter's smoother at the
    /// rate, then `reset()`.
    fn activate(&mut self) -> Result<(), String> {
        let layout = Longtail::<Clap>::AUDIO_IO_LAYOUTS[0];
        let buffer_config = BufferConfig {
            sample_rate: self.rate as f32,
            min_buffer_size: None,
            max_buffer_size: self.max_block as u32,
            process_mode: ProcessMode::Realtime,
        };
        if !self
            .plugin
            .activate(&layout, &buffer_config, &mut self.context)
        {
            return Err(format!(
                "the plugin refused to activate at {} Hz, {} frames",
                self.rate, self.max_block
            ));
        }
        for param in &self.handles.all {
            // SAFETY: the pointers point into `_params`, which `Host` keeps alive.
            unsafe { param._internal_update_smoother(self.rate as f32, true) };
        }
        self.plugin.reset();
        Ok(())
    }

    /// Restarts the plugin if it asked for it in its last call, as a CLAP host does between
    /// two calls (`deactivate()`, then [`Self::activate`]): the plugin reports a latency change
    /// that way.
    fn restart_if_asked(&mut self, report: &mut SoakReport) {
        if !self.context.restart_requested.take() {
            return;
        }
        self.plugin.deactivate();
        match self.activate() {
            Ok(()) => report.restarts += 1,
            Err(reason) => report.refused_restarts.push(reason),
        }
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
        let latency_idx = LatencyModeParam::ALL
            .iter()
            .position(|&mode| LatencyMode::from(mode) == latency_mode)
            .unwrap_or(0);
        self.set_enum(self.handles.latency, latency_idx);
    }

    /// Moves mix and gain when their time has come, and switches the IR when its time has come.
    pub(super) fn automate(&mut self, report: &mut SoakReport) {
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
                // Zero, low CPU, offload, and round again.
                self.latency_mode = match self.latency_mode {
                    LatencyMode::Zero => LatencyMode::LowCpu,
                    LatencyMode::LowCpu => LatencyMode::Offload(OFFLOAD_LATENCIES[2]),
                    LatencyMode::Offload(_) => LatencyMode::Zero,
                };
            }
            self.set_engine_params(BuiltinIr::ALL[self.ir_idx], self.latency_mode);
            self.next_switch_frame = self.frames_after(SWAP_INTERVAL_S);
        }
    }

    pub(super) fn next_block_size(&mut self, frames_left: u64) -> usize {
        if self.rng.next_u64().is_multiple_of(EMPTY_BLOCK_ODDS) {
            return 0;
        }
        self.rng
            .range(1, self.max_block)
            .min(frames_left.try_into().unwrap_or(usize::MAX))
    }

    /// One host call of `num_frames` frames: fill the input, call `process()` (or sleep), check
    /// the output.
    pub(super) fn block(
        &mut self,
        num_frames: usize,
        report: &mut SoakReport,
        guard: fn(&mut dyn FnMut()),
    ) {
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

        let mut elapsed = 0.0;
        let status = self
            .context
            .process_stereo(&mut self.plugin, (left, right), |call| {
                let mut status = ProcessStatus::Normal;
                let started = Instant::now();
                guard(&mut || status = call());
                elapsed = started.elapsed().as_secs_f64();
                status
            });
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
        self.restart_if_asked(report);
    }

    pub(super) fn health(&self) -> Health {
        self.plugin
            .processor()
            .map(|processor| processor.health())
            .unwrap_or_default()
    }

    /// Brings the plugin to the checkpoint state ([`CHECKPOINT_IR`], zero latency, the engine
    /// that played before dropped) while audio keeps flowing, so resources can be compared.
    pub(super) fn checkpoint(
        &mut self,
        report: &mut SoakReport,
        guard: fn(&mut dyn FnMut()),
    ) -> Result<(), String> {
        let ir_len = CHECKPOINT_IR.generate(self.rate).len();
        self.set_engine_params(CHECKPOINT_IR, LatencyMode::Zero);
        let started = Instant::now();
        // Until the checkpoint engine plays alone, every engine before it has been dropped by
        // the preparation thread, its workers joined (which takes the outgoing engine's
        // crossfade and then some of the thread's polls: a fixed wait was sometimes too short
        // on a loaded machine, and the end sample counted a dying engine's threads and memory),
        // and the thread builds nothing more: after a restart it may still be building what
        // the activation before asked for, an engine of two workers and 4 MB that one run in
        // four counted at the end.
        loop {
            let arrived = self.plugin.processor().is_some_and(|processor| {
                let engine = processor.engine();
                engine.plan().ir_len == ir_len && engine.config().latency_mode == LatencyMode::Zero
            });
            if arrived && self.plugin.engines_settled() {
                break;
            }
            if started.elapsed() > CHECKPOINT_TIMEOUT {
                return Err(format!(
                    "the checkpoint engine was not swapped in and the others dropped within {} s",
                    CHECKPOINT_TIMEOUT.as_secs()
                ));
            }
            let num_frames = self.max_block;
            self.block(num_frames, report, guard);
            // Leave the machine to the preparation thread between blocks.
            std::thread::sleep(Duration::from_millis(1));
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
