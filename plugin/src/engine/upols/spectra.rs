//! Spectra in split real and imaginary arrays ([`SplitSpectra`]): a level's IR partitions, its
//! FDL, its accumulators and carried sums.

use super::mac::{Acc, Spectrum};
use crate::engine::memory::pages::PageBuf;

/// Spectra stored as split real and imaginary arrays, `num_partitions` blocks of `num_bins`,
/// in huge pages where they are big enough ([`PageBuf`]). Each block starts on a cache line
/// ([`BLOCK_ALIGN_BINS`]; the bins past `num_bins` are padding that nothing reads).
#[derive(Debug, Default)]
pub(super) struct SplitSpectra {
    pub(super) re: PageBuf,
    pub(super) im: PageBuf,
    pub(super) num_bins: usize,
    /// Bins from one block's start to the next's: `num_bins` rounded up to [`BLOCK_ALIGN_BINS`].
    pub(super) stride: usize,
}

/// Bins a block's start is aligned to: 64 bytes, a cache line, as the buffers start
/// ([`PageBuf`]). Blocks of `P + 1` bins packed end to end split every other 32-byte MAC load
/// across two lines in 14 blocks of 16. Aligned (Intel VM, 2026-12-03, same bits, rounds
/// alternated): a dense 4 x 4 x 2 s matrix 5 to 7 % less CPU at block 1024 (its audio thread 9 to
/// 10 %), 6 % at 64, 7 % at 128; a stereo 10 s reverb 4 % at 64. 8 bins did within 1 % of 16.
const BLOCK_ALIGN_BINS: usize = 16;

impl SplitSpectra {
    pub(super) fn zeroed(num_partitions: usize, num_bins: usize) -> Self {
        let stride = num_bins.next_multiple_of(BLOCK_ALIGN_BINS);
        Self {
            re: PageBuf::zeroed(num_partitions * stride),
            im: PageBuf::zeroed(num_partitions * stride),
            num_bins,
            stride,
        }
    }

    /// The first block, as an accumulator for the MAC.
    pub(super) fn acc(&mut self) -> Acc<'_> {
        Acc {
            re: &mut self.re[..self.num_bins],
            im: &mut self.im[..self.num_bins],
        }
    }

    /// The first block.
    pub(super) fn first(&self) -> Spectrum<'_> {
        self.block(0)
    }

    /// Block `idx`, for the MAC to read.
    pub(super) fn block(&self, idx: usize) -> Spectrum<'_> {
        self.bins(idx, &(0..self.num_bins))
    }

    /// Block `idx`, to write.
    pub(super) fn block_mut(&mut self, idx: usize) -> (&mut [f32], &mut [f32]) {
        let start = idx * self.stride;
        let block = start..start + self.num_bins;
        (&mut self.re[block.clone()], &mut self.im[block])
    }

    /// Bins `range` of block `idx`, for the MAC to read (a chunk of a block).
    pub(super) fn bins(&self, idx: usize, range: &std::ops::Range<usize>) -> Spectrum<'_> {
        let start = idx * self.stride;
        Spectrum {
            re: &self.re[start + range.start..start + range.end],
            im: &self.im[start + range.start..start + range.end],
        }
    }

    /// Makes every page resident now ([`PageBuf::prefault`]).
    pub(super) fn prefault(&mut self) {
        self.re.prefault();
        self.im.prefault();
    }
}
