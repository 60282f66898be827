//! End to end through a real CLAP host: `clack-host` loads the built plugin library
//! (`liblongtail.so`, the file the bundler ships as `Longtail.clap`) in-process, as a DAW does,
//! and drives it through the CLAP API only: the factory and its descriptor, the parameters,
//! activation, processing on a separate audio thread with ragged block sizes and
//! sample-accurate automation events, the latency (reported, and measured on the audio),
//! engine swaps while playing, the tail extension and sleep, state save and load (also from the
//! main thread while the audio thread plays), activation cycles at other sample rates and block
//! sizes, activation at any rate a host sets (the dry signal outside 1 kHz to 768 kHz), 0-frame
//! calls, parameter flushes while inactive, many instances created and destroyed without
//! leaving threads or file descriptors behind, and a session that prints nothing to the host's
//! stdout or stderr.
//!
//! The plugin library is the one cargo builds for this test binary, with `assert_process_allocs`:
//! any allocation inside `process()` aborts this test binary (see [`plugin_library`]).
//!
//! The host: [`TestHost`] owns one plugin instance on the test's own thread, which is the CLAP
//! main thread of that instance. Everything CLAP puts on the audio thread (`start_processing`,
//! `process`, `reset`, `stop_processing`, the tail query) runs on a scoped thread that the
//! host's thread-check extension reports as the audio thread. The main-thread callbacks the
//! plugin asks for (`request_callback`) are serviced by [`TestHost::poll`]; restart requests are
//! honoured right after activation by [`TestHost::activate`], and during playback by the test
//! that expects one; host callbacks that the CLAP specification reserves for the main thread
//! are counted when they arrive on another thread, and every test requires that count to stay
//! zero.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use clack_extensions::latency::{HostLatency, HostLatencyImpl, PluginLatency};
use clack_extensions::params::{
    HostParams, HostParamsImplMainThread, HostParamsImplShared, ParamClearFlags, ParamInfoBuffer,
    ParamInfoFlags, ParamRescanFlags, PluginParams,
};
use clack_extensions::render::{PluginRender, RenderMode};
use clack_extensions::state::{HostState, HostStateImpl, PluginState};
use clack_extensions::tail::{PluginTail, TailLength};
use clack_extensions::thread_check::{HostThreadCheck, HostThreadCheckImpl};
use clack_host::events::event_types::ParamValueEvent;
use clack_host::prelude::*;
use longtail::engine::{LatencyMode, PartitionPlan, PlanLimits};
use longtail::ir::Ir;
use longtail::ir::builtin::BuiltinIr;
use longtail::processor::silence_horizon;
use longtail_tests::{MIN_SNR_DB, RNG_SEED, noise, plugin_library, reference_convolution, snr_db};

const PLUGIN_ID: &CStr = c"audio.longtail.convolver";
const SAMPLE_RATE: u32 = 48_000;
/// The host's maximum block size unless a test says otherwise.
const MAX_BLOCK: u32 = 512;
/// Block sizes the host cycles through (each capped by the maximum block size): 1, primes,
/// powers of two, the maximum and one short of it.
const BLOCK_CYCLE: [usize; 10] = [1, 7, 64, 509, 512, 100, 13, 256, 2, 511];
/// Mix and output gain smoothing: 20 ms at 48 kHz.
const SMOOTHING_SAMPLES: usize = 960;
/// Crossfade between engines when the IR changes: 50 ms at 48 kHz.
const SWAP_FADE_SAMPLES: usize = 2400;
/// Default wet share.
const DEFAULT_MIX: f32 = 0.35;
/// How long a test waits for work the plugin does on its own threads before it fails. Not a
/// performance bound: only a guard against waiting forever.
const PATIENCE: Duration = Duration::from_secs(120);

// Parameter names as the plugin shows them, and the CLAP values of the enum entries (nice-plug
// exposes an enum parameter as its index).
const MIX: &str = "Mix";
const GAIN: &str = "Output gain";
const IMPULSE_RESPONSE: &str = "Impulse response";
const LATENCY: &str = "Latency";
const BACKEND: &str = "Backend";
// The IR source and edit parameters (their behaviour is tested in ir_state.rs and the plugin's
// ir_* tests).
const IR_SOURCE: &str = "IR source";
const REVERSE: &str = "Reverse";
const NORMALIZE: &str = "Normalize";
const IR_EDIT_FLOATS: [&str; 9] = [
    "Trim start",
    "Trim end",
    "Auto trim",
    "Pre-delay",
    "Fade in",
    "Fade out",
    "Stretch",
    "Low cut",
    "High cut",
];
const IR_SMALL_ROOM: f64 = 0.0;
const IR_PLATE: f64 = 1.0;
const IR_CATHEDRAL: f64 = 3.0;
const LATENCY_ZERO: f64 = 0.0;
const LATENCY_LOW_CPU: f64 = 1.0;

// ------------------------------------------------------------------------------------------
// The host's side of the CLAP callbacks
// ------------------------------------------------------------------------------------------

thread_local! {
    /// Whether this thread is a CLAP main thread (a test's thread that owns a plugin instance).
    static IS_MAIN_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is the host's audio thread.
    static IS_AUDIO_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn is_main_thread() -> bool {
    IS_MAIN_THREAD.with(Cell::get)
}

/// Thread-safe host state: requests from the plugin, which may arrive from any thread
/// (including the audio thread inside `process()`, so nothing here allocates).
#[derive(Default)]
struct HostShared {
    callback_requested: AtomicBool,
    restart_requested: AtomicBool,
    process_requested: AtomicBool,
    flush_requested: AtomicBool,
    /// Main-thread-only host callbacks that arrived on another thread.
    wrong_thread_calls: AtomicU32,
}

impl SharedHandler<'_> for HostShared {
    fn request_restart(&self) {
        self.restart_requested.store(true, Ordering::SeqCst);
    }

    fn request_process(&self) {
        self.process_requested.store(true, Ordering::SeqCst);
    }

    fn request_callback(&self) {
        self.callback_requested.store(true, Ordering::SeqCst);
    }
}

impl HostThreadCheckImpl for HostShared {
    fn is_main_thread(&self) -> bool {
        is_main_thread()
    }

    fn is_audio_thread(&self) -> bool {
        IS_AUDIO_THREAD.with(Cell::get)
    }
}

impl HostParamsImplShared for HostShared {
    fn request_flush(&self) {
        self.flush_requested.store(true, Ordering::SeqCst);
    }
}

/// Main-thread host state: counts of the notifications the plugin sent.
struct HostMain<'a> {
    shared: &'a HostShared,
    latency_changed: Cell<u32>,
    state_dirty: Cell<u32>,
    param_rescans: Cell<u32>,
    param_clears: Cell<u32>,
}

impl<'a> HostMain<'a> {
    fn new(shared: &'a HostShared) -> Self {
        Self {
            shared,
            latency_changed: Cell::new(0),
            state_dirty: Cell::new(0),
            param_rescans: Cell::new(0),
            param_clears: Cell::new(0),
        }
    }

    fn count(&self, counter: &Cell<u32>) {
        if !is_main_thread() {
            self.shared
                .wrong_thread_calls
                .fetch_add(1, Ordering::SeqCst);
        }
        counter.set(counter.get() + 1);
    }
}

impl<'a> MainThreadHandler<'a> for HostMain<'a> {}

impl HostLatencyImpl for HostMain<'_> {
    fn changed(&self) {
        self.count(&self.latency_changed);
    }
}

impl HostStateImpl for HostMain<'_> {
    fn mark_dirty(&self) {
        self.count(&self.state_dirty);
    }
}

impl HostParamsImplMainThread for HostMain<'_> {
    fn rescan(&self, _flags: ParamRescanFlags) {
        self.count(&self.param_rescans);
    }

    fn clear(&self, _param_id: ClapId, _flags: ParamClearFlags) {
        self.count(&self.param_clears);
    }
}

struct Handlers;

impl HostHandlers for Handlers {
    type Shared<'a> = HostShared;
    type MainThread<'a> = HostMain<'a>;
    type AudioProcessor<'a> = ();

    fn declare_extensions(builder: &mut HostExtensions<Self>, _shared: &Self::Shared<'_>) {
        builder
            .register::<HostLatency>()
            .register::<HostState>()
            .register::<HostParams>()
            .register::<HostThreadCheck>();
    }
}

/// What the plugin told the main thread so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Notifications {
    latency_changed: u32,
    state_dirty: u32,
    param_rescans: u32,
    param_clears: u32,
}

// ------------------------------------------------------------------------------------------
// The host
// ------------------------------------------------------------------------------------------

fn load_entry() -> PluginEntry {
    let path = plugin_library();
    // SAFETY: the library is this workspace's own plugin, built by cargo for this test run.
    // Loading it runs its CLAP entry's `init`, which has no preconditions beyond being called
    // once per load (clack-host takes care of that).
    unsafe { PluginEntry::load(&path) }
        .unwrap_or_else(|err| panic!("cannot load {}: {err}", path.display()))
}

/// One parameter as the plugin describes it.
#[derive(Debug, Clone)]
struct ParamDesc {
    id: ClapId,
    name: String,
    min: f64,
    max: f64,
    default: f64,
    flags: ParamInfoFlags,
}

