//! Longtail: a zero-latency convolution reverb (CLAP, VST3 and a standalone app).
//!
//! This file is the nice-plug glue only: metadata, `activate()`, `reset()`, `process()` and the
//! exports. The signal path is [`Processor`] around [`engine::Engine`]; engines are
//! built on the [`preparer`] thread and swapped in with a crossfade. Activation never fails:
//! where Longtail cannot convolve (a sample rate outside 1 kHz to 768 kHz), it plays the dry
//! signal through [`passthrough::PassThrough`] and the editor says why.
//!
//! Threads: `activate()` and `deactivate()` run on the host's main thread and may allocate;
//! `reset()` and `process()` run on the audio thread and never allocate, lock or log (debug and
//! test builds abort on allocation through nice-plug's `assert_process_allocs`); they wait for
//! the engine's workers only where the host leaves time: offline, or while the host runs ahead
//! of real time, within the bound of [`engine::pace`].
//!
//! # Where things are
//!
//! The plugin, read as one story from the host's call to the engine:
//!
//! - this file: the host's calls (`activate()`, `process()`, state, editor);
//! - [`params`]: the parameters and what the state persists; [`layouts`]: the buses offered;
//! - [`audio`]: what runs on the audio thread around the engine, and what it reports:
//!   [`audio::processor`], the signal path (one [`audio::lane`] per IR, the second blended
//!   in; wet width, [`audio::ducker`], mix, gain, crossfaded engine swaps);
//!   [`audio::passthrough`], the dry path where no engine can run; [`audio::monitor`], the
//!   numbers for the editor (atomics only), and [`audio::meters`], the input and output levels;
//! - `activation`: one activation's state on the audio thread and its exchange of engines with
//!   the preparation thread;
//! - [`preparer`]: the preparation thread that builds engines off the audio thread;
//! - [`engine`]: the convolution engine, by concept: the plan, the FFT levels and the head, the
//!   workers and their GPU side, the runners that place each level on a thread, and the
//!   placement (GPU or CPU, the thermal and load policies) that moves levels while they play;
//! - [`ir`]: impulse responses: decoding files, the built-ins, edits, resampling, the user file
//!   in the project state; [`library`]: the IR files under the user's folders, as headers, and
//!   the settings file (folders, favourites) every instance shares;
//! - [`editor`]: the egui editor, one file per tab;
//! - [`thermal`]: CPU and GPU thermal probes, one file per source, and the thermal policy;
//! - [`guard`]: what keeps a fault from taking the host down: `deactivate()`'s fence through
//!   nice-plug's shared task thread, and host calls that catch a panic and fail soft;
//! - [`logging`]: the one logger, silent unless `LONGTAIL_LOG` is set;
//! - [`render`]: offline renders, shared by the tests and the command line;
//! - [`capture`]: measuring a room: the sine sweep, and the deconvolution of its recording into
//!   an IR (a matrix with several loudspeakers), for `longtail-cli sweep` and `deconvolve`; and
//!   [`capture::live`], the capture the plugin runs itself: `process()` records the inputs
//!   before the signal path and plays the sweep over its output after, and the preparation
//!   thread deconvolves;
//! - [`tools`]: what only `longtail-cli` uses (bench, soak, status, demo), not the plugin;
//! - [`cpu_time`], [`rng`]: clocks and a deterministic generator for the above.
//!
//! The binaries are in `bin/`: the standalone (`longtail`) and `longtail-cli/`.
// Proving that engines holding a GPU hub handle are Send walks wgpu's deep types.
#![recursion_limit = "256"]

mod activation;
pub mod audio;
pub mod capture;
pub mod cpu_time;
pub mod editor;
pub mod engine;
pub mod guard;
pub mod ir;
pub mod layouts;
pub mod library;
pub mod logging;
pub mod params;
pub mod preparer;
pub mod render;
pub mod rng;
pub mod thermal;
pub mod tools;

use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use nice_plug::prelude::*;

