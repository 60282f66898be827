//! What a level is to the convolver: its shape and spectra ([`LevelSpec`]), its handle
//! ([`LevelId`]) and how a chunk relates to its history ([`ChunkStart`]).
//!
//! Uses only the reference's complex type; every other part of the convolver may use it.

use crate::reference::C32;

/// Smallest partition size the GPU takes.
pub const MIN_PARTITION: usize = 64;

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
pub struct LevelId(pub(super) usize);

/// How a staged chunk relates to the level's history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkStart {
    /// The level restarts: clear its history and delay lines first.
    pub reset: bool,
    /// Chunks that never arrived before this one: silence goes into the delay lines for them.
    pub silent_chunks: usize,
}