/// A parameter change sent to the plugin inside a `process()` call: `at` is the sample
/// position from the start of that [`TestHost::process`] run.
#[derive(Debug, Clone, Copy)]
struct Automation {
    at: usize,
    param: ClapId,
    value: f64,
}

/// What one [`TestHost::process`] run returned.
struct Run {
    /// Output per channel, one sample per input sample.
    outputs: [Vec<f32>; 2],
    /// Status returned by each `process()` call.
    statuses: Vec<ProcessStatus>,
    /// Tail length the tail extension reported after each `process()` call.
    tails: Vec<TailLength>,
}

/// A CLAP host with one Longtail instance, stereo in and out.
struct TestHost {
    instance: PluginInstance<Handlers>,
    /// Present while the plugin is active.
    processor: Option<PluginAudioProcessor<Handlers>>,
    params: PluginParams,
    state: PluginState,
    latency: PluginLatency,
    tail: PluginTail,
    /// Maximum block size of the current (or last) activation.
    max_frames: u32,
    /// Sample rate of the current (or last) activation, in Hz (hosts may pass any number).
    sample_rate: f64,
    /// Samples processed so far, passed as `steady_time`.
    steady_time: u64,
    /// Restarts the host made on the plugin's request right after activating.
    restarts: u32,
}

impl TestHost {
    /// Loads the library and instantiates the plugin; the calling thread becomes its main
    /// thread.
    fn new() -> Self {
        IS_MAIN_THREAD.with(|flag| flag.set(true));
        let entry = load_entry();
        let host_info = HostInfo::new(
            "Longtail test host",
            "Longtail developers",
            "https://example.invalid/longtail-test-host",
            "0.1.0",
        )
        .expect("valid host info");
        let instance = PluginInstance::<Handlers>::new(
            |_: &()| HostShared::default(),
            |shared: &HostShared| HostMain::new(shared),
            &entry,
            PLUGIN_ID,
            &host_info,
        )
        .expect("the plugin instantiates");
        let shared = instance.plugin_shared_handle();
        let params = shared
            .get_extension::<PluginParams>()
            .expect("the plugin implements the params extension");
        let state = shared
            .get_extension::<PluginState>()
            .expect("the plugin implements the state extension");
        let latency = shared
            .get_extension::<PluginLatency>()
            .expect("the plugin implements the latency extension");
        let tail = shared
            .get_extension::<PluginTail>()
            .expect("the plugin implements the tail extension");
        let render = shared
            .get_extension::<PluginRender>()
            .expect("the plugin implements the render extension");
        let mut host = Self {
            instance,
            processor: None,
            params,
            state,
            latency,
            tail,
            max_frames: MAX_BLOCK,
            sample_rate: f64::from(SAMPLE_RATE),
            steady_time: 0,
            restarts: 0,
        };
        // Offline render mode: the plugin's tail workers are waited for, so these tests (which
        // process far faster than real time) compare outputs sample by sample without lates.
        // The real-time path is covered by tests/realtime_no_alloc.rs.
        render
            .set(&host.instance.plugin_handle(), RenderMode::Offline)
            .expect("the plugin accepts offline rendering");
        host.poll();
        host
    }

    /// Services the main-thread callbacks the plugin asked for.
    fn poll(&mut self) {
        while self
            .instance
            .access_shared_handler(|shared| shared.callback_requested.swap(false, Ordering::SeqCst))
        {
            self.instance.call_on_main_thread_callback();
        }
    }

    /// Whether the plugin asked for a restart since the last call.
    fn take_restart_request(&self) -> bool {
        self.instance
            .access_shared_handler(|shared| shared.restart_requested.swap(false, Ordering::SeqCst))
    }

    fn notifications(&self) -> Notifications {
        self.instance.access_handler(|main| Notifications {
            latency_changed: main.latency_changed.get(),
            state_dirty: main.state_dirty.get(),
            param_rescans: main.param_rescans.get(),
            param_clears: main.param_clears.get(),
        })
    }

    /// Fails the test if the plugin called a main-thread host callback from another thread.
    fn assert_threading_respected(&self) {
        let wrong = self
            .instance
            .access_shared_handler(|shared| shared.wrong_thread_calls.load(Ordering::SeqCst));
        assert_eq!(
            wrong, 0,
            "the plugin called main-thread host callbacks from another thread"
        );
    }

    // --- parameters ---------------------------------------------------------------------

    fn param_descs(&mut self) -> Vec<ParamDesc> {
        let handle = self.instance.plugin_handle();
        let count = self.params.count(&handle);
        (0..count)
            .map(|index| {
                let mut buffer = ParamInfoBuffer::new();
                let info = self
                    .params
                    .get_info(&handle, index, &mut buffer)
                    .unwrap_or_else(|| panic!("no info for parameter {index}"));
                ParamDesc {
                    id: info.id,
                    name: String::from_utf8_lossy(info.name).into_owned(),
                    min: info.min_value,
                    max: info.max_value,
                    default: info.default_value,
                    flags: info.flags,
                }
            })
            .collect()
    }

    /// The CLAP id of the parameter called `name`.
    fn param(&mut self, name: &str) -> ClapId {
        self.param_descs()
            .into_iter()
            .find(|desc| desc.name == name)
            .unwrap_or_else(|| panic!("the plugin has no parameter called {name:?}"))
            .id
    }

    fn value(&mut self, param: ClapId) -> f64 {
        let handle = self.instance.plugin_handle();
        self.params
            .get_value(&handle, param)
            .expect("the plugin reports the parameter's value")
    }

    fn text_to_value(&mut self, param: ClapId, text: &CStr) -> f64 {
        let handle = self.instance.plugin_handle();
        self.params
            .text_to_value(&handle, param, text)
            .unwrap_or_else(|| panic!("the plugin cannot parse {text:?}"))
    }

    fn value_to_text(&mut self, param: ClapId, value: f64) -> String {
        let handle = self.instance.plugin_handle();
        let mut buffer = [0u8; 256];
        let text = self
            .params
            .value_to_text(&handle, param, value, &mut buffer)
            .expect("the plugin formats the value");
        String::from_utf8_lossy(text).into_owned()
    }

    /// Sets parameters through `clap_plugin_params::flush` while the plugin is inactive.
    fn flush(&mut self, changes: &[(ClapId, f64)]) {
        let events: Vec<ParamValueEvent> = changes
            .iter()
            .map(|&(param, value)| ParamValueEvent::new(0, param, Pckn::match_all(), value))
            .collect();
        let input = InputEvents::from_buffer(&events);
        let mut handle = self
            .instance
            .inactive_plugin_handle()
            .expect("flush from the main thread needs an inactive plugin");
        self.params
            .flush(&mut handle, &input, &mut OutputEvents::void());
        self.poll();
    }

    // --- state --------------------------------------------------------------------------

    fn save_state(&mut self) -> Vec<u8> {
        let mut bytes = Vec::new();
        let handle = self.instance.plugin_handle();
        self.state
            .save(&handle, &mut bytes)
            .expect("the plugin saves its state");
        bytes
    }

    fn load_state(&mut self, bytes: &[u8]) {
        let mut reader = bytes;
        let handle = self.instance.plugin_handle();
        self.state
            .load(&handle, &mut reader)
            .expect("the plugin loads the state");
        self.poll();
    }

    // --- activation ---------------------------------------------------------------------

    /// Activates, then honours the restart requests the plugin makes right away, as a host
    /// does. (nice-plug applies the latency that `activate()` sets only after it marked the
    /// plugin active, so a new latency arrives as a restart request, and the host hears
    /// `latency.changed()` during the next activation.)
    fn activate(&mut self, max_frames: u32) {
        let sample_rate = self.sample_rate;
        self.activate_at_hz(sample_rate, max_frames);
    }

    /// [`activate`](Self::activate) at another sample rate, which later activations keep.
    fn activate_at(&mut self, sample_rate: u32, max_frames: u32) {
        self.activate_at_hz(f64::from(sample_rate), max_frames);
    }

    /// [`activate_at`](Self::activate_at) with any number as the sample rate.
    fn activate_at_hz(&mut self, sample_rate: f64, max_frames: u32) {
        self.sample_rate = sample_rate;
        self.activate_once(max_frames);
        let mut restarts = 0;
        while self.take_restart_request() {
            restarts += 1;
            assert!(restarts <= 2, "the plugin keeps asking for restarts");
            self.deactivate();
            self.activate_once(max_frames);
        }
        self.restarts += restarts;
    }

    fn activate_once(&mut self, max_frames: u32) {
        assert!(self.processor.is_none(), "already active");
        let configuration = PluginAudioConfiguration {
            sample_rate: self.sample_rate,
            min_frames_count: 1,
            max_frames_count: max_frames,
        };
        let processor = self
            .instance
            .activate(|_, _| (), configuration)
            .expect("the plugin activates");
        self.processor = Some(processor.into());
        self.max_frames = max_frames;
        self.poll();
    }

    fn deactivate(&mut self) {
        let Some(mut processor) = self.processor.take() else {
            return;
        };
        on_audio_thread(|| {
            processor.ensure_processing_stopped();
        });
        self.instance.deactivate(processor.into_stopped());
        self.poll();
    }