use activation::{Active, EngineKey, SlotKeys};
use audio::meters::Meter;
use audio::monitor::{EngineMonitor, LoadMeter};
use audio::passthrough::{self, PassThrough};
use audio::processor::{Controls, DEFAULT_SWAP_FADE_MS, Processor};
use capture::live::{Deck, Desk};
use engine::{Engine, EngineConfig, LatencyMode, MAX_CHANNELS, PlanLimits};
use guard::fence::{FENCE_LIMIT, FenceOutcome, Task, TaskFence};
use guard::unwind;
use ir::edit::EditSettings;
use ir::store::IrFileState;
use layouts::{Clap, Format, SIDECHAIN_CHANNELS, Vst3};
use params::{DuckKeyParam, EDIT_DEBOUNCE_MS, LongtailParams};
use preparer::{IrSource, Preparer, Request, Slot};

/// The commit this build comes from (12 hex digits), or `unknown` when it was built outside a
/// git checkout without `LONGTAIL_COMMIT` set (see `build.rs`).
pub const COMMIT: &str = env!("LONGTAIL_COMMIT");

/// The version and the commit, as `longtail-cli --version`, `status` and the editor show them:
/// `0.1.0 (commit 0123456789ab)`.
pub const VERSION_TEXT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("LONGTAIL_COMMIT"),
    ")"
);

/// The plugin, built for a format ([`layouts::Format`]: its buses): `Longtail<Clap>` (the
/// default) for CLAP and the standalone, `Longtail<Vst3>` for VST3.
pub struct Longtail<F: Format = Clap> {
    params: Arc<LongtailParams>,
    /// What the audio thread tells the editor.
    monitor: Arc<EngineMonitor>,
    /// Everything built for the current activation; `None` before the first `activate()` and
    /// while passing through.
    active: Option<Active>,
    /// The dry path of an activation that cannot convolve (see [`passthrough`]).
    pass_through: Option<PassThrough>,
    /// The preparation thread, started on the first activation.
    preparer: Option<Preparer>,
    /// Counts activations, so engines prepared for an older one are recognised and dropped.
    generation: u64,
    /// This instance's number in the process, for the stagger phase of its big levels.
    instance_idx: u64,
    /// The input and output meters (the audio thread's half), sized in `activate()`.
    meters: [Meter; 2],
    /// Drains this instance's tasks from nice-plug's shared task thread in `deactivate()`
    /// (see [`guard::fence`]); made from the executor nice-plug hands `editor()`.
    fence: Option<Arc<TaskFence>>,
    /// Capturing a room: the audio thread's side, and the desk the editor and the preparation
    /// thread share with it ([`capture::live`]).
    capture: Deck,
    desk: Arc<Desk>,
    format: PhantomData<fn() -> F>,
}

/// Instances created in this process so far.
static NUM_INSTANCES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl<F: Format> Default for Longtail<F> {
    fn default() -> Self {
        // Cheap: no planning, no threads, no IR generation until `activate()`.
        let (desk, capture) = capture::live::link();
        Self {
            params: Arc::new(LongtailParams::default()),
            monitor: Arc::new(EngineMonitor::default()),
            active: None,
            pass_through: None,
            preparer: None,
            generation: 0,
            instance_idx: NUM_INSTANCES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            meters: Default::default(),
            fence: None,
            capture,
            desk,
            format: PhantomData,
        }
    }
}

impl<F: Format> Longtail<F> {
    /// The signal path of the current activation (`None` before the first one and while
    /// passing through), for hosts of our own (`longtail-cli soak`) to read its counters
    /// between `process()` calls.
    pub fn processor(&self) -> Option<&Processor> {
        self.active.as_ref().map(|active| &active.processor)
    }

    /// Whether the engines are at rest: the plugin is active, no engine is being built (not even
    /// one an earlier activation asked for, which the preparation thread builds and then drops),
    /// none is crossfading, and every engine that left the processor has been dropped by the
    /// preparation thread, its workers joined. Tools and tests wait for this before counting
    /// the process's memory and threads.
    pub fn engines_settled(&self) -> bool {
        let Some(active) = &self.active else {
            return false;
        };
        active.a.pending.is_none()
            && active.b.pending.is_none()
            && active.retire_backlog.is_none()
            && !active.processor.is_swapping()
            && !active.processor.has_finished()
            && self.preparer.as_ref().is_none_or(Preparer::idle)
    }

    /// The capture desk: start, follow and cancel a room measurement (the editor's Capture tab,
    /// and test hosts).
    pub fn capture_desk(&self) -> Arc<Desk> {
        Arc::clone(&self.desk)
    }

