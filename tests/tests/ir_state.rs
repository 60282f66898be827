//! The user IR file through a real CLAP host (clack-host loading the built plugin, with
//! `assert_process_allocs`): a project state that points at a file makes the plugin play it
//! (resampled, auto-trimmed and normalised by default), the saved state carries the IR so a
//! project opens without the file, and a state from a newer Longtail leaves the IR playing.
//!
//! The host here is small: one instance, its main thread the test's thread, `process()` on a
//! scoped thread, offline render mode (workers are waited for, so outputs are deterministic).
//! The full host, with thread checks and automation, is in `clap_host.rs`.

use std::ffi::CStr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use clack_extensions::latency::{HostLatency, HostLatencyImpl};
use clack_extensions::params::{
    HostParams, HostParamsImplMainThread, HostParamsImplShared, ParamClearFlags, ParamInfoBuffer,
    ParamRescanFlags, PluginParams,
};
use clack_extensions::render::{PluginRender, RenderMode};
use clack_extensions::state::{HostState, HostStateImpl, PluginState};
use clack_host::events::event_types::ParamValueEvent;
use clack_host::prelude::*;
use longtail::ir::edit::{self, EditSettings};
use longtail::ir::wav;
use longtail_tests::{
    MIN_SNR_DB, decaying_noise, noise, plugin_library, reference_convolution, snr_db,
};

const PLUGIN_ID: &CStr = c"audio.longtail.convolver";
const SAMPLE_RATE: u32 = 48_000;
const BLOCK: usize = 256;
/// Mix smoothing (20 ms at 48 kHz): outputs are compared with the reference after it.
const SMOOTHING_SAMPLES: usize = 960;

#[derive(Default)]
struct Shared {
    callback_requested: AtomicBool,
    restart_requested: AtomicBool,
}

impl SharedHandler<'_> for Shared {
    fn request_restart(&self) {
        self.restart_requested.store(true, Ordering::SeqCst);
    }

    fn request_process(&self) {}

    fn request_callback(&self) {
        self.callback_requested.store(true, Ordering::SeqCst);
    }
}

impl HostParamsImplShared for Shared {
    fn request_flush(&self) {}
}

struct Main;

impl<'a> MainThreadHandler<'a> for Main {}

impl HostLatencyImpl for Main {
    fn changed(&self) {}
}

impl HostStateImpl for Main {
    fn mark_dirty(&self) {}
}

impl HostParamsImplMainThread for Main {
    fn rescan(&self, _flags: ParamRescanFlags) {}

    fn clear(&self, _param_id: ClapId, _flags: ParamClearFlags) {}
}

struct Handlers;

impl HostHandlers for Handlers {
    type Shared<'a> = Shared;
    type MainThread<'a> = Main;
    type AudioProcessor<'a> = ();

    fn declare_extensions(builder: &mut HostExtensions<Self>, _shared: &Self::Shared<'_>) {
        builder
            .register::<HostLatency>()
            .register::<HostState>()
            .register::<HostParams>();
    }
}

struct Host {
    instance: PluginInstance<Handlers>,
    processor: Option<PluginAudioProcessor<Handlers>>,
    state: PluginState,
    params: PluginParams,
}

impl Host {
    fn new() -> Self {
        let path = plugin_library();
        // SAFETY: the library is this workspace's own plugin, built by cargo for this test run.
        let entry = unsafe { PluginEntry::load(&path) }
            .unwrap_or_else(|err| panic!("cannot load {}: {err}", path.display()));
        let host_info =
            HostInfo::new("Longtail IR state test", "Longtail developers", "", "0.1.0").unwrap();
        let mut instance = longtail_tests::one_instance_at_a_time(|| {
            PluginInstance::<Handlers>::new(
                |_: &()| Shared::default(),
                |_: &Shared| Main,
                &entry,
                PLUGIN_ID,
                &host_info,
            )
        })
        .expect("the plugin instantiates");
        let shared = instance.plugin_shared_handle();
        let state = shared.get_extension::<PluginState>().unwrap();
        let params = shared.get_extension::<PluginParams>().unwrap();
        let render = shared.get_extension::<PluginRender>().unwrap();
        render
            .set(&instance.plugin_handle(), RenderMode::Offline)
            .expect("offline rendering");
        let mut host = Self {
            instance,
            processor: None,
            state,
            params,
        };
        host.poll();
        host
    }

