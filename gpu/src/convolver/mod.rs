//! Resident partitioned convolution on the GPU, batched over every registered level.
//!
//! # Data
//!
//! Levels are grouped in *classes* by partition size `P`. A class owns arenas on the GPU that
//! every level of that size shares: the input history (`P` samples per input stream), the
//! frequency-domain delay lines (`n` slots of `P + 1` bins per input stream) and the IR spectra
//! (`n` slots per path, carrying the inverse FFT's `1 / 2P`). They stay resident: a period
//! uploads only the new input chunks and downloads only the output chunks.
//!
//! # A period
//!
//! [`Convolver::stage`] queues one chunk of a level and returns the slice its input goes into;
//! [`Convolver::execute`] then runs every queued chunk of every class in one command buffer, one
//! submit and one readback. Per class, each kernel is one dispatch over the whole batch:
//! window → history → forward FFT stages → FDL update → spectral MAC → inverse pre-pass →
//! inverse FFT stages → overlap-save, then a copy into the readback buffer. So the number of
//! dispatches per period does not grow with the number of instances or paths.
//!
//! Nothing here runs on an audio thread; the hub's thread drives it.

use std::ops::Range;

use crate::GpuError;
use crate::device::{ErrorSink, OpenDevice};
use crate::layout::{InJob, OutJob, Params, PathJob};
use crate::reference::{self, C32};
use crate::shaders::{self, Kernel};

/// Smallest partition size the GPU takes.
pub const MIN_PARTITION: usize = 64;
/// Threads per workgroup in every kernel.
const WORKGROUP: u32 = 64;
/// Most workgroups in one grid dimension.
const MAX_GROUPS_X: u32 = 65_535;
/// How long a period may take before the device counts as hung.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// What a level needs on the GPU.
#[derive(Debug, Clone)]
pub struct LevelSpec {
    /// Partition size `P`, a power of two, at least [`MIN_PARTITION`].
    pub partition_size: usize,
    /// Partitions `n`.
    pub num_partitions: usize,
    /// Input channels.
    pub num_inputs: usize,
    /// Output channels.
    pub num_outputs: usize,
    /// `(input, output)` of each path.
    pub paths: Vec<(usize, usize)>,
    /// Per path, `n * (P + 1)` complex bins: partition `j`'s spectrum at `[j * (P + 1)..]`,
    /// scaled by `1 / 2P` (the spectra the CPU level uses).
    pub spectra: Vec<Vec<C32>>,
}

/// A registered level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelId(usize);

/// How a staged chunk relates to the level's history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkStart {
    /// The level restarts: clear its history and delay lines first.
    pub reset: bool,
    /// Chunks that never arrived before this one: silence goes into the delay lines for them.
    pub silent_chunks: usize,
}

/// A first-fit allocator over units of an arena.
#[derive(Debug, Default)]
struct Arena {
    /// High-water mark.
    end: u32,
    free: Vec<Range<u32>>,
}

impl Arena {
    fn alloc(&mut self, len: u32) -> u32 {
        if let Some(idx) = self.free.iter().position(|r| r.len() as u32 >= len) {
            let start = self.free[idx].start;
            self.free[idx].start += len;
            if self.free[idx].is_empty() {
                self.free.remove(idx);
            }
            return start;
        }
        let start = self.end;
        self.end += len;
        start
    }

    fn release(&mut self, start: u32, len: u32) {
        if len == 0 {
            return;
        }
        self.free.push(start..start + len);
        self.free.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u32>> = Vec::with_capacity(self.free.len());
        for range in self.free.drain(..) {
            match merged.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                _ => merged.push(range),
            }
        }
        if let Some(last) = merged.last()
            && last.end == self.end
        {
            self.end = last.start;
            merged.pop();
        }
        self.free = merged;
    }
}

