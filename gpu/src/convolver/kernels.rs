//! The compute kernels: their pipelines, built once per device (`Pipelines`), and the
//! dispatch steps of a period (`Step`).
//!
//! Uses the shaders ([`crate::shaders`]); the classes bind their buffers to its steps.

use crate::shaders::{self, Kernel};

/// Threads per workgroup in every kernel.
pub(super) const WORKGROUP: u32 = 64;
/// Most workgroups in one grid dimension.
pub(super) const MAX_GROUPS_X: u32 = 65_535;

/// Which kernel and buffers one dispatch step uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
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

/// The compute pipelines, built once.
pub(super) struct Pipelines {
    pub(super) window: wgpu::ComputePipeline,
    pub(super) history: wgpu::ComputePipeline,
    pub(super) fft: wgpu::ComputePipeline,
    pub(super) fdl_update: wgpu::ComputePipeline,
    pub(super) mac: wgpu::ComputePipeline,
    pub(super) c2r_pre: wgpu::ComputePipeline,
    pub(super) overlap_save: wgpu::ComputePipeline,
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

impl Pipelines {
    /// Builds every kernel's pipeline on `device`.
    pub(super) fn new(device: &wgpu::Device) -> Self {
        Self {
            window: pipeline(device, shaders::WINDOW),
            history: pipeline(device, shaders::HISTORY),
            fft: pipeline(device, shaders::FFT_STOCKHAM),
            fdl_update: pipeline(device, shaders::FDL_UPDATE),
            mac: pipeline(device, shaders::SPECTRAL_MAC),
            c2r_pre: pipeline(device, shaders::C2R_PRE),
            overlap_save: pipeline(device, shaders::OVERLAP_SAVE),
        }
    }
}
