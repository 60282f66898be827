//! The test host: the plugin library loaded through its VST3 entry points ([`Module`]), its
//! instances ([`Instance`]) with a component handler each ([`Handler`], which counts the
//! restarts the plugin asks for), and an in-memory stream for the state.

use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;

use longtail_tests::plugin_library;
use vst3::Steinberg::IBStream_::IStreamSeekMode_::{kIBSeekCur, kIBSeekEnd, kIBSeekSet};
use vst3::Steinberg::Vst::BusDirections_::{kInput, kOutput};
use vst3::Steinberg::Vst::MediaTypes_::kAudio;
use vst3::Steinberg::Vst::ProcessModes_::kOffline;
use vst3::Steinberg::Vst::RestartFlags_::kLatencyChanged;
use vst3::Steinberg::Vst::SpeakerArr::kStereo;
use vst3::Steinberg::Vst::SymbolicSampleSizes_::kSample32;
use vst3::Steinberg::Vst::{
    AudioBusBuffers, AudioBusBuffers__type0, IAudioProcessor, IAudioProcessorTrait, IComponent,
    IComponentHandler, IComponentHandlerTrait, IComponentTrait, IEditController,
    IEditControllerTrait, IParamValueQueue, IParamValueQueueTrait, IParameterChanges,
    IParameterChangesTrait, ParamID, ParamValue, ParameterInfo, ProcessData, ProcessSetup,
};
use vst3::Steinberg::{
    IBStream, IBStreamTrait, IPluginBaseTrait, IPluginFactory, IPluginFactoryTrait, PClassInfo,
    int32, int64, kInvalidArgument, kResultFalse, kResultOk, tresult,
};
use vst3::{Class, ComPtr, ComWrapper, Interface};

/// The class category of audio processors.
const AUDIO_MODULE: &CStr = c"Audio Module Class";

/// The loaded library and its factory (released before the library is closed).
pub struct Module {
    factory: ComPtr<IPluginFactory>,
    library: libloading::Library,
}