    /// The user IR file: load one with [`IrFileState::load_paths`] (GUI or main thread), read
    /// its status line. The same object is the `"ir-file"` persisted state.
    pub fn ir_file(&self) -> Arc<IrFileState> {
        Arc::clone(&self.params.ir_file)
    }

    /// The engine the parameters ask for at the host's `tempo` (the last one seen where the
    /// call has none). Reads atomics only: safe on the audio thread.
    fn desired_key(&self, tempo: Option<f64>) -> EngineKey {
        let (source, use_file) = self.params.ir_source_now();
        EngineKey {
            source,
            edits: self
                .params
                .edit_settings(use_file, tempo.or_else(|| self.monitor.host_tempo())),
            latency_mode: self.params.latency_mode.value().into(),
            executor: self.params.backend.value().executor(),
            format: self.params.channel_format.value().into(),
        }
    }

    /// [`Self::desired_key`] for both slots: the second IR's (`None` while it is Off) has the
    /// same edits (with its own file's automatic trim and normalisation) and configuration.
    fn desired_keys(&self, tempo: Option<f64>) -> (EngineKey, Option<EngineKey>) {
        let key = self.desired_key(tempo);
        let key_b = self
            .params
            .ir_b_source_now()
            .map(|(source, use_file)| EngineKey {
                source,
                edits: self
                    .params
                    .edit_settings(use_file, tempo.or_else(|| self.monitor.host_tempo())),
                ..key
            });
        (key, key_b)
    }

    /// Builds the second IR's engine for `key_b` into `processor`, with the first one's
    /// `request` otherwise. Main thread; allocates. Returns whether it plays; where it cannot be
    /// built, slot B's status says why and Blend plays the first IR alone.
    fn build_second(
        &self,
        request: &Request,
        key_b: &EngineKey,
        processor: &mut Processor,
    ) -> bool {
        let request = Request {
            slot: Slot::B,
            source: key_b.source,
            edits: key_b.edits,
            ..*request
        };
        let files = &self.params.ir_file_b;
        match preparer::build(&request, files) {
            Ok(engine) => processor.begin_swap_second(Box::new(engine)).is_none(),
            Err(message) => {
                files.set_status(format!("{message}; Blend plays the first IR alone"));
                false
            }
        }
    }

    /// Makes this activation play the dry signal (see [`passthrough`]) on the bus `activate()`
    /// recorded in the monitor, and tells the editor `reason`. Main thread; drops the previous
    /// activation's engines here.
    fn activate_pass_through(
        &mut self,
        buffer_config: &BufferConfig,
        reason: String,
        context: &mut impl ActivateContext<Self>,
    ) {
        // Answers the preparation thread still owes the dropped activation are recognised as
        // stale by the next one.
        self.generation += 1;
        self.active = None;
        self.pass_through = Some(PassThrough::new(
            self.monitor.num_inputs.load(Relaxed) as usize,
            self.monitor.num_outputs.load(Relaxed) as usize,
            self.params.channel_format.value().into(),
        ));
        context.set_latency_samples(0);
        let monitor = &self.monitor;
        monitor.set_pass_through(Some(format!(
            "{reason}: the dry signal passes through unchanged"
        )));
        // Saturates: the editor shows what the host asked for, within u32.
        monitor
            .sample_rate
            .store(buffer_config.sample_rate.round() as u32, Relaxed);
        monitor
            .max_block_size
            .store(buffer_config.max_buffer_size, Relaxed);
        monitor.publish_engine(0, 0, LatencyMode::Zero, 0, 0);
        monitor.active.store(true, Relaxed);
    }

