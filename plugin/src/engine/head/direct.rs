//! The zero-latency head: a direct-form FIR over the first `q` taps of every path.
//!
//! Built off the audio thread; [`DirectHead::add_output`] runs on the audio thread for every
//! sample, reads the input rings and never allocates.

use crate::engine::memory::rings::InputRing;
use crate::engine::routing::Path;

/// Direct-form FIR for taps `[0, head_taps)` of every path.
#[derive(Debug, Clone)]
pub struct DirectHead {
    /// Number of taps (at most the quantum).
    num_taps: usize,
    /// `(input_idx, output_idx)` per path.
    paths: Vec<Path>,
    /// Taps per path in reverse order, so one output sample is a dot product of two
    /// contiguous slices: `reversed_taps[k] = h[num_taps - 1 - k]`.
    reversed_taps: Vec<Vec<f32>>,
}

impl DirectHead {
    /// A head for the first `num_taps` taps of each path. Allocates.
    pub fn new(num_taps: usize, paths: &[Path], path_taps: &[&[f32]]) -> Self {
        let reversed_taps = path_taps
            .iter()
            .map(|taps| {
                let mut head: Vec<f32> = (0..num_taps)
                    .map(|k| taps.get(k).copied().unwrap_or(0.0))
                    .collect();
                head.reverse();
                head
            })
            .collect();
        Self {
            num_taps,
            paths: paths.to_vec(),
            reversed_taps,
        }
    }

    /// Adds the head's output for output channel `output_idx` and the samples of times
    /// `[start, start + output.len())` to `output`. The input rings must already hold those
    /// samples. Does not allocate.
    pub fn add_output(
        &self,
        output_idx: usize,
        start: u64,
        inputs: &[InputRing],
        output: &mut [f32],
    ) {
        if self.num_taps == 0 {
            return;
        }
        for (path, taps) in self.paths.iter().zip(&self.reversed_taps) {
            if path.output_idx != output_idx {
                continue;
            }
            let Some(ring) = inputs.get(path.input_idx) else {
                continue;
            };
            for (sample_idx, out) in output.iter_mut().enumerate() {
                let window = ring.window(start + sample_idx as u64 + 1, self.num_taps);
                *out += dot(taps, window);
            }
        }
    }
}

/// Dot product with eight independent accumulators, so it vectorises without reassociation.
#[inline]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut lanes = [0.0f32; 8];
    let mut a_chunks = a.chunks_exact(8);
    let mut b_chunks = b.chunks_exact(8);
    for (a8, b8) in (&mut a_chunks).zip(&mut b_chunks) {
        for lane_idx in 0..8 {
            lanes[lane_idx] += a8[lane_idx] * b8[lane_idx];
        }
    }
    let mut sum = lanes.iter().sum::<f32>();
    for (x, y) in a_chunks.remainder().iter().zip(b_chunks.remainder()) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_handles_remainders() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let b = vec![2.0f32; 19];
        assert_eq!(dot(&a, &b), 2.0 * (0..19).sum::<i32>() as f32);
    }
}