impl Module {
    pub fn load() -> Self {
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
    pub fn audio_class(&self) -> PClassInfo {
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

    pub fn instantiate(&self, class: &PClassInfo) -> Instance {
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
        let handler = ComWrapper::new(Handler::default());
        let controller = component
            .cast::<IEditController>()
            .expect("the component is an IEditController");
        let handler_ptr = handler
            .to_com_ptr::<IComponentHandler>()
            .expect("the handler is an IComponentHandler");
        // SAFETY: a live handler; the controller takes a reference of its own.
        let result = unsafe { controller.setComponentHandler(handler_ptr.as_ptr()) };
        assert_eq!(result, kResultOk, "setComponentHandler");
        Instance {
            component,
            processor,
            handler,
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

pub struct Instance {
    pub processor: ComPtr<IAudioProcessor>,
    pub component: ComPtr<IComponent>,
    /// The host's component handler, which the instance was given at creation.
    pub handler: ComWrapper<Handler>,
}

// SAFETY: a host calls an instance from several threads: the processor from its audio thread,
// the controller and the component from others. The tests do the same, one call of each
// interface at a time, as the VST3 threading rules allow; nice-plug's wrapper guards its own
// state for this (its plugin lock, atomics, its task queue).
unsafe impl Send for Instance {}
// SAFETY: as above.
unsafe impl Sync for Instance {}

impl Instance {
    /// Stereo in and out, then set up and activated for offline processing.
    pub fn activate(&self, rate: f64, max_block: usize) {
        self.activate_bus(rate, max_block, kStereo, kStereo);
    }

    /// [`activate`](Self::activate) with these speaker arrangements.
    pub fn activate_bus(&self, rate: f64, max_block: usize, input: u64, output: u64) {
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

    pub fn deactivate(&self) {
        self.stop_processing();
        self.set_inactive();
    }

    /// The first half of [`deactivate`](Self::deactivate): `setProcessing(false)`.
    pub fn stop_processing(&self) {
        // SAFETY: a plain call on a live processor.
        assert_eq!(unsafe { self.processor.setProcessing(0) }, kResultOk);
    }

    /// The second half of [`deactivate`](Self::deactivate): `setActive(false)`.
    pub fn set_inactive(&self) {
        // SAFETY: a plain call on a live component.
        assert_eq!(unsafe { self.component.setActive(0) }, kResultOk);
    }

    /// Processes `input` in blocks of `block` samples (the last one shorter).
    pub fn process(&self, input: &[Vec<f32>; 2], block: usize) -> [Vec<f32>; 2] {
        let [left, right] = self
            .process_wide(input, 2, block)
            .try_into()
            .expect("stereo");
        [left, right]
    }

    /// [`process`](Self::process) of any number of channels in and out.
    pub fn process_wide(
        &self,
        input: &[Vec<f32>],
        num_outputs: usize,
        block: usize,
    ) -> Vec<Vec<f32>> {
        self.process_automated(input, num_outputs, block, &[])
    }

    /// [`process_wide`](Self::process_wide) with `points` as the first block's parameter
    /// changes, as a host's audio thread passes its automation.
    pub fn process_automated(
        &self,
        input: &[Vec<f32>],
        num_outputs: usize,
        block: usize,
        points: &[Point],
    ) -> Vec<Vec<f32>> {
        let changes = ComWrapper::new(ParameterChanges::new(points));
        let changes_ptr = changes
            .as_com_ref::<IParameterChanges>()
            .expect("an IParameterChanges")
            .as_ptr();
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
                inputParameterChanges: if start == 0 && !points.is_empty() {
                    changes_ptr
                } else {
                    null_mut()
                },
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
    pub fn set_param(&self, title: &str, normalized: f64) {
        self.set_param_id(self.param_id(title), normalized);
    }

    /// The ID of the parameter titled `title`.
    pub fn param_id(&self, title: &str) -> u32 {
        let controller = self.controller();
        // SAFETY: the controller's parameter calls with valid indices and an info struct that
        // lives through each call.
        unsafe {
            for idx in 0..controller.getParameterCount() {
                let mut info: ParameterInfo = std::mem::zeroed();
                assert_eq!(controller.getParameterInfo(idx, &mut info), kResultOk);
                let len = info.title.iter().position(|&c| c == 0).unwrap_or(128);
                if String::from_utf16_lossy(&info.title[..len]) == title {
                    return info.id;
                }
            }
        }
        panic!("no parameter titled {title}");
    }

    /// Sets the parameter `id` to `normalized` through the edit controller, from the calling
    /// thread.
    pub fn set_param_id(&self, id: u32, normalized: f64) {
        // SAFETY: a parameter ID the controller listed.
        let result = unsafe { self.controller().setParamNormalized(id, normalized) };
        assert_eq!(result, kResultOk, "parameter {id}");
    }

    fn controller(&self) -> ComPtr<IEditController> {
        self.component
            .cast::<IEditController>()
            .expect("the component is an IEditController")
    }

    /// The latency the plugin reports (`IAudioProcessor::getLatencySamples`).
    pub fn latency(&self) -> u32 {
        // SAFETY: a plain query on a live processor.
        unsafe { self.processor.getLatencySamples() }
    }

    pub fn save(&self) -> Vec<u8> {
        let stream = ComWrapper::new(MemoryStream::default());
        let ptr = stream.to_com_ptr::<IBStream>().unwrap();
        // SAFETY: a valid stream that lives through the call.
        assert_eq!(unsafe { self.component.getState(ptr.as_ptr()) }, kResultOk);
        stream.data.lock().unwrap().0.clone()
    }

    pub fn load(&self, bytes: &[u8]) {
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

/// The host's `IComponentHandler`: counts the restarts an instance asks for, from whichever
/// thread nice-plug calls it on (its shared task thread, for a request made off the thread that
/// created the instance).
#[derive(Default)]
pub struct Handler {
    latency_restarts: AtomicUsize,
}

impl Handler {
    /// The `restartComponent` calls with `kLatencyChanged` so far.
    pub fn latency_restarts(&self) -> usize {
        self.latency_restarts.load(SeqCst)
    }
}

impl Class for Handler {
    type Interfaces = (IComponentHandler,);
}

impl IComponentHandlerTrait for Handler {
    unsafe fn beginEdit(&self, _id: ParamID) -> tresult {
        kResultOk
    }

    unsafe fn performEdit(&self, _id: ParamID, _value: ParamValue) -> tresult {
        kResultOk
    }

    unsafe fn endEdit(&self, _id: ParamID) -> tresult {
        kResultOk
    }

    unsafe fn restartComponent(&self, flags: int32) -> tresult {
        if flags & kLatencyChanged as int32 != 0 {
            self.latency_restarts.fetch_add(1, SeqCst);
        }
        kResultOk
    }
}

/// One automation point: the parameter, the sample offset in the block, the normalized value.
pub type Point = (ParamID, i32, f64);

/// The parameter changes of one block (`IParameterChanges`), one queue per parameter.
struct ParameterChanges {
    queues: Vec<ComWrapper<ParamQueue>>,
}

impl ParameterChanges {
    fn new(points: &[Point]) -> Self {
        let mut queues: Vec<ParamQueue> = Vec::new();
        for &(id, offset, value) in points {
            match queues.iter_mut().find(|queue| queue.id == id) {
                Some(queue) => queue.points.push((offset, value)),
                None => queues.push(ParamQueue {
                    id,
                    points: vec![(offset, value)],
                }),
            }
        }
        for queue in &mut queues {
            queue.points.sort_by_key(|&(offset, _)| offset);
        }
        Self {
            queues: queues.into_iter().map(ComWrapper::new).collect(),
        }
    }
}

impl Class for ParameterChanges {
    type Interfaces = (IParameterChanges,);
}

impl IParameterChangesTrait for ParameterChanges {
    unsafe fn getParameterCount(&self) -> int32 {
        self.queues.len() as int32
    }

    unsafe fn getParameterData(&self, index: int32) -> *mut IParamValueQueue {
        // Borrowed, as the API has it: no reference is passed.
        usize::try_from(index)
            .ok()
            .and_then(|index| self.queues.get(index))
            .and_then(|queue| queue.as_com_ref::<IParamValueQueue>())
            .map_or(null_mut(), |queue| queue.as_ptr())
    }

    unsafe fn addParameterData(
        &self,
        _id: *const ParamID,
        _index: *mut int32,
    ) -> *mut IParamValueQueue {
        null_mut()
    }
}

/// One parameter's points in a block (`IParamValueQueue`), by sample offset.
struct ParamQueue {
    id: ParamID,
    points: Vec<(int32, ParamValue)>,
}

impl Class for ParamQueue {
    type Interfaces = (IParamValueQueue,);
}

impl IParamValueQueueTrait for ParamQueue {
    unsafe fn getParameterId(&self) -> ParamID {
        self.id
    }

    unsafe fn getPointCount(&self) -> int32 {
        self.points.len() as int32
    }

    unsafe fn getPoint(
        &self,
        index: int32,
        sample_offset: *mut int32,
        value: *mut ParamValue,
    ) -> tresult {
        let Some(&(offset, point)) = usize::try_from(index)
            .ok()
            .and_then(|index| self.points.get(index))
        else {
            return kInvalidArgument;
        };
        // SAFETY: the caller's out-parameters.
        unsafe {
            *sample_offset = offset;
            *value = point;
        }
        kResultOk
    }

    unsafe fn addPoint(&self, _offset: int32, _value: ParamValue, _index: *mut int32) -> tresult {
        kResultFalse
    }
}