/// A registered level's place in its class.
#[derive(Debug)]
struct LevelSlot {
    class_idx: usize,
    num_partitions: u32,
    num_inputs: u32,
    num_outputs: u32,
    /// First input stream (history arena).
    stream_base: u32,
    /// First FDL slot; input `i`'s delay line starts at `fdl_base + i * n`.
    fdl_base: u32,
    /// First spectra slot; path `k`'s spectra start at `spectra_base + k * n`.
    spectra_base: u32,
    paths: Vec<(usize, usize)>,
    /// Slot of the newest spectrum.
    head: u32,
}

/// One chunk queued for this period.
#[derive(Debug, Clone, Copy)]
struct Staged {
    level: usize,
    start: ChunkStart,
    /// Its input jobs start here in the class's batch.
    first_in_job: u32,
    /// Its output jobs start here.
    first_out_job: u32,
}

/// GPU buffers of one class, sized by capacities.
struct ClassBuffers {
    history: wgpu::Buffer,
    fdl: wgpu::Buffer,
    spectra: wgpu::Buffer,
    upload: wgpu::Buffer,
    work: [wgpu::Buffer; 2],
    acc: wgpu::Buffer,
    output: wgpu::Buffer,
    readback: wgpu::Buffer,
    in_jobs: wgpu::Buffer,
    out_jobs: wgpu::Buffer,
    path_jobs: wgpu::Buffer,
    params: wgpu::Buffer,
    /// One bind group per dispatch step (see [`Class::steps`]).
    bind_groups: Vec<wgpu::BindGroup>,
    /// Capacities the buffers were made for: streams, FDL slots, spectra slots, output streams,
    /// paths.
    capacity: [u32; 5],
}

/// All levels of one partition size.
struct Class {
    partition_size: usize,
    stages: u32,
    twiddles: wgpu::Buffer,
    half_twiddles: wgpu::Buffer,
    streams: Arena,
    fdl: Arena,
    spectra: Arena,
    outputs: Arena,
    paths: Arena,
    buffers: Option<ClassBuffers>,
    /// This period's batch.
    staged: Vec<Staged>,
    upload: Vec<f32>,
    in_jobs: Vec<InJob>,
    out_jobs: Vec<OutJob>,
    path_jobs: Vec<PathJob>,
    results: Vec<f32>,
}

/// Which kernel and buffers one dispatch step uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Window,
    History,
    /// A Stockham stage reading work buffer `src`.
    Fft {
        inverse: bool,
        stage: u32,
        src: usize,
    },
    FdlUpdate {
        src: usize,
    },
    Mac,
    C2rPre,
    OverlapSave {
        src: usize,
    },
}

impl Class {
    /// The dispatch steps of a period, in order.
    fn steps(&self) -> Vec<Step> {
        let mut steps = vec![Step::Window, Step::History];
        for stage in 0..self.stages {
            steps.push(Step::Fft {
                inverse: false,
                stage,
                src: (stage % 2) as usize,
            });
        }
        let src = (self.stages % 2) as usize;
        steps.push(Step::FdlUpdate { src });
        steps.push(Step::Mac);
        steps.push(Step::C2rPre);
        for stage in 0..self.stages {
            steps.push(Step::Fft {
                inverse: true,
                stage,
                src: (stage % 2) as usize,
            });
        }
        steps.push(Step::OverlapSave { src });
        steps
    }
}

/// The compute pipelines, built once.
struct Pipelines {
    window: wgpu::ComputePipeline,
    history: wgpu::ComputePipeline,
    fft: wgpu::ComputePipeline,
    fdl_update: wgpu::ComputePipeline,
    mac: wgpu::ComputePipeline,
    c2r_pre: wgpu::ComputePipeline,
    overlap_save: wgpu::ComputePipeline,
}

