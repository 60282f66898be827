//! One uniformly partitioned overlap-save level with a frequency-domain delay line (FDL).
//!
//! Built off the audio thread ([`UpolsLevel::new`] allocates and plans FFTs).
//! [`UpolsLevel::compute`] runs on whichever thread executes the level (a worker thread, or the
//! audio thread through [`UpolsLevel::run`] for level 0 and the inline executor) and never
//! allocates: every buffer is sized at construction.
//!
//! Per run, for a level of partition size `P` whose input chunk `[T - P, T)` just completed:
//!
//! 1. each input channel's last `2P` samples are transformed once (r2c, `P + 1` bins) into that
//!    input's FDL slot, shared by every path from that input;
//! 2. each output channel accumulates `sum_j X[now - j] * H_path[j]` over its paths and
//!    partitions (the spectral multiply-accumulate, split real/imaginary arrays);
//! 3. the sum goes back through one c2r per output; its last `P` samples (the valid part of the
//!    circular convolution) are added to the output ring at `T - P + delay`.
//!
//! The IR spectra carry the inverse FFT's `1 / 2P` scale, so no pass rescales the output.

use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

use super::rings::{InputRing, OutputRing};
use super::{MAX_CHANNELS, Path};

/// Spectra stored as split real and imaginary arrays, `num_partitions` blocks of `num_bins`.
#[derive(Debug, Clone)]
struct SplitSpectra {
    re: Vec<f32>,
    im: Vec<f32>,
}

impl SplitSpectra {
    fn zeroed(num_partitions: usize, num_bins: usize) -> Self {
        Self {
            re: vec![0.0; num_partitions * num_bins],
            im: vec![0.0; num_partitions * num_bins],
        }
    }
}

/// Sizes and timing of one level, from the plan.
#[derive(Debug, Clone, Copy)]
pub struct LevelShape {
    /// Partition size `P`.
    pub partition_size: usize,
    /// Number of partitions.
    pub num_partitions: usize,
    /// First IR tap covered.
    pub ir_offset: usize,
    /// Delay from input time to output time (`D + latency`), at least `P`.
    pub output_delay: usize,
    /// Input channels (one FDL each).
    pub num_inputs: usize,
    /// Output channels (one inverse FFT each).
    pub num_outputs: usize,
}

/// One level of the partition plan, for every path of the engine.
pub struct UpolsLevel {
    /// Partition size `P`; the FFT size is `2P`.
    partition_size: usize,
    /// Number of partitions `n` (FDL slots).
    num_partitions: usize,
    /// `P + 1`.
    num_bins: usize,
    /// Samples from an input time to the output time it contributes to (`D + latency`).
    output_delay: usize,
    r2c_plan: Arc<dyn RealToComplex<f32>>,
    c2r_plan: Arc<dyn ComplexToReal<f32>>,
    /// FDL per input channel, indexed `[slot_idx * num_bins + bin_idx]`.
    fdl: Vec<SplitSpectra>,
    /// Slot of the newest input spectrum in every FDL.
    fdl_head: usize,
    /// IR spectra per path, indexed `[partition_idx * num_bins + bin_idx]`, scaled by `1 / 2P`.
    path_spectra: Vec<SplitSpectra>,
    /// `(input_idx, output_idx)` of each entry of `path_spectra`.
    paths: Vec<Path>,
    /// Number of output channels.
    num_outputs: usize,
    /// `2P` samples for the FFTs' time-domain side.
    real_scratch_buffer: Vec<f32>,
    /// The spectral MAC for this CPU (see [`best_mac_kernel`]).
    mac_kernel: MacKernel,
    /// `P + 1` bins for the FFTs' frequency-domain side.
    complex_fft_buffer: Vec<Complex<f32>>,
    /// Scratch for realfft, sized for the larger of the two plans.
    fft_scratch_buffer: Vec<Complex<f32>>,
    /// Accumulator of one output channel's spectrum.
    acc: SplitSpectra,
    /// `P` samples per output channel: the inline path's result before it goes to the rings.
    output_buffer: Vec<f32>,
}

