//! The plugin as a VST3 host sees it: the library cargo built (the file the bundler copies into
//! `Longtail.vst3`) loaded through its VST3 entry points with the `vst3` crate's bindings. The
//! factory is scanned, the audio module instantiated, set up for stereo at several sample rates
//! and block sizes, and run as a bounce (set up once with offline mode, which nice-plug hands
//! the plugin as real-time mode); its output must be what `longtail-cli render` computes
//! (the same library function, `longtail::render::render`) for the default settings. Its state
//! is saved and loaded into a second instance, which then plays the same output (to within the
//! rounding of its own stagger phase).

// The bindings' enum constants are `u32` on Linux and `i32` on Windows (C enums follow the
// platform's ABI), so the casts to the API's `i32` do nothing there.
#![cfg_attr(
    windows,
    expect(
        clippy::unnecessary_cast,
        reason = "the vst3 enum constants are already i32 on Windows"
    )
)]

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::Mutex;

use longtail::engine::Executor;
use longtail::engine::plan::{LatencyMode, PlanLimits, offload_shape};
use longtail::ir::builtin::BuiltinIr;
use longtail::render::{BlockSizes, RenderOptions, render};
use longtail_tests::{RNG_SEED, max_abs_diff, noise, plugin_library, snr_db};
use vst3::Steinberg::IBStream_::IStreamSeekMode_::{kIBSeekCur, kIBSeekEnd, kIBSeekSet};
use vst3::Steinberg::Vst::BusDirections_::{kInput, kOutput};
use vst3::Steinberg::Vst::MediaTypes_::kAudio;
use vst3::Steinberg::Vst::ProcessModes_::kOffline;
use vst3::Steinberg::Vst::SpeakerArr::kStereo;
use vst3::Steinberg::Vst::SymbolicSampleSizes_::kSample32;
use vst3::Steinberg::Vst::{
    AudioBusBuffers, AudioBusBuffers__type0, IAudioProcessor, IAudioProcessorTrait, IComponent,
    IComponentTrait, IEditController, IEditControllerTrait, ParameterInfo, ProcessData,
    ProcessSetup,
};
use vst3::Steinberg::{
    IBStream, IBStreamTrait, IPluginBaseTrait, IPluginFactory, IPluginFactoryTrait, PClassInfo,
    int32, int64, kInvalidArgument, kResultFalse, kResultOk, tresult,
};
use vst3::{Class, ComPtr, ComWrapper, Interface};

/// The plugin's default wet share (the Mix parameter).
const DEFAULT_MIX: f32 = 0.35;
/// The class category of audio processors.
const AUDIO_MODULE: &CStr = c"Audio Module Class";

/// The loaded library and its factory (released before the library is closed).
struct Module {
    factory: ComPtr<IPluginFactory>,
    library: libloading::Library,
}

impl Module {
    fn load() -> Self {
        // SAFETY: the plugin library's initialisers only set up nice-plug's globals.
        let library = unsafe { libloading::Library::new(plugin_library()) }.expect("dlopen");
        // SAFETY: the VST3 module entry points, with their documented signatures; Linux hosts
        // call ModuleEntry before anything else.
        let factory = unsafe {
            if let Ok(entry) =
                library.get::<unsafe extern "C" fn(*mut c_void) -> bool>(b"ModuleEntry")
            {
                assert!(entry(null_mut()), "ModuleEntry refused");
            }
            let get = library
                .get::<unsafe extern "system" fn() -> *mut c_void>(b"GetPluginFactory")
                .expect("GetPluginFactory is exported");
            ComPtr::from_raw(get() as *mut IPluginFactory).expect("a factory")
        };
        Self { factory, library }
    }

