//! A class: all levels of one partition size, sharing resident arenas on the GPU
//! (`Class`): where each level sits in them, the buffers (grown as levels come), their
//! bindings to the kernels, and the recording of one period's batch.
//!
//! Uses the arena allocator, the kernels, the level types and the job tables of
//! [`crate::layout`]; the [`Convolver`](super::Convolver) owns the classes.

use crate::GpuError;
use crate::layout::{InJob, OutJob, Params, PathJob};
use crate::reference::{self, C32};

use super::arena::Arena;
use super::kernels::{MAX_GROUPS_X, Pipelines, Step, TiledPasses, WORKGROUP};
use super::level::ChunkStart;

/// A registered level's place in its class.
#[derive(Debug)]
pub(super) struct LevelSlot {
    pub(super) class_idx: usize,
    pub(super) num_partitions: u32,
    pub(super) num_inputs: u32,
    pub(super) num_outputs: u32,
    /// First input stream (history arena).
    pub(super) stream_base: u32,
    /// First FDL slot; input `i`'s delay line starts at `fdl_base + i * n`.
    pub(super) fdl_base: u32,
    /// First spectra slot; path `k`'s spectra start at `spectra_base + k * n`.
    pub(super) spectra_base: u32,
    pub(super) paths: Vec<(usize, usize)>,
    /// Slot of the newest spectrum.
    pub(super) head: u32,
}

/// One chunk queued for this period.
#[derive(Debug, Clone, Copy)]
pub(super) struct Staged {
    pub(super) level: usize,
    pub(super) start: ChunkStart,
    /// Its input jobs start here in the class's batch.
    pub(super) first_in_job: u32,
    /// Its output jobs start here.
    pub(super) first_out_job: u32,
}

/// GPU buffers of one class, sized by capacities.
pub(super) struct ClassBuffers {
    pub(super) history: wgpu::Buffer,
    pub(super) fdl: wgpu::Buffer,
    pub(super) spectra: wgpu::Buffer,
    pub(super) upload: wgpu::Buffer,
    pub(super) work: [wgpu::Buffer; 2],
    pub(super) acc: wgpu::Buffer,
    pub(super) output: wgpu::Buffer,
    pub(super) readback: wgpu::Buffer,
    pub(super) in_jobs: wgpu::Buffer,
    pub(super) out_jobs: wgpu::Buffer,
    pub(super) path_jobs: wgpu::Buffer,
    pub(super) params: wgpu::Buffer,
    /// One bind group per dispatch step (see [`Class::steps`]).
    pub(super) bind_groups: Vec<wgpu::BindGroup>,
    /// Capacities the buffers were made for: streams, FDL slots, spectra slots, output streams,
    /// paths.
    pub(super) capacity: [u32; 5],
}

/// All levels of one partition size.
pub(super) struct Class {
    pub(super) partition_size: usize,
    pub(super) stages: u32,
    /// How the tiled kernels split this size's transforms; `None`: the radix-2 kernels.
    pub(super) tiled: Option<TiledPasses>,
    /// The radix-2 kernels' table (`M / 2` twiddles), or the tiled kernels' (`M`).
    pub(super) twiddles: wgpu::Buffer,
    pub(super) half_twiddles: wgpu::Buffer,
    pub(super) streams: Arena,
    pub(super) fdl: Arena,
    pub(super) spectra: Arena,
    pub(super) outputs: Arena,
    pub(super) paths: Arena,
    pub(super) buffers: Option<ClassBuffers>,
    /// This period's batch.
    pub(super) staged: Vec<Staged>,
    pub(super) upload: Vec<f32>,
    pub(super) in_jobs: Vec<InJob>,
    pub(super) out_jobs: Vec<OutJob>,
    pub(super) path_jobs: Vec<PathJob>,
    pub(super) results: Vec<f32>,
}

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::COPY_SRC);

