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
//! submit and one readback. Per class, each kernel is one dispatch over the whole batch. With
//! the tiled kernels ([`kernels`]): forward FFT (window, FFT in workgroup memory, post-pass
//! into the delay lines, history) → MAC with the inverse pre-pass → inverse FFT with the
//! overlap-save output, 3 dispatches; a four-step class splits each FFT into two passes and
//! does the post-pass and history in a dispatch of its own, 6. With the radix-2 fallback:
//! window → history → forward FFT stages → FDL update → spectral MAC → inverse pre-pass →
//! inverse FFT stages → overlap-save. Then a copy into the readback buffer. So the number of
//! dispatches per period does not grow with the number of instances or paths
//! ([`Convolver::dispatches`]); with timestamp queries ([`Convolver::enable_timing`]) a period
//! is also timed on the GPU.
//!
//! Nothing here runs on an audio thread; the hub's thread drives it.
//!
//! # Parts
//!
//! Each part uses only the parts listed before it (and this module uses them all):
//!
//! - [`level`]: what a level is to the convolver ([`LevelSpec`], [`LevelId`], [`ChunkStart`]).
//! - [`arena`]: the first-fit allocator of the arenas.
//! - [`kernels`]: the compute pipelines and the dispatch steps of a period.
//! - [`class`]: the levels of one partition size, their buffers, bindings and batch.
//!
//! This module keeps the device, the classes and the registered levels ([`Convolver`]).

pub mod arena;
pub mod class;
pub mod kernels;
pub mod level;

use crate::GpuError;
use crate::device::{ErrorSink, OpenDevice};
use crate::layout::{InJob, OutJob};
use crate::period_stats::{Phases, thread_cpu_us};
use class::{Class, LevelSlot, Staged, clear_level};
use kernels::Pipelines;
pub use kernels::{FftKernels, TiledPasses};
pub use level::{ChunkStart, LevelId, LevelSpec, MIN_PARTITION};

/// How long a period may take before the device counts as hung.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);
/// How long a napping wait sleeps between two polls ([`Convolver::set_napping`]).
pub const NAP: std::time::Duration = std::time::Duration::from_micros(100);

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
    /// Dispatches recorded by the last [`Self::execute`].
    dispatches: usize,
    /// Timestamps around each period, when asked for and the adapter has them.
    timing: Option<Timing>,
    /// The last period's time on the GPU (from the timestamps), in microseconds.
    gpu_period_us: Option<f64>,
    /// The last period's phases ([`Self::phases`]).
    phases: Phases,
    /// Whether [`Self::execute`] naps instead of blocking ([`Self::set_napping`]).
    napping: bool,
    /// Test hook: the device was destroyed on purpose.
    lost: bool,
}

/// A query set of two timestamps (the period's first pass begins, its last pass ends), the
/// buffer they resolve into and its readback.
struct Timing {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
}