    /// `activate()`'s work: builds the engine (or the pass-through) for this layout and rate.
    fn activate_engine(
        &mut self,
        audio_io_layout: &AudioIOLayout,
        buffer_config: &BufferConfig,
        context: &mut impl ActivateContext<Self>,
    ) -> bool {
        let num_inputs = audio_io_layout
            .main_input_channels
            .map_or(0, NonZeroU32::get) as usize;
        let num_outputs = audio_io_layout
            .main_output_channels
            .map_or(0, NonZeroU32::get) as usize;
        self.monitor.num_inputs.store(num_inputs as u32, Relaxed);
        self.monitor.num_outputs.store(num_outputs as u32, Relaxed);
        let capture_rate = buffer_config.sample_rate.clamp(0.0, 10_000_000.0).round() as u32;
        let offline = buffer_config.process_mode == ProcessMode::Offline;
        self.capture
            .activate(capture_rate, num_inputs, num_outputs, offline);
        if let Some(setup) = capture::live::autostart::take() {
            // The standalone's `--capture`: measure now, and save the IR once it is analysed.
            self.desk.set_autosave(true);
            if let Err(message) = self
                .desk
                .start(setup, capture_rate, num_inputs, num_outputs)
            {
                nice_error!("Longtail cannot start the capture: {message}");
            }
        }
        // Any rate the host names sizes nothing here: the meters hold 30 sums per channel.
        let meter_rate = buffer_config.sample_rate.clamp(1.0, 10_000_000.0) as u32;
        self.meters = [
            Meter::new(meter_rate, num_inputs),
            Meter::new(meter_rate, num_outputs),
        ];
        let sample_rate = match passthrough::session_rate(buffer_config.sample_rate) {
            Ok(sample_rate) => sample_rate,
            Err(reason) => {
                self.activate_pass_through(buffer_config, reason, context);
                return true;
            }
        };
        let (key, key_b) = self.desired_keys(None);
        let config = EngineConfig {
            max_block_size: buffer_config.max_buffer_size.max(1) as usize,
            num_inputs,
            num_outputs,
            latency_mode: key.latency_mode,
            limits: PlanLimits::default(),
            executor: key.executor,
        };

        // Hosts may activate repeatedly with the same settings; keep what is built then.
        let reusable = self.active.as_ref().is_some_and(|active| {
            active.sample_rate == sample_rate
                && active.config == config
                && active.a.current == Some(key)
                && active.b.current == key_b
                && active.offline == offline
        });
        if !reusable {
            let mut request = Request {
                slot: Slot::A,
                source: key.source,
                edits: key.edits,
                sample_rate,
                config,
                format: key.format,
                generation: self.generation + 1,
                // Real time: stagger this instance's big levels against the others'. Offline:
                // no phase, so bounces are identical whatever the number of instances.
                stagger_idx: (!offline).then_some(self.instance_idx),
            };
            let files = &self.params.ir_file;
            let built = preparer::build(&request, files).or_else(|message| {
                // The file or its edits cannot be prepared (a trim that leaves nothing, say):
                // activation must not fail for that, so play the built-in IR as designed
                // meanwhile. Changing the parameters again rebuilds as usual.
                files.set_status(format!("{message}; playing the built-in IR unedited"));
                request.source = IrSource::Builtin(self.params.ir.value());
                request.edits = EditSettings::NONE;
                preparer::build(&request, files)
            });
            let engine = match built {
                Ok(engine) => {
                    self.monitor.offer_backend(engine.backend_probe());
                    engine
                }
                Err(err) => {
                    let reason = format!("Longtail cannot build its engine: {err}");
                    nice_error!("{reason}");
                    self.activate_pass_through(buffer_config, reason, context);
                    return true;
                }
            };
            let key = EngineKey {
                source: request.source,
                edits: request.edits,
                latency_mode: key.latency_mode,
                executor: key.executor,
                format: key.format,
            };
            let swap_fade_samples = (DEFAULT_SWAP_FADE_MS * 1e-3 * sample_rate as f32) as usize;
            let mut processor = Processor::new(Box::new(engine), swap_fade_samples);
            processor.set_sample_rate(sample_rate);
            // The second IR, built here too, so a bounce that blends is the same every time.
            let key_b = key_b.filter(|key_b| self.build_second(&request, key_b, &mut processor));
            self.generation += 1;
            self.active = Some(Active {
                processor,
                sample_rate,
                config,
                offline,
                a: SlotKeys::playing(Some(key)),
                b: SlotKeys::playing(key_b),
                debounce_samples: (EDIT_DEBOUNCE_MS * 1e-3 * sample_rate as f32) as usize,
                retire_backlog: None,
                mix_buffer: vec![0.0; config.max_block_size],
                width_buffer: vec![0.0; config.max_block_size],
                gain_buffer: vec![0.0; config.max_block_size],
                blend_buffer: vec![0.0; config.max_block_size],
                // About one second of callbacks.
                load_meter: LoadMeter::new(sample_rate / config.max_block_size.max(1) as u32),
                sidechain_fed: false,
            });
        }
        if let Some(active) = &mut self.active {
            // Bounces wait for the workers, so they are deterministic.
            active.processor.set_offline(offline);
        }
        if self.preparer.is_none() {
            let files = [&self.params.ir_file, &self.params.ir_file_b].map(Arc::clone);
            match Preparer::spawn_slots(files, Arc::clone(&self.monitor), Arc::clone(&self.desk)) {
                Ok(preparer) => self.preparer = Some(preparer),
                Err(err) => nice_error!("Longtail cannot start its preparation thread: {err}"),
            }
        }
        self.pass_through = None;
        self.monitor.set_pass_through(None);
        if let Some(active) = &self.active {
            context.set_latency_samples(active.processor.latency_samples() as u32);
            let monitor = &self.monitor;
            monitor.sample_rate.store(sample_rate, Relaxed);
            monitor
                .max_block_size
                .store(config.max_block_size as u32, Relaxed);
            publish_engine(monitor, active.processor.engine());
            monitor.active.store(true, Relaxed);
        }
        true
    }

