//! The zero-latency head for quanta that arrive in pieces: taps `[0, q)` of every path, for
//! the samples that level 0's fused head cannot compute (see the engine's module docs).
//!
//! A direct-form FIR over all `q` taps costs `q` multiply-adds per sample and path: with a
//! 512-sample quantum that is 512 per path, 131 072 per sample for a 16 x 16 matrix, far over
//! real time, and a host that splits its blocks (sample-accurate automation does, at every
//! parameter change) would pay it on every piece. So the head is split in two:
//!
//! - taps `[0, h)` by [`DirectHead`], `h` = [`DIRECT_TAPS`]: the only taps that need the
//!   current sample;
//! - taps `[h, q)` by a small FFT level ([`UpolsLevel`], partitions of `h`, `D = h`), run at
//!   each `h` boundary inside the piecewise quantum: its block `[T, T + h)` needs input before
//!   `T` only. Its input spectra are refreshed from the input rings when a piecewise quantum
//!   follows whole ones, so whole quanta pay nothing for it.
//!
//! Both parts give the taps' exact convolution (up to rounding), so every split of the host's
//! calls gives the same signal. Uses the rings, the routing and the FFT level.

pub mod direct;

use rustfft::FftPlanner;

use super::memory::rings::{InputRing, OutputRing};
use super::routing::Path;
use super::upols::{LevelShape, UpolsLevel};
use direct::DirectHead;

/// Taps of the head computed sample by sample; the rest of the head runs in the frequency
/// domain in blocks of this size.
pub const DIRECT_TAPS: usize = 64;

/// Taps `[0, num_taps)` of every path, sample by sample for the first [`DIRECT_TAPS`] and in
/// blocks of [`DIRECT_TAPS`] for the rest.
pub struct Head {
    direct: DirectHead,
    /// Taps `[DIRECT_TAPS, num_taps)`, when the head is longer than [`DIRECT_TAPS`].
    blocks: Option<UpolsLevel>,
    /// The chunk end of the newest input spectrum in `blocks`, if it is current.
    newest: Option<u64>,
}

/// How a [`Head`] is built: the engine's paths and their channels.
pub struct HeadShape<'a> {
    pub num_taps: usize,
    pub paths: &'a [Path],
    pub path_taps: &'a [&'a [f32]],
    /// Per path, the first path with the same taps ([`super::routing::shared_spectra`]).
    pub shared: &'a [usize],
    pub num_inputs: usize,
    pub num_outputs: usize,
}

impl Head {
    /// Allocates and plans FFTs; call off the audio thread.
    pub fn new(planner: &mut FftPlanner<f32>, shape: HeadShape) -> Self {
        let direct = DirectHead::new(
            shape.num_taps.min(DIRECT_TAPS),
            shape.paths,
            shape.path_taps,
        );
        let blocks = (shape.num_taps > DIRECT_TAPS).then(|| {
            UpolsLevel::new(
                planner,
                LevelShape {
                    partition_size: DIRECT_TAPS,
                    span: 1,
                    num_partitions: (shape.num_taps - DIRECT_TAPS).div_ceil(DIRECT_TAPS),
                    ir_offset: DIRECT_TAPS,
                    output_delay: DIRECT_TAPS,
                    num_inputs: shape.num_inputs,
                    num_outputs: shape.num_outputs,
                },
                shape.paths,
                &clipped(shape.path_taps, shape.num_taps),
                shape.shared,
            )
        });
        // The head runs on the audio thread.
        let blocks = blocks.map(|mut level| {
            level.prefault();
            level
        });
        Self {
            direct,
            blocks,
            newest: None,
        }
    }

    /// The longest run of samples the head may compute in one piece from time `start`: up to
    /// the next block boundary when it has blocks.
    pub fn piece_len(&self, start: u64, len: usize) -> usize {
        match self.blocks {
            Some(_) => len.min(DIRECT_TAPS - (start % DIRECT_TAPS as u64) as usize),
            None => len,
        }
    }

    /// Input history the head reads behind the piece it computes: its direct taps' window,
    /// and its blocks' `2 * DIRECT_TAPS` windows as far back as [`Self::prepare`] rebuilds
    /// them, with room to spare.
    pub fn history(&self) -> usize {
        match &self.blocks {
            Some(blocks) => (blocks.num_partitions() + 3) * DIRECT_TAPS,
            None => DIRECT_TAPS,
        }
    }

    /// How far past the current time the head adds to the output rings.
    pub fn max_ahead(&self) -> usize {
        if self.blocks.is_some() {
            DIRECT_TAPS
        } else {
            0
        }
    }

    /// Before the head computes samples from `start` (a piece no longer than
    /// [`Self::piece_len`]): at a block boundary, adds the blocks' part of `[start, start +
    /// DIRECT_TAPS)` to `outputs`. The input rings must hold the samples before `start`. Does
    /// not allocate.
    pub fn prepare(&mut self, start: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        let Some(blocks) = &mut self.blocks else {
            return;
        };
        let size = DIRECT_TAPS as u64;
        if !start.is_multiple_of(size) {
            return;
        }
        // The spectra of the chunks before this one, unless the last block computed them.
        if self.newest != start.checked_sub(size) {
            let num_partitions = blocks.num_partitions() as u64;
            for back in (1..num_partitions).rev() {
                match start.checked_sub(back * size) {
                    Some(chunk_end) => blocks.push_chunk(chunk_end, inputs),
                    // Before the stream began: silence.
                    None => blocks.push_silence(1),
                }
            }
        }
        blocks.run(start, inputs, outputs);
        self.newest = Some(start);
    }

    /// The sample-by-sample part, for the samples of a piece once their input is in the rings.
    pub fn direct(&self) -> &DirectHead {
        &self.direct
    }

    /// Forgets the input history. Does not allocate.
    pub fn reset(&mut self) {
        if let Some(blocks) = &mut self.blocks {
            blocks.reset();
        }
        self.newest = None;
    }

    /// Test hook: see [`UpolsLevel::poison_scratch`].
    pub fn poison_scratch(&mut self, value: f32) {
        if let Some(blocks) = &mut self.blocks {
            blocks.poison_scratch(value);
        }
    }
}

/// Each path's taps cut at `len`: the blocks' last partition must not reach level 0's taps.
fn clipped<'a>(path_taps: &[&'a [f32]], len: usize) -> Vec<&'a [f32]> {
    path_taps
        .iter()
        .map(|taps| &taps[..taps.len().min(len)])
        .collect()
}
