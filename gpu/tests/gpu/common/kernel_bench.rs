//! Running one kernel at a time on a device of its own ([`Bench`]), and the data helpers of the
//! kernel tests: each kernel is checked against its CPU twin in `longtail_gpu::reference`.

use longtail_gpu::layout::Params;
use longtail_gpu::reference::C32;
use longtail_gpu::shaders::Kernel;
use wgpu::util::DeviceExt;

use super::noise;

/// Seeded complex noise, each part in [-0.5, 0.5).
pub fn complex_noise(len: usize, seed: u32) -> Vec<C32> {
    noise(2 * len, seed)
        .chunks_exact(2)
        .map(|c| [c[0], c[1]])
        .collect()
}

/// A device of our own for running one kernel at a time.
pub struct Bench {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

impl Bench {
    pub fn new() -> Option<Self> {
        if !super::gpu_available() {
            return None;
        }
        let instance = longtail_gpu::device::instance();
        let (device, queue) = longtail_gpu::device::one_at_a_time(|| {
            let adapter =
                pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    ..Default::default()
                }))
                .ok()?;
            // The adapter's own limits, as the convolver asks: the tiled kernels' larger tiles
            // need more workgroup memory than the defaults.
            let descriptor = wgpu::DeviceDescriptor {
                required_limits: adapter.limits(),
                ..Default::default()
            };
            Some(pollster::block_on(adapter.request_device(&descriptor)).unwrap())
        })?;
        Some(Self { device, queue })
    }

    /// Runs `kernel` over `total` invocations with `bindings` (binding 0 is the params); returns
    /// every binding's contents afterwards.
    pub fn run(&self, kernel: Kernel, params: Params, bindings: &[&[u8]]) -> Vec<Vec<u8>> {
        let numbered: Vec<(u32, &[u8])> = (1..).zip(bindings.iter().copied()).collect();
        let groups = params.total.div_ceil(64).max(1) as usize;
        self.run_tiled(kernel.source, "main", params, &numbered, groups)
    }

    /// Runs entry point `entry` of `source` over `groups` workgroups, `params.row / 64` to a
    /// grid row, with `(binding, contents)` pairs (binding 0 is the params); returns their
    /// contents afterwards, in the order given.
    pub fn run_tiled(
        &self,
        source: &str,
        entry: &str,
        params: Params,
        bindings: &[(u32, &[u8])],
        groups: usize,
    ) -> Vec<Vec<u8>> {
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(entry),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        let uniform = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let buffers: Vec<wgpu::Buffer> = bindings
            .iter()
            .map(|(_, data)| {
                let mut padded = data.to_vec();
                padded.resize(padded.len().max(16), 0);
                self.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: None,
                        contents: &padded,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    })
            })
            .collect();
        let entries: Vec<_> =
            std::iter::once(wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            })
            .chain(bindings.iter().zip(&buffers).map(|((binding, _), buffer)| {
                wgpu::BindGroupEntry {
                    binding: *binding,
                    resource: buffer.as_entire_binding(),
                }
            }))
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let readbacks: Vec<_> = buffers
            .iter()
            .map(|b| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: b.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            let groups = groups.max(1) as u32;
            let groups_x = groups.min(params.row / 64);
            pass.dispatch_workgroups(groups_x, groups.div_ceil(groups_x), 1);
        }
        for (buffer, readback) in buffers.iter().zip(&readbacks) {
            encoder.copy_buffer_to_buffer(buffer, 0, readback, 0, buffer.size());
        }
        self.queue.submit([encoder.finish()]);
        for readback in &readbacks {
            readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, |r| r.unwrap());
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .unwrap();
        readbacks
            .iter()
            .zip(bindings)
            .map(|(readback, (_, data))| {
                let view = readback.slice(..).get_mapped_range().unwrap();
                view[..data.len()].to_vec()
            })
            .collect()
    }
}

pub fn params(total: usize, m: usize, count: usize) -> Params {
    Params {
        total: total as u32,
        // Narrow rows, so the 2D grid and its row arithmetic are exercised too.
        row: 64 * 4,
        m: m as u32,
        count: count as u32,
        ..Params::default()
    }
}

pub fn as_complex(bytes: &[u8]) -> Vec<C32> {
    bytemuck::pod_collect_to_vec(bytes)
}

/// `got` within `tolerance` of `want`, relative to `want`'s RMS level (0: bit for bit).
///
/// Float rounding in a transform or a sum of products grows with the signal's level, not with
/// one element's size: a bin near zero carries the rounding of the large ones. A tolerance per
/// element failed on an H100 (a 0.0239 bin of an 8192-point forward transform, 1.1e-5 from its
/// twin, where the output's RMS is in the tens).
pub fn assert_close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let energy: f64 = want.iter().map(|&w| f64::from(w) * f64::from(w)).sum();
    let rms = (energy / want.len().max(1) as f64).sqrt() as f32;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tolerance * (1.0 + rms),
            "{what}[{i}]: {g} vs {w} (RMS {rms})"
        );
    }
}

pub fn flat(c: &[C32]) -> Vec<f32> {
    c.iter().flatten().copied().collect()
}