    /// The audio module's class: exactly one.
    fn audio_class(&self) -> PClassInfo {
        let mut found = Vec::new();
        // SAFETY: plain factory queries into memory we own.
        unsafe {
            for index in 0..self.factory.countClasses() {
                let mut info: PClassInfo = std::mem::zeroed();
                assert_eq!(self.factory.getClassInfo(index, &mut info), kResultOk);
                let category = CStr::from_ptr(info.category.as_ptr());
                if category == AUDIO_MODULE {
                    found.push(info);
                }
            }
        }
        assert_eq!(found.len(), 1, "one audio module");
        let name = unsafe { CStr::from_ptr(found[0].name.as_ptr()) };
        assert_eq!(name.to_str().unwrap(), "Longtail");
        found.remove(0)
    }

    fn instantiate(&self, class: &PClassInfo) -> Instance {
        let mut object: *mut c_void = null_mut();
        // SAFETY: creating an IComponent of a class the factory listed; the pointer it
        // returns carries one reference, which the ComPtr takes over.
        let component = unsafe {
            let result = longtail_tests::one_instance_at_a_time(|| {
                self.factory.createInstance(
                    class.cid.as_ptr(),
                    IComponent::IID.as_ptr() as *const _,
                    &mut object,
                )
            });
            assert_eq!(result, kResultOk, "createInstance");
            ComPtr::from_raw(object as *mut IComponent).expect("a component")
        };
        // SAFETY: no host context: nice-plug needs none.
        assert_eq!(unsafe { component.initialize(null_mut()) }, kResultOk);
        let processor = component
            .cast::<IAudioProcessor>()
            .expect("the component is an IAudioProcessor");
        Instance {
            component,
            processor,
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: the matching exit point; every object of the module is released by now
        // except the factory, which the host releases last by convention but which holds no
        // plugin state.
        unsafe {
            if let Ok(exit) = self
                .library
                .get::<unsafe extern "C" fn() -> bool>(b"ModuleExit")
            {
                exit();
            }
        }
    }
}

struct Instance {
    processor: ComPtr<IAudioProcessor>,
    component: ComPtr<IComponent>,
}

impl Instance {
    /// Stereo in and out, then set up and activated for offline processing.
    fn activate(&self, rate: f64, max_block: usize) {
        self.activate_bus(rate, max_block, kStereo, kStereo);
    }

    /// [`activate`](Self::activate) with these speaker arrangements.
    fn activate_bus(&self, rate: f64, max_block: usize, input: u64, output: u64) {
        // SAFETY: the VST3 set-up sequence with valid arguments.
        unsafe {
            let c = &self.component;
            assert_eq!(c.getBusCount(kAudio as i32, kInput as i32), 1);
            assert_eq!(c.getBusCount(kAudio as i32, kOutput as i32), 1);
            let mut ins = [input];
            let mut outs = [output];
            assert_eq!(
                self.processor
                    .setBusArrangements(ins.as_mut_ptr(), 1, outs.as_mut_ptr(), 1),
                kResultOk,
                "{input:#x} in, {output:#x} out"
            );
            assert_eq!(c.activateBus(kAudio as i32, kInput as i32, 0, 1), kResultOk);
            assert_eq!(
                c.activateBus(kAudio as i32, kOutput as i32, 0, 1),
                kResultOk
            );
            assert_eq!(
                self.processor.canProcessSampleSize(kSample32 as i32),
                kResultOk
            );
            let mut setup = ProcessSetup {
                processMode: kOffline as i32,
                symbolicSampleSize: kSample32 as i32,
                maxSamplesPerBlock: max_block as i32,
                sampleRate: rate,
            };
            // Once, as many hosts do. nice-plug 0.4.2 passes the plugin the process mode of
            // the *previous* setupProcessing call (it stores the buffer configuration before the
            // new mode), so a fresh instance runs in real-time mode here. The output must still
            // be the render's: this host calls far faster than real time, and the engine waits
            // for its workers while the host is ahead (`engine::pace`).
            assert_eq!(self.processor.setupProcessing(&mut setup), kResultOk);
            assert_eq!(c.setActive(1), kResultOk);
            assert_eq!(self.processor.setProcessing(1), kResultOk);
        }
    }