fn pipeline(device: &wgpu::Device, kernel: Kernel) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.name),
        source: wgpu::ShaderSource::Wgsl(kernel.source.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(kernel.name),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Resident partitioned convolution for any number of levels.
pub struct Convolver {
    device: wgpu::Device,
    queue: wgpu::Queue,
    summary: crate::AdapterSummary,
    limits: wgpu::Limits,
    errors: ErrorSink,
    pipelines: Pipelines,
    classes: Vec<Class>,
    levels: Vec<Option<LevelSlot>>,
    /// Test hook: the device was destroyed on purpose.
    lost: bool,
}

impl std::fmt::Debug for Convolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Convolver")
            .field("adapter", &self.summary)
            .field("levels", &self.levels.iter().flatten().count())
            .finish()
    }
}

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

impl Convolver {
    /// Opens the GPU and builds the pipelines.
    pub fn open(options: crate::OpenOptions) -> Result<Self, GpuError> {
        let OpenDevice {
            device,
            queue,
            summary,
            limits,
            errors,
        } = crate::device::open(options)?;
        let pipelines = Pipelines {
            window: pipeline(&device, shaders::WINDOW),
            history: pipeline(&device, shaders::HISTORY),
            fft: pipeline(&device, shaders::FFT_STOCKHAM),
            fdl_update: pipeline(&device, shaders::FDL_UPDATE),
            mac: pipeline(&device, shaders::SPECTRAL_MAC),
            c2r_pre: pipeline(&device, shaders::C2R_PRE),
            overlap_save: pipeline(&device, shaders::OVERLAP_SAVE),
        };
        let convolver = Self {
            device,
            queue,
            summary,
            limits,
            errors,
            pipelines,
            classes: Vec::new(),
            levels: Vec::new(),
            lost: false,
        };
        convolver.check()?;
        Ok(convolver)
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &crate::AdapterSummary {
        &self.summary
    }

    /// Registered levels.
    pub fn num_levels(&self) -> usize {
        self.levels.iter().flatten().count()
    }

    fn check(&self) -> Result<(), GpuError> {
        match self.errors.error() {
            Some(message) => Err(GpuError::Device(message)),
            None => Ok(()),
        }
    }

    /// Test hook: destroys the device, as a driver reset or an unplugged GPU would.
    #[doc(hidden)]
    pub fn lose_device(&mut self) {
        self.lost = true;
        self.device.destroy();
    }

    /// Uploads a level's IR spectra and makes room for its history and delay lines.
    pub fn register(&mut self, spec: &LevelSpec) -> Result<LevelId, GpuError> {
        self.check()?;
        let p = spec.partition_size;
        let n = spec.num_partitions;
        let bins = p + 1;
        if !p.is_power_of_two() || p < MIN_PARTITION || n == 0 {
            return Err(GpuError::Unsupported(format!(
                "partition size {p} with {n} partitions (need a power of two >= {MIN_PARTITION})"
            )));
        }
        if spec.spectra.len() != spec.paths.len()
            || spec.spectra.iter().any(|s| s.len() != n * bins)
            || spec
                .paths
                .iter()
                .any(|&(i, o)| i >= spec.num_inputs || o >= spec.num_outputs)
        {
            return Err(GpuError::Unsupported(
                "level spectra or paths do not match its shape".into(),
            ));
        }
        let class_idx = match self.classes.iter().position(|c| c.partition_size == p) {
            Some(idx) => idx,
            None => {
                let class = self.new_class(p);
                self.classes.push(class);
                self.classes.len() - 1
            }
        };
        let class = &mut self.classes[class_idx];
        let slot = LevelSlot {
            class_idx,
            num_partitions: n as u32,
            num_inputs: spec.num_inputs as u32,
            num_outputs: spec.num_outputs as u32,
            stream_base: class.streams.alloc(spec.num_inputs as u32),
            fdl_base: class.fdl.alloc((spec.num_inputs * n) as u32),
            spectra_base: class.spectra.alloc((spec.paths.len() * n) as u32),
            paths: spec.paths.clone(),
            head: 0,
        };
        class.outputs.end += spec.num_outputs as u32;
        class.paths.end += spec.paths.len() as u32;
        self.ensure_capacity(class_idx)?;
        let class = &self.classes[class_idx];
        let buffers = class
            .buffers
            .as_ref()
            .expect("allocated by ensure_capacity");
        let slot_bytes = (bins * 8) as u64;
        for (path_idx, spectra) in spec.spectra.iter().enumerate() {
            let offset = (slot.spectra_base as u64 + (path_idx * n) as u64) * slot_bytes;
            self.queue
                .write_buffer(&buffers.spectra, offset, bytemuck::cast_slice(spectra));
        }
        let mut encoder = self.device.create_command_encoder(&Default::default());
        Self::clear_level(&mut encoder, buffers, &slot, p);
        self.queue.submit([encoder.finish()]);
        self.check()?;
        let id = match self.levels.iter().position(Option::is_none) {
            Some(idx) => {
                self.levels[idx] = Some(slot);
                idx
            }
            None => {
                self.levels.push(Some(slot));
                self.levels.len() - 1
            }
        };
        Ok(LevelId(id))
    }

    /// Forgets a level; its place in the arenas is reused.
    pub fn unregister(&mut self, id: LevelId) {
        let Some(slot) = self.levels.get_mut(id.0).and_then(Option::take) else {
            return;
        };
        let class = &mut self.classes[slot.class_idx];
        class.staged.retain(|s| s.level != id.0);
        let n = slot.num_partitions;
        class.streams.release(slot.stream_base, slot.num_inputs);
        class.fdl.release(slot.fdl_base, slot.num_inputs * n);
        class
            .spectra
            .release(slot.spectra_base, slot.paths.len() as u32 * n);
        // Output and path counts only bound the per-period buffers.
        class.outputs.end -= slot.num_outputs;
        class.paths.end -= slot.paths.len() as u32;
    }

    fn new_class(&self, partition_size: usize) -> Class {
        let make = |label: &str, data: &[C32]| {
            let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (data.len() * 8) as u64,
                usage: STORAGE,
                mapped_at_creation: false,
            });
            self.queue
                .write_buffer(&buffer, 0, bytemuck::cast_slice(data));
            buffer
        };
        Class {
            partition_size,
            stages: partition_size.trailing_zeros(),
            twiddles: make("twiddles", &reference::twiddles(partition_size)),
            half_twiddles: make("half twiddles", &reference::half_twiddles(partition_size)),
            streams: Arena::default(),
            fdl: Arena::default(),
            spectra: Arena::default(),
            outputs: Arena::default(),
            paths: Arena::default(),
            buffers: None,
            staged: Vec::new(),
            upload: Vec::new(),
            in_jobs: Vec::new(),
            out_jobs: Vec::new(),
            path_jobs: Vec::new(),
            results: Vec::new(),
        }
    }

    /// Grows a class's buffers to hold its arenas (doubling), keeping the resident contents.
    fn ensure_capacity(&mut self, class_idx: usize) -> Result<(), GpuError> {
        let class = &self.classes[class_idx];
        let needed = [
            class.streams.end,
            class.fdl.end,
            class.spectra.end,
            class.outputs.end,
            class.paths.end,
        ];
        let current = class.buffers.as_ref().map_or([0; 5], |b| b.capacity);
        if needed.iter().zip(&current).all(|(n, c)| n <= c) {
            return Ok(());
        }
        let capacity: [u32; 5] = std::array::from_fn(|i| {
            if needed[i] <= current[i] {
                current[i]
            } else {
                needed[i].max(current[i] * 2).max(1)
            }
        });
        let p = class.partition_size as u64;
        let bins = p + 1;
        let [streams, fdl_slots, spectra_slots, outputs, paths] = capacity.map(u64::from);
        let max_binding = self.limits.max_storage_buffer_binding_size;
        let sizes = [
            ("history", streams * p * 4),
            ("fdl", fdl_slots * bins * 8),
            ("spectra", spectra_slots * bins * 8),
        ];
        for (what, bytes) in sizes {
            if bytes > max_binding || bytes > self.limits.max_buffer_size {
                return Err(GpuError::OutOfMemory(format!(
                    "the {what} of {p}-sample partitions would need {bytes} bytes; this \
                     adapter binds at most {max_binding}"
                )));
            }
        }
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16),
                usage,
                mapped_at_creation: false,
            })
        };
        let work_items = streams.max(outputs);
        let alignment = u64::from(self.limits.min_uniform_buffer_offset_alignment).max(32);
        let steps = class.steps();
        let new = ClassBuffers {
            history: buffer("history", streams * p * 4, STORAGE),
            fdl: buffer("fdl", fdl_slots * bins * 8, STORAGE),
            spectra: buffer("spectra", spectra_slots * bins * 8, STORAGE),
            upload: buffer("upload", streams * p * 4, STORAGE),
            work: [
                buffer("work a", work_items * p * 8, STORAGE),
                buffer("work b", work_items * p * 8, STORAGE),
            ],
            acc: buffer("acc", outputs * bins * 8, STORAGE),
            output: buffer("output", outputs * p * 4, STORAGE),
            readback: buffer(
                "readback",
                outputs * p * 4,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            in_jobs: buffer("in jobs", streams * 16, STORAGE),
            out_jobs: buffer("out jobs", outputs * 8, STORAGE),
            path_jobs: buffer("path jobs", paths * 8, STORAGE),
            params: buffer(
                "params",
                steps.len() as u64 * alignment,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            bind_groups: Vec::new(),
            capacity,
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        if let Some(old) = &class.buffers {
            for (from, to) in [
                (&old.history, &new.history),
                (&old.fdl, &new.fdl),
                (&old.spectra, &new.spectra),
            ] {
                encoder.copy_buffer_to_buffer(from, 0, to, 0, from.size());
            }
        }
        self.queue.submit([encoder.finish()]);
        let mut new = new;
        new.bind_groups = steps
            .iter()
            .enumerate()
            .map(|(idx, step)| self.bind_group(class, &new, *step, idx as u64 * alignment))
            .collect();
        self.classes[class_idx].buffers = Some(new);
        self.check()
    }

    fn bind_group(
        &self,
        class: &Class,
        buffers: &ClassBuffers,
        step: Step,
        params_offset: u64,
    ) -> wgpu::BindGroup {
        let params = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &buffers.params,
            offset: params_offset,
            size: wgpu::BufferSize::new(std::mem::size_of::<Params>() as u64),
        });
        let p = &self.pipelines;
        let (pipeline, resources): (&wgpu::ComputePipeline, Vec<wgpu::BindingResource>) = match step
        {
            Step::Window => (
                &p.window,
                vec![
                    params,
                    buffers.in_jobs.as_entire_binding(),
                    buffers.history.as_entire_binding(),
                    buffers.upload.as_entire_binding(),
                    buffers.work[0].as_entire_binding(),
                ],
            ),
            Step::History => (
                &p.history,
                vec![
                    params,
                    buffers.in_jobs.as_entire_binding(),
                    buffers.history.as_entire_binding(),
                    buffers.upload.as_entire_binding(),
                ],
            ),
            Step::Fft { src, .. } => (
                &p.fft,
                vec![
                    params,
                    class.twiddles.as_entire_binding(),
                    buffers.work[src].as_entire_binding(),
                    buffers.work[1 - src].as_entire_binding(),
                ],
            ),
            Step::FdlUpdate { src } => (
                &p.fdl_update,
                vec![
                    params,
                    buffers.in_jobs.as_entire_binding(),
                    class.half_twiddles.as_entire_binding(),
                    buffers.work[src].as_entire_binding(),
                    buffers.fdl.as_entire_binding(),
                ],
            ),
            Step::Mac => (
                &p.mac,
                vec![
                    params,
                    buffers.in_jobs.as_entire_binding(),
                    buffers.out_jobs.as_entire_binding(),
                    buffers.path_jobs.as_entire_binding(),
                    buffers.fdl.as_entire_binding(),
                    buffers.spectra.as_entire_binding(),
                    buffers.acc.as_entire_binding(),
                ],
            ),
            Step::C2rPre => (
                &p.c2r_pre,
                vec![
                    params,
                    class.half_twiddles.as_entire_binding(),
                    buffers.acc.as_entire_binding(),
                    buffers.work[0].as_entire_binding(),
                ],
            ),
            Step::OverlapSave { src } => (
                &p.overlap_save,
                vec![
                    params,
                    buffers.work[src].as_entire_binding(),
                    buffers.output.as_entire_binding(),
                ],
            ),
        };
        let entries: Vec<wgpu::BindGroupEntry> = resources
            .into_iter()
            .enumerate()
            .map(|(binding, resource)| wgpu::BindGroupEntry {
                binding: binding as u32,
                resource,
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// Clears a level's history and delay lines (recorded into `encoder`).
    fn clear_level(
        encoder: &mut wgpu::CommandEncoder,
        buffers: &ClassBuffers,
        slot: &LevelSlot,
        p: usize,
    ) {
        let p = p as u64;
        let slot_bytes = (p + 1) * 8;
        encoder.clear_buffer(
            &buffers.history,
            u64::from(slot.stream_base) * p * 4,
            Some(u64::from(slot.num_inputs) * p * 4),
        );
        encoder.clear_buffer(
            &buffers.fdl,
            u64::from(slot.fdl_base) * slot_bytes,
            Some(u64::from(slot.num_inputs * slot.num_partitions) * slot_bytes),
        );
    }

    /// Queues the next chunk of `level` for [`Self::execute`] and returns the slice its input
    /// goes into: `P` samples per input channel, one channel after another. At most one chunk
    /// per level and period: a level's chunks depend on each other through its history.
    pub fn stage(&mut self, level: LevelId, start: ChunkStart) -> &mut [f32] {
        let slot = self.levels[level.0]
            .as_ref()
            .expect("staged a level that is not registered");
        let class = &mut self.classes[slot.class_idx];
        assert!(
            !class.staged.iter().any(|s| s.level == level.0),
            "one chunk per level and period"
        );
        let p = class.partition_size;
        let first_in_job = class.in_jobs.len() as u32;
        let first_out_job = class.out_jobs.len() as u32;
        // Job tables are filled at execute time, when heads are known; reserve the rows.
        class
            .in_jobs
            .extend((0..slot.num_inputs).map(|_| InJob::default()));
        class
            .out_jobs
            .extend((0..slot.num_outputs).map(|_| OutJob::default()));
        class.staged.push(Staged {
            level: level.0,
            start,
            first_in_job,
            first_out_job,
        });
        let upload_start = first_in_job as usize * p;
        class
            .upload
            .resize(upload_start + slot.num_inputs as usize * p, 0.0);
        &mut class.upload[upload_start..]
    }

    /// Runs every staged chunk: one command buffer, one submit, one wait, one readback. Then
    /// [`Self::output`] has each chunk's result.
    pub fn execute(&mut self) -> Result<(), GpuError> {
        self.check()?;
        if self.lost {
            return Err(GpuError::Device("device lost (destroyed)".into()));
        }
        let alignment = u64::from(self.limits.min_uniform_buffer_offset_alignment).max(32);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut mapped = Vec::new();
        for class_idx in 0..self.classes.len() {
            if self.classes[class_idx].staged.is_empty() {
                continue;
            }
            self.record_class(class_idx, &mut encoder, alignment);
            mapped.push(class_idx);
        }
        if mapped.is_empty() {
            return Ok(());
        }
        self.queue.submit([encoder.finish()]);
        let status = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for &class_idx in &mapped {
            let class = &self.classes[class_idx];
            let bytes = (class.out_jobs.len() * class.partition_size * 4) as u64;
            let buffers = class.buffers.as_ref().expect("registered class");
            let status = std::sync::Arc::clone(&status);
            buffers
                .readback
                .slice(..bytes)
                .map_async(wgpu::MapMode::Read, move |result| {
                    if let Ok(mut status) = status.lock() {
                        status.push(result.map_err(|e| e.to_string()));
                    }
                });
        }
        let poll = self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(TIMEOUT),
        });
        let outcome = (|| {
            poll.map_err(|err| GpuError::Device(format!("waiting for the GPU: {err}")))?;
            self.check()?;
            let status = status.lock().map(|s| s.clone()).unwrap_or_default();
            if status.len() != mapped.len() {
                return Err(GpuError::Device("a readback never completed".into()));
            }
            if let Some(Err(err)) = status.into_iter().find(Result::is_err) {
                return Err(GpuError::Device(format!("readback failed: {err}")));
            }
            Ok(())
        })();
        for &class_idx in &mapped {
            let class = &mut self.classes[class_idx];
            let bytes = class.out_jobs.len() * class.partition_size * 4;
            let buffers = class.buffers.as_ref().expect("registered class");
            if outcome.is_ok()
                && let Ok(view) = buffers.readback.slice(..bytes as u64).get_mapped_range()
            {
                class.results.clear();
                class.results.extend_from_slice(bytemuck::cast_slice(&view));
            }
            buffers.readback.unmap();
        }
        outcome
    }

    /// After [`Self::execute`]: the result of the chunk staged for `level` this period, `P`
    /// samples per output channel.
    pub fn output(&self, level: LevelId) -> &[f32] {
        let slot = self.levels[level.0].as_ref().expect("registered level");
        let class = &self.classes[slot.class_idx];
        let staged = class
            .staged
            .iter()
            .find(|s| s.level == level.0)
            .expect("staged chunk");
        let p = class.partition_size;
        let start = staged.first_out_job as usize * p;
        &class.results[start..start + slot.num_outputs as usize * p]
    }

    /// Forgets this period's batch (call after reading the outputs).
    pub fn finish_period(&mut self) {
        for class in &mut self.classes {
            class.staged.clear();
            class.upload.clear();
            class.in_jobs.clear();
            class.out_jobs.clear();
            class.path_jobs.clear();
        }
    }

    /// Fills the job tables, writes the uploads and records one class's dispatches.
    fn record_class(&mut self, class_idx: usize, encoder: &mut wgpu::CommandEncoder, align: u64) {
        let class = &mut self.classes[class_idx];
        let p = class.partition_size;
        let buffers = class.buffers.as_ref().expect("registered class");
        class.path_jobs.clear();
        for staged in &class.staged {
            let slot = self.levels[staged.level]
                .as_mut()
                .expect("registered level");
            let n = slot.num_partitions;
            if staged.start.reset {
                Self::clear_level(encoder, buffers, slot, p);
                slot.head = 0;
            } else if staged.start.silent_chunks > 0 {
                // Silence for the chunks that never came: those slots are cleared, and the
                // window's older half (the history) too.
                let slot_bytes = (p as u64 + 1) * 8;
                for _ in 0..staged.start.silent_chunks.min(n as usize) {
                    slot.head = (slot.head + 1) % n;
                    for input in 0..slot.num_inputs {
                        let index = u64::from(slot.fdl_base + input * n + slot.head);
                        encoder.clear_buffer(&buffers.fdl, index * slot_bytes, Some(slot_bytes));
                    }
                }
                encoder.clear_buffer(
                    &buffers.history,
                    u64::from(slot.stream_base) * p as u64 * 4,
                    Some(u64::from(slot.num_inputs) * p as u64 * 4),
                );
            }
            slot.head = (slot.head + 1) % n;
            for input in 0..slot.num_inputs {
                class.in_jobs[(staged.first_in_job + input) as usize] = InJob {
                    stream: slot.stream_base + input,
                    fdl_base: slot.fdl_base + input * n,
                    slots: n,
                    head: slot.head,
                };
            }
            for output in 0..slot.num_outputs as usize {
                let path_start = class.path_jobs.len() as u32;
                for (path_idx, &(input, _)) in slot
                    .paths
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, o))| *o == output)
                {
                    class.path_jobs.push(PathJob {
                        in_job: staged.first_in_job + input as u32,
                        spectra_base: slot.spectra_base + path_idx as u32 * n,
                    });
                }
                class.out_jobs[staged.first_out_job as usize + output] = OutJob {
                    path_start,
                    path_count: class.path_jobs.len() as u32 - path_start,
                };
            }
        }
        let queue = &self.queue;
        queue.write_buffer(&buffers.upload, 0, bytemuck::cast_slice(&class.upload));
        queue.write_buffer(&buffers.in_jobs, 0, bytemuck::cast_slice(&class.in_jobs));
        queue.write_buffer(&buffers.out_jobs, 0, bytemuck::cast_slice(&class.out_jobs));
        if !class.path_jobs.is_empty() {
            queue.write_buffer(
                &buffers.path_jobs,
                0,
                bytemuck::cast_slice(&class.path_jobs),
            );
        }

        let inputs = class.in_jobs.len() as u32;
        let outputs = class.out_jobs.len() as u32;
        let m = p as u32;
        let steps = class.steps();
        let mut params_bytes = vec![0u8; steps.len() * align as usize];
        let mut grids = Vec::with_capacity(steps.len());
        for (idx, step) in steps.iter().enumerate() {
            let (total, span, inverse, count) = match *step {
                Step::Window | Step::History => (inputs * m, 0, false, inputs),
                Step::Fft { inverse, stage, .. } => {
                    let count = if inverse { outputs } else { inputs };
                    (count * m / 2, 1 << stage, inverse, count)
                }
                Step::FdlUpdate { .. } => (inputs * (m + 1), 0, false, inputs),
                Step::Mac => (outputs * (m + 1), 0, false, outputs),
                Step::C2rPre | Step::OverlapSave { .. } => (outputs * m, 0, false, outputs),
            };
            let groups = total.div_ceil(WORKGROUP).max(1);
            let groups_x = groups.min(MAX_GROUPS_X);
            let groups_y = groups.div_ceil(groups_x);
            let params = Params {
                total,
                row: groups_x * WORKGROUP,
                m,
                span,
                inverse: u32::from(inverse),
                count,
                pad0: 0,
                pad1: 0,
            };
            let offset = idx * align as usize;
            params_bytes[offset..offset + std::mem::size_of::<Params>()]
                .copy_from_slice(bytemuck::bytes_of(&params));
            grids.push((groups_x, groups_y));
        }
        queue.write_buffer(&buffers.params, 0, &params_bytes);

        let p_ = &self.pipelines;
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("longtail period"),
                timestamp_writes: None,
            });
            for ((step, bind_group), (groups_x, groups_y)) in
                steps.iter().zip(&buffers.bind_groups).zip(grids)
            {
                let pipeline = match step {
                    Step::Window => &p_.window,
                    Step::History => &p_.history,
                    Step::Fft { .. } => &p_.fft,
                    Step::FdlUpdate { .. } => &p_.fdl_update,
                    Step::Mac => &p_.mac,
                    Step::C2rPre => &p_.c2r_pre,
                    Step::OverlapSave { .. } => &p_.overlap_save,
                };
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(groups_x, groups_y, 1);
            }
        }
        let bytes = u64::from(outputs) * p as u64 * 4;
        encoder.copy_buffer_to_buffer(&buffers.output, 0, &buffers.readback, 0, bytes);
    }
}
