//! One level of the partition plan: its shape, and the bytes of spectra it holds.
//!
//! Uses nothing else of the engine.

/// Bytes of the spectra a level holds, IR and input: `streams` (the plan's
/// `CostWeights::streams`) per partition of `(span + 1) P / 2 + 1` complex bins.
pub fn level_spectra_bytes(level: &Level, streams: usize) -> usize {
    streams * level.num_partitions * level.num_bins() * 2 * size_of::<f32>()
}

/// One uniformly partitioned overlap-save level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Partition size `P` in samples (a power of two): the hop, and the samples each period
    /// gives.
    pub partition_size: usize,
    /// Hops each IR partition spans: its taps are `span * P` and its FFT `(span + 1) P`
    /// (`engine::upols`); 1, the plain level, where the GPU may run it.
    pub span: usize,
    /// Number of partitions of this level.
    pub num_partitions: usize,
    /// First IR tap this level covers (`D`).
    pub ir_offset: usize,
}

impl Level {
    /// One past the last IR tap this level covers.
    pub fn ir_end(&self) -> usize {
        self.ir_offset + self.partition_taps() * self.num_partitions
    }

    /// Taps of each IR partition, `span * P`.
    pub fn partition_taps(&self) -> usize {
        self.span * self.partition_size
    }

    /// `PxK` (size x count), with `/span` where partitions span several hops: `512x3/2`.
    pub fn label(&self) -> String {
        let mut text = format!("{}x{}", self.partition_size, self.num_partitions);
        if self.span > 1 {
            text.push_str(&format!("/{}", self.span));
        }
        text
    }

    /// Size of the level's FFTs, `(span + 1) P`.
    pub fn fft_size(&self) -> usize {
        (self.span + 1) * self.partition_size
    }

    /// Bins of each spectrum, `(span + 1) P / 2 + 1`.
    pub fn num_bins(&self) -> usize {
        self.fft_size() / 2 + 1
    }
}