    /// Deactivates and reactivates with the same configuration, as a host does on a restart
    /// request.
    fn restart(&mut self) {
        let max_frames = self.max_frames;
        self.deactivate();
        self.activate(max_frames);
    }

    /// Latency the plugin reports, in samples.
    fn latency(&mut self) -> u32 {
        let handle = self.instance.plugin_handle();
        self.latency.get(&handle)
    }

    // --- audio thread -------------------------------------------------------------------

    /// `clap_plugin::reset`, on the audio thread.
    fn reset(&mut self) {
        let processor = self.processor.as_mut().expect("the plugin is active");
        on_audio_thread(|| processor.reset());
    }

    /// Processes `input` (stereo) on the audio thread in blocks of `sizes` (0-frame calls
    /// included), sending `automation` (sorted by position) as parameter events at their sample
    /// offsets.
    fn process(&mut self, input: [&[f32]; 2], sizes: &[usize], automation: &[Automation]) -> Run {
        let blocks = self.blocks(input, sizes, automation);
        let processor = self.processor.as_mut().expect("the plugin is active");
        let run = on_audio_thread(move || blocks.run(processor));
        self.poll();
        run
    }

    /// Like [`process`](Self::process), while the main thread saves the plugin's state again
    /// and again, as a host does when it autosaves during playback. Returns the run and every
    /// state saved (at least `min_saves`; saving goes on until the audio thread is done).
    fn process_while_saving(
        &mut self,
        input: [&[f32]; 2],
        sizes: &[usize],
        automation: &[Automation],
        min_saves: usize,
    ) -> (Run, Vec<Vec<u8>>) {
        let blocks = self.blocks(input, sizes, automation);
        let processor = self.processor.as_mut().expect("the plugin is active");
        let (instance, state) = (&mut self.instance, self.state);
        let done = AtomicBool::new(false);
        let mut saves = Vec::new();
        let run = std::thread::scope(|scope| {
            let audio = std::thread::Builder::new()
                .name("clap-audio".into())
                .spawn_scoped(scope, || {
                    IS_AUDIO_THREAD.with(|flag| flag.set(true));
                    let run = blocks.run(processor);
                    done.store(true, Ordering::SeqCst);
                    run
                })
                .expect("the audio thread starts");
            while saves.len() < min_saves || !done.load(Ordering::SeqCst) {
                let mut bytes = Vec::new();
                state
                    .save(&instance.plugin_handle(), &mut bytes)
                    .expect("the plugin saves its state while processing");
                saves.push(bytes);
                std::thread::sleep(Duration::from_micros(200));
            }
            audio
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        self.poll();
        (run, saves)
    }

    /// The blocks of one run, checked, with the host's clock advanced past them.
    fn blocks<'a>(
        &mut self,
        input: [&'a [f32]; 2],
        sizes: &'a [usize],
        automation: &'a [Automation],
    ) -> Blocks<'a> {
        let total: usize = sizes.iter().sum();
        assert!(input.iter().all(|channel| channel.len() >= total));
        assert!(
            automation.windows(2).all(|pair| pair[0].at <= pair[1].at),
            "automation must be sorted"
        );
        assert!(automation.iter().all(|event| event.at < total));
        let max_frames = self.max_frames as usize;
        assert!(sizes.iter().all(|&size| size <= max_frames));
        let steady_time = self.steady_time;
        self.steady_time += total as u64;
        Blocks {
            input,
            sizes,
            automation,
            steady_time,
            max_frames,
            tail: self.tail,
        }
    }
}

/// One run of blocks for the audio thread.
struct Blocks<'a> {
    input: [&'a [f32]; 2],
    sizes: &'a [usize],
    automation: &'a [Automation],
    /// `steady_time` of the first block.
    steady_time: u64,
    max_frames: usize,
    tail: PluginTail,
}

impl Blocks<'_> {
    /// Calls `process()` once per block, on the calling thread (the host's audio thread).
    fn run(self, processor: &mut PluginAudioProcessor<Handlers>) -> Run {
        let Self {
            input,
            sizes,
            automation,
            steady_time,
            max_frames,
            tail,
        } = self;
        let total: usize = sizes.iter().sum();
        let started = processor
            .ensure_processing_started()
            .expect("the plugin starts processing");
        let mut input_buffers = [vec![0.0f32; max_frames], vec![0.0f32; max_frames]];
        let mut output_buffers = [vec![0.0f32; max_frames], vec![0.0f32; max_frames]];
        let mut input_ports = AudioPorts::with_capacity(2, 1);
        let mut output_ports = AudioPorts::with_capacity(2, 1);
        let mut events = EventBuffer::with_capacity(automation.len().max(1));
        let mut run = Run {
            outputs: [Vec::with_capacity(total), Vec::with_capacity(total)],
            statuses: Vec::with_capacity(sizes.len()),
            tails: Vec::with_capacity(sizes.len()),
        };
        let mut next_event = 0;
        let mut start = 0;
        for &len in sizes {
            for (buffer, channel) in input_buffers.iter_mut().zip(input) {
                buffer[..len].copy_from_slice(&channel[start..start + len]);
            }
            // Poison the outputs: the plugin must write every sample.
            output_buffers
                .iter_mut()
                .for_each(|buffer| buffer.fill(f32::NAN));
            events.clear();
            while let Some(event) = automation.get(next_event)
                && event.at < start + len
            {
                events.push(&ParamValueEvent::new(
                    (event.at - start) as u32,
                    event.param,
                    Pckn::match_all(),
                    event.value,
                ));
                next_event += 1;
            }
            let status = {
                let [in_left, in_right] = &mut input_buffers;
                let [out_left, out_right] = &mut output_buffers;
                let audio_inputs = input_ports.with_input_buffers([AudioPortBuffer {
                    latency: 0,
                    channels: AudioPortBufferType::f32_input_only([
                        InputChannel::variable(&mut in_left[..len]),
                        InputChannel::variable(&mut in_right[..len]),
                    ]),
                }]);
                let mut audio_outputs = output_ports.with_output_buffers([AudioPortBuffer {
                    latency: 0,
                    channels: AudioPortBufferType::f32_output_only([
                        &mut out_left[..len],
                        &mut out_right[..len],
                    ]),
                }]);
                started
                    .process(
                        &audio_inputs,
                        &mut audio_outputs,
                        &events.as_input(),
                        &mut OutputEvents::void(),
                        Some(steady_time + start as u64),
                        None,
                    )
                    .expect("process() succeeds")
            };
            run.statuses.push(status);
            run.tails.push(tail.get(&started.plugin_handle()));
            for (output, buffer) in run.outputs.iter_mut().zip(&output_buffers) {
                output.extend_from_slice(&buffer[..len]);
            }
            start += len;
        }
        run
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        // After a failed assertion the instance is leaked rather than torn down mid-panic.
        if !std::thread::panicking() {
            self.deactivate();
        }
    }
}

/// Runs `f` on a fresh thread that the host reports as its audio thread, and waits for it.
fn on_audio_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("clap-audio".into())
            .spawn_scoped(scope, || {
                IS_AUDIO_THREAD.with(|flag| flag.set(true));
                f()
            })
            .expect("the audio thread starts")
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

// ------------------------------------------------------------------------------------------
// Signals and references
// ------------------------------------------------------------------------------------------

/// Block sizes covering `total` samples, cycling through [`BLOCK_CYCLE`] capped at `max`.
fn block_sizes(total: usize, max: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut covered = 0;
    for &size in BLOCK_CYCLE.iter().cycle() {
        if covered == total {
            break;
        }
        let size = size.min(max).min(total - covered);
        sizes.push(size);
        covered += size;
    }
    sizes
}

/// Start positions of the blocks of `sizes`.
fn block_starts(sizes: &[usize]) -> Vec<usize> {
    sizes
        .iter()
        .scan(0, |start, &size| {
            let this = *start;
            *start += size;
            Some(this)
        })
        .collect()
}

/// Seeded stereo noise, different on each side.
fn stereo_noise(num_samples: usize, seed: u64) -> [Vec<f32>; 2] {
    [
        noise(num_samples, 0.5, seed),
        noise(num_samples, 0.5, seed + 1),
    ]
}

/// Ideal output of one channel for a constant mix at unity gain (zero latency):
/// `mix * (x * ir) + (1 - mix) * x`, as long as `x`.
fn mixed_reference(x: &[f32], ir: &[f32], mix: f32) -> Vec<f64> {
    let wet = reference_convolution(x, ir);
    let dry_share = f64::from(1.0 - mix);
    x.iter()
        .zip(&wet)
        .map(|(&dry, &wet)| f64::from(mix) * wet + dry_share * f64::from(dry))
        .collect()
}

/// Expected latency in "Low CPU" mode: one quantum, the host's maximum block size when it is a
/// power of two in `16..=256`, 64 otherwise.
/// The low-CPU latency is one quantum of the plan.
fn low_cpu_latency(max_frames: u32) -> u32 {
    longtail::engine::plan::quantum_for_block_size(max_frames as usize) as u32
}

fn tail_of(ir: BuiltinIr, latency: u32) -> TailLength {
    tail_at(ir, SAMPLE_RATE, latency)
}