    /// `reset()`'s work: clears the meters and the signal path. Audio thread.
    fn clear(&mut self) {
        let [input, output] = &mut self.meters;
        input.reset(&self.monitor.input_levels);
        output.reset(&self.monitor.output_levels);
        if let Some(active) = &mut self.active {
            active.processor.reset();
        }
    }

    /// After a panic caught on the audio thread: silence until the next activation, and the
    /// editor says so ([`EngineMonitor::faulted`]). Atomics only.
    fn fault(&self) {
        self.monitor.faulted.store(true, Relaxed);
    }

    /// `process()`'s work. Audio thread.
    fn process_block(
        &mut self,
        buffer: &mut Buffer,
        aux: &mut AuxiliaryBuffers,
        context: &mut impl ProcessContext<Self>,
    ) -> ProcessStatus {
        let num_inputs = (self.monitor.num_inputs.load(Relaxed) as usize).min(buffer.channels());
        self.meters[0].measure(&buffer.as_slice()[..num_inputs], &self.monitor.input_levels);
        let num_frames = buffer.samples();
        // A capture records the inputs here, and plays its sweep over the output at the end.
        self.capture
            .record(&buffer.as_slice()[..num_inputs], num_frames);
        if let Some(pass_through) = &self.pass_through {
            pass_through.process(buffer.as_slice());
            self.capture.play(buffer.as_slice(), num_frames);
            self.meters[1].measure(buffer.as_slice(), &self.monitor.output_levels);
            return ProcessStatus::Normal;
        }
        let callback_start = Instant::now();
        // A synced pre-delay follows the tempo: a change is an IR edit like any other, built
        // once the tempo has held for the preparer's debounce (not during a ramp).
        let tempo = context.transport().tempo;
        self.monitor.set_host_tempo(tempo);
        let desired = self.desired_keys(tempo);
        let generation = self.generation;
        let Some(active) = &mut self.active else {
            return ProcessStatus::Normal;
        };
        active.processor.set_format(desired.0.format);

        // Engine swaps: IR or latency-mode changes are built on the preparation thread and
        // crossfaded in here; replaced engines go back to that thread to be dropped.
        let latency_before = active.processor.latency_samples();
        let engine_before: *const Engine = active.processor.engine();
        if let Some(preparer) = &mut self.preparer {
            let stagger_idx = (!active.offline).then_some(self.instance_idx);
            let num_frames = buffer.samples();
            active.service_preparer(preparer, desired, generation, stagger_idx, num_frames);
        }
        let latency = active.processor.latency_samples();
        if latency != latency_before {
            // CLAP lets the latency change only inside `activate()`: ask for a restart, and
            // `activate()` reports the new engine's latency. (nice-plug would tell the host from
            // the main thread later, which may come after the host has deactivated us.)
            if context.plugin_api() == PluginApi::Clap {
                context.request_restart();
            } else {
                context.set_latency_samples(latency as u32);
            }
        }
        if !std::ptr::eq(engine_before, active.processor.engine()) {
            publish_engine(&self.monitor, active.processor.engine());
        }

        let max_block_size = active.config.max_block_size;
        let sidechain = aux
            .inputs
            .first()
            .map_or(&[][..], |bus| bus.as_slice_immutable());
        let chosen = self.params.duck_key.value() == DuckKeyParam::Sidechain;
        let blending = desired.1.is_some();
        let keyed = active.sidechain_keys(chosen, context.plugin_api(), sidechain);
        let channels = buffer.as_slice();
        let num_channels = channels.len().min(MAX_CHANNELS);
        let mut start = 0;
        while start < num_frames {
            let len = (num_frames - start).min(max_block_size);
            self.params
                .mix
                .smoothed
                .next_block(&mut active.mix_buffer, len);
            self.params
                .output_gain
                .smoothed
                .next_block(&mut active.gain_buffer, len);
            let mut piece: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (slot, channel) in piece.iter_mut().zip(channels.iter_mut()) {
                *slot = &mut channel[start..start + len];
            }
            self.params
                .width
                .smoothed
                .next_block(&mut active.width_buffer, len);
            self.params
                .blend
                .smoothed
                .next_block(&mut active.blend_buffer, len);
            let mut key: [&[f32]; SIDECHAIN_CHANNELS] = [&[]; SIDECHAIN_CHANNELS];
            for (slot, channel) in key.iter_mut().zip(sidechain) {
                *slot = &channel[start..start + len];
            }
            let controls = Controls {
                mix: &active.mix_buffer[..len],
                gain: &active.gain_buffer[..len],
                width: &active.width_buffer[..len],
                duck: self.params.duck_settings(),
                key: keyed.then_some(&key[..sidechain.len().min(SIDECHAIN_CHANNELS)]),
                // Off: the second IR's share is zero, and its engine parks.
                blend: if blending {
                    &active.blend_buffer[..len]
                } else {
                    &[]
                },
            };
            active
                .processor
                .process(&mut piece[..num_channels], controls);
            start += len;
        }

        self.capture.play(channels, num_frames);
        self.meters[1].measure(channels, &self.monitor.output_levels);
        self.monitor
            .set_duck_reduction(active.processor.duck_reduction_db());
        let engine = active.processor.engine();
        self.monitor
            .publish_lates(engine.late_stats(), engine.worker_busy_ns());
        let deadline_ns = num_frames as u64 * 1_000_000_000 / u64::from(active.sample_rate);
        if deadline_ns > 0 {
            let elapsed_ns = callback_start.elapsed().as_nanos() as u64;
            active
                .load_meter
                .record(elapsed_ns, deadline_ns, &self.monitor);
        }

        // Hosts keep calling through the reverb tail after the input stops. Once it has rung
        // out, a CLAP host may put the plugin to sleep until its input is not quiet
        // (`Normal` is `CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`). VST3 hosts read the tail length
        // from the last status instead, so they keep getting it.
        if active.processor.is_quiet() && context.plugin_api() == PluginApi::Clap {
            ProcessStatus::Normal
        } else {
            ProcessStatus::Tail(active.processor.engine().tail_samples() as u32)
        }
    }
}

