//! The test host: CLAP's host callbacks, [`TestHost`] owning one plugin instance, its runs
//! and automation, and the audio thread it processes on.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use clack_extensions::gui::{GuiSize, HostGui, HostGuiImpl};
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
use longtail_tests::plugin_library;

use super::machine;
use super::*;

// ------------------------------------------------------------------------------------------
// The host's side of the CLAP callbacks
// ------------------------------------------------------------------------------------------

thread_local! {
    /// Whether this thread is a CLAP main thread (a test's thread that owns a plugin instance).
    static IS_MAIN_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is the host's audio thread.
    static IS_AUDIO_THREAD: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn is_main_thread() -> bool {
    IS_MAIN_THREAD.with(Cell::get)
}

/// Thread-safe host state: requests from the plugin, which may arrive from any thread
/// (including the audio thread inside `process()`, so nothing here allocates).
#[derive(Default)]
pub(crate) struct HostShared {
    pub(crate) callback_requested: AtomicBool,
    pub(crate) restart_requested: AtomicBool,
    pub(crate) process_requested: AtomicBool,
    pub(crate) flush_requested: AtomicBool,
    /// Main-thread-only host callbacks that arrived on another thread.
    pub(crate) wrong_thread_calls: AtomicU32,
    /// Whether the host is inside `clap_plugin::activate`.
    pub(crate) activating: AtomicBool,
    /// `latency.changed()` calls outside `activate`, which CLAP forbids.
    pub(crate) latency_changes_outside_activate: AtomicU32,
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

/// The gui extension, which nice-plug's wrapper needs to open its editor (`clap_editor`): a
/// host with a fixed window that refuses resizes and show/hide requests.
impl HostGuiImpl for HostShared {
    fn resize_hints_changed(&self) {}

    fn request_resize(&self, _new_size: GuiSize) -> Result<(), HostError> {
        Err(HostError::Message(
            "the test host's window has a fixed size",
        ))
    }

    fn request_show(&self) -> Result<(), HostError> {
        Err(HostError::Message("the test host shows the editor itself"))
    }

    fn request_hide(&self) -> Result<(), HostError> {
        Err(HostError::Message("the test host hides the editor itself"))
    }

    fn closed(&self, _was_destroyed: bool) {}
}

impl HostParamsImplShared for HostShared {
    fn request_flush(&self) {
        self.flush_requested.store(true, Ordering::SeqCst);
    }
}

/// Main-thread host state: counts of the notifications the plugin sent.
pub(crate) struct HostMain<'a> {
    pub(crate) shared: &'a HostShared,
    pub(crate) latency_changed: Cell<u32>,
    pub(crate) state_dirty: Cell<u32>,
    pub(crate) param_rescans: Cell<u32>,
    pub(crate) param_clears: Cell<u32>,
}

impl<'a> HostMain<'a> {
    pub(crate) fn new(shared: &'a HostShared) -> Self {
        Self {
            shared,
            latency_changed: Cell::new(0),
            state_dirty: Cell::new(0),
            param_rescans: Cell::new(0),
            param_clears: Cell::new(0),
        }
    }

    pub(crate) fn count(&self, counter: &Cell<u32>) {
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
        if !self.shared.activating.load(Ordering::SeqCst) {
            self.shared
                .latency_changes_outside_activate
                .fetch_add(1, Ordering::SeqCst);
        }
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

pub(crate) struct Handlers;

impl HostHandlers for Handlers {
    type Shared<'a> = HostShared;
    type MainThread<'a> = HostMain<'a>;
    type AudioProcessor<'a> = ();

    fn declare_extensions(builder: &mut HostExtensions<Self>, _shared: &Self::Shared<'_>) {
        builder
            .register::<HostGui>()
            .register::<HostLatency>()
            .register::<HostState>()
            .register::<HostParams>()
            .register::<HostThreadCheck>();
    }
}

/// What the plugin told the main thread so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Notifications {
    pub(crate) latency_changed: u32,
    pub(crate) state_dirty: u32,
    pub(crate) param_rescans: u32,
    pub(crate) param_clears: u32,
}

// ------------------------------------------------------------------------------------------
// The host
// ------------------------------------------------------------------------------------------

pub(crate) fn load_entry() -> PluginEntry {
    let path = plugin_library();
    // SAFETY: the library is this workspace's own plugin, built by cargo for this test run.
    // Loading it runs its CLAP entry's `init`, which has no preconditions beyond being called
    // once per load (clack-host takes care of that).
    unsafe { PluginEntry::load(&path) }
        .unwrap_or_else(|err| panic!("cannot load {}: {err}", path.display()))
}

/// One parameter as the plugin describes it.
#[derive(Debug, Clone)]
pub(crate) struct ParamDesc {
    pub(crate) id: ClapId,
    pub(crate) name: String,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) default: f64,
    pub(crate) flags: ParamInfoFlags,
}

/// A parameter change sent to the plugin inside a `process()` call: `at` is the sample
/// position from the start of that [`TestHost::process`] run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Automation {
    pub(crate) at: usize,
    pub(crate) param: ClapId,
    pub(crate) value: f64,
}

