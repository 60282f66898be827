//! Structs shared with the WGSL kernels (`shaders/common.wgsl`), byte for byte. A test parses
//! the shaders with naga and checks every size and field offset against these.

use bytemuck::{Pod, Zeroable};

/// Per-dispatch parameters (`Params` in WGSL), one uniform block per dispatch.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Params {
    /// Invocations with work to do.
    pub total: u32,
    /// Invocations per grid row.
    pub row: u32,
    /// Complex FFT length `M = P`.
    pub m: u32,
    /// Stockham stage span.
    pub span: u32,
    /// 1 for the inverse FFT.
    pub inverse: u32,
    /// Items in the batch.
    pub count: u32,
    /// Tiled kernels: the length of the transforms a workgroup runs in workgroup memory.
    pub len: u32,
    /// Tiled kernels: how many of them a workgroup runs.
    pub batch: u32,
}

/// One input stream of a level in this period's batch (`InJob` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct InJob {
    /// Index in the history arena.
    pub stream: u32,
    /// First slot of the stream's delay line in the FDL arena.
    pub fdl_base: u32,
    /// Slots of the delay line (partition count).
    pub slots: u32,
    /// Slot of this period's spectrum.
    pub head: u32,
}

/// One output stream in this period's batch (`OutJob` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct OutJob {
    /// First of its paths in the path table.
    pub path_start: u32,
    /// Number of paths.
    pub path_count: u32,
}

/// One path into an output (`PathJob` in WGSL).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PathJob {
    /// Index of the input job it reads.
    pub in_job: u32,
    /// First of its IR spectra (one per partition) in the spectra arena.
    pub spectra_base: u32,
}