    fn deactivate(&self) {
        // SAFETY: the reverse of `activate`.
        unsafe {
            assert_eq!(self.processor.setProcessing(0), kResultOk);
            assert_eq!(self.component.setActive(0), kResultOk);
        }
    }

    /// Processes `input` in blocks of `block` samples (the last one shorter).
    fn process(&self, input: &[Vec<f32>; 2], block: usize) -> [Vec<f32>; 2] {
        let [left, right] = self
            .process_wide(input, 2, block)
            .try_into()
            .expect("stereo");
        [left, right]
    }

    /// [`process`](Self::process) of any number of channels in and out.
    fn process_wide(&self, input: &[Vec<f32>], num_outputs: usize, block: usize) -> Vec<Vec<f32>> {
        let total = input[0].len();
        let mut output = vec![vec![0.0f32; total]; num_outputs];
        let mut in_block = vec![vec![0.0f32; block]; input.len()];
        let mut out_block = vec![vec![0.0f32; block]; num_outputs];
        let mut start = 0;
        while start < total {
            let len = block.min(total - start);
            for (dst, src) in in_block.iter_mut().zip(input) {
                dst[..len].copy_from_slice(&src[start..start + len]);
            }
            let mut in_ptrs: Vec<*mut f32> = in_block.iter_mut().map(|b| b.as_mut_ptr()).collect();
            let mut out_ptrs: Vec<*mut f32> =
                out_block.iter_mut().map(|b| b.as_mut_ptr()).collect();
            let mut inputs = AudioBusBuffers {
                numChannels: input.len() as i32,
                silenceFlags: 0,
                __field0: AudioBusBuffers__type0 {
                    channelBuffers32: in_ptrs.as_mut_ptr(),
                },
            };
            let mut outputs = AudioBusBuffers {
                numChannels: num_outputs as i32,
                silenceFlags: 0,
                __field0: AudioBusBuffers__type0 {
                    channelBuffers32: out_ptrs.as_mut_ptr(),
                },
            };
            let mut data = ProcessData {
                processMode: kOffline as i32,
                symbolicSampleSize: kSample32 as i32,
                numSamples: len as i32,
                numInputs: 1,
                numOutputs: 1,
                inputs: &mut inputs,
                outputs: &mut outputs,
                inputParameterChanges: null_mut(),
                outputParameterChanges: null_mut(),
                inputEvents: null_mut(),
                outputEvents: null_mut(),
                processContext: null_mut(),
            };
            // SAFETY: the buffers hold `len` samples per channel and outlive the call.
            assert_eq!(unsafe { self.processor.process(&mut data) }, kResultOk);
            for (dst, src) in output.iter_mut().zip(&out_block) {
                dst[start..start + len].copy_from_slice(&src[..len]);
            }
            start += len;
        }
        output
    }

    /// Sets the parameter titled `title` to `normalized` through the edit controller
    /// (nice-plug's component is its own controller), as a host does before activation.
    fn set_param(&self, title: &str, normalized: f64) {
        let controller = self
            .component
            .cast::<IEditController>()
            .expect("the component is an IEditController");
        // SAFETY: the controller's parameter calls with valid indices and an info struct that
        // lives through each call.
        unsafe {
            for idx in 0..controller.getParameterCount() {
                let mut info: ParameterInfo = std::mem::zeroed();
                assert_eq!(controller.getParameterInfo(idx, &mut info), kResultOk);
                let len = info.title.iter().position(|&c| c == 0).unwrap_or(128);
                if String::from_utf16_lossy(&info.title[..len]) == title {
                    let result = controller.setParamNormalized(info.id, normalized);
                    assert_eq!(result, kResultOk, "{title}");
                    return;
                }
            }
        }
        panic!("no parameter titled {title}");
    }

    /// The latency the plugin reports (`IAudioProcessor::getLatencySamples`).
    fn latency(&self) -> u32 {
        // SAFETY: a plain query on a live processor.
        unsafe { self.processor.getLatencySamples() }
    }