fn tail_at(ir: BuiltinIr, sample_rate: u32, latency: u32) -> TailLength {
    TailLength::Finite((ir.generate(sample_rate).len() - 1) as u32 + latency)
}

/// Input silence after which the plugin's output is exactly zero, for `ir` at this maximum
/// block size and latency mode.
fn horizon_of(ir: &Ir, max_frames: u32, latency_mode: LatencyMode) -> usize {
    let plan = PartitionPlan::new(
        ir.len(),
        max_frames as usize,
        latency_mode,
        PlanLimits::default(),
    );
    silence_horizon(&plan)
}

/// Checks the status of every block of a run that starts without history (after activation or
/// `reset()`), for an engine planned for `ir` with the host's maximum block size and the
/// latency mode: while the input sounds or its reverb rings the plugin asks to keep processing
/// (`CLAP_PROCESS_CONTINUE`, with its tail), and exactly once the input has been silent for
/// the engine's silence horizon (the tail, plus the FFT levels' round-off; see
/// [`silence_horizon`]) it says it may sleep (`CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`, nice-plug's
/// `Normal`, whose tail reads 0) and its output is exactly zero. Returns, per block, whether it
/// was sleep-able.
fn assert_sleeps_exactly_when_rung_out(
    run: &Run,
    input: [&[f32]; 2],
    sizes: &[usize],
    ir: &Ir,
    max_frames: u32,
    latency_mode: LatencyMode,
) -> Vec<bool> {
    let plan = PartitionPlan::new(
        ir.len(),
        max_frames as usize,
        latency_mode,
        PlanLimits::default(),
    );
    let tail = TailLength::Finite((ir.len() - 1 + plan.latency_samples()) as u32);
    let horizon = horizon_of(ir, max_frames, latency_mode) as u64;
    assert!(horizon >= ir.len() as u64 - 1);
    // Input samples since the last non-zero one; no history counts as silence forever.
    let mut silent = u64::MAX;
    let mut start = 0;
    let mut quiet_blocks = Vec::with_capacity(sizes.len());
    for (block_idx, &len) in sizes.iter().enumerate() {
        for (&left, &right) in input[0][start..start + len].iter().zip(&input[1][start..]) {
            silent = if left != 0.0 || right != 0.0 {
                0
            } else {
                silent.saturating_add(1)
            };
        }
        start += len;
        let quiet = silent >= horizon;
        let (status, reported) = (run.statuses[block_idx], run.tails[block_idx]);
        if quiet {
            assert_eq!(
                (status, reported),
                (ProcessStatus::ContinueIfNotQuiet, TailLength::Finite(0)),
                "block {block_idx} ending at {start}: rung out, but no sleep offered"
            );
            for output in &run.outputs {
                assert!(
                    output[start - len..start].iter().all(|&s| s == 0.0),
                    "block {block_idx} ending at {start}: sleep-able but not silent"
                );
            }
        } else {
            assert_eq!(
                (status, reported),
                (ProcessStatus::Continue, tail),
                "block {block_idx} ending at {start}: still ringing"
            );
        }
        quiet_blocks.push(quiet);
    }
    quiet_blocks
}

fn assert_finite(run: &Run) {
    for (channel_idx, output) in run.outputs.iter().enumerate() {
        if let Some(idx) = output.iter().position(|s| !s.is_finite()) {
            panic!("channel {channel_idx} sample {idx} is {}", output[idx]);
        }
    }
}

/// While the reverb rings, the plugin must not ask to be put to sleep. (nice-plug reports a
/// tail as `CLAP_PROCESS_CONTINUE`; `CLAP_PROCESS_TAIL` would do as well.)
fn assert_keeps_processing(run: &Run) {
    for (block_idx, status) in run.statuses.iter().enumerate() {
        assert!(
            matches!(status, ProcessStatus::Continue | ProcessStatus::Tail),
            "block {block_idx}: status {status:?}"
        );
    }
}

fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|&s| f64::from(s).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

fn peak(x: &[f32]) -> f32 {
    x.iter().fold(0.0, |m, &s| m.max(s.abs()))
}

/// A stereo impulse (both sides, or the left only) at `at`, `len` samples long.
fn impulse(len: usize, at: usize, both_sides: bool) -> [Vec<f32>; 2] {
    let mut left = vec![0.0f32; len];
    left[at] = 1.0;
    let mut right = vec![0.0f32; len];
    if both_sides {
        right[at] = 1.0;
    }
    [left, right]
}

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------

/// The library under test is the one built with `assert_process_allocs`, so every test below
/// aborts on an allocation inside `process()`: it carries nice-assert-no-alloc's allocator.
#[test]
fn library_under_test_aborts_on_process_allocations() {
    let path = plugin_library();
    let bytes = std::fs::read(&path).expect("the plugin library is readable");
    let needle = b"AllocDisabler";
    assert!(
        bytes.windows(needle.len()).any(|window| window == needle),
        "{} was built without `assert_process_allocs` (a stale library from another build?); \
         `cargo test -p longtail-tests` rebuilds it",
        path.display()
    );
}

#[test]
fn factory_offers_exactly_longtail() {
    let entry = load_entry();
    let factory = entry
        .get_plugin_factory()
        .expect("the entry offers a plugin factory");
    assert_eq!(factory.plugin_count(), 1);
    let descriptors: Vec<_> = factory.plugin_descriptors().collect();
    assert_eq!(descriptors.len(), 1);
    let descriptor = descriptors[0];
    assert_eq!(descriptor.id(), Some(PLUGIN_ID));
    assert_eq!(descriptor.name(), Some(c"Longtail"));

    let vendor = descriptor
        .vendor()
        .expect("a vendor")
        .to_str()
        .expect("UTF-8 vendor");
    assert!(!vendor.trim().is_empty(), "empty vendor");
    let lower = vendor.to_lowercase();
    for placeholder in [
        "your name",
        "template",
        "todo",
        "example",
        "moist",
        "nih-plug",
        "nice-plug",
    ] {
        assert!(
            !lower.contains(placeholder),
            "vendor {vendor:?} looks like a template placeholder"
        );
    }
    assert_eq!(
        descriptor
            .version()
            .map(|v| v.to_str().expect("UTF-8 version")),
        Some(env!("CARGO_PKG_VERSION"))
    );
    let features: Vec<&CStr> = descriptor.features().collect();
    for feature in [c"audio-effect", c"reverb"] {
        assert!(
            features.contains(&feature),
            "features {features:?} lack {feature:?}"
        );
    }
}

#[test]
fn parameters_are_listed_with_their_defaults() {
    let mut host = TestHost::new();
    let descs = host.param_descs();
    let mut names: Vec<&str> = descs.iter().map(|desc| desc.name.as_str()).collect();
    names.sort_unstable();
    let mut expected = [BACKEND, IMPULSE_RESPONSE, LATENCY, MIX, GAIN]
        .into_iter()
        .chain(IR_EDIT_FLOATS)
        .chain([IR_SOURCE, REVERSE, NORMALIZE])
        .collect::<Vec<_>>();
    expected.sort_unstable();
    assert_eq!(names, expected, "parameters: {descs:#?}");
    let mut ids: Vec<u32> = descs.iter().map(|desc| desc.id.get()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), descs.len(), "parameter ids are not unique");

    for desc in &descs {
        assert!(
            desc.flags.contains(ParamInfoFlags::IS_AUTOMATABLE),
            "{} is not automatable",
            desc.name
        );
        assert_eq!(desc.min, 0.0, "{}", desc.name);
        assert_eq!(
            host.value(desc.id),
            desc.default,
            "{} starts at its default",
            desc.name
        );
        // Enum parameters are stepped, with one step per entry.
        let (stepped, max) = match desc.name.as_str() {
            IMPULSE_RESPONSE => (true, 4.0),
            // Auto, CPU, GPU.
            BACKEND => (true, 2.0),
            LATENCY | IR_SOURCE | REVERSE | NORMALIZE => (true, 1.0),
            _ => (false, 1.0),
        };
        assert_eq!(
            desc.flags.contains(ParamInfoFlags::IS_STEPPED),
            stepped,
            "{}",
            desc.name
        );
        assert_eq!(desc.max, max, "{}", desc.name);
    }

    let by_name = |name: &str| descs.iter().find(|desc| desc.name == name).unwrap();
    assert!((by_name(MIX).default - f64::from(DEFAULT_MIX)).abs() < 1e-6);
    assert_eq!(
        by_name(IMPULSE_RESPONSE).default,
        2.0,
        "Hall is the default IR"
    );
    assert_eq!(by_name(LATENCY).default, LATENCY_ZERO);
    assert_eq!(by_name(BACKEND).default, 0.0, "Auto is the default backend");

    let gain = by_name(GAIN);
    assert_eq!(host.value_to_text(gain.id, gain.default), "0.0 dB");
    let minus_six = host.text_to_value(gain.id, c"-6 dB");
    assert!(minus_six > 0.0 && minus_six < gain.default);
    assert_eq!(host.value_to_text(gain.id, minus_six), "-6.0 dB");
    let mix = by_name(MIX);
    assert_eq!(host.value_to_text(mix.id, mix.default), "35%");
    let ir = by_name(IMPULSE_RESPONSE);
    assert_eq!(host.value_to_text(ir.id, IR_PLATE), "Plate");
    assert_eq!(host.value_to_text(ir.id, 4.0), "Wide hall (true stereo)");
    let latency = by_name(LATENCY);
    assert_eq!(host.value_to_text(latency.id, LATENCY_LOW_CPU), "Low CPU");
    host.assert_threading_respected();
}

