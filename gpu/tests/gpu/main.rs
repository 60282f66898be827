//! The gpu crate's tests, one binary: each module was a test binary of its own, and each of
//! those compiled the FFT planner and wgpu's generic code again (about 30 s of CPU each in a
//! cold test build). On lavapipe in CI, on the GPU in scripts/gpu-check.sh.

mod common;
mod convolver;
mod kernels;
mod tiled_kernels;
