//! The spectral multiply-accumulate (`acc += x * h` over split complex arrays), the hot loop
//! of every level: a scalar reference that the compiler vectorises for the baseline target,
//! and the same compiled for AVX2 with fused multiply-adds, chosen once per level.
//!
//! Each call streams one partition's spectra whole: a level walks an output's paths and
//! partitions one after another (`UpolsLevel`'s step 2), so the hardware prefetcher sees long
//! runs. Measured on a dense 12 x 12 matrix, both a four-product kernel (16 input streams at
//! once) and a walk blocked over bins (short runs) were 10 to 100 % slower than this.
//!
//! Where a matrix's spectra outgrow the last-level cache (a dense 12 x 12 of 2 s rooms keeps
//! about 110 MB), the kernel is bound by memory, not arithmetic: on the 2-core EPYC VM it
//! takes 0.26 to 0.3 ns per complex MAC from cache and 0.65 to 0.7 ns from DRAM, reading the
//! IR spectra at about 11.5 GB/s against 16 GB/s for a plain two-stream read. Neither laying
//! the IR spectra out in the order they are read (bins blocked, one sequential stream) nor
//! interleaving re and im in blocks of 8 (three streams instead of six) came closer to that
//! figure. What lowers the cost of big matrices is reading fewer spectra: fewer, bigger
//! partitions ([`super::plan`]).
//!
//! Uses nothing else of the engine.

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