    fn save(&self) -> Vec<u8> {
        let stream = ComWrapper::new(MemoryStream::default());
        let ptr = stream.to_com_ptr::<IBStream>().unwrap();
        // SAFETY: a valid stream that lives through the call.
        assert_eq!(unsafe { self.component.getState(ptr.as_ptr()) }, kResultOk);
        stream.data.lock().unwrap().0.clone()
    }

    fn load(&self, bytes: &[u8]) {
        let stream = ComWrapper::new(MemoryStream {
            data: Mutex::new((bytes.to_vec(), 0)),
        });
        let ptr = stream.to_com_ptr::<IBStream>().unwrap();
        // SAFETY: as for `save`.
        assert_eq!(unsafe { self.component.setState(ptr.as_ptr()) }, kResultOk);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: the last call before the references are released.
        unsafe {
            self.component.terminate();
        }
    }
}

/// An in-memory IBStream: the bytes and the position.
#[derive(Default)]
struct MemoryStream {
    data: Mutex<(Vec<u8>, usize)>,
}

impl Class for MemoryStream {
    type Interfaces = (IBStream,);
}

impl IBStreamTrait for MemoryStream {
    unsafe fn read(&self, buffer: *mut c_void, num_bytes: int32, num_read: *mut int32) -> tresult {
        let Ok(mut guard) = self.data.lock() else {
            return kResultFalse;
        };
        let (data, pos) = &mut *guard;
        let count = (num_bytes.max(0) as usize).min(data.len() - *pos);
        // SAFETY: the caller's buffer holds `num_bytes` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(data[*pos..].as_ptr(), buffer as *mut u8, count);
            if !num_read.is_null() {
                *num_read = count as int32;
            }
        }
        *pos += count;
        kResultOk
    }

    unsafe fn write(
        &self,
        buffer: *mut c_void,
        num_bytes: int32,
        num_written: *mut int32,
    ) -> tresult {
        let Ok(mut guard) = self.data.lock() else {
            return kResultFalse;
        };
        let (data, pos) = &mut *guard;
        let count = num_bytes.max(0) as usize;
        // SAFETY: the caller's buffer holds `num_bytes` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(buffer as *const u8, count) };
        let end = *pos + count;
        if data.len() < end {
            data.resize(end, 0);
        }
        data[*pos..end].copy_from_slice(bytes);
        *pos = end;
        if !num_written.is_null() {
            // SAFETY: the caller's out-parameter.
            unsafe { *num_written = count as int32 };
        }
        kResultOk
    }

    unsafe fn seek(&self, pos: int64, mode: int32, result: *mut int64) -> tresult {
        let Ok(mut guard) = self.data.lock() else {
            return kResultFalse;
        };
        let (data, current) = &mut *guard;
        // The mode constants are unsigned on some platforms, signed on others.
        let base = match i64::from(mode) {
            m if m == kIBSeekSet as i64 => 0,
            m if m == kIBSeekCur as i64 => *current as i64,
            m if m == kIBSeekEnd as i64 => data.len() as i64,
            _ => return kInvalidArgument,
        };
        let target = base + pos;
        if target < 0 || target > data.len() as i64 {
            return kInvalidArgument;
        }
        *current = target as usize;
        if !result.is_null() {
            // SAFETY: the caller's out-parameter.
            unsafe { *result = target };
        }
        kResultOk
    }

    unsafe fn tell(&self, pos: *mut int64) -> tresult {
        let Ok(guard) = self.data.lock() else {
            return kResultFalse;
        };
        if pos.is_null() {
            return kInvalidArgument;
        }
        // SAFETY: the caller's out-parameter.
        unsafe { *pos = guard.1 as int64 };
        kResultOk
    }
}

