//! The spectral multiply-accumulate (`acc += x * h` over split complex arrays), the hot loop
//! of every level: a scalar reference that the compiler vectorises for the baseline target,
//! and the same compiled for AVX2 with fused multiply-adds, chosen once per level.
//!
//! A level sums many products into one accumulator per output (every partition of every
//! path to it). [`MacKernels::four`] adds four of them per pass, so the accumulator is read
//! and written once per four products instead of once per product: a matrix's output sums
//! `inputs x partitions` products, and that traffic is what a dense matrix spends its time on.
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

/// One product of [`MacKernels::four`]: an input spectrum `x` and an IR spectrum `h`, split
/// real and imaginary, at least as long as the accumulator.
#[derive(Clone, Copy)]
pub struct Term<'a> {
    pub x_re: &'a [f32],
    pub x_im: &'a [f32],
    pub h_re: &'a [f32],
    pub h_im: &'a [f32],
}

impl Term<'_> {
    /// A term of empty slices, for filling an array before the real terms go in.
    pub const EMPTY: Term<'static> = Term {
        x_re: &[],
        x_im: &[],
        h_re: &[],
        h_im: &[],
    };
}

/// Signature of the four-term MAC: `acc += sum over the terms of x * h`.
pub type MacFourKernel = fn(&mut [f32], &mut [f32], &[Term<'_>; 4]);

/// The MAC kernels of this CPU, chosen once per level.
#[derive(Clone, Copy)]
pub struct MacKernels {
    /// One product.
    pub one: MacKernel,
    /// Four products per pass over the accumulator.
    pub four: MacFourKernel,
}

impl MacKernels {
    /// The fastest kernels this CPU runs (AVX2 + FMA where available, else the scalar
    /// references).
    pub fn best() -> Self {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return Self {
                one: spectral_mac_fma,
                four: spectral_mac_four_fma,
            };
        }
        Self {
            one: spectral_mac,
            four: spectral_mac_four,
        }
    }
}

/// `acc += sum x_k * h_k` over four terms: the scalar reference, in the order the FMA twin
/// adds (term by term, real parts `xr * hr` then `- xi * hi`).
#[inline]
pub fn spectral_mac_four(acc_re: &mut [f32], acc_im: &mut [f32], terms: &[Term<'_>; 4]) {
    let len = acc_re.len();
    let acc_im = &mut acc_im[..len];
    let t = terms.map(|t| {
        (
            &t.x_re[..len],
            &t.x_im[..len],
            &t.h_re[..len],
            &t.h_im[..len],
        )
    });
    for bin_idx in 0..len {
        let (mut re, mut im) = (acc_re[bin_idx], acc_im[bin_idx]);
        for (x_re, x_im, h_re, h_im) in &t {
            let (xr, xi, hr, hi) = (x_re[bin_idx], x_im[bin_idx], h_re[bin_idx], h_im[bin_idx]);
            re += xr * hr - xi * hi;
            im += xr * hi + xi * hr;
        }
        acc_re[bin_idx] = re;
        acc_im[bin_idx] = im;
    }
}

/// The four-term MAC compiled for AVX2 with fused multiply-adds.
#[cfg(target_arch = "x86_64")]
fn spectral_mac_four_fma(acc_re: &mut [f32], acc_im: &mut [f32], terms: &[Term<'_>; 4]) {
    // SAFETY: `MacKernels::best` returns this function only when the CPU reports AVX2 and FMA.
    unsafe { spectral_mac_four_avx2_fma(acc_re, acc_im, terms) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn spectral_mac_four_avx2_fma(acc_re: &mut [f32], acc_im: &mut [f32], terms: &[Term<'_>; 4]) {
    let len = acc_re.len();
    let acc_im = &mut acc_im[..len];
    let t = terms.map(|t| {
        (
            &t.x_re[..len],
            &t.x_im[..len],
            &t.h_re[..len],
            &t.h_im[..len],
        )
    });
    for bin_idx in 0..len {
        let (mut re, mut im) = (acc_re[bin_idx], acc_im[bin_idx]);
        for (x_re, x_im, h_re, h_im) in &t {
            let (xr, xi, hr, hi) = (x_re[bin_idx], x_im[bin_idx], h_re[bin_idx], h_im[bin_idx]);
            re = xr.mul_add(hr, (-xi).mul_add(hi, re));
            im = xr.mul_add(hi, xi.mul_add(hr, im));
        }
        acc_re[bin_idx] = re;
        acc_im[bin_idx] = im;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_terms_equal_four_single_products() {
        let mut rng = crate::rng::Rng::new(9);
        for len in [1, 7, 8, 9, 65, 513, 4097] {
            let mut data = || (0..len).map(|_| rng.bipolar()).collect::<Vec<f32>>();
            let spectra: Vec<[Vec<f32>; 4]> =
                (0..4).map(|_| [data(), data(), data(), data()]).collect();
            let (acc_re, acc_im) = (data(), data());
            let terms: [Term; 4] = std::array::from_fn(|k| Term {
                x_re: &spectra[k][0],
                x_im: &spectra[k][1],
                h_re: &spectra[k][2],
                h_im: &spectra[k][3],
            });
            for kernels in [
                MacKernels::best(),
                MacKernels {
                    one: spectral_mac,
                    four: spectral_mac_four,
                },
            ] {
                let (mut one_re, mut one_im) = (acc_re.clone(), acc_im.clone());
                for t in &terms {
                    (kernels.one)(&mut one_re, &mut one_im, t.x_re, t.x_im, t.h_re, t.h_im);
                }
                let (mut four_re, mut four_im) = (acc_re.clone(), acc_im.clone());
                (kernels.four)(&mut four_re, &mut four_im, &terms);
                // The same products in the same order: equal to the last bit.
                assert_eq!((one_re, one_im), (four_re, four_im), "len {len}");
            }
        }
    }

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