impl UpolsLevel {
    /// Builds the level for taps `[ir_offset, ir_offset + n * P)` of every path's IR. Allocates
    /// and plans FFTs; call off the audio thread.
    pub fn new(
        planner: &mut RealFftPlanner<f32>,
        shape: LevelShape,
        paths: &[Path],
        path_taps: &[&[f32]],
    ) -> Self {
        let LevelShape {
            partition_size,
            num_partitions,
            ir_offset,
            output_delay,
            num_inputs,
            num_outputs,
        } = shape;
        let fft_size = 2 * partition_size;
        let num_bins = partition_size + 1;
        let r2c_plan = planner.plan_fft_forward(fft_size);
        let c2r_plan = planner.plan_fft_inverse(fft_size);
        let scratch_len = r2c_plan.get_scratch_len().max(c2r_plan.get_scratch_len());

        let mut real_scratch_buffer = vec![0.0; fft_size];
        let mut complex_fft_buffer = vec![Complex::default(); num_bins];
        let mut fft_scratch_buffer = vec![Complex::default(); scratch_len];
        let scale = 1.0 / fft_size as f32;

        let path_spectra = path_taps
            .iter()
            .map(|taps| {
                let mut spectra = SplitSpectra::zeroed(num_partitions, num_bins);
                for partition_idx in 0..num_partitions {
                    real_scratch_buffer.fill(0.0);
                    let start = (ir_offset + partition_idx * partition_size).min(taps.len());
                    let end = (start + partition_size).min(taps.len());
                    real_scratch_buffer[..end - start].copy_from_slice(&taps[start..end]);
                    // The buffers are sized for this plan, so this cannot fail.
                    let _ = r2c_plan.process_with_scratch(
                        &mut real_scratch_buffer,
                        &mut complex_fft_buffer,
                        &mut fft_scratch_buffer,
                    );
                    let block = partition_idx * num_bins..(partition_idx + 1) * num_bins;
                    for ((re, im), bin) in spectra.re[block.clone()]
                        .iter_mut()
                        .zip(&mut spectra.im[block])
                        .zip(&complex_fft_buffer)
                    {
                        *re = bin.re * scale;
                        *im = bin.im * scale;
                    }
                }
                spectra
            })
            .collect();

        Self {
            partition_size,
            num_partitions,
            num_bins,
            output_delay,
            r2c_plan,
            c2r_plan,
            fdl: (0..num_inputs)
                .map(|_| SplitSpectra::zeroed(num_partitions, num_bins))
                .collect(),
            fdl_head: 0,
            path_spectra,
            paths: paths.to_vec(),
            num_outputs,
            real_scratch_buffer,
            mac_kernel: best_mac_kernel(),
            complex_fft_buffer,
            fft_scratch_buffer,
            acc: SplitSpectra::zeroed(1, num_bins),
            output_buffer: vec![0.0; num_outputs * partition_size],
        }
    }

    /// Partition size `P`.
    pub fn partition_size(&self) -> usize {
        self.partition_size
    }

    /// Delay from input time to output time (`D + latency`).
    pub fn output_delay(&self) -> usize {
        self.output_delay
    }

    /// Number of output channels this level writes.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Inline execution: computes the contribution of the input chunk that ends at `chunk_end`
    /// (a multiple of `P`) from the input rings and adds it to the output rings, `D + latency`
    /// samples later. Does not allocate.
    pub fn run(&mut self, chunk_end: u64, inputs: &[InputRing], outputs: &mut [OutputRing]) {
        debug_assert!(chunk_end.is_multiple_of(self.partition_size as u64));
        let window_len = 2 * self.partition_size;
        let mut windows: [&[f32]; MAX_CHANNELS] = [&[]; MAX_CHANNELS];
        for (window, ring) in windows.iter_mut().zip(inputs) {
            *window = ring.window(chunk_end, window_len);
        }
        let mut result = std::mem::take(&mut self.output_buffer);
        {
            let mut slices: [&mut [f32]; MAX_CHANNELS] = std::array::from_fn(|_| &mut [][..]);
            for (slice, chunk) in slices
                .iter_mut()
                .zip(result.chunks_exact_mut(self.partition_size))
            {
                *slice = chunk;
            }
            self.compute(&windows[..inputs.len()], &mut slices[..self.num_outputs]);
        }
        let output_start = chunk_end - self.partition_size as u64 + self.output_delay as u64;
        for (ring, chunk) in outputs
            .iter_mut()
            .zip(result.chunks_exact(self.partition_size))
        {
            ring.add(output_start, chunk);
        }
        self.output_buffer = result;
    }