/// One second of stereo noise then half a second of silence, through the default settings
/// (Hall, mix 35 %, zero latency) at 44.1 and 48 kHz and blocks of 64 and 512: the output is
/// the CLI's render of the same input, and a second instance loaded with the first one's state
/// plays the same.
#[test]
fn vst3_processes_like_the_cli_render_and_restores_its_state() {
    let module = Module::load();
    let class = module.audio_class();
    for (rate, block) in [(48_000u32, 64usize), (44_100, 512)] {
        let sound = rate as usize;
        let total = sound + rate as usize / 2;
        let mut input = [
            noise(total, 0.5, RNG_SEED + 200),
            noise(total, 0.5, RNG_SEED + 201),
        ];
        input.iter_mut().for_each(|x| x[sound..].fill(0.0));

        let instance = module.instantiate(&class);
        instance.activate(f64::from(rate), block);
        let output = instance.process(&input, block);
        instance.deactivate();

        let hall = BuiltinIr::Hall.generate(rate);
        let (want, _) = render(
            &hall,
            &input,
            RenderOptions {
                blocks: BlockSizes::Fixed(block),
                mix: DEFAULT_MIX,
                width: 1.0,
                latency_mode: LatencyMode::Zero,
                executor: Executor::Workers,
                outputs: None,
                format: Default::default(),
            },
        )
        .expect("render");
        for channel in 0..2 {
            let want: Vec<f64> = want[channel][..total]
                .iter()
                .map(|&s| f64::from(s))
                .collect();
            let snr = snr_db(&output[channel], &want);
            assert!(
                snr >= 100.0,
                "{rate} Hz, block {block}, channel {channel}: {snr:.1} dB against the render"
            );
        }

        let state = instance.save();
        assert!(!state.is_empty(), "an empty state");
        let restored = module.instantiate(&class);
        restored.load(&state);
        restored.activate(f64::from(rate), block);
        let again = restored.process(&input, block);
        restored.deactivate();
        for channel in 0..2 {
            // In real-time mode each instance staggers its big partitions against the others'
            // (another rounding, about 1e-7): the same output to within that.
            let diff = max_abs_diff(&again[channel], &output[channel]);
            assert!(
                diff < 1e-5,
                "{rate} Hz, block {block}, channel {channel}: the restored instance differs by \
                 up to {diff:e}"
            );
            let want: Vec<f64> = want[channel][..total]
                .iter()
                .map(|&s| f64::from(s))
                .collect();
            let snr = snr_db(&again[channel], &want);
            assert!(
                snr >= 100.0,
                "{rate} Hz, block {block}, channel {channel}: restored, {snr:.1} dB against the \
                 render"
            );
        }
    }
}

/// The latency a VST3 host reads back after activation (`getLatencySamples`): 0 for zero
/// latency, one quantum for low CPU, and the offload mode's L, the latency its plan takes for
/// the block size, with the audio delayed by exactly that much: an impulse through the dry
/// path (mix 0) comes out L samples later.
#[test]
fn vst3_reports_the_latency_of_each_mode() {
    let module = Module::load();
    let class = module.audio_class();
    // The Latency parameter's values: Zero, Low CPU, Offload 512, 1024, 2048, 4096.
    let normalized = |idx: usize| idx as f64 / 5.0;
    let offload =
        |asked: usize, block: usize| offload_shape(asked, block, PlanLimits::default()).0 as u32;
    for (mode, block, expected) in [
        (0, 256, 0),
        (1, 256, 256),
        (4, 64, offload(2048, 64)),
        (5, 512, offload(4096, 512)),
        (2, 64, offload(512, 64)),
    ] {
        let instance = module.instantiate(&class);
        instance.set_param("Latency", normalized(mode));
        instance.set_param("Mix", 0.0);
        instance.activate(48_000.0, block);
        assert_eq!(instance.latency(), expected, "mode {mode}, block {block}");
        let at = 777;
        let len = at + expected as usize + 1_000;
        let mut input = [vec![0.0f32; len], vec![0.0f32; len]];
        input[0][at] = 1.0;
        input[1][at] = 1.0;
        let output = instance.process(&input, block);
        for channel in output {
            let first = channel.iter().position(|&s| s != 0.0);
            assert_eq!(
                first,
                Some(at + expected as usize),
                "mode {mode}, block {block}"
            );
        }
        instance.deactivate();
    }
    assert_eq!(offload(2048, 64), 2048);
    assert_eq!(offload(512, 64), 2048);
}