impl<F: Format> Plugin for Longtail<F> {
    const NAME: &'static str = "Longtail";
    const VENDOR: &'static str = "Longtail developers";
    const URL: &'static str = "";
    const EMAIL: &'static str = "";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = F::AUDIO_IO_LAYOUTS;

    const SAMPLE_ACCURATE_AUTOMATION: bool = true;

    type Editor = editor::Editor;
    type SysExMessage = ();
    type BackgroundTask = Task;

    fn setup_logger() -> Option<bool> {
        // Silent unless LONGTAIL_LOG says where to write (see `logging`); `Some` keeps
        // nice-plug from installing its own logger, which writes to the host's stderr.
        Some(logging::init())
    }

    fn params(&self) -> Arc<dyn Params> {
        self.params.clone()
    }

    fn task_executor(&mut self) -> TaskExecutor<Self> {
        // The plugin's only task is `deactivate()`'s fence.
        Box::new(Task::run)
    }

    fn editor(&mut self, async_executor: AsyncExecutor<Self>) -> Option<Self::Editor> {
        // nice-plug calls this once, as the instance is made, in every wrapper.
        let fence = Arc::new(TaskFence::new(move |task| {
            async_executor.execute_background(task);
        }));
        self.fence = Some(Arc::clone(&fence));
        if editor::HEADLESS.load(Relaxed) {
            return None;
        }
        let (params, monitor) = (Arc::clone(&self.params), Arc::clone(&self.monitor));
        let desk = Arc::clone(&self.desk);
        unwind::catch(|| editor::create(params, monitor, desk, Some(fence))).unwrap_or_else(
            |message| {
                nice_error!("Longtail cannot create its editor: {message}");
                None
            },
        )
    }