    fn poll(&mut self) {
        while self
            .instance
            .access_shared_handler(|s| s.callback_requested.swap(false, Ordering::SeqCst))
        {
            self.instance.call_on_main_thread_callback();
        }
    }

    /// The CLAP id of the parameter called `name`, and the CLAP value of `text` for it.
    fn param_value(&mut self, name: &str, text: &CStr) -> (ClapId, f64) {
        let handle = self.instance.plugin_handle();
        let id = (0..self.params.count(&handle))
            .find_map(|index| {
                let mut buffer = ParamInfoBuffer::new();
                let info = self.params.get_info(&handle, index, &mut buffer)?;
                (info.name == name.as_bytes()).then_some(info.id)
            })
            .unwrap_or_else(|| panic!("no parameter {name}"));
        let value = self.params.text_to_value(&handle, id, text).unwrap();
        (id, value)
    }

    fn save_state(&mut self) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.state
            .save(&self.instance.plugin_handle(), &mut bytes)
            .expect("the plugin saves its state");
        bytes
    }

    fn load_state(&mut self, bytes: &[u8]) {
        let mut reader = bytes;
        self.state
            .load(&self.instance.plugin_handle(), &mut reader)
            .expect("the plugin loads the state");
        self.poll();
    }

    fn activate(&mut self) {
        for _ in 0..3 {
            let configuration = PluginAudioConfiguration {
                sample_rate: f64::from(SAMPLE_RATE),
                min_frames_count: 1,
                max_frames_count: BLOCK as u32,
            };
            let processor = self
                .instance
                .activate(|_, _| (), configuration)
                .expect("the plugin activates");
            self.processor = Some(processor.into());
            self.poll();
            if !self
                .instance
                .access_shared_handler(|s| s.restart_requested.swap(false, Ordering::SeqCst))
            {
                return;
            }
            self.deactivate();
        }
        panic!("the plugin keeps asking for restarts");
    }

    fn deactivate(&mut self) {
        if let Some(mut processor) = self.processor.take() {
            std::thread::scope(|scope| {
                scope.spawn(|| processor.ensure_processing_stopped());
            });
            self.instance.deactivate(processor.into_stopped());
            self.poll();
        }
    }

    /// Processes stereo `input` in blocks of [`BLOCK`] on a scoped "audio" thread.
    fn process(&mut self, input: &[Vec<f32>; 2]) -> [Vec<f32>; 2] {
        self.process_with(input, None)
    }

    /// [`Host::process`], sending `change` (a parameter and its value) at the first sample.
    fn process_with(
        &mut self,
        input: &[Vec<f32>; 2],
        change: Option<(ClapId, f64)>,
    ) -> [Vec<f32>; 2] {
        let processor = self.processor.as_mut().expect("active");
        let total = input[0].len();
        let outputs = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let started = processor.ensure_processing_started().unwrap();
                    let mut ins = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
                    // The sidechain port, silent: CLAP hosts pass every port.
                    let mut side = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
                    let mut outs = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
                    let mut input_ports = AudioPorts::with_capacity(4, 2);
                    let mut output_ports = AudioPorts::with_capacity(2, 1);
                    let mut events = EventBuffer::with_capacity(1);
                    let mut result = [Vec::with_capacity(total), Vec::with_capacity(total)];
                    let mut start = 0;
                    while start < total {
                        let len = BLOCK.min(total - start);
                        for (buffer, channel) in ins.iter_mut().zip(input) {
                            buffer[..len].copy_from_slice(&channel[start..start + len]);
                        }
                        events.clear();
                        if let (0, Some((id, value))) = (start, change) {
                            events.push(&ParamValueEvent::new(0, id, Pckn::match_all(), value));
                        }
                        {
                            let [in_left, in_right] = &mut ins;
                            let [side_left, side_right] = &mut side;
                            let [out_left, out_right] = &mut outs;
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
                            let mut audio_outputs =
                                output_ports.with_output_buffers([AudioPortBuffer {
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
                                    Some(start as u64),
                                    None,
                                )
                                .expect("process() succeeds");
                        }
                        for (output, buffer) in result.iter_mut().zip(&outs) {
                            output.extend_from_slice(&buffer[..len]);
                        }
                        start += len;
                    }
                    result
                })
                .join()
                .unwrap()
        });
        self.poll();
        outputs
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.deactivate();
        }
    }
}