/// Activation succeeds at any sample rate a host sets up (Steinberg's validator asks for
/// 1 234 567.8 Hz in its "Process Format" test). Outside 1 kHz to 768 kHz the plugin passes the
/// input through unchanged; at 1 kHz it convolves. The output is finite throughout, and nothing
/// in `process()` allocates (this library aborts if it does).
#[test]
fn vst3_activates_at_any_sample_rate() {
    let module = Module::load();
    let class = module.audio_class();
    let instance = module.instantiate(&class);
    let block = 256;
    let input = [
        noise(4_096, 0.5, RNG_SEED + 210),
        noise(4_096, 0.5, RNG_SEED + 211),
    ];
    for (rate, passes_through) in [
        (1.0, true),
        (1_000.0, false),
        (1_234_567.8, true),
        (3e6, true),
        (48_000.0, false),
    ] {
        instance.activate(rate, block);
        let output = instance.process(&input, block);
        instance.deactivate();
        for (channel, samples) in output.iter().enumerate() {
            assert!(
                samples.iter().all(|s| s.is_finite()),
                "{rate} Hz, channel {channel}: non-finite output"
            );
        }
        assert_eq!(
            output == input,
            passes_through,
            "{rate} Hz: the output is the input"
        );
    }
}

/// Every bus the plugin offers, asked for by channel count as VST3 hosts do: it is accepted,
/// the plugin names an arrangement of that many speakers, and it plays finite audio with the
/// dry and wet signals on the outputs the mapping gives them (nothing in `process()`
/// allocates: this library aborts if it does).
#[test]
fn vst3_plays_every_offered_bus() {
    use longtail::ir::IrLayout;
    use longtail::ir::mapping::{Bus, ChannelFormat, Dry, dry_source, map};
    use vst3::Steinberg::Vst::IAudioProcessorTrait as _;

    let module = Module::load();
    let class = module.audio_class();
    let instance = module.instantiate(&class);
    let block = 256;
    for layout in longtail::layouts::AUDIO_IO_LAYOUTS {
        let count = |c: Option<std::num::NonZeroU32>| c.map_or(0, |c| c.get()) as usize;
        let (inputs, outputs) = (
            count(layout.main_input_channels),
            count(layout.main_output_channels),
        );
        let mask = |n: usize| (1u64 << n) - 1;
        instance.activate_bus(48_000.0, block, mask(inputs), mask(outputs));
        let mut named = 0u64;
        // SAFETY: a valid out pointer.
        let result = unsafe {
            instance
                .processor
                .getBusArrangement(kOutput as i32, 0, &mut named)
        };
        assert_eq!(result, kResultOk);
        assert_eq!(named.count_ones() as usize, outputs, "{named:#x}");
        let input: Vec<Vec<f32>> = (0..inputs)
            .map(|c| noise(4_096, 0.5, RNG_SEED + 220 + c as u64))
            .collect();
        let output = instance.process_wide(&input, outputs, block);
        instance.deactivate();
        let bus = Bus::new(inputs, outputs, ChannelFormat::Auto);
        let mapping = map(IrLayout::Stereo, bus).expect("the built-ins play on every bus");
        for (output_idx, samples) in output.iter().enumerate() {
            assert!(samples.iter().all(|s| s.is_finite()), "{bus}: {output_idx}");
            let heard = mapping.paths.iter().any(|p| p.output == output_idx)
                || dry_source(bus, output_idx) != Dry::None;
            let energy: f64 = samples.iter().map(|&s| f64::from(s).powi(2)).sum();
            assert_eq!(energy > 1e-3, heard, "{bus}: output {output_idx}");
        }
    }
}