    fn activate(
        &mut self,
        audio_io_layout: &AudioIOLayout,
        buffer_config: &BufferConfig,
        context: &mut impl ActivateContext<Self>,
    ) -> bool {
        if context.plugin_api() == PluginApi::Vst3
            && let Some(fence) = &self.fence
        {
            fence.mark_vst3();
        }
        if self.monitor.faulted.swap(false, Relaxed) {
            // A panic left the signal path in an unknown state: build it anew.
            self.active = None;
        }
        let built = unwind::catch(|| self.activate_engine(audio_io_layout, buffer_config, context));
        match built {
            Ok(activated) => activated,
            Err(message) => {
                // A bug of ours: play the dry signal, say why, and keep the host running.
                let reason = format!("Longtail failed while activating ({message})");
                nice_error!("{reason}");
                unwind::catch(|| self.activate_pass_through(buffer_config, reason, context)).is_ok()
            }
        }
    }

    fn reset(&mut self) {
        if unwind::catch_quietly(|| self.clear()).is_none() {
            self.fault();
        }
    }

    fn process(
        &mut self,
        buffer: &mut Buffer,
        aux: &mut AuxiliaryBuffers,
        context: &mut impl ProcessContext<Self>,
    ) -> ProcessStatus {
        if !self.monitor.faulted.load(Relaxed) {
            if let Some(status) = unwind::catch_quietly(|| self.process_block(buffer, aux, context))
            {
                return status;
            }
            self.fault();
        }
        for channel in buffer.as_slice() {
            channel.fill(0.0);
        }
        ProcessStatus::Normal
    }

    fn deactivate(&mut self) {
        self.capture.stop();
        // Buffers stay allocated: a host that reactivates with the same settings reuses them.
        // A VST3 host may release the instance right after this call: first drain this
        // instance's tasks from nice-plug's shared task thread (see `guard::fence`).
        if let Some(fence) = self.fence.as_ref().filter(|fence| fence.is_vst3()) {
            match unwind::catch(|| fence.wait(FENCE_LIMIT)) {
                Ok(FenceOutcome::Drained) => {}
                Ok(outcome) => nice_error!(
                    "Longtail could not drain its tasks before deactivation ({outcome:?}): \
                     nice-plug's task thread is stuck or has ended"
                ),
                Err(message) => nice_error!("Longtail's deactivation failed: {message}"),
            }
        }
    }
}

/// Tells the editor the shape of the engine now playing. Atomics only.
fn publish_engine(monitor: &EngineMonitor, engine: &Engine) {
    monitor.publish_engine(
        engine.plan().ir_len,
        engine.latency_samples(),
        engine.plan().latency_mode,
        engine.num_workers(),
        engine.id(),
    );
}

impl ClapPlugin for Longtail<Clap> {
    const CLAP_ID: &'static str = "audio.longtail.convolver";
    const CLAP_DESCRIPTION: Option<&'static str> =
        Some("Zero-latency convolution reverb with long tails on background workers");
    const CLAP_MANUAL_URL: Option<&'static str> = None;
    const CLAP_SUPPORT_URL: Option<&'static str> = None;
    const CLAP_FEATURES: &'static [ClapFeature] = &[
        ClapFeature::AudioEffect,
        ClapFeature::Reverb,
        ClapFeature::Stereo,
        ClapFeature::Mono,
    ];
}

impl Vst3Plugin for Longtail<Vst3> {
    const VST3_CLASS_ID: [u8; 16] = *b"LongtailConvoRvb";
    const VST3_SUBCATEGORIES: &'static [Vst3SubCategory] =
        &[Vst3SubCategory::Fx, Vst3SubCategory::Reverb];
}

/// The VST3 build of the plugin (no sidechain: see [`layouts`]).
pub type LongtailVst3 = Longtail<Vst3>;

nice_export_clap!(Longtail);
nice_export_vst3!(LongtailVst3);

#[cfg(test)]
mod tests;