/// Default settings (Hall, mix 35 %, zero latency), seconds of noise then silence, in blocks
/// of changing sizes: the output is the exact mix of the dry signal and the convolution, and
/// the reverb keeps ringing after the input stops.
#[test]
fn processes_changing_block_sizes_with_default_settings() {
    let mut host = TestHost::new();
    host.activate(MAX_BLOCK);
    assert_eq!(host.latency(), 0);

    let sound = 2 * SAMPLE_RATE as usize;
    let total = sound + SAMPLE_RATE as usize;
    let mut input = stereo_noise(total, RNG_SEED);
    input.iter_mut().for_each(|x| x[sound..].fill(0.0));
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    assert!(sizes.contains(&1) && sizes.contains(&(MAX_BLOCK as usize)));
    let run = host.process([&input[0], &input[1]], &sizes, &[]);

    assert_finite(&run);
    assert_keeps_processing(&run);
    let hall_tail = tail_of(BuiltinIr::Hall, 0);
    assert!(
        run.tails.iter().all(|&tail| tail == hall_tail),
        "tails {:?}",
        &run.tails[..4]
    );
    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    for (channel, (output, x)) in run.outputs.iter().zip(&input).enumerate() {
        assert!(rms(output) > 0.05, "channel {channel} is (nearly) silent");
        let ringing = rms(&output[sound + SWAP_FADE_SAMPLES..]);
        assert!(
            ringing > 1e-3,
            "channel {channel}: no tail after the input stops ({ringing})"
        );
        let expected = mixed_reference(x, &hall.channels[channel], DEFAULT_MIX);
        let snr = snr_db(output, &expected);
        assert!(snr >= MIN_SNR_DB, "channel {channel}: SNR {snr:.1} dB");
    }
    host.assert_threading_respected();
}

/// Parameter events inside blocks take effect at their sample offset: mix to 0 (the output
/// becomes the dry input), output gain to -6 dB, then mix to 1 at unity gain (the output
/// becomes the convolution alone).
#[test]
fn automation_is_sample_accurate() {
    let mut host = TestHost::new();
    let mix = host.param(MIX);
    let gain = host.param(GAIN);
    let minus_six_db = host.text_to_value(gain, c"-6 dB");
    let unity = host.text_to_value(gain, c"0 dB");
    host.activate(MAX_BLOCK);

    let total = 2 * SAMPLE_RATE as usize;
    let input = stereo_noise(total, RNG_SEED + 10);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let starts = block_starts(&sizes);
    // Offset 100 inside the first long block after 0.25 s.
    let block = (0..sizes.len())
        .find(|&idx| starts[idx] >= SAMPLE_RATE as usize / 4 && sizes[idx] > 100)
        .expect("a long block");
    let mix_to_dry = starts[block] + 100;
    let gain_down = mix_to_dry + 4_001;
    let wet_only = gain_down + 4_003;

    // The reference run without automation, then the same input after a reset.
    let plain = host.process([&input[0], &input[1]], &sizes, &[]);
    host.reset();
    let automation = [
        Automation {
            at: mix_to_dry,
            param: mix,
            value: 0.0,
        },
        Automation {
            at: gain_down,
            param: gain,
            value: minus_six_db,
        },
        Automation {
            at: wet_only,
            param: gain,
            value: unity,
        },
        Automation {
            at: wet_only,
            param: mix,
            value: 1.0,
        },
    ];
    let automated = host.process([&input[0], &input[1]], &sizes, &automation);
    assert_finite(&automated);

    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    let minus_six_gain = 10f64.powf(-6.0 / 20.0);
    for (channel, x) in input.iter().enumerate() {
        let (before, after) = (&plain.outputs[channel], &automated.outputs[channel]);
        // Nothing changes before the first event (and reset() restores the initial state)...
        let first_difference = before.iter().zip(after).position(|(a, b)| a != b);
        // ...and the mix starts moving exactly at the event's sample.
        assert_eq!(first_difference, Some(mix_to_dry), "channel {channel}");

        // Fully dry once the mix has been smoothed to 0.
        for idx in mix_to_dry + SMOOTHING_SAMPLES..gain_down {
            let error = (after[idx] - x[idx]).abs();
            assert!(
                error <= 1e-6,
                "channel {channel} sample {idx}: dry error {error}"
            );
        }
        // Dry at -6 dB once the gain has been smoothed.
        for idx in gain_down + SMOOTHING_SAMPLES..wet_only {
            let error = (f64::from(after[idx]) - minus_six_gain * f64::from(x[idx])).abs();
            assert!(
                error <= 1e-5,
                "channel {channel} sample {idx}: gain error {error}"
            );
        }
        // Wet only, at unity gain: the convolution of the whole input (the engine kept running).
        let from = wet_only + SMOOTHING_SAMPLES;
        let wet = reference_convolution(x, &hall.channels[channel]);
        let snr = snr_db(&after[from..], &wet[from..total]);
        assert!(snr >= MIN_SNR_DB, "channel {channel}: wet SNR {snr:.1} dB");
    }
    assert_eq!(host.value(mix), 1.0);
    host.assert_threading_respected();
}

