//! The compute kernels: how the tiled kernels split a transform ([`TiledPasses`], for the tile
//! that [`FftKernels`] chose), their pipelines, built once per device (`Pipelines`), and the
//! dispatch steps of a period (`Step`).
//!
//! Two kernel sets compute the same thing:
//!
//! - **Tiled** (the default where the device has the workgroup memory): FFTs inside workgroup
//!   memory (`fft_tiled.wgsl`), with the window, the real-FFT post-pass, the history update and
//!   the overlap-save output fused in, and the spectral MAC fused with the inverse pre-pass
//!   (`mac_pre.wgsl`). A period of one class is 3 dispatches where the whole transform fits in
//!   a workgroup in one or two rounds (`P <= 2 TILE`), else 6 (a four-step transform,
//!   `P <= TILE^2`).
//! - **Radix-2** (the fallback, and what a device with under 2 KiB of workgroup memory gets):
//!   one dispatch per radix-2 Stockham stage, `6 + 2 log2 P` per period (32 at `P = 8192`).
//!
//! Uses the shaders ([`crate::shaders`]); the classes bind their buffers to its steps.

pub use crate::fft_kernels::{FftKernels, MAX_TILE, MIN_TILE, TILE_POINT_BYTES};
use crate::shaders::{self, Kernel};

/// Threads per workgroup in every kernel.
pub(super) const WORKGROUP: u32 = 64;
/// Most workgroups in one grid dimension.
pub(super) const MAX_GROUPS_X: u32 = 65_535;
/// Points a workgroup of the tiled kernels aims to hold: several small transforms (jobs,
/// columns or rows) share a workgroup up to this many points, so a workgroup has work enough
/// and global memory moves in runs of several points.
pub const GROUP_POINTS: usize = 1024;

/// How the tiled kernels split a transform of `M` points: whole, or four-step `M = M1 * M2`,
/// and how many transforms (jobs, columns or rows) a workgroup takes in each pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TiledPasses {
    /// `M <= split * tile`: one workgroup runs `batch` jobs' whole transforms, each in `split`
    /// rounds of `M / split` points (1, or 2 with one job per workgroup: a first radix-2
    /// stage on the way in, the even bins in one round and the odd in the next).
    Whole { batch: usize, split: usize },
    /// Four-step: pass 1 runs `M1`-point transforms over `batch1` adjacent columns per
    /// workgroup, pass 2 `M2`-point ones over `batch2` adjacent rows.
    FourStep {
        m1: usize,
        m2: usize,
        batch1: usize,
        batch2: usize,
    },
}

impl TiledPasses {
    /// The passes for `m` points (a power of two) with `tile`; `None` where `m > tile^2`.
    pub fn new(m: usize, tile: usize) -> Option<Self> {
        let target = tile.min(GROUP_POINTS);
        if m <= tile {
            return Some(Self::Whole {
                batch: (target / m).max(1),
                split: 1,
            });
        }
        if m <= 2 * tile {
            return Some(Self::Whole { batch: 1, split: 2 });
        }
        let m1 = 1 << m.ilog2().div_ceil(2);
        let m2 = m / m1;
        (m1 <= tile).then_some(Self::FourStep {
            m1,
            m2,
            batch1: (target / m1).clamp(1, m2),
            batch2: (target / m2).clamp(1, m1),
        })
    }

    /// The length of the transforms a workgroup runs for `m` points and how many it takes: the
    /// whole transform's rounds, or four-step pass 2 (`rows`) or pass 1.
    pub fn pass(self, m: usize, rows: bool) -> (usize, usize) {
        match self {
            Self::Whole { batch, split } => (m / split, batch),
            Self::FourStep { m2, batch2, .. } if rows => (m2, batch2),
            Self::FourStep { m1, batch1, .. } => (m1, batch1),
        }
    }
}