impl std::fmt::Debug for Convolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Convolver")
            .field("adapter", &self.summary)
            .field("levels", &self.levels.iter().flatten().count())
            .finish()
    }
}

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
        let tile = options
            .kernels
            .tile(limits.max_compute_workgroup_storage_size);
        let pipelines = Pipelines::new(&device, tile);
        let convolver = Self {
            device,
            queue,
            summary,
            limits,
            errors,
            pipelines,
            classes: Vec::new(),
            levels: Vec::new(),
            dispatches: 0,
            timing: None,
            gpu_period_us: None,
            phases: Phases::default(),
            napping: false,
            lost: false,
        };
        convolver.check()?;
        Ok(convolver)
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &crate::AdapterSummary {
        &self.summary
    }

    /// The tile of the tiled FFT kernels (complex points in a workgroup's buffer),
    /// or `None` where the radix-2 kernels run.
    pub fn tile(&self) -> Option<u32> {
        self.pipelines.tiled.as_ref().map(|t| t.tile)
    }

    /// Compute dispatches the last [`Self::execute`] recorded (all classes).
    pub fn dispatches(&self) -> usize {
        self.dispatches
    }

    /// Times each period on the GPU with timestamp queries from now on; false where the
    /// adapter has none.
    pub fn enable_timing(&mut self) -> bool {
        if !self
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
        {
            return false;
        }
        if self.timing.is_none() {
            let buffer = |label: &str, usage: wgpu::BufferUsages| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: 16,
                    usage,
                    mapped_at_creation: false,
                })
            };
            self.timing = Some(Timing {
                queries: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("period timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                }),
                resolve: buffer(
                    "timestamps",
                    wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                ),
                readback: buffer(
                    "timestamp readback",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
                period_ns: f64::from(self.queue.get_timestamp_period()),
            });
        }
        true
    }

    /// The last period's time on the GPU, from its first dispatch to its last, in
    /// microseconds (after [`Self::enable_timing`]).
    pub fn gpu_period_us(&self) -> Option<f64> {
        self.gpu_period_us
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
                let tile = self.tile();
                let class = Class::new(&self.device, &self.queue, p, tile);
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
        let grew = self.classes[class_idx].ensure_capacity(
            &self.device,
            &self.queue,
            &self.limits,
            &self.pipelines,
        )?;
        if grew {
            self.check()?;
        }
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
        clear_level(&mut encoder, buffers, &slot, p);
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
        let started = std::time::Instant::now();
        let alignment = u64::from(self.limits.min_uniform_buffer_offset_alignment).max(32);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mapped: Vec<usize> = (0..self.classes.len())
            .filter(|&idx| !self.classes[idx].staged.is_empty())
            .collect();
        self.dispatches = 0;
        self.gpu_period_us = None;
        self.phases = Phases {
            largest_partition: (mapped.iter())
                .map(|&idx| self.classes[idx].partition_size)
                .max()
                .unwrap_or(0),
            ..Phases::default()
        };
        if mapped.is_empty() {
            return Ok(());
        }
        for (nth, &class_idx) in mapped.iter().enumerate() {
            // The first class's pass stamps the period's start, the last one's its end.
            let timestamps = self
                .timing
                .as_ref()
                .map(|t| wgpu::ComputePassTimestampWrites {
                    query_set: &t.queries,
                    beginning_of_pass_write_index: (nth == 0).then_some(0),
                    end_of_pass_write_index: (nth + 1 == mapped.len()).then_some(1),
                });
            self.dispatches += self.classes[class_idx].record(
                &mut self.levels,
                &self.queue,
                &self.pipelines,
                &mut encoder,
                alignment,
                timestamps,
            );
        }
        if let Some(timing) = &self.timing {
            encoder.resolve_query_set(&timing.queries, 0..2, &timing.resolve, 0);
            encoder.copy_buffer_to_buffer(&timing.resolve, 0, &timing.readback, 0, 16);
        }
        self.queue.submit([encoder.finish()]);
        let status = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(timing) = &self.timing {
            let status = std::sync::Arc::clone(&status);
            timing
                .readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |result| {
                    if let Ok(mut status) = status.lock() {
                        status.push(result.map_err(|e| e.to_string()));
                    }
                });
        }
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
        let waiting = std::time::Instant::now();
        let wait_cpu_start = thread_cpu_us();
        let expected = mapped.len() + usize::from(self.timing.is_some());
        let poll = if self.napping {
            self.nap(&status, expected)
        } else {
            (self.device)
                .poll(wgpu::PollType::Wait {
                    submission_index: None,
                    timeout: Some(TIMEOUT),
                })
                .map(|_| ())
                .map_err(|err| err.to_string())
        };
        let wait_cpu_us = wait_cpu_start.and_then(|s| thread_cpu_us().map(|end| end - s));
        let done_waiting = std::time::Instant::now();
        self.phases.submit_us = (waiting - started).as_secs_f64() * 1e6;
        self.phases.wait_us = (done_waiting - waiting).as_secs_f64() * 1e6;
        self.phases.wait_cpu_us = wait_cpu_us;
        self.phases.napped = self.napping;
        let outcome = (|| {
            poll.map_err(|err| GpuError::Device(format!("waiting for the GPU: {err}")))?;
            self.check()?;
            let status = status.lock().map(|s| s.clone()).unwrap_or_default();
            if status.len() != expected {
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
        if let Some(timing) = &self.timing {
            if outcome.is_ok()
                && let Ok(view) = timing.readback.slice(..).get_mapped_range()
            {
                let stamps: &[u64] = bytemuck::cast_slice(&view);
                let ticks = stamps[1].wrapping_sub(stamps[0]);
                // A wrapped or zero pair (some drivers) is no measurement.
                if ticks > 0 && ticks < u64::MAX / 2 {
                    self.gpu_period_us = Some(ticks as f64 * timing.period_ns / 1e3);
                }
            }
            timing.readback.unmap();
        }
        self.phases.readback_us = done_waiting.elapsed().as_secs_f64() * 1e6;
        outcome
    }

    /// Whether [`Self::execute`] waits for the GPU by napping: polling the device between
    /// sleeps of [`NAP`], instead of blocking in the driver. For drivers whose blocking wait
    /// spins the CPU for the whole round trip (the hub turns it on when it sees one,
    /// [`Phases::wait_cpu_us`]); it costs up to one nap of round trip.
    pub fn set_napping(&mut self, on: bool) {
        self.napping = on;
    }

    /// Whether [`Self::execute`] naps ([`Self::set_napping`]).
    pub fn napping(&self) -> bool {
        self.napping
    }

    /// Polls the device every [`NAP`] until the `expected` readbacks have answered in `status`,
    /// or for [`TIMEOUT`].
    fn nap(
        &self,
        status: &std::sync::Mutex<Vec<Result<(), String>>>,
        expected: usize,
    ) -> Result<(), String> {
        let started = std::time::Instant::now();
        loop {
            self.device
                .poll(wgpu::PollType::Poll)
                .map_err(|err| err.to_string())?;
            // A poisoned lock ends the wait; the readbacks' check then says what is missing.
            if status.lock().map_or(true, |s| s.len() >= expected) {
                return Ok(());
            }
            if started.elapsed() >= TIMEOUT {
                return Err(format!("no answer within {TIMEOUT:?}"));
            }
            std::thread::sleep(NAP);
        }
    }

    /// The phases of the last [`Self::execute`]: submit, wait (wall and CPU time) and
    /// readback, and the largest partition in its batch.
    pub fn phases(&self) -> Phases {
        self.phases
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
}