/// `state` with `edit` applied to its parsed form. nice-plug's CLAP state is the JSON's length
/// (8 bytes, little-endian), then the JSON.
fn edit_state(state: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let (length, json) = state.split_at(8);
    assert_eq!(
        u64::from_le_bytes(length.try_into().unwrap()),
        json.len() as u64
    );
    let mut value: serde_json::Value =
        serde_json::from_slice(json).expect("nice-plug's state is JSON");
    edit(&mut value);
    let json = serde_json::to_vec(&value).unwrap();
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend(json);
    bytes
}

/// A state that plays the file at `path` at full wet: what an editor or a hand-edited project
/// does (the "ir-file" field with only a path, and the source parameter on File).
fn pointing_at(default_state: &[u8], path: &Path) -> Vec<u8> {
    edit_state(default_state, |state| {
        state["params"]["irsrc"] = serde_json::json!({ "string": "file" });
        state["params"]["mix"] = serde_json::json!({ "f32": 1.0 });
        let field = serde_json::json!({ "version": 1, "paths": [path.to_string_lossy()] });
        state["fields"]["ir-file"] = serde_json::Value::String(field.to_string());
    })
}

#[test]
fn a_file_ir_plays_survives_a_missing_file_and_ignores_newer_states() {
    let dir = std::env::temp_dir().join(format!("longtail-irhost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A stereo IR at 44.1 kHz, in a 48 kHz session: resampled, auto-trimmed, normalised.
    let file_ir = [decaying_noise(6000, 40), decaying_noise(6000, 41)];
    let path = dir.join("hall44.wav");
    wav::write_f32(&path, 44_100, &file_ir).unwrap();
    let (source, _) = longtail::ir::load(&[&path]).unwrap();
    let (prepared, _) = edit::prepare(&source, &EditSettings::FILE_DEFAULT, SAMPLE_RATE).unwrap();

    let input = [noise(24_000, 0.5, 42), noise(24_000, 0.5, 43)];
    let mut first = Host::new();
    let default_state = first.save_state();
    first.load_state(&pointing_at(&default_state, &path));
    first.activate();
    let played = first.process(&input);
    for side in 0..2 {
        let wet = reference_convolution(&input[side], &prepared.channels[side]);
        let snr = snr_db(
            &played[side][SMOOTHING_SAMPLES..],
            &wet[SMOOTHING_SAMPLES..input[0].len()],
        );
        assert!(snr > MIN_SNR_DB, "side {side}: {snr:.1} dB");
    }

    // The saved project carries the IR: with the file gone it plays the same, bit for bit.
    let saved = first.save_state();
    std::fs::remove_file(&path).unwrap();
    let mut second = Host::new();
    second.load_state(&saved);
    second.activate();
    let restored = second.process(&input);
    assert_eq!(restored, played);

    // A state from a newer Longtail pointing elsewhere: refused, the IR keeps playing.
    let other = dir.join("other.wav");
    wav::write_f32(
        &other,
        SAMPLE_RATE,
        &[noise(500, 0.5, 44), noise(500, 0.5, 45)],
    )
    .unwrap();
    let future = edit_state(&saved, |state| {
        let field = serde_json::json!({ "version": 99, "paths": [other.to_string_lossy()] });
        state["fields"]["ir-file"] = serde_json::Value::String(field.to_string());
    });
    second.deactivate();
    second.load_state(&future);
    second.activate();
    let after_future = second.process(&input);
    assert_eq!(after_future, played);

    // The same state with this version's number switches to the other file.
    let current = edit_state(&future, |state| {
        let field = serde_json::json!({ "version": 1, "paths": [other.to_string_lossy()] });
        state["fields"]["ir-file"] = serde_json::Value::String(field.to_string());
    });
    second.deactivate();
    second.load_state(&current);
    second.activate();
    let switched = second.process(&input);
    assert_ne!(switched, played);

    // While playing: a project load swaps the IR through the preparation thread; the audio
    // thread only sees the file's generation change (and allocation checks are on).
    first.load_state(&current);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Once swapped, the output after the new IR's length (its history holds the previous run's
    // input) is the fresh instance's output, up to the rounding of another partition phase.
    let settled = 1000;
    let expected: Vec<f64> = switched[0][settled..]
        .iter()
        .map(|&s| f64::from(s))
        .collect();
    loop {
        let output = first.process(&input);
        if snr_db(&output[0][settled..], &expected) > MIN_SNR_DB {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the new IR never arrived"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// An edit parameter change waits for the knob to stay put ([`longtail::params::EDIT_DEBOUNCE_MS`],
/// 150 ms of audio) before the engine is rebuilt, then the new IR plays.
#[test]
fn edit_changes_are_debounced_then_applied() {
    let dir = std::env::temp_dir().join(format!("longtail-irdebounce-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ir.wav");
    let file_ir = [decaying_noise(3000, 50), decaying_noise(3000, 51)];
    wav::write_f32(&path, SAMPLE_RATE, &file_ir).unwrap();
    let (source, _) = longtail::ir::load(&[&path]).unwrap();
    let plain = edit::prepare(&source, &EditSettings::FILE_DEFAULT, SAMPLE_RATE)
        .unwrap()
        .0;
    let delayed = EditSettings {
        predelay_ms: 20.0,
        ..EditSettings::FILE_DEFAULT
    };
    let delayed = edit::prepare(&source, &delayed, SAMPLE_RATE).unwrap().0;

    let mut host = Host::new();
    let default_state = host.save_state();
    host.load_state(&pointing_at(&default_state, &path));
    let change = host.param_value("Pre-delay", c"20");
    host.activate();
    // 100 ms with the change at its start, then a pause long enough for any requested engine
    // to be built, then 40 ms more: still under 150 ms of stillness, so nothing was requested
    // and the old IR still plays (the run continues the same input).
    let input = [noise(9_600, 0.5, 52), noise(9_600, 0.5, 53)];
    let first = [input[0][..4_800].to_vec(), input[1][..4_800].to_vec()];
    let second = [
        input[0][4_800..6_720].to_vec(),
        input[1][4_800..6_720].to_vec(),
    ];
    let mut output = host.process_with(&first, Some(change));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let more = host.process(&second);
    output[0].extend(&more[0]);
    let wet = reference_convolution(&input[0][..6_720], &plain.channels[0]);
    let snr = snr_db(
        &output[0][SMOOTHING_SAMPLES..],
        &wet[SMOOTHING_SAMPLES..6_720],
    );
    assert!(
        snr > MIN_SNR_DB,
        "the IR changed before 150 ms of stillness: {snr:.1} dB"
    );

    // Past 150 ms the rebuild is requested; once it arrives (and the 50 ms crossfade ends) the
    // delayed IR plays: its first 20 ms (960 samples) of output are silent.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let silence = vec![0.0f32; 9_600];
    loop {
        // Silence first, so the response below starts from an empty history.
        host.process(&[silence.clone(), silence.clone()]);
        let impulse = {
            let mut impulse = vec![0.0f32; 9_600];
            impulse[0] = 1.0;
            impulse
        };
        let response = host.process(&[impulse.clone(), impulse]);
        let expected: Vec<f64> = delayed.channels[0].iter().map(|&s| f64::from(s)).collect();
        if snr_db(&response[0][..expected.len()], &expected) > MIN_SNR_DB {
            // Silent up to FFT rounding.
            assert!(response[0][..960].iter().all(|&s| s.abs() < 1e-6));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the edit never applied"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