/// Measures the latency of the dry path: with mix 0 the output is the input delayed by exactly
/// the latency, bit for bit. Returns the measured delay (first non-zero output sample minus the
/// impulse position), checked on both channels.
fn measure_dry_latency(host: &mut TestHost, latency: usize) -> usize {
    let at = 1_000;
    let len = at + latency + 3_000;
    let input = impulse(len, at, true);
    let sizes = block_sizes(len, host.max_frames as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let mut measured = Vec::new();
    for channel in 0..2 {
        let output = &run.outputs[channel];
        let first = output
            .iter()
            .position(|&s| s != 0.0)
            .expect("the impulse comes out");
        measured.push(first - at);
        let mut expected = vec![0.0f32; len];
        expected[at + latency] = 1.0;
        assert_eq!(
            output, &expected,
            "channel {channel}: dry path is not a pure delay"
        );
    }
    assert_eq!(measured[0], measured[1]);
    measured[0]
}

/// "Low CPU" set before activation: the reported latency is one quantum for several host
/// block sizes, the host is told, and the audio is delayed by exactly that much. "Zero
/// latency" reports and measures 0.
#[test]
fn latency_is_reported_and_measured() {
    for (max_frames, mode) in [
        (MAX_BLOCK, LATENCY_ZERO),
        (MAX_BLOCK, LATENCY_LOW_CPU),
        (256, LATENCY_LOW_CPU),
        (100, LATENCY_LOW_CPU),
        (16, LATENCY_LOW_CPU),
    ] {
        let expected = if mode == LATENCY_LOW_CPU {
            low_cpu_latency(max_frames)
        } else {
            0
        };
        let mut host = TestHost::new();
        let (latency, mix) = (host.param(LATENCY), host.param(MIX));
        host.flush(&[(latency, mode), (mix, 0.0)]);
        assert_eq!(host.value(latency), mode);
        host.activate(max_frames);
        assert_eq!(host.latency(), expected, "reported, max block {max_frames}");
        // The host hears of a latency other than the initial 0 (after the restart that
        // nice-plug asks for, see `TestHost::activate`), and of nothing otherwise.
        if expected == 0 {
            assert_eq!(
                host.restarts, 0,
                "restart requested without a latency change"
            );
        }
        let told = host.notifications().latency_changed;
        assert_eq!(
            told,
            u32::from(expected != 0),
            "latency notifications, max block {max_frames}"
        );
        let measured = measure_dry_latency(&mut host, expected as usize);
        assert_eq!(
            measured, expected as usize,
            "measured, max block {max_frames}"
        );
        host.assert_threading_respected();
    }
    assert_eq!(
        low_cpu_latency(MAX_BLOCK),
        MAX_BLOCK,
        "a power-of-two block is the quantum"
    );
    assert_eq!(low_cpu_latency(100), 64);
}

/// Switching to "Low CPU" while playing: the plugin builds the new engine in the background,
/// asks the host for a restart, and after it reports and has one quantum of latency.
#[test]
fn latency_change_while_playing_goes_through_a_restart() {
    let mut host = TestHost::new();
    let (latency, mix) = (host.param(LATENCY), host.param(MIX));
    host.flush(&[(mix, 0.0)]);
    host.activate(MAX_BLOCK);
    assert_eq!(host.latency(), 0);
    assert_eq!(measure_dry_latency(&mut host, 0), 0);

    let chunk = 4_096;
    let silence = vec![0.0f32; chunk];
    let sizes = block_sizes(chunk, MAX_BLOCK as usize);
    let switch = [Automation {
        at: 777,
        param: latency,
        value: LATENCY_LOW_CPU,
    }];
    let run = host.process([&silence, &silence], &sizes, &switch);
    assert_finite(&run);
    let started = Instant::now();
    while !host.take_restart_request() {
        assert!(
            started.elapsed() < PATIENCE,
            "the plugin never asked for a restart after the latency change"
        );
        std::thread::sleep(Duration::from_millis(2));
        let run = host.process([&silence, &silence], &sizes, &[]);
        assert_finite(&run);
    }
    assert_eq!(
        host.notifications().latency_changed,
        0,
        "told before the restart"
    );
    host.restart();
    assert_eq!(
        host.notifications().latency_changed,
        1,
        "not told after the restart"
    );
    let expected = low_cpu_latency(MAX_BLOCK);
    assert_eq!(host.latency(), expected);
    assert_eq!(
        measure_dry_latency(&mut host, expected as usize),
        expected as usize
    );
    host.assert_threading_respected();
}

/// The wet path, fully wet: an impulse on the left input comes out as the Hall IR's L -> L
/// channel, shifted by the latency, in both latency modes; nothing crosses to the right.
#[test]
fn wet_impulse_response_is_the_ir_shifted_by_the_latency() {
    let hall = BuiltinIr::Hall.generate(SAMPLE_RATE);
    let ir = &hall.channels[0];
    let ir_peak = peak(ir);
    let ir_onset = ir.iter().position(|s| s.abs() > 1e-3 * ir_peak).unwrap();
    for (mode, latency_mode) in [
        (LATENCY_ZERO, LatencyMode::Zero),
        (LATENCY_LOW_CPU, LatencyMode::LowCpu),
    ] {
        let mut host = TestHost::new();
        let (latency_param, mix) = (host.param(LATENCY), host.param(MIX));
        host.flush(&[(latency_param, mode), (mix, 1.0)]);
        host.activate(MAX_BLOCK);
        let latency = host.latency() as usize;
        let expected = if mode == LATENCY_LOW_CPU {
            low_cpu_latency(MAX_BLOCK)
        } else {
            0
        };
        assert_eq!(latency, expected as usize);

        // Long enough for the output to be exactly silent at the end.
        let at = 1_234;
        let len = at + horizon_of(&hall, MAX_BLOCK, latency_mode) + 1_000;
        let input = impulse(len, at, false);
        let sizes = block_sizes(len, MAX_BLOCK as usize);
        let run = host.process([&input[0], &input[1]], &sizes, &[]);
        assert_finite(&run);
        let quiet = assert_sleeps_exactly_when_rung_out(
            &run,
            [&input[0], &input[1]],
            &sizes,
            &hall,
            MAX_BLOCK,
            latency_mode,
        );
        assert!(quiet.first() == Some(&true) && quiet.last() == Some(&true));

        let [left, right] = &run.outputs;
        let onset = left
            .iter()
            .position(|s| s.abs() > 1e-3 * ir_peak)
            .expect("the reverb comes out");
        assert_eq!(
            onset,
            at + latency + ir_onset,
            "wet onset, latency {latency}"
        );
        let mut expected = vec![0.0f32; len];
        expected[at + latency..at + latency + ir.len()].copy_from_slice(ir);
        let error = longtail_tests::max_abs_diff(left, &expected);
        assert!(
            error <= 1e-5 * ir_peak,
            "latency {latency}: max error {error} against an IR peak of {ir_peak}"
        );
        let crosstalk = peak(right);
        assert!(
            crosstalk <= 1e-5 * ir_peak,
            "latency {latency}: right channel {crosstalk}"
        );
        host.assert_threading_respected();
    }
}

/// Changing the IR while playing: the new engine is built in the background and crossfaded in
/// without allocating on the audio thread; the tail extension follows, and once the new IR has
/// filled, the output is exactly the mix with the new IR.
#[test]
fn ir_change_while_playing_swaps_engines() {
    let room = BuiltinIr::SmallRoom.generate(SAMPLE_RATE);
    let (room_tail, hall_tail) = (
        tail_of(BuiltinIr::SmallRoom, 0),
        tail_of(BuiltinIr::Hall, 0),
    );
    let mut host = TestHost::new();
    let ir_param = host.param(IMPULSE_RESPONSE);
    host.activate(MAX_BLOCK);

    let chunk = SAMPLE_RATE as usize / 10;
    let max_len = 60 * SAMPLE_RATE as usize;
    let input = stereo_noise(max_len, RNG_SEED + 20);
    let mut outputs = [Vec::new(), Vec::new()];
    let mut swap_start = None;
    let mut pos = 0;
    let started = Instant::now();
    loop {
        if let Some(swap_start) = swap_start
            && pos >= swap_start + room.len() + SWAP_FADE_SAMPLES + chunk
        {
            break;
        }
        assert!(
            started.elapsed() < PATIENCE && pos + chunk <= max_len,
            "the new IR never took over"
        );
        let sizes = block_sizes(chunk, MAX_BLOCK as usize);
        let automation = if pos == 0 {
            vec![Automation {
                at: 1_000,
                param: ir_param,
                value: IR_SMALL_ROOM,
            }]
        } else {
            Vec::new()
        };
        let run = host.process(
            [&input[0][pos..pos + chunk], &input[1][pos..pos + chunk]],
            &sizes,
            &automation,
        );
        assert_finite(&run);
        assert_keeps_processing(&run);
        for ((&tail, block_start), size) in run.tails.iter().zip(block_starts(&sizes)).zip(&sizes) {
            match swap_start {
                None if tail == hall_tail => {}
                None if tail == room_tail => swap_start = Some(pos + block_start),
                Some(_) if tail == room_tail => {}
                _ => panic!("unexpected tail {tail:?} in a block of {size}"),
            }
        }
        for (output, run_output) in outputs.iter_mut().zip(&run.outputs) {
            output.extend_from_slice(run_output);
        }
        pos += chunk;
        std::thread::sleep(Duration::from_millis(2));
    }
    let swap_start = swap_start.unwrap();
    assert!(swap_start >= 1_000, "swapped before the parameter changed");
    assert_eq!(host.value(ir_param), IR_SMALL_ROOM);

    let settled = swap_start + room.len() + SWAP_FADE_SAMPLES;
    for channel in 0..2 {
        let x = &input[channel][..pos];
        let expected = mixed_reference(x, &room.channels[channel], DEFAULT_MIX);
        let snr = snr_db(&outputs[channel][settled..], &expected[settled..]);
        assert!(
            snr >= MIN_SNR_DB,
            "channel {channel}: SNR {snr:.1} dB after the swap"
        );
        // The crossfade itself stays at a sensible level (no dropout, no burst).
        let fade = &outputs[channel][swap_start..swap_start + SWAP_FADE_SAMPLES];
        let level = rms(fade) / rms(&x[swap_start..swap_start + SWAP_FADE_SAMPLES]);
        assert!(
            (0.3..3.0).contains(&level),
            "channel {channel}: crossfade level {level}"
        );
    }
    host.assert_threading_respected();
}

/// Save the state of an instance with non-default settings, load it into a fresh one, and both
/// produce bit-identical output from the same input and block sizes; an instance with the
/// defaults does not.
#[test]
fn state_round_trip_reproduces_the_output_exactly() {
    let mut original = TestHost::new();
    let (mix, gain, ir) = (
        original.param(MIX),
        original.param(GAIN),
        original.param(IMPULSE_RESPONSE),
    );
    let minus_three_db = original.text_to_value(gain, c"-3 dB");
    original.flush(&[(mix, 0.5), (ir, IR_PLATE), (gain, minus_three_db)]);
    original.activate(MAX_BLOCK);
    let warm_up = stereo_noise(SAMPLE_RATE as usize / 2, RNG_SEED + 30);
    let sizes = block_sizes(warm_up[0].len(), MAX_BLOCK as usize);
    let run = original.process([&warm_up[0], &warm_up[1]], &sizes, &[]);
    assert_finite(&run);

    // Saved on the main thread while active, as hosts do when saving a project.
    let state = original.save_state();
    assert!(!state.is_empty());
    let descs = original.param_descs();
    let values: Vec<f64> = descs.iter().map(|desc| original.value(desc.id)).collect();
    assert_eq!(original.value(mix), 0.5);
    assert_eq!(original.value(ir), IR_PLATE);

    let mut restored = TestHost::new();
    let rescans_before = restored.notifications().param_rescans;
    restored.load_state(&state);
    for (desc, &value) in descs.iter().zip(&values) {
        assert_eq!(
            restored.value(desc.id),
            value,
            "{} after loading",
            desc.name
        );
    }
    assert!(
        restored.notifications().param_rescans > rescans_before,
        "the plugin did not ask the host to rescan the parameter values after loading state"
    );
    restored.activate(MAX_BLOCK);
    // The original starts over with the same configuration.
    original.restart();

    let input = stereo_noise(3 * SAMPLE_RATE as usize / 2, RNG_SEED + 31);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let a = original.process([&input[0], &input[1]], &sizes, &[]);
    let b = restored.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&a);
    assert!(rms(&a.outputs[0]) > 0.05);
    for channel in 0..2 {
        let mismatch = a.outputs[channel]
            .iter()
            .zip(&b.outputs[channel])
            .position(|(x, y)| x.to_bits() != y.to_bits());
        assert_eq!(mismatch, None, "channel {channel}: first differing sample");
    }
    assert_eq!(a.tails, b.tails);
    assert_eq!(a.tails[0], tail_of(BuiltinIr::Plate, 0));

    // The state carried something: the defaults sound different.
    let mut default = TestHost::new();
    default.activate(MAX_BLOCK);
    let c = default.process([&input[0], &input[1]], &sizes, &[]);
    assert_ne!(c.outputs[0], b.outputs[0]);

    for host in [&original, &restored, &default] {
        host.assert_threading_respected();
    }
}