/// What one [`TestHost::process`] run returned.
pub(crate) struct Run {
    /// Output per channel, one sample per input sample.
    pub(crate) outputs: [Vec<f32>; 2],
    /// Status returned by each `process()` call.
    pub(crate) statuses: Vec<ProcessStatus>,
    /// Tail length the tail extension reported after each `process()` call.
    pub(crate) tails: Vec<TailLength>,
}

/// A CLAP host with one Longtail instance, stereo in and out.
pub(crate) struct TestHost {
    pub(crate) instance: PluginInstance<Handlers>,
    /// Present while the plugin is active.
    pub(crate) processor: Option<PluginAudioProcessor<Handlers>>,
    pub(crate) params: PluginParams,
    pub(crate) state: PluginState,
    pub(crate) latency: PluginLatency,
    pub(crate) tail: PluginTail,
    pub(crate) render: PluginRender,
    /// Maximum block size of the current (or last) activation.
    pub(crate) max_frames: u32,
    /// Sample rate of the current (or last) activation, in Hz (hosts may pass any number).
    pub(crate) sample_rate: f64,
    /// Samples processed so far, passed as `steady_time`.
    pub(crate) steady_time: u64,
    /// Restarts the host made on the plugin's request right after activating.
    pub(crate) restarts: u32,
}