    /// One period of the level, independent of where the samples live: `windows` holds each
    /// input channel's last `2P` samples (oldest first, the newest `P` being the chunk that just
    /// completed); each of `outputs` (one per output channel, `P` samples) is overwritten with
    /// that chunk's contribution. Does not allocate.
    pub fn compute(&mut self, windows: &[&[f32]], outputs: &mut [&mut [f32]]) {
        let partition_size = self.partition_size;
        let num_bins = self.num_bins;

        // Step 1: one forward FFT per input channel into the newest FDL slot.
        self.fdl_head = (self.fdl_head + 1) % self.num_partitions;
        let slot = self.fdl_head * num_bins..(self.fdl_head + 1) * num_bins;
        for (window, fdl) in windows.iter().zip(&mut self.fdl) {
            self.real_scratch_buffer
                .copy_from_slice(&window[..2 * partition_size]);
            let _ = self.r2c_plan.process_with_scratch(
                &mut self.real_scratch_buffer,
                &mut self.complex_fft_buffer,
                &mut self.fft_scratch_buffer,
            );
            for ((re, im), bin) in fdl.re[slot.clone()]
                .iter_mut()
                .zip(&mut fdl.im[slot.clone()])
                .zip(&self.complex_fft_buffer)
            {
                *re = bin.re;
                *im = bin.im;
            }
        }

        // Step 2 and 3, per output channel: MAC over its paths and partitions, then one inverse
        // FFT and the overlap-save output.
        for (output_idx, output) in outputs.iter_mut().enumerate() {
            self.acc.re.fill(0.0);
            self.acc.im.fill(0.0);
            let mut has_paths = false;
            for (path, spectra) in self.paths.iter().zip(&self.path_spectra) {
                if path.output_idx != output_idx {
                    continue;
                }
                has_paths = true;
                let fdl = &self.fdl[path.input_idx];
                for partition_idx in 0..self.num_partitions {
                    // Partition j meets the input spectrum of j chunks ago.
                    let slot_idx =
                        (self.fdl_head + self.num_partitions - partition_idx) % self.num_partitions;
                    let x = slot_idx * num_bins..(slot_idx + 1) * num_bins;
                    let h = partition_idx * num_bins..(partition_idx + 1) * num_bins;
                    (self.mac_kernel)(
                        &mut self.acc.re,
                        &mut self.acc.im,
                        &fdl.re[x.clone()],
                        &fdl.im[x],
                        &spectra.re[h.clone()],
                        &spectra.im[h],
                    );
                }
            }
            if !has_paths {
                output.fill(0.0);
                continue;
            }

            for ((bin, re), im) in self
                .complex_fft_buffer
                .iter_mut()
                .zip(&self.acc.re)
                .zip(&self.acc.im)
            {
                *bin = Complex::new(*re, *im);
            }
            // A real signal's DC and Nyquist bins are real; rounding may leave a tiny imaginary
            // part that realfft would reject, so clear it.
            self.complex_fft_buffer[0].im = 0.0;
            self.complex_fft_buffer[num_bins - 1].im = 0.0;
            let _ = self.c2r_plan.process_with_scratch(
                &mut self.complex_fft_buffer,
                &mut self.real_scratch_buffer,
                &mut self.fft_scratch_buffer,
            );
            output[..partition_size].copy_from_slice(&self.real_scratch_buffer[partition_size..]);
        }
    }

    /// Advances the FDLs by `count` chunks of silence, for chunks that never reached the level
    /// (dropped by the late policy). Does not allocate.
    pub fn push_silence(&mut self, count: usize) {
        let num_bins = self.num_bins;
        for _ in 0..count.min(self.num_partitions) {
            self.fdl_head = (self.fdl_head + 1) % self.num_partitions;
            let slot = self.fdl_head * num_bins..(self.fdl_head + 1) * num_bins;
            for fdl in &mut self.fdl {
                fdl.re[slot.clone()].fill(0.0);
                fdl.im[slot.clone()].fill(0.0);
            }
        }
    }

    /// Clears the FDLs (the IR spectra stay). Does not allocate.
    pub fn reset(&mut self) {
        for fdl in &mut self.fdl {
            fdl.re.fill(0.0);
            fdl.im.fill(0.0);
        }
        self.fdl_head = 0;
    }

    /// Test hook: fills every scratch buffer with `value`, to prove that no result depends on
    /// what scratch held before.
    pub fn poison_scratch(&mut self, value: f32) {
        self.real_scratch_buffer.fill(value);
        self.complex_fft_buffer.fill(Complex::new(value, value));
        self.fft_scratch_buffer.fill(Complex::new(value, value));
        self.acc.re.fill(value);
        self.acc.im.fill(value);
        self.output_buffer.fill(value);
    }
}

/// Signature of the spectral multiply-accumulate: `acc += x * h` over split complex arrays.
pub type MacKernel = fn(&mut [f32], &mut [f32], &[f32], &[f32], &[f32], &[f32]);

/// The fastest MAC kernel this CPU runs (AVX2 + FMA where available, else the scalar
/// reference). Chosen once per level, at construction.
pub fn best_mac_kernel() -> MacKernel {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        return spectral_mac_fma;
    }
    spectral_mac
}