// ------------------------------------------------------------------------------------------
// Host behaviour: activation cycles, empty calls, sleep, concurrent saves, many instances
// ------------------------------------------------------------------------------------------

/// Parameters flushed before the first activation (and between activations) hold; then
/// activate, play and deactivate at changing sample rates and maximum block sizes, once
/// without playing at all. Every activation plays the IR generated at its own rate, exactly,
/// and the plugin offers to sleep once it has rung out.
#[test]
fn reactivates_at_other_sample_rates_and_block_sizes() {
    let mut host = TestHost::new();
    let (mix, ir, gain) = (
        host.param(MIX),
        host.param(IMPULSE_RESPONSE),
        host.param(GAIN),
    );
    let unity = host.text_to_value(gain, c"0 dB");
    // Flushed on an instance that was never activated.
    host.flush(&[(mix, 1.0), (ir, IR_SMALL_ROOM), (gain, unity)]);
    assert_eq!((host.value(mix), host.value(ir)), (1.0, IR_SMALL_ROOM));

    for (sample_rate, max_frames, play) in [
        (44_100, 512, true),
        (96_000, 64, true),
        (48_000, 4_096, false),
        (44_100, 1, true),
        (96_000, 1_024, true),
        (48_000, 17, true),
    ] {
        host.activate_at(sample_rate, max_frames);
        assert_eq!(host.latency(), 0, "{sample_rate} Hz, {max_frames} frames");
        if play {
            let room = BuiltinIr::SmallRoom.generate(sample_rate);
            let at = 333;
            let len = at + horizon_of(&room, max_frames, LatencyMode::Zero) + 2_000;
            let input = impulse(len, at, false);
            let sizes = block_sizes(len, max_frames as usize);
            let run = host.process([&input[0], &input[1]], &sizes, &[]);
            assert_finite(&run);
            let inputs = [&input[0][..], &input[1][..]];
            assert_sleeps_exactly_when_rung_out(
                &run,
                inputs,
                &sizes,
                &room,
                max_frames,
                LatencyMode::Zero,
            );
            let mut expected = vec![0.0f32; len];
            expected[at..at + room.len()].copy_from_slice(&room.channels[0]);
            let error = longtail_tests::max_abs_diff(&run.outputs[0], &expected);
            let ir_peak = peak(&room.channels[0]);
            assert!(
                error <= 1e-5 * ir_peak,
                "{sample_rate} Hz, {max_frames} frames: max error {error}, IR peak {ir_peak}"
            );
            assert_eq!(peak(&run.outputs[1]), 0.0, "nothing crosses to the right");
        }
        host.deactivate();
        // Flushed while inactive, between activations: the next one starts with it.
        host.flush(&[(mix, 1.0)]);
    }
    host.assert_threading_respected();
}

/// Activation succeeds at any sample rate a host sets. Outside 1 kHz to 768 kHz (1 Hz,
/// 1 234 567.8 Hz, 3 MHz, 0 Hz) the plugin reports no latency and plays the input unchanged,
/// whatever the mix; at 1 kHz and at a fractional 44 100.4 Hz it convolves, with finite output. Each activation processes
/// noise in ragged blocks (nothing in `process()` may allocate: this library aborts if it does),
/// and a later activation at 48 kHz convolves again.
#[test]
fn activates_at_any_sample_rate() {
    let mut host = TestHost::new();
    let mix = host.param(MIX);
    host.flush(&[(mix, 1.0)]);
    let input = stereo_noise(8_192, RNG_SEED + 80);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    for (rate, passes_through) in [
        (1.0, true),
        (1_000.0, false),
        (1_234_567.8, true),
        (3e6, true),
        (0.0, true),
        (44_100.4, false),
        (f64::from(SAMPLE_RATE), false),
    ] {
        host.activate_at_hz(rate, MAX_BLOCK);
        assert_eq!(host.latency(), 0, "{rate} Hz");
        let run = host.process([&input[0], &input[1]], &sizes, &[]);
        assert_finite(&run);
        let dry = run.outputs == input;
        assert_eq!(dry, passes_through, "{rate} Hz: the output is the input");
        if !passes_through {
            assert!(
                rms(&run.outputs[0]) > 0.01,
                "{rate} Hz: the wet signal plays"
            );
        }
        host.deactivate();
    }
    host.assert_threading_respected();
}

/// `process()` calls with 0 frames, first thing after activation and between ordinary blocks,
/// change nothing: the output is bit for bit that of an instance that never got them.
/// (nice-plug's CLAP wrapper answers them itself, with a debug warning, and does not call the
/// plugin; the soak test calls the plugin's own `process()` with 0 frames.)
#[test]
fn empty_process_calls_change_nothing() {
    let total = SAMPLE_RATE as usize / 2;
    let input = stereo_noise(total, RNG_SEED + 40);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let mut with_empty = vec![0, 0];
    for (block_idx, &size) in sizes.iter().enumerate() {
        with_empty.push(size);
        if block_idx % 16 == 3 {
            with_empty.extend([0, 0]);
        }
    }

    let mut plain = TestHost::new();
    plain.activate(MAX_BLOCK);
    let expected = plain.process([&input[0], &input[1]], &sizes, &[]);
    let mut host = TestHost::new();
    host.activate(MAX_BLOCK);
    let run = host.process([&input[0], &input[1]], &with_empty, &[]);
    assert_finite(&run);
    assert!(rms(&run.outputs[0]) > 0.05);
    for channel in 0..2 {
        let mismatch = run.outputs[channel]
            .iter()
            .zip(&expected.outputs[channel])
            .position(|(x, y)| x.to_bits() != y.to_bits());
        assert_eq!(mismatch, None, "channel {channel}: first differing sample");
    }
    host.assert_threading_respected();
}

