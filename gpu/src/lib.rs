//! Longtail's GPU tail: partitioned convolution of the IR's big partitions on the GPU, through
//! wgpu compute kernels, with one service per process shared by every plugin instance.
//!
//! Everything wgpu lives in this crate and no wgpu type is in its API. The parts:
//!
//! - [`fft_kernels`]: which FFT kernels a device gets (tiled, with the tile its workgroup
//!   memory holds, or radix-2).
//! - [`device`]: adapter choice (discrete, then integrated; a CPU adapter such as lavapipe
//!   only when allowed), the device opened with the adapter's limits, errors captured.
//! - `shaders/*.wgsl`: the kernels, each with a CPU twin in [`mod@reference`]: FFTs in
//!   workgroup memory with the window, post-pass, history and overlap-save fused in
//!   (`fft_tiled.wgsl`), the spectral MAC fused with the inverse pre-pass (`mac_pre.wgsl`), and
//!   the radix-2 set they fall back to on a device with little workgroup memory (window,
//!   history, one Stockham stage, FDL update, MAC, inverse pre-pass, overlap-save).
//! - [`convolver`]: resident IR spectra and delay lines; every registered level's due chunk in
//!   one batch, one command buffer, one submit and one readback per period.
//! - [`period_stats`]: what the hub's periods took, their phases apart (submit, wait and its
//!   CPU time, readback) and grouped by the largest partition in the batch.
//! - [`hub`]: the process's one device and thread; engines register levels with a [`Feed`],
//!   their side of the job protocol, and get failed over to their CPU standby when the GPU
//!   breaks or is late. The embedder sets how the thread raises its priority
//!   ([`set_thread_start`]).
//!
//! The numbers are FP32 throughout, the same spectra as the CPU levels (scaled by `1 / 2P`),
//! so GPU and CPU outputs agree to rounding.

pub mod convolver;
pub mod device;
pub mod fft_kernels;
pub mod hub;
pub mod layout;
pub mod period_stats;
pub mod reference;
pub mod shaders;

pub use convolver::{ChunkStart, Convolver, LevelId, LevelSpec, MIN_PARTITION, TiledPasses};
pub use device::{
    ALLOW_CPU_ENV, AdapterKind, AdapterSummary, KERNELS_ENV, OpenOptions, REQUIRE_ENV,
    available_for_tests, list_adapters,
};
pub use fft_kernels::FftKernels;
pub use hub::{
    BenchBatch, BenchReport, Calibration, Feed, Hub, HubStats, Registration, RoundTrip,
    ThreadStart, bench_round_trip, set_thread_start, shared,
};
pub use period_stats::{PeriodStats, Phases};

/// Why the GPU cannot do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuError {
    /// No adapter that can run the kernels.
    #[error("no usable GPU: {0}")]
    NoAdapter(String),
    /// The device failed: could not be opened, reported an error, was lost or hung.
    #[error("GPU device error: {0}")]
    Device(String),
    /// The request does not fit this adapter's memory limits.
    #[error("GPU memory: {0}")]
    OutOfMemory(String),
    /// A level shape the kernels do not handle.
    #[error("unsupported on the GPU: {0}")]
    Unsupported(String),
}