/// `acc += x * h` over split complex arrays of equal length: the hot loop of every level, and
/// the scalar reference twin of the SIMD kernels. Written as straight zipped loops so the
/// compiler vectorises it for the baseline target.
#[inline]
pub fn spectral_mac(
    acc_re: &mut [f32],
    acc_im: &mut [f32],
    x_re: &[f32],
    x_im: &[f32],
    h_re: &[f32],
    h_im: &[f32],
) {
    let len = acc_re.len();
    let (acc_im, x_re, x_im, h_re, h_im) = (
        &mut acc_im[..len],
        &x_re[..len],
        &x_im[..len],
        &h_re[..len],
        &h_im[..len],
    );
    for bin_idx in 0..len {
        let (xr, xi, hr, hi) = (x_re[bin_idx], x_im[bin_idx], h_re[bin_idx], h_im[bin_idx]);
        acc_re[bin_idx] += xr * hr - xi * hi;
        acc_im[bin_idx] += xr * hi + xi * hr;
    }
}

/// The same MAC compiled for AVX2 with fused multiply-adds (8 bins per instruction, one
/// rounding per multiply-add).
#[cfg(target_arch = "x86_64")]
fn spectral_mac_fma(
    acc_re: &mut [f32],
    acc_im: &mut [f32],
    x_re: &[f32],
    x_im: &[f32],
    h_re: &[f32],
    h_im: &[f32],
) {
    // SAFETY: `best_mac_kernel` returns this function only when the CPU reports AVX2 and FMA.
    unsafe { spectral_mac_avx2_fma(acc_re, acc_im, x_re, x_im, h_re, h_im) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn spectral_mac_avx2_fma(
    acc_re: &mut [f32],
    acc_im: &mut [f32],
    x_re: &[f32],
    x_im: &[f32],
    h_re: &[f32],
    h_im: &[f32],
) {
    let len = acc_re.len();
    let (acc_im, x_re, x_im, h_re, h_im) = (
        &mut acc_im[..len],
        &x_re[..len],
        &x_im[..len],
        &h_re[..len],
        &h_im[..len],
    );
    for bin_idx in 0..len {
        let (xr, xi, hr, hi) = (x_re[bin_idx], x_im[bin_idx], h_re[bin_idx], h_im[bin_idx]);
        acc_re[bin_idx] = xr.mul_add(hr, (-xi).mul_add(hi, acc_re[bin_idx]));
        acc_im[bin_idx] = xr.mul_add(hi, xi.mul_add(hr, acc_im[bin_idx]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_matches_complex_multiplication() {
        // (1 + 2i)(3 + 4i) = -5 + 10i, added to (1 + 1i).
        let (mut acc_re, mut acc_im) = ([1.0f32], [1.0f32]);
        spectral_mac(&mut acc_re, &mut acc_im, &[1.0], &[2.0], &[3.0], &[4.0]);
        assert_eq!((acc_re[0], acc_im[0]), (-4.0, 11.0));
        let (mut acc_re, mut acc_im) = ([1.0f32], [1.0f32]);
        best_mac_kernel()(&mut acc_re, &mut acc_im, &[1.0], &[2.0], &[3.0], &[4.0]);
        assert_eq!((acc_re[0], acc_im[0]), (-4.0, 11.0));
    }

    #[test]
    fn simd_kernel_agrees_with_the_scalar_twin() {
        let mut rng = crate::rng::Rng::new(42);
        for len in [1, 7, 8, 9, 65, 1025, 8193] {
            let mut data = || (0..len).map(|_| rng.bipolar()).collect::<Vec<f32>>();
            let (x_re, x_im, h_re, h_im) = (data(), data(), data(), data());
            let (mut ref_re, mut ref_im) = (data(), data());
            let (mut simd_re, mut simd_im) = (ref_re.clone(), ref_im.clone());
            for _ in 0..50 {
                spectral_mac(&mut ref_re, &mut ref_im, &x_re, &x_im, &h_re, &h_im);
                best_mac_kernel()(&mut simd_re, &mut simd_im, &x_re, &x_im, &h_re, &h_im);
            }
            for (a, b) in ref_re
                .iter()
                .chain(&ref_im)
                .zip(simd_re.iter().chain(&simd_im))
            {
                // 50 accumulations (two roundings each without FMA, one with) of products below
                // 2 in magnitude into sums below 100: at most 100 x 2^-24 x 100 ~ 6e-4 apart.
                assert!((a - b).abs() <= 1e-3, "len {len}: {a} vs {b}");
            }
        }
    }
}