/// Silence: once the input has been silent for the whole tail the plugin offers to sleep and
/// its output is exactly zero; the host stops calling it (sleeps), and when input returns the
/// plugin wakes at once and plays it as a fresh instance would.
#[test]
fn sleeps_once_rung_out_and_wakes_on_input() {
    use LatencyMode::Zero;
    let room = BuiltinIr::SmallRoom.generate(SAMPLE_RATE);
    let mut host = TestHost::new();
    let ir = host.param(IMPULSE_RESPONSE);
    host.flush(&[(ir, IR_SMALL_ROOM)]);
    host.activate(MAX_BLOCK);

    // Silence, a burst of noise, and silence for longer than the tail.
    let (lead, burst) = (2_000, SAMPLE_RATE as usize / 5);
    let len = lead + burst + horizon_of(&room, MAX_BLOCK, Zero) + 3_000;
    let mut input = stereo_noise(len, RNG_SEED + 50);
    for channel in &mut input {
        channel[..lead].fill(0.0);
        channel[lead + burst..].fill(0.0);
    }
    let sizes = block_sizes(len, MAX_BLOCK as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let inputs = [&input[0][..], &input[1][..]];
    let quiet = assert_sleeps_exactly_when_rung_out(&run, inputs, &sizes, &room, MAX_BLOCK, Zero);
    assert!(quiet[0] && *quiet.last().unwrap() && quiet.contains(&false));

    // The host lets it sleep for a while (no calls), then input comes back.
    std::thread::sleep(Duration::from_millis(20));
    let wake = stereo_noise(SAMPLE_RATE as usize / 4, RNG_SEED + 51);
    let sizes = block_sizes(wake[0].len(), MAX_BLOCK as usize);
    let run = host.process([&wake[0], &wake[1]], &sizes, &[]);
    assert_finite(&run);
    assert_eq!(
        run.statuses[0],
        ProcessStatus::Continue,
        "no wake on the first block with input"
    );
    let inputs = [&wake[0][..], &wake[1][..]];
    assert_sleeps_exactly_when_rung_out(&run, inputs, &sizes, &room, MAX_BLOCK, Zero);
    for (channel, x) in wake.iter().enumerate() {
        let expected = mixed_reference(x, &room.channels[channel], DEFAULT_MIX);
        let snr = snr_db(&run.outputs[channel], &expected);
        assert!(
            snr >= MIN_SNR_DB,
            "channel {channel}: SNR {snr:.1} dB after waking"
        );
    }
    host.assert_threading_respected();
}

/// The host saves the state on the main thread again and again while the audio thread plays
/// and automates the mix: every save loads into a fresh instance with one of the mix values
/// the automation went through and the other parameters intact, and the audio is bit for bit
/// that of an instance nobody saved.
#[test]
fn state_saves_while_processing_are_consistent() {
    let mut host = TestHost::new();
    let (mix, ir) = (host.param(MIX), host.param(IMPULSE_RESPONSE));
    host.flush(&[(ir, IR_PLATE)]);
    host.activate(MAX_BLOCK);
    let total = SAMPLE_RATE as usize;
    let input = stereo_noise(total, RNG_SEED + 60);
    let sizes = block_sizes(total, MAX_BLOCK as usize);
    let mix_values = [0.1, 0.9, 0.25, 0.75, 0.5];
    let automation: Vec<Automation> = mix_values
        .iter()
        .enumerate()
        .map(|(idx, &value)| Automation {
            at: (idx + 1) * total / (mix_values.len() + 1),
            param: mix,
            value,
        })
        .collect();
    let (run, saves) = host.process_while_saving([&input[0], &input[1]], &sizes, &automation, 20);
    assert_finite(&run);
    assert!(saves.len() >= 20);

    let mut reference = TestHost::new();
    reference.flush(&[(ir, IR_PLATE)]);
    reference.activate(MAX_BLOCK);
    let expected = reference.process([&input[0], &input[1]], &sizes, &automation);
    assert_eq!(run.outputs, expected.outputs, "saving changed the audio");

    for (save_idx, state) in saves.iter().enumerate() {
        let mut restored = TestHost::new();
        restored.load_state(state);
        let value = restored.value(mix);
        // The plugin keeps the mix as an `f32`.
        let was_set = |mix: f64| f64::from(mix as f32) == value;
        assert!(
            value == f64::from(DEFAULT_MIX) || mix_values.into_iter().any(was_set),
            "save {save_idx}: mix {value} was never set"
        );
        assert_eq!(restored.value(ir), IR_PLATE, "save {save_idx}");
    }
    assert_eq!(host.value(mix), 0.5);
    host.assert_threading_respected();
}

/// Many instances created, played and destroyed one after another leave no thread and no file
/// descriptor behind. Runs [`many_instances_in_a_process_of_their_own`] in a child process, so
/// that the other tests of this binary, running in parallel, do not move the counts.
#[test]
fn many_instances_leave_no_threads_or_fds_behind() {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let output = std::process::Command::new(exe)
        .args([
            "many_instances_in_a_process_of_their_own",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}{stderr}");
    assert!(output.status.success(), "the child failed: {stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
}

/// The child of [`many_instances_leave_no_threads_or_fds_behind`].
#[test]
#[ignore = "run in a process of its own by many_instances_leave_no_threads_or_fds_behind"]
fn many_instances_in_a_process_of_their_own() {
    const NUM_INSTANCES: usize = 50;
    let input = stereo_noise(4_096, RNG_SEED + 70);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let count = |path: &str| std::fs::read_dir(path).map_or(0, |dir| dir.count());
    let mut baseline = None;
    for instance_idx in 0..NUM_INSTANCES {
        {
            let mut host = TestHost::new();
            // Every other instance plays the largest IR, so engines of all sizes come and go.
            if instance_idx % 2 == 1 {
                let ir = host.param(IMPULSE_RESPONSE);
                host.flush(&[(ir, IR_CATHEDRAL)]);
            }
            host.activate(MAX_BLOCK);
            let run = host.process([&input[0], &input[1]], &sizes, &[]);
            assert_finite(&run);
            host.assert_threading_respected();
        }
        let mut counts = (count("/proc/self/task"), count("/proc/self/fd"));
        // The first instance may start what lives as long as the library (nice-plug's
        // background thread); from then on nothing may accumulate. A short-lived helper
        // thread may still be on its way out: give it a moment, but a leak stays a leak.
        if let Some(baseline) = baseline {
            let deadline = Instant::now() + Duration::from_secs(2);
            while counts != baseline && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                counts = (count("/proc/self/task"), count("/proc/self/fd"));
            }
        }
        match baseline {
            None => baseline = Some(counts),
            Some(baseline) => assert_eq!(
                counts, baseline,
                "(threads, fds) after instance {instance_idx}"
            ),
        }
    }
    println!("{NUM_INSTANCES} instances, (threads, fds) after each: {baseline:?}");
}

/// Nothing of the plugin or its libraries reaches the host's stdout or stderr in normal
/// operation. Runs [`quiet_in_a_process_of_its_own`] in a child process with `XDG_RUNTIME_DIR`
/// (whose absence makes Wayland's client library complain) and the log variables unset, and
/// fails on any line that is not the test harness's own.
#[test]
fn prints_nothing_to_the_hosts_stdout_or_stderr() {
    const CHILD: &str = "quiet_in_a_process_of_its_own";
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let output = std::process::Command::new(exe)
        .args([
            CHILD,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("LONGTAIL_LOG")
        .env_remove("NICE_LOG")
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the child failed:\n{stdout}{stderr}"
    );
    let harness = |line: &str| {
        line.is_empty()
            || line == "running 1 test"
            || line == format!("test {CHILD} ... ok")
            || line.starts_with("test result: ok. 1 passed;")
    };
    let printed: Vec<&str> = stdout.lines().filter(|line| !harness(line)).collect();
    assert!(
        printed.is_empty(),
        "printed to stdout:\n{}",
        printed.join("\n")
    );
    assert!(stderr.is_empty(), "printed to stderr:\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
}

/// The child of [`prints_nothing_to_the_hosts_stdout_or_stderr`]: a session as a host runs
/// it. The backend on Auto with the Cathedral at 96 kHz (an engine big enough for Auto to look
/// for a GPU, which loads Vulkan and its implicit layers), a state round trip, then activations
/// at rates the plugin passes through and at 48 kHz, each playing noise.
#[test]
#[ignore = "run in a process of its own by prints_nothing_to_the_hosts_stdout_or_stderr"]
fn quiet_in_a_process_of_its_own() {
    let mut host = TestHost::new();
    let (backend, ir) = (host.param(BACKEND), host.param(IMPULSE_RESPONSE));
    let auto = host.text_to_value(backend, c"Auto");
    host.flush(&[(backend, auto), (ir, IR_CATHEDRAL)]);
    let input = stereo_noise(16_384, RNG_SEED + 90);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    for rate in [96_000.0, 1.0, 3e6, 1_234_567.8, f64::from(SAMPLE_RATE)] {
        host.activate_at_hz(rate, MAX_BLOCK);
        assert_finite(&host.process([&input[0], &input[1]], &sizes, &[]));
        let state = host.save_state();
        host.deactivate();
        host.load_state(&state);
    }
    host.assert_threading_respected();
}

/// Edits that leave nothing of the IR (the start trimmed past its end, as clap-validator's
/// parameter fuzzing does) must not make activation fail: the plugin plays the built-in IR
/// unedited until the parameters change, and the output stays finite and wet.
#[test]
fn edits_that_leave_nothing_do_not_stop_activation() {
    let mut host = TestHost::new();
    let (trim_start, trim_end, mix) = (
        host.param("Trim start"),
        host.param("Trim end"),
        host.param(MIX),
    );
    host.flush(&[(trim_start, 1.0), (trim_end, 1.0), (mix, 1.0)]);
    host.activate(MAX_BLOCK);
    let input = stereo_noise(48_000, 11);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let run = host.process([&input[0], &input[1]], &sizes, &[]);
    assert_finite(&run);
    let energy: f64 = run.outputs[0].iter().map(|&s| f64::from(s).powi(2)).sum();
    assert!(energy > 1.0, "the fallback IR plays (energy {energy})");
}

/// Instance scale, as a measurement (prints one JSON line, asserts nothing about size): 64
/// instances of the 10 s cathedral IR in this process, each activated at 128-sample blocks and
/// processing one second of audio. Resident memory per instance is the growth of the process's
/// resident set over the instances, after the allocator has returned its free pages. CPU per
/// second of audio at real-time pace is `longtail-cli bench --instances 64` (engines only).
/// Run with `cargo test --release -p longtail-tests --test clap_host -- --ignored scale`.
#[test]
#[ignore = "a measurement: run it by name"]
fn scale_64_instances_of_the_cathedral() {
    const INSTANCES: usize = 64;
    const BLOCK: u32 = 128;
    let before = longtail::tools::resources::Resources::sample();
    let mut hosts = Vec::with_capacity(INSTANCES);
    for _ in 0..INSTANCES {
        let mut host = TestHost::new();
        let ir = host.param(IMPULSE_RESPONSE);
        host.flush(&[(ir, IR_CATHEDRAL)]);
        host.activate(BLOCK);
        hosts.push(host);
    }
    let input = stereo_noise(SAMPLE_RATE as usize, 3);
    let sizes = block_sizes(input[0].len(), BLOCK as usize);
    let cpu_start = longtail::cpu_time::process_seconds();
    for host in &mut hosts {
        assert_finite(&host.process([&input[0], &input[1]], &sizes, &[]));
    }
    let cpu_s = longtail::cpu_time::process_seconds() - cpu_start;
    let after = longtail::tools::resources::Resources::sample();
    println!(
        "{{\"kind\":\"scale\",\"instances\":{INSTANCES},\"block\":{BLOCK},\"ir\":\"cathedral\",\
         \"rss_before_kb\":{},\"rss_after_kb\":{},\"mem_per_instance_kb\":{},\"threads\":{},\
         \"audio_s_per_instance\":1.0,\"cpu_s_fed\":{cpu_s:.3}}}",
        before.rss_kb,
        after.rss_kb,
        after.rss_kb.saturating_sub(before.rss_kb) / INSTANCES as u64,
        after.threads,
    );
    drop(hosts);
}
