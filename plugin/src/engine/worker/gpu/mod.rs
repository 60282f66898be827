//! The GPU side of a worker level: the hub's feed, the migration to the CPU and the way back.
//!
//! [`WorkerLevel::spawn_gpu`] registers the level with the process's GPU hub
//! ([`longtail_gpu::hub`]) instead: the hub's thread takes the level's chunks through the same
//! slots (`GpuFeed`, its [`Feed`]), computes them in its batch and publishes them as a worker
//! would, so the audio thread's side is unchanged (it wakes the hub's thread instead of the
//! worker's). The level's worker thread is started too, as a warm standby: it sleeps until the
//! hub gives the level up (the device failed, or [`DEGRADED_AFTER_LATES`] lates in a row, one
//! for the offload mode's level 0), then rebuilds the level's delay lines from the last
//! `n + 1` chunks the hub took (kept for it off the audio thread), and carries on with the
//! next job as a CPU worker. Results that come late meanwhile follow the late policy (faded
//! in, see [`late_policy`]), so the move is a short crossfade, not a gap in the tail.
//!
//! The parts, each using only those before it and the worker's common parts (the job
//! protocol and the job runner):
//!
//! - [`feed`]: the hub's side of one level (`GpuFeed`).
//! - [`standby`](mod@standby): the standby and the migration to the CPU.
//! - [`way_back`]: going back to the GPU (`Returns`, [`GpuHome`]).
//!
//! [`WorkerLevel::spawn_gpu`]: super::WorkerLevel::spawn_gpu
//! [`Feed`]: longtail_gpu::Feed
//! [`DEGRADED_AFTER_LATES`]: super::DEGRADED_AFTER_LATES
//! [`late_policy`]: super::late_policy

pub mod feed;
pub mod standby;
pub mod way_back;

pub(crate) use feed::GpuFeed;
pub use feed::HELD_REASON;
pub(crate) use standby::standby;
pub use way_back::{GPU_RETRY_AFTER, GPU_RETRY_MAX, GpuHome, MAX_GPU_RETURNS};
pub(crate) use way_back::{Returns, keep_in_history};