/// The bindings after the params (binding 0) that each entry point of `fft_tiled.wgsl` uses, as
/// its derived layout has them: 1 twiddles, 2 input jobs, 3 history, 4 upload, 5 half
/// twiddles, 6 delay lines, 7 `src`, 8 `dst`, 9 output.
pub mod tiled_bindings {
    /// `forward_whole`.
    pub const FORWARD_WHOLE: &[u32] = &[1, 2, 3, 4, 5, 6];
    /// `inverse_whole`.
    pub const INVERSE_WHOLE: &[u32] = &[1, 7, 9];
    /// `forward_columns` and `inverse_columns`.
    pub const COLUMNS: &[u32] = &[1, 2, 3, 4, 7, 8];
    /// `forward_rows` and `inverse_rows`.
    pub const ROWS: &[u32] = &[1, 7, 8, 9];
}

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
    /// Tiled: window, whole FFT, post-pass into the delay lines, history.
    ForwardWhole,
    /// Tiled: four-step pass 1 of the forward FFT, from the window into work 0.
    ForwardColumns,
    /// Tiled: four-step pass 2, work 0 into work 1.
    ForwardRows,
    /// The post-pass from work 1 into the delay lines, and the history.
    FdlHistory,
    /// The MAC and the inverse pre-pass, into work 0.
    MacPre,
    /// Tiled: the whole inverse FFT from work 0, and the overlap-save output.
    InverseWhole,
    /// Tiled: four-step pass 1 of the inverse, work 0 into work 1.
    InverseColumns,
    /// Tiled: pass 2 from work 1, and the overlap-save output.
    InverseRows,
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
    /// The tiled kernels, where the device runs them.
    pub(super) tiled: Option<Tiled>,
}

/// The tiled kernels' pipelines and their tile.
pub(super) struct Tiled {
    pub(super) tile: u32,
    pub(super) forward_whole: wgpu::ComputePipeline,
    pub(super) inverse_whole: wgpu::ComputePipeline,
    pub(super) forward_columns: wgpu::ComputePipeline,
    pub(super) forward_rows: wgpu::ComputePipeline,
    pub(super) inverse_columns: wgpu::ComputePipeline,
    pub(super) inverse_rows: wgpu::ComputePipeline,
    pub(super) fdl_history: wgpu::ComputePipeline,
    pub(super) mac_pre: wgpu::ComputePipeline,
}

fn module(device: &wgpu::Device, name: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

fn entry(device: &wgpu::Device, module: &wgpu::ShaderModule, name: &str) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: None,
        module,
        entry_point: Some(name),
        compilation_options: Default::default(),
        cache: None,
    })
}

fn pipeline(device: &wgpu::Device, kernel: Kernel) -> wgpu::ComputePipeline {
    entry(device, &module(device, kernel.name, kernel.source), "main")
}

impl Pipelines {
    /// Builds every kernel's pipeline on `device`; the tiled ones with `tile`, if any.
    pub(super) fn new(device: &wgpu::Device, tile: Option<u32>) -> Self {
        let tiled = tile.map(|tile| {
            let fft = module(device, "fft_tiled", &shaders::tiled_source(tile));
            let fdl = module(device, "fdl_update", shaders::FDL_UPDATE.source);
            Tiled {
                tile,
                forward_whole: entry(device, &fft, "forward_whole"),
                inverse_whole: entry(device, &fft, "inverse_whole"),
                forward_columns: entry(device, &fft, "forward_columns"),
                forward_rows: entry(device, &fft, "forward_rows"),
                inverse_columns: entry(device, &fft, "inverse_columns"),
                inverse_rows: entry(device, &fft, "inverse_rows"),
                fdl_history: entry(device, &fdl, "with_history"),
                mac_pre: pipeline(device, shaders::MAC_PRE),
            }
        });
        Self {
            window: pipeline(device, shaders::WINDOW),
            history: pipeline(device, shaders::HISTORY),
            fft: pipeline(device, shaders::FFT_STOCKHAM),
            fdl_update: pipeline(device, shaders::FDL_UPDATE),
            mac: pipeline(device, shaders::SPECTRAL_MAC),
            c2r_pre: pipeline(device, shaders::C2R_PRE),
            overlap_save: pipeline(device, shaders::OVERLAP_SAVE),
            tiled,
        }
    }

    /// The pipeline a step runs.
    pub(super) fn of(&self, step: Step) -> &wgpu::ComputePipeline {
        let tiled = || {
            self.tiled
                .as_ref()
                .expect("a tiled step without tiled kernels")
        };
        match step {
            Step::Window => &self.window,
            Step::History => &self.history,
            Step::Fft { .. } => &self.fft,
            Step::FdlUpdate { .. } => &self.fdl_update,
            Step::Mac => &self.mac,
            Step::C2rPre => &self.c2r_pre,
            Step::OverlapSave { .. } => &self.overlap_save,
            Step::ForwardWhole => &tiled().forward_whole,
            Step::ForwardColumns => &tiled().forward_columns,
            Step::ForwardRows => &tiled().forward_rows,
            Step::FdlHistory => &tiled().fdl_history,
            Step::MacPre => &tiled().mac_pre,
            Step::InverseWhole => &tiled().inverse_whole,
            Step::InverseColumns => &tiled().inverse_columns,
            Step::InverseRows => &tiled().inverse_rows,
        }
    }
}