impl TestHost {
    /// Loads the library and instantiates the plugin; the calling thread becomes its main
    /// thread.
    pub(crate) fn new() -> Self {
        machine::share();
        IS_MAIN_THREAD.with(|flag| flag.set(true));
        let entry = load_entry();
        let host_info = HostInfo::new(
            "Longtail test host",
            "Longtail developers",
            "https://example.invalid/longtail-test-host",
            "0.1.0",
        )
        .expect("valid host info");
        let instance = longtail_tests::one_instance_at_a_time(|| {
            PluginInstance::<Handlers>::new(
                |_: &()| HostShared::default(),
                |shared: &HostShared| HostMain::new(shared),
                &entry,
                PLUGIN_ID,
                &host_info,
            )
        })
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
            render,
            max_frames: MAX_BLOCK,
            sample_rate: f64::from(SAMPLE_RATE),
            steady_time: 0,
            restarts: 0,
        };
        // Offline render mode: the plugin's tail workers are waited for, so these tests (which
        // process far faster than real time) compare outputs sample by sample without lates.
        // The real-time path is covered by tests/realtime_no_alloc.rs and pacing.rs.
        host.set_render_mode(RenderMode::Offline);
        host
    }

    /// `clap_plugin_render::set`: the plugin reads the mode when it is activated.
    pub(crate) fn set_render_mode(&mut self, mode: RenderMode) {
        self.render
            .set(&self.instance.plugin_handle(), mode)
            .expect("the plugin accepts the render mode");
        self.poll();
    }

    /// Services the main-thread callbacks the plugin asked for.
    pub(crate) fn poll(&mut self) {
        while self
            .instance
            .access_shared_handler(|shared| shared.callback_requested.swap(false, Ordering::SeqCst))
        {
            self.instance.call_on_main_thread_callback();
        }
    }

    /// Whether the plugin asked for a restart since the last call.
    pub(crate) fn take_restart_request(&self) -> bool {
        self.instance
            .access_shared_handler(|shared| shared.restart_requested.swap(false, Ordering::SeqCst))
    }

    pub(crate) fn notifications(&self) -> Notifications {
        self.instance.access_handler(|main| Notifications {
            latency_changed: main.latency_changed.get(),
            state_dirty: main.state_dirty.get(),
            param_rescans: main.param_rescans.get(),
            param_clears: main.param_clears.get(),
        })
    }

    /// Fails the test if the plugin called a main-thread host callback from another thread, or
    /// told the host of a latency change outside `activate`.
    pub(crate) fn assert_threading_respected(&self) {
        let (wrong, outside) = self.instance.access_shared_handler(|shared| {
            (
                shared.wrong_thread_calls.load(Ordering::SeqCst),
                shared
                    .latency_changes_outside_activate
                    .load(Ordering::SeqCst),
            )
        });
        assert_eq!(
            wrong, 0,
            "the plugin called main-thread host callbacks from another thread"
        );
        assert_eq!(
            outside, 0,
            "the plugin told the host of a latency change outside activate"
        );
    }

    // --- parameters ---------------------------------------------------------------------

    pub(crate) fn param_descs(&mut self) -> Vec<ParamDesc> {
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
    pub(crate) fn param(&mut self, name: &str) -> ClapId {
        self.param_descs()
            .into_iter()
            .find(|desc| desc.name == name)
            .unwrap_or_else(|| panic!("the plugin has no parameter called {name:?}"))
            .id
    }

    pub(crate) fn value(&mut self, param: ClapId) -> f64 {
        let handle = self.instance.plugin_handle();
        self.params
            .get_value(&handle, param)
            .expect("the plugin reports the parameter's value")
    }

    pub(crate) fn text_to_value(&mut self, param: ClapId, text: &CStr) -> f64 {
        let handle = self.instance.plugin_handle();
        self.params
            .text_to_value(&handle, param, text)
            .unwrap_or_else(|| panic!("the plugin cannot parse {text:?}"))
    }

    pub(crate) fn value_to_text(&mut self, param: ClapId, value: f64) -> String {
        let handle = self.instance.plugin_handle();
        let mut buffer = [0u8; 256];
        let text = self
            .params
            .value_to_text(&handle, param, value, &mut buffer)
            .expect("the plugin formats the value");
        String::from_utf8_lossy(text).into_owned()
    }

    /// Sets parameters through `clap_plugin_params::flush` while the plugin is inactive.
    pub(crate) fn flush(&mut self, changes: &[(ClapId, f64)]) {
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

    pub(crate) fn save_state(&mut self) -> Vec<u8> {
        let mut bytes = Vec::new();
        let handle = self.instance.plugin_handle();
        self.state
            .save(&handle, &mut bytes)
            .expect("the plugin saves its state");
        bytes
    }

    pub(crate) fn load_state(&mut self, bytes: &[u8]) {
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
    pub(crate) fn activate(&mut self, max_frames: u32) {
        let sample_rate = self.sample_rate;
        self.activate_at_hz(sample_rate, max_frames);
    }

    /// [`activate`](Self::activate) at another sample rate, which later activations keep.
    pub(crate) fn activate_at(&mut self, sample_rate: u32, max_frames: u32) {
        self.activate_at_hz(f64::from(sample_rate), max_frames);
    }

    /// [`activate_at`](Self::activate_at) with any number as the sample rate.
    pub(crate) fn activate_at_hz(&mut self, sample_rate: f64, max_frames: u32) {
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

    pub(crate) fn activate_once(&mut self, max_frames: u32) {
        assert!(self.processor.is_none(), "already active");
        let configuration = PluginAudioConfiguration {
            sample_rate: self.sample_rate,
            min_frames_count: 1,
            max_frames_count: max_frames,
        };
        self.instance
            .access_shared_handler(|shared| shared.activating.store(true, Ordering::SeqCst));
        let processor = self.instance.activate(|_, _| (), configuration);
        self.instance
            .access_shared_handler(|shared| shared.activating.store(false, Ordering::SeqCst));
        let processor = processor.expect("the plugin activates");
        self.processor = Some(processor.into());
        self.max_frames = max_frames;
        self.poll();
    }

    pub(crate) fn deactivate(&mut self) {
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
    pub(crate) fn restart(&mut self) {
        let max_frames = self.max_frames;
        self.deactivate();
        self.activate(max_frames);
    }

    /// Latency the plugin reports, in samples.
    pub(crate) fn latency(&mut self) -> u32 {
        let handle = self.instance.plugin_handle();
        self.latency.get(&handle)
    }

    // --- audio thread -------------------------------------------------------------------

    /// `clap_plugin::reset`, on the audio thread.
    pub(crate) fn reset(&mut self) {
        let processor = self.processor.as_mut().expect("the plugin is active");
        on_audio_thread(|| processor.reset());
    }

    /// Processes `input` (stereo) on the audio thread in blocks of `sizes` (0-frame calls
    /// included), sending `automation` (sorted by position) as parameter events at their sample
    /// offsets.
    pub(crate) fn process(
        &mut self,
        input: [&[f32]; 2],
        sizes: &[usize],
        automation: &[Automation],
    ) -> Run {
        let run = self.process_unserved(input, sizes, automation);
        self.poll();
        run
    }

    /// [`process`](Self::process) without serving the main-thread callbacks the plugin asks
    /// for: a host whose main thread is busy.
    pub(crate) fn process_unserved(
        &mut self,
        input: [&[f32]; 2],
        sizes: &[usize],
        automation: &[Automation],
    ) -> Run {
        let blocks = self.blocks(input, sizes, automation);
        let processor = self.processor.as_mut().expect("the plugin is active");
        on_audio_thread(move || blocks.run(processor))
    }

    /// Like [`process`](Self::process) without automation, with `before(start)` called on the
    /// audio thread before the block that starts at `start` (from this run's start): the
    /// host's pacing.
    pub(crate) fn process_paced(
        &mut self,
        input: [&[f32]; 2],
        sizes: &[usize],
        before: &mut (dyn FnMut(usize) + Send),
    ) -> Run {
        let mut blocks = self.blocks(input, sizes, &[]);
        blocks.before = Some(before);
        let processor = self.processor.as_mut().expect("the plugin is active");
        let run = on_audio_thread(move || blocks.run(processor));
        self.poll();
        run
    }

    /// Like [`process`](Self::process), while the main thread saves the plugin's state again
    /// and again, as a host does when it autosaves during playback. Returns the run and every
    /// state saved (at least `min_saves`; saving goes on until the audio thread is done).
    pub(crate) fn process_while_saving(
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
    pub(crate) fn blocks<'a>(
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
            before: None,
        }
    }
}

/// One run of blocks for the audio thread.
pub(crate) struct Blocks<'a> {
    pub(crate) input: [&'a [f32]; 2],
    pub(crate) sizes: &'a [usize],
    pub(crate) automation: &'a [Automation],
    /// `steady_time` of the first block.
    pub(crate) steady_time: u64,
    pub(crate) max_frames: usize,
    pub(crate) tail: PluginTail,
    /// Called before each block with its start (the host's pacing); none: back to back.
    pub(crate) before: Option<&'a mut (dyn FnMut(usize) + Send)>,
}

impl Blocks<'_> {
    /// Calls `process()` once per block, on the calling thread (the host's audio thread).
    pub(crate) fn run(self, processor: &mut PluginAudioProcessor<Handlers>) -> Run {
        let Self {
            input,
            sizes,
            automation,
            steady_time,
            max_frames,
            tail,
            mut before,
        } = self;
        let total: usize = sizes.iter().sum();
        let started = processor
            .ensure_processing_started()
            .expect("the plugin starts processing");
        let mut input_buffers = [vec![0.0f32; max_frames], vec![0.0f32; max_frames]];
        // The sidechain port, silent: CLAP hosts pass every port the plugin declares.
        let mut sidechain = [vec![0.0f32; max_frames], vec![0.0f32; max_frames]];
        let mut output_buffers = [vec![0.0f32; max_frames], vec![0.0f32; max_frames]];
        let mut input_ports = AudioPorts::with_capacity(4, 2);
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
            if let Some(before) = before.as_deref_mut() {
                before(start);
            }
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
                let [side_left, side_right] = &mut sidechain;
                let [out_left, out_right] = &mut output_buffers;
                let audio_inputs = input_ports.with_input_buffers([
                    AudioPortBuffer {
                        latency: 0,
                        channels: AudioPortBufferType::f32_input_only([
                            InputChannel::variable(&mut in_left[..len]),
                            InputChannel::variable(&mut in_right[..len]),
                        ]),
                    },
                    AudioPortBuffer {
                        latency: 0,
                        channels: AudioPortBufferType::f32_input_only([
                            InputChannel::variable(&mut side_left[..len]),
                            InputChannel::variable(&mut side_right[..len]),
                        ]),
                    },
                ]);
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
        machine::release_share();
    }
}

/// Runs `f` on a fresh thread that the host reports as its audio thread, and waits for it.
pub(crate) fn on_audio_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
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