impl Class {
    /// The dispatch steps of a period, in order.
    pub(super) fn steps(&self) -> Vec<Step> {
        match self.tiled {
            Some(TiledPasses::Whole { .. }) => {
                return vec![Step::ForwardWhole, Step::MacPre, Step::InverseWhole];
            }
            Some(TiledPasses::FourStep { .. }) => {
                return vec![
                    Step::ForwardColumns,
                    Step::ForwardRows,
                    Step::FdlHistory,
                    Step::MacPre,
                    Step::InverseColumns,
                    Step::InverseRows,
                ];
            }
            None => {}
        }
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

    /// An empty class of `partition_size` samples, its twiddle tables uploaded; the tiled
    /// kernels run its transforms where `tile` is given and they fit.
    pub(super) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        partition_size: usize,
        tile: Option<u32>,
    ) -> Self {
        let make = |label: &str, data: &[C32]| {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (data.len() * 8) as u64,
                usage: STORAGE,
                mapped_at_creation: false,
            });
            queue.write_buffer(&buffer, 0, bytemuck::cast_slice(data));
            buffer
        };
        let tiled = tile.and_then(|tile| TiledPasses::new(partition_size, tile as usize));
        let twiddles = match tiled {
            Some(_) => reference::full_twiddles(partition_size),
            None => reference::twiddles(partition_size),
        };
        Self {
            partition_size,
            stages: partition_size.trailing_zeros(),
            tiled,
            twiddles: make("twiddles", &twiddles),
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

    /// Grows the class's buffers to hold its arenas (doubling), keeping the resident contents.
    /// True when it made new buffers (the device's errors are then worth a look).
    pub(super) fn ensure_capacity(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        limits: &wgpu::Limits,
        pipelines: &Pipelines,
    ) -> Result<bool, GpuError> {
        let class = &*self;
        let needed = [
            class.streams.end,
            class.fdl.end,
            class.spectra.end,
            class.outputs.end,
            class.paths.end,
        ];
        let current = class.buffers.as_ref().map_or([0; 5], |b| b.capacity);
        if needed.iter().zip(&current).all(|(n, c)| n <= c) {
            return Ok(false);
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
        let max_binding = limits.max_storage_buffer_binding_size;
        let sizes = [
            ("history", streams * p * 4),
            ("fdl", fdl_slots * bins * 8),
            ("spectra", spectra_slots * bins * 8),
        ];
        for (what, bytes) in sizes {
            if bytes > max_binding || bytes > limits.max_buffer_size {
                return Err(GpuError::OutOfMemory(format!(
                    "the {what} of {p}-sample partitions would need {bytes} bytes; this \
                     adapter binds at most {max_binding}"
                )));
            }
        }
        let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size.max(16),
                usage,
                mapped_at_creation: false,
            })
        };
        let work_items = streams.max(outputs);
        let alignment = u64::from(limits.min_uniform_buffer_offset_alignment).max(32);
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
            // Only the radix-2 kernels keep the MAC's sums apart from the pre-pass.
            acc: buffer(
                "acc",
                if class.tiled.is_some() {
                    0
                } else {
                    outputs * bins * 8
                },
                STORAGE,
            ),
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
        let mut encoder = device.create_command_encoder(&Default::default());
        if let Some(old) = &class.buffers {
            for (from, to) in [
                (&old.history, &new.history),
                (&old.fdl, &new.fdl),
                (&old.spectra, &new.spectra),
            ] {
                encoder.copy_buffer_to_buffer(from, 0, to, 0, from.size());
            }
        }
        queue.submit([encoder.finish()]);
        let mut new = new;
        new.bind_groups = steps
            .iter()
            .enumerate()
            .map(|(idx, step)| {
                class.bind_group(device, pipelines, &new, *step, idx as u64 * alignment)
            })
            .collect();
        self.buffers = Some(new);
        Ok(true)
    }

    fn bind_group(
        &self,
        device: &wgpu::Device,
        pipelines: &Pipelines,
        buffers: &ClassBuffers,
        step: Step,
        params_offset: u64,
    ) -> wgpu::BindGroup {
        let params = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &buffers.params,
            offset: params_offset,
            size: wgpu::BufferSize::new(std::mem::size_of::<Params>() as u64),
        });
        let class = self;
        let p = pipelines;
        let pipeline = p.of(step);
        let tiled_fft = |fft: &[u32], src: usize| -> Vec<(u32, wgpu::BindingResource)> {
            let all = [
                (1, class.twiddles.as_entire_binding()),
                (2, buffers.in_jobs.as_entire_binding()),
                (3, buffers.history.as_entire_binding()),
                (4, buffers.upload.as_entire_binding()),
                (5, class.half_twiddles.as_entire_binding()),
                (6, buffers.fdl.as_entire_binding()),
                (7, buffers.work[src].as_entire_binding()),
                (8, buffers.work[1 - src].as_entire_binding()),
                (9, buffers.output.as_entire_binding()),
            ];
            all.into_iter()
                .filter(|(binding, _)| fft.contains(binding))
                .collect()
        };
        use super::kernels::tiled_bindings::{COLUMNS, FORWARD_WHOLE, INVERSE_WHOLE, ROWS};
        let resources: Vec<(u32, wgpu::BindingResource)> = match step {
            Step::ForwardWhole => tiled_fft(FORWARD_WHOLE, 0),
            Step::InverseWhole => tiled_fft(INVERSE_WHOLE, 0),
            // Columns: from work `src` (the inverse) into the other; rows the same.
            Step::ForwardColumns => tiled_fft(COLUMNS, 1),
            Step::ForwardRows => tiled_fft(ROWS, 0),
            Step::InverseColumns => tiled_fft(COLUMNS, 0),
            Step::InverseRows => tiled_fft(ROWS, 1),
            Step::FdlHistory => numbered(vec![
                buffers.in_jobs.as_entire_binding(),
                class.half_twiddles.as_entire_binding(),
                buffers.work[1].as_entire_binding(),
                buffers.fdl.as_entire_binding(),
                buffers.upload.as_entire_binding(),
                buffers.history.as_entire_binding(),
            ]),
            Step::MacPre => numbered(vec![
                buffers.in_jobs.as_entire_binding(),
                buffers.out_jobs.as_entire_binding(),
                buffers.path_jobs.as_entire_binding(),
                buffers.fdl.as_entire_binding(),
                buffers.spectra.as_entire_binding(),
                class.half_twiddles.as_entire_binding(),
                buffers.work[0].as_entire_binding(),
            ]),
            radix2 => numbered(class.radix2_bindings(buffers, radix2)),
        };
        let entries: Vec<wgpu::BindGroupEntry> = std::iter::once((0, params))
            .chain(resources)
            .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    /// The radix-2 kernels' bindings after the params, in binding order.
    fn radix2_bindings<'a>(
        &'a self,
        buffers: &'a ClassBuffers,
        step: Step,
    ) -> Vec<wgpu::BindingResource<'a>> {
        let class = self;
        match step {
            Step::Window => vec![
                buffers.in_jobs.as_entire_binding(),
                buffers.history.as_entire_binding(),
                buffers.upload.as_entire_binding(),
                buffers.work[0].as_entire_binding(),
            ],
            Step::History => vec![
                buffers.in_jobs.as_entire_binding(),
                buffers.history.as_entire_binding(),
                buffers.upload.as_entire_binding(),
            ],
            Step::Fft { src, .. } => vec![
                class.twiddles.as_entire_binding(),
                buffers.work[src].as_entire_binding(),
                buffers.work[1 - src].as_entire_binding(),
            ],
            Step::FdlUpdate { src } => vec![
                buffers.in_jobs.as_entire_binding(),
                class.half_twiddles.as_entire_binding(),
                buffers.work[src].as_entire_binding(),
                buffers.fdl.as_entire_binding(),
            ],
            Step::Mac => vec![
                buffers.in_jobs.as_entire_binding(),
                buffers.out_jobs.as_entire_binding(),
                buffers.path_jobs.as_entire_binding(),
                buffers.fdl.as_entire_binding(),
                buffers.spectra.as_entire_binding(),
                buffers.acc.as_entire_binding(),
            ],
            Step::C2rPre => vec![
                class.half_twiddles.as_entire_binding(),
                buffers.acc.as_entire_binding(),
                buffers.work[0].as_entire_binding(),
            ],
            Step::OverlapSave { src } => vec![
                buffers.work[src].as_entire_binding(),
                buffers.output.as_entire_binding(),
            ],
            _ => unreachable!("not a radix-2 step: {step:?}"),
        }
    }

    /// A step's parameters (all but `row` and `m`) and workgroups for a batch of `inputs`
    /// input and `outputs` output jobs.
    fn step_params(&self, step: Step, inputs: u32, outputs: u32) -> (Params, u32) {
        let m = self.partition_size as u32;
        // Kernels with one invocation per element: `total` invocations.
        let per_element = |total: u32, count: u32| {
            let params = Params {
                total,
                count,
                ..Params::default()
            };
            (params, total.div_ceil(WORKGROUP).max(1))
        };
        match step {
            Step::Window | Step::History => per_element(inputs * m, inputs),
            Step::Fft { inverse, stage, .. } => {
                let count = if inverse { outputs } else { inputs };
                let (params, groups) = per_element(count * m / 2, count);
                let params = Params {
                    span: 1 << stage,
                    inverse: u32::from(inverse),
                    ..params
                };
                (params, groups)
            }
            Step::FdlUpdate { .. } | Step::FdlHistory => per_element(inputs * (m + 1), inputs),
            Step::Mac => per_element(outputs * (m + 1), outputs),
            Step::C2rPre | Step::OverlapSave { .. } => per_element(outputs * m, outputs),
            Step::MacPre => per_element(outputs * (m / 2 + 1), outputs),
            Step::ForwardWhole
            | Step::InverseWhole
            | Step::ForwardColumns
            | Step::InverseColumns
            | Step::ForwardRows
            | Step::InverseRows => {
                let inverse = matches!(
                    step,
                    Step::InverseWhole | Step::InverseColumns | Step::InverseRows
                );
                let count = if inverse { outputs } else { inputs };
                let rows = matches!(step, Step::ForwardRows | Step::InverseRows);
                let passes = self.tiled.expect("a tiled step in a radix-2 class");
                let (len, batch) = passes.pass(m as usize, rows);
                // Workgroups: `batch` jobs each for whole transforms, else `batch` of the job's
                // `M / len` columns or rows each.
                let groups = match passes {
                    TiledPasses::Whole { .. } => count.div_ceil(batch as u32),
                    TiledPasses::FourStep { .. } => count * (m / len as u32) / batch as u32,
                };
                let params = Params {
                    total: groups,
                    count,
                    len: len as u32,
                    batch: batch as u32,
                    inverse: u32::from(inverse),
                    ..Params::default()
                };
                (params, groups.max(1))
            }
        }
    }

    /// Fills the job tables, writes the uploads and records the class's dispatches for this
    /// period's batch (in one compute pass, with `timestamps` if given); `levels` are the
    /// convolver's registered levels. Returns the number of dispatches.
    pub(super) fn record(
        &mut self,
        levels: &mut [Option<LevelSlot>],
        queue: &wgpu::Queue,
        pipelines: &Pipelines,
        encoder: &mut wgpu::CommandEncoder,
        align: u64,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> usize {
        let class = self;
        let p = class.partition_size;
        let buffers = class.buffers.as_ref().expect("registered class");
        class.path_jobs.clear();
        for staged in &class.staged {
            let slot = levels[staged.level].as_mut().expect("registered level");
            let n = slot.num_partitions;
            if staged.start.reset {
                clear_level(encoder, buffers, slot, p);
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
            let (params, groups) = class.step_params(*step, inputs, outputs);
            let groups_x = groups.min(MAX_GROUPS_X);
            let groups_y = groups.div_ceil(groups_x);
            let params = Params {
                row: groups_x * WORKGROUP,
                m,
                ..params
            };
            let offset = idx * align as usize;
            params_bytes[offset..offset + std::mem::size_of::<Params>()]
                .copy_from_slice(bytemuck::bytes_of(&params));
            grids.push((groups_x, groups_y));
        }
        queue.write_buffer(&buffers.params, 0, &params_bytes);

        let p_ = pipelines;
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("longtail period"),
                timestamp_writes: timestamps,
            });
            for ((step, bind_group), (groups_x, groups_y)) in
                steps.iter().zip(&buffers.bind_groups).zip(grids)
            {
                let pipeline = p_.of(*step);
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(groups_x, groups_y, 1);
            }
        }
        let bytes = u64::from(outputs) * p as u64 * 4;
        encoder.copy_buffer_to_buffer(&buffers.output, 0, &buffers.readback, 0, bytes);
        steps.len()
    }
}

/// Binding numbers from 1 (after the params) for resources in binding order.
fn numbered(resources: Vec<wgpu::BindingResource<'_>>) -> Vec<(u32, wgpu::BindingResource<'_>)> {
    (1..).zip(resources).collect()
}

/// Clears a level's history and delay lines (recorded into `encoder`).
pub(super) fn clear_level(
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
