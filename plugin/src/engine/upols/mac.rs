//! The spectral multiply-accumulate (`acc += x * h` over split complex arrays), the hot loop
//! of every level; its dual (`acc += x_a * h_a + x_b * h_b`: two partitions for one pass over
//! the sum); and its pair (`a += x_a * h`, `b += x_b * h`: one IR partition read for two
//! periods), also with a leading term of `a` in the same pass. Each is written once and
//! compiled three times: a scalar reference that the compiler vectorises for the baseline
//! target, and the same for AVX2 and for AVX-512F with fused multiply-adds, chosen once per
//! level. Every bin gets the same operations in each, so the two SIMD builds give the same bits.
//!
//! AVX-512 is chosen on AMD CPUs only (see `is_amd`), for the levels whose IR spectra stream
//! from memory ([`WIDE_MIN_SPECTRA_BYTES`]) and those of dense matrices of 8 outputs or more
//! ([`WIDE_MIN_SPECTRA_PER_INPUT`]). On the 2-core Zen 5 EPYC VM (2026-12-01, dense
//! 2 s matrices beside zita-convolver, `matrix.py --reps 3`, one binary with either choice
//! alternated), every level on AVX-512 took up to 15 % off 12 x 12 and 16 x 16 (11 cells of
//! 12) but cost 4 x 4 3 to 10 % in both runs; with the bound, 16 x 16 gained 4 to 12 % in all
//! six cells of two runs and 12 x 12 1 to 12 % in four of six (up to 4 % more in the others),
//! and 4 x 4 and the 1 s and 10 s stereo reverbs, none of whose levels reaches the bound, keep
//! AVX2. An earlier session's AVX-512 build took nothing off 4 x 4 at 1024-sample blocks either.
//!
//! A level whose spectra fit in cache calls each kernel on one partition's spectra whole: it
//! walks an output's paths and partitions one after another (`UpolsLevel`'s step 2), so the
//! hardware prefetcher sees long runs. Measured on a dense 12 x 12 matrix, both a four-product
//! kernel (16 input streams at once) and a walk blocked over short runs of bins were 10 to
//! 100 % slower than this. Two partitions per pass (the dual kernel, 8 streams) halve the sum's
//! loads and stores and took 1 to 12 % off stereo reverbs and up to 7 % off matrices; four per
//! pass gained nothing more.
//!
//! Where the spectra outgrow the cache, the kernel is bound by memory, not arithmetic: on the
//! 2-core EPYC VM it takes 0.26 to 0.3 ns per complex MAC from cache and 0.65 to 0.7 ns from
//! DRAM, and on the Xeon VM a stereo 10 s reverb's last level (15 MB of spectra, in the
//! last-level cache) took twice the time per MAC of the levels in a core's own cache. Neither
//! laying the IR spectra out in the order they are read (bins blocked, one sequential stream)
//! nor interleaving re and im in blocks of 8 (three streams instead of six) changed that. What
//! lowers the cost is reading fewer spectra: fewer, bigger partitions ([`crate::engine::plan`]),
//! and each partition read once for two periods (the pair kernel, see `upols/carry.rs`). A level
//! of many partitions walks its bins in chunks of 1024 and reads its input spectra once for
//! two periods too, which took 6 to 13 % off stereo reverbs at blocks of 256 and 10 s ones at
//! 1024; a dense level of a few partitions (a big matrix's) reads half its partitions a period
//! for two, in long runs, which took 5 to 10 % off dense 12 x 12 and 16 x 16 matrices at
//! 1024-sample blocks (the chunked walk lost 5 to 10 % there). Such a level adds partition 0
//! alone to a period's sum; folded into the next term's pass (the dual or the lead pair), it
//! took up to 12 % off dense 12 x 12 and 16 x 16 matrices, for the same bits. It also sums all
//! its outputs in each chunk of 4096 bins, so that a chunk of an input spectrum is read from
//! beyond the cache once for every output, not once per output: 5 to 9 % off again.
//!
//! A level's spectra lie block after block, `P + 1` bins each, so every block but the first
//! starts 4 bytes further into a cache line than the one before, and many of the kernels' 32-byte
//! loads span two lines. A dual-kernel loop in C on the EPYC VM ran 30 to 45 % faster per
//! product with blocks padded to a cache line (twice as fast in the first-level cache), but in
//! the engine, levels padded to 8 and 16 floats and unpadded, built side by side in one process
//! and timed alternately (dense 12 x 12 levels of 64 x 4 to 16384 x 4, 4 x 4 levels of 1024 x 8
//! and 4096 x 6, a stereo 16384 x 28), came within 5 % of each other with no layout ahead in
//! every size: these kernels wait on the second-level cache and beyond, where a split line costs
//! little. Nor did explicit AVX2 intrinsics help: the inner loop compiled to the same
//! instructions, and the dense 12 x 12 matrix at 64-sample blocks took 16 % more (the
//! slices' setup no longer inlined).
//!
//! Nor did a dense level walked bins outermost pay (Xeon VM, 2026-12-02, dense 2 s matrices,
//! one binary either way, alternated): per chunk of 32 bins, each output's whole sum in
//! registers, the IR spectra laid out in the order that walk reads them (one sequential
//! stream) and the chunk's input spectra gathered once into a scratch in the first-level
//! cache, so that each input spectrum is read from beyond it once for all outputs instead of
//! once per output. Run whole in every level of a matrix, it cost 9 to 16 % more (12 x 12 at
//! 128 and 1024, 16 x 16 at 64, 3 rounds). Software prefetch 4 to 16 KiB ahead brought it back
//! within the spread, and so did a second form that also reads half of the partitions a period
//! for two periods (a layout by partition parity, AVX-512, 8 KiB prefetch; 12 x 12 at 1024:
//! 0.082 to 0.085 CPU-s/s against 0.080 to 0.086). Alone, a 12 x 12 room's `128 x 3` and
//! `256 x 2` levels ran 10 to 26 % faster that way (a level's period, transforms included,
//! timed in a loop), its `512 x 6` and bigger ones no faster: the levels it speeds up
//! hold too few of a period's products to show.
//!
//! Uses nothing else of the engine.

/// An accumulator the MAC adds to: split real and imaginary arrays of equal length.
pub struct Acc<'a> {
    pub re: &'a mut [f32],
    pub im: &'a mut [f32],
}

/// A spectrum the MAC reads: split real and imaginary arrays, at least as long as the
/// accumulator.
#[derive(Clone, Copy)]
pub struct Spectrum<'a> {
    pub re: &'a [f32],
    pub im: &'a [f32],
}

/// `acc += x * h`.
pub type MacKernel = fn(Acc<'_>, Spectrum<'_>, Spectrum<'_>);

/// A term of a sum: an input spectrum and the IR spectrum it meets.
pub type Term<'a> = (Spectrum<'a>, Spectrum<'a>);

/// `a += sum_k lead[k] + x_a * h` and `b += x_b * h` in one pass over `h`: two periods' terms
/// of one IR partition for one read of its spectrum ([`crate::engine::upols`]'s carried terms),
/// after `LEAD` terms of `a` alone (0, or 1: a carrying level's term before it, in the same pass).
pub type MacPairKernel<const LEAD: usize> =
    fn(Acc<'_>, [Term<'_>; LEAD], Spectrum<'_>, Acc<'_>, Spectrum<'_>, Spectrum<'_>);

/// `acc += sum_k x[k] * h[k]`: `K` partitions into one sum, which is read and written once
/// instead of `K` times (the sum, not the spectra, is what an in-cache MAC moves most).
pub type MacTermsKernel<const K: usize> = fn(Acc<'_>, [Spectrum<'_>; K], [Spectrum<'_>; K]);

/// The MAC kernels for this CPU, chosen together.
#[derive(Clone, Copy)]
pub struct MacKernels {
    pub single: MacKernel,
    pub pair: MacPairKernel<0>,
    pub lead_pair: MacPairKernel<1>,
    pub dual: MacTermsKernel<2>,
}

/// Bytes of IR spectra from which a level takes the AVX-512 kernels: spectra that stream from
/// memory (past half a 32 MiB last-level cache), as a big dense matrix's biggest levels do,
/// where AVX-512 gained. Smaller levels keep AVX2: with every level on AVX-512, 4 x 4 matrices,
/// whose levels all stay in the last-level cache, lost 3 to 10 % (a 512-bit load of a block
/// that started 4 bytes into a line spanned two lines nearly every time). Blocks now start on
/// a cache line (`upols`'s `BLOCK_ALIGN_BINS`). On the Intel VM with aligned blocks
/// (2026-12-03, 5 rounds alternated, AVX-512 in every level), 4 x 4 at 1024 came within 1 % and
/// at 128 5 % under, within that cell's spread. On a Zen 4 EPYC VM (2026-12-05, harness runs
/// alternated, medians of 7 to 11, AVX-512 in every level against this bound): dense 2 s 12 x
/// 12 and 16 x 16 matrices 1.5 to 4.7 % less at 128 and 1024, 4 x 4 within 3 % either way, but
/// a stereo 10 s reverb 2 to 3 % more at 64, 256 and 1024 (the 1 s one within 1 %); a bound of
/// 2 MiB gave 12 x 12 at 1024 4 % and 16 x 16 1 %. Too little, and mixed, to move the bound;
/// the matrices that gained take AVX-512 by their shape instead ([`WIDE_MIN_SPECTRA_PER_INPUT`]).
pub const WIDE_MIN_SPECTRA_BYTES: usize = 16 << 20;

/// IR spectra per input spectrum from which a level takes the AVX-512 kernels whatever its
/// size: a dense matrix of 8 outputs or more, whose every input spectrum meets that many IR
/// spectra, so that its products stream IR spectra past input spectra held in cache. On the
/// Zen 4 EPYC VM (2026-12-05, harness runs of the dense 2 s matrices, 7 rounds alternated,
/// AVX-512 in every level against [`WIDE_MIN_SPECTRA_BYTES`] alone), 16 x 16 took 6 and 4 %
/// less CPU at blocks of 64 and 1024 and 12 x 12 2.5 and 9 % less, where 4 x 4 (4 IR spectra
/// per input) came 2 % over at 1024 and 3.5 % under at 128, and a stereo reverb (1 per input)
/// 2 to 3 % over: those keep AVX2.
pub const WIDE_MIN_SPECTRA_PER_INPUT: usize = 8;

/// Whether a level of `num_spectra` IR spectra from `num_inputs` inputs, `spectra_bytes` of
/// them in all, takes the AVX-512 kernels where the CPU has them ([`best_mac_kernels`]): from
/// [`WIDE_MIN_SPECTRA_BYTES`] or [`WIDE_MIN_SPECTRA_PER_INPUT`].
pub fn wants_wide_kernels(spectra_bytes: usize, num_spectra: usize, num_inputs: usize) -> bool {
    spectra_bytes >= WIDE_MIN_SPECTRA_BYTES
        || num_spectra >= WIDE_MIN_SPECTRA_PER_INPUT * num_inputs.max(1)
}

/// The fastest MAC kernels this CPU runs: AVX-512 where `wide` ([`wants_wide_kernels`]) and the
/// CPU is AMD's with AVX-512, else AVX2 with FMA where available, else the scalar reference.
/// Chosen once per level, at construction.
pub fn best_mac_kernels(wide: bool) -> MacKernels {
    wide.then(avx512_kernels)
        .flatten()
        .or_else(avx2_kernels)
        .unwrap_or_else(scalar_kernels)
}

/// The scalar references, whatever this CPU offers.
fn scalar_kernels() -> MacKernels {
    MacKernels {
        single: spectral_mac,
        pair: spectral_mac_pair::<0>,
        lead_pair: spectral_mac_pair::<1>,
        dual: spectral_mac_terms::<2>,
    }
}

/// The kernels compiled for AVX2 with FMA (8 bins an instruction), where the CPU has both.
fn avx2_kernels() -> Option<MacKernels> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU reports the features the module is compiled for.
        return Some(unsafe { avx2::kernels() });
    }
    None
}

/// The kernels compiled for AVX-512F with FMA (16 bins an instruction), on AMD CPUs that have
/// both: the same operations per bin as the others, so the same bits as the AVX2 kernels.
fn avx512_kernels() -> Option<MacKernels> {
    #[cfg(target_arch = "x86_64")]
    if is_amd()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: the CPU reports the features the module is compiled for.
        return Some(unsafe { avx512::kernels() });
    }
    None
}

/// Whether the CPU is AMD's, whose AVX-512 (Zen 4 on) runs at the clock of its other
/// instructions. Intel's Skylake to Cascade Lake server cores lower their clock for a while
/// after 512-bit multiply-adds, which an audio thread's short bursts would pay for every call.
/// On the one Intel CPU measured here (the 2-core Xeon VM, an Emerald Rapids, 2026-12-02, one
/// binary with the kernels chosen either way and alternated, 3 rounds), AVX-512 came within
/// the spread of AVX2, with the bound or in every level: dense 2 s matrices 12 x 12 at 128 and
/// 1024, 16 x 16 at 128 and 4 x 4 at 1024 all within 4 % (12 x 12 at 128 0.0978 to 0.1008
/// against 0.1018 to 0.1033 CPU-s/s). Nor on a second Intel VM (family 6 model 167 as its
/// hypervisor reports it, with AMX: 2026-12-03, 3 rounds alternated, dense 2 s matrices): with
/// the bound or in every level, 12 x 12 at 64 and 128 and 16 x 16 at 64 came within 4 % of
/// AVX2 either way (12 x 12 at 64: 0.0852 to 0.0907 against 0.0889 to 0.0897 CPU-s/s); 4 x 4
/// at 1024 with AVX-512 in every level came 4 to 5 % under in each round (0.0068 to 0.0069
/// against 0.0071 to 0.0073), too little to matter there, and the Zen 5 VM lost 3 to 10 % on
/// 4 x 4 that way. Intel CPUs keep the AVX2 kernels.
#[cfg(target_arch = "x86_64")]
fn is_amd() -> bool {
    let vendor = std::arch::x86_64::__cpuid(0);
    // "AuthenticAMD", in EBX, EDX, ECX.
    (vendor.ebx, vendor.edx, vendor.ecx) == (0x6874_7541, 0x6974_6e65, 0x444d_4163)
}

/// `a * b + c`, fused (one rounding) where `FUSED`; only called from functions compiled with
/// FMA enabled when it is, so `mul_add` is one instruction, never a library call.
#[inline(always)]
fn madd<const FUSED: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FUSED { a.mul_add(b, c) } else { a * b + c }
}

/// `sum + x * h` for one bin, as `(re, im)` pairs, in the one order every kernel adds a product
/// (the imaginary parts' product first), so that terms summed one, two or more per pass give
/// the same bits.
#[inline(always)]
fn cmadd<const FUSED: bool>(
    (xr, xi): (f32, f32),
    (hr, hi): (f32, f32),
    (re, im): (f32, f32),
) -> (f32, f32) {
    (
        madd::<FUSED>(xr, hr, madd::<FUSED>(-xi, hi, re)),
        madd::<FUSED>(xr, hi, madd::<FUSED>(xi, hr, im)),
    )
}

/// The loop of [`spectral_mac_pair`]: each bin of `h` is loaded once for both products, and `a`
/// gets the `LEAD` terms first, in the order separate calls would add them.
#[inline(always)]
fn mac_pair_body<const FUSED: bool, const LEAD: usize>(
    a: Acc<'_>,
    lead: [Term<'_>; LEAD],
    x_a: Spectrum<'_>,
    b: Acc<'_>,
    x_b: Spectrum<'_>,
    h: Spectrum<'_>,
) {
    let len = a.re.len();
    let (a_re, a_im, b_re, b_im) = (a.re, &mut a.im[..len], &mut b.re[..len], &mut b.im[..len]);
    let lead_x_re = lead.map(|(x, _)| &x.re[..len]);
    let lead_x_im = lead.map(|(x, _)| &x.im[..len]);
    let lead_h_re = lead.map(|(_, h)| &h.re[..len]);
    let lead_h_im = lead.map(|(_, h)| &h.im[..len]);
    let (xa_re, xa_im) = (&x_a.re[..len], &x_a.im[..len]);
    let (xb_re, xb_im) = (&x_b.re[..len], &x_b.im[..len]);
    let (h_re, h_im) = (&h.re[..len], &h.im[..len]);
    for bin_idx in 0..len {
        let mut sum = (a_re[bin_idx], a_im[bin_idx]);
        for k in 0..LEAD {
            let x = (lead_x_re[k][bin_idx], lead_x_im[k][bin_idx]);
            let g = (lead_h_re[k][bin_idx], lead_h_im[k][bin_idx]);
            sum = cmadd::<FUSED>(x, g, sum);
        }
        let h = (h_re[bin_idx], h_im[bin_idx]);
        let x = (xa_re[bin_idx], xa_im[bin_idx]);
        (a_re[bin_idx], a_im[bin_idx]) = cmadd::<FUSED>(x, h, sum);
        let x = (xb_re[bin_idx], xb_im[bin_idx]);
        (b_re[bin_idx], b_im[bin_idx]) = cmadd::<FUSED>(x, h, (b_re[bin_idx], b_im[bin_idx]));
    }
}

/// The loop of the single and multi-term kernels, inlined into each so that each is compiled
/// for its own target features: per bin, `K` terms summed in registers on top of the sum read
/// once, and written once. Loops over slices cut to one length, so it vectorises.
#[inline(always)]
fn mac_terms_body<const FUSED: bool, const K: usize>(
    acc: Acc<'_>,
    x: [Spectrum<'_>; K],
    h: [Spectrum<'_>; K],
) {
    let len = acc.re.len();
    let (acc_re, acc_im) = (acc.re, &mut acc.im[..len]);
    let x_re = x.map(|x| &x.re[..len]);
    let x_im = x.map(|x| &x.im[..len]);
    let h_re = h.map(|h| &h.re[..len]);
    let h_im = h.map(|h| &h.im[..len]);
    for bin_idx in 0..len {
        let mut sum = (acc_re[bin_idx], acc_im[bin_idx]);
        for k in 0..K {
            let x = (x_re[k][bin_idx], x_im[k][bin_idx]);
            let h = (h_re[k][bin_idx], h_im[k][bin_idx]);
            sum = cmadd::<FUSED>(x, h, sum);
        }
        (acc_re[bin_idx], acc_im[bin_idx]) = sum;
    }
}

/// `acc += x * h` over split complex arrays: the hot loop of every level, and the scalar
/// reference of the SIMD kernel (the compiler vectorises it for the baseline target).
pub fn spectral_mac(acc: Acc<'_>, x: Spectrum<'_>, h: Spectrum<'_>) {
    mac_terms_body::<false, 1>(acc, [x], [h]);
}

/// `a += sum_k lead[k] + x_a * h` and `b += x_b * h`, the scalar reference of the SIMD pair
/// kernel.
pub fn spectral_mac_pair<const LEAD: usize>(
    a: Acc<'_>,
    lead: [Term<'_>; LEAD],
    x_a: Spectrum<'_>,
    b: Acc<'_>,
    x_b: Spectrum<'_>,
    h: Spectrum<'_>,
) {
    mac_pair_body::<false, LEAD>(a, lead, x_a, b, x_b, h);
}

/// Portable `acc += sum_k x[k] * h[k]`, split real and imaginary arrays.
pub fn spectral_mac_terms<const K: usize>(
    acc: Acc<'_>,
    x: [Spectrum<'_>; K],
    h: [Spectrum<'_>; K],
) {
    mac_terms_body::<false, K>(acc, x, h);
}

/// A module of the three kernels compiled for the target features `$features`, with
/// fused multiply-adds: `kernels()` returns them, and is unsafe to call where the CPU lacks
/// any of those features.
#[cfg(target_arch = "x86_64")]
macro_rules! simd_kernels {
    ($name:ident, $features:literal) => {
        mod $name {
            // Named in full: read without the macro expanded, `super` would be the parent of
            // this file, not this file.
            use crate::engine::upols::mac::{
                Acc, MacKernels, Spectrum, Term, mac_pair_body, mac_terms_body,
            };

            /// The kernels of this build.
            ///
            /// # Safety
            ///
            /// The CPU must have the target features this module is compiled for.
            pub unsafe fn kernels() -> MacKernels {
                MacKernels {
                    single,
                    pair: pair::<0>,
                    lead_pair: pair::<1>,
                    dual: terms::<2>,
                }
            }

            fn single(acc: Acc<'_>, x: Spectrum<'_>, h: Spectrum<'_>) {
                // SAFETY: only `kernels()` hands this function out, and its caller checked
                // the CPU's features.
                unsafe { terms_simd::<1>(acc, [x], [h]) }
            }

            fn terms<const K: usize>(acc: Acc<'_>, x: [Spectrum<'_>; K], h: [Spectrum<'_>; K]) {
                // SAFETY: as in `single`.
                unsafe { terms_simd::<K>(acc, x, h) }
            }

            fn pair<const LEAD: usize>(
                a: Acc<'_>,
                lead: [Term<'_>; LEAD],
                x_a: Spectrum<'_>,
                b: Acc<'_>,
                x_b: Spectrum<'_>,
                h: Spectrum<'_>,
            ) {
                // SAFETY: as in `single`.
                unsafe { pair_simd::<LEAD>(a, lead, x_a, b, x_b, h) }
            }

            #[target_feature(enable = $features)]
            fn terms_simd<const K: usize>(
                acc: Acc<'_>,
                x: [Spectrum<'_>; K],
                h: [Spectrum<'_>; K],
            ) {
                mac_terms_body::<true, K>(acc, x, h);
            }

            #[target_feature(enable = $features)]
            fn pair_simd<const LEAD: usize>(
                a: Acc<'_>,
                lead: [Term<'_>; LEAD],
                x_a: Spectrum<'_>,
                b: Acc<'_>,
                x_b: Spectrum<'_>,
                h: Spectrum<'_>,
            ) {
                mac_pair_body::<true, LEAD>(a, lead, x_a, b, x_b, h);
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
simd_kernels!(avx2, "avx2,fma");
#[cfg(target_arch = "x86_64")]
simd_kernels!(avx512, "avx512f,fma");

#[cfg(test)]
mod tests {
    use super::*;

    fn acc<'a>(re: &'a mut [f32], im: &'a mut [f32]) -> Acc<'a> {
        Acc { re, im }
    }

    fn spectrum<'a>(re: &'a [f32], im: &'a [f32]) -> Spectrum<'a> {
        Spectrum { re, im }
    }

    #[test]
    fn mac_matches_complex_multiplication() {
        // (1 + 2i)(3 + 4i) = -5 + 10i, added to (1 + 1i); (2 - 1i)(3 + 4i) = 10 + 5i.
        let kernels = [
            scalar_kernels(),
            best_mac_kernels(false),
            best_mac_kernels(true),
        ];
        for kernels in kernels {
            let (x, h) = (spectrum(&[1.0], &[2.0]), spectrum(&[3.0], &[4.0]));
            let (mut re, mut im) = ([1.0f32], [1.0f32]);
            (kernels.single)(acc(&mut re, &mut im), x, h);
            assert_eq!((re[0], im[0]), (-4.0, 11.0));
            let (mut a_re, mut a_im, mut b_re, mut b_im) = ([1.0f32], [1.0f32], [0.0f32], [0.0]);
            (kernels.pair)(
                acc(&mut a_re, &mut a_im),
                [],
                x,
                acc(&mut b_re, &mut b_im),
                spectrum(&[2.0], &[-1.0]),
                h,
            );
            assert_eq!(
                (a_re[0], a_im[0], b_re[0], b_im[0]),
                (-4.0, 11.0, 10.0, 5.0)
            );
        }
    }

    #[test]
    fn simd_kernels_agree_with_the_scalar_twins() {
        let mut rng = crate::rng::Rng::new(42);
        for len in [1, 7, 8, 9, 65, 1025, 8193] {
            let mut data = || (0..len).map(|_| rng.bipolar()).collect::<Vec<f32>>();
            let (x_re, x_im, y_re, y_im, h_re, h_im) =
                (data(), data(), data(), data(), data(), data());
            let (x, y, h) = (
                spectrum(&x_re, &x_im),
                spectrum(&y_re, &y_im),
                spectrum(&h_re, &h_im),
            );
            let start = [data(), data(), data(), data()];
            let (mut reference, mut simd) = (start.clone(), start);
            for _ in 0..50 {
                let [ra_re, ra_im, rb_re, rb_im] = &mut reference;
                spectral_mac(acc(ra_re, ra_im), x, h);
                spectral_mac_pair(acc(ra_re, ra_im), [], y, acc(rb_re, rb_im), x, h);
                let [sa_re, sa_im, sb_re, sb_im] = &mut simd;
                (best_mac_kernels(false).single)(acc(sa_re, sa_im), x, h);
                (best_mac_kernels(false).pair)(acc(sa_re, sa_im), [], y, acc(sb_re, sb_im), x, h);
            }
            for (a, b) in reference.iter().flatten().zip(simd.iter().flatten()) {
                // 100 accumulations (two roundings each without FMA, one with) of products
                // below 2 in magnitude into sums below 200: at most 200 x 2^-24 x 200 ~ 2.4e-3
                // apart.
                assert!((a - b).abs() <= 3e-3, "len {len}: {a} vs {b}");
            }
        }
    }

    /// Levels of stereo reverbs and small matrices keep AVX2 until their IR spectra stream from
    /// memory; a dense matrix of 8 outputs or more takes AVX-512 at every level.
    #[test]
    fn wide_kernels_go_to_streamed_levels_and_big_dense_matrices() {
        let small = 1 << 20;
        assert!(!wants_wide_kernels(small, 2, 2), "stereo");
        assert!(!wants_wide_kernels(small, 16, 4), "dense 4 x 4");
        assert!(!wants_wide_kernels(small, 16, 16), "16 channels, diagonal");
        assert!(wants_wide_kernels(small, 64, 8), "dense 8 x 8");
        assert!(wants_wide_kernels(small, 256, 16), "dense 16 x 16");
        assert!(
            wants_wide_kernels(WIDE_MIN_SPECTRA_BYTES, 2, 2),
            "a stereo tail past the bound"
        );
    }

    #[test]
    fn the_avx512_kernels_give_the_avx2_kernels_bits() {
        let (Some(wide), Some(narrow)) = (avx512_kernels(), avx2_kernels()) else {
            eprintln!("this CPU lacks AVX-512F or AVX2: nothing to compare");
            return;
        };
        let mut rng = crate::rng::Rng::new(7);
        for len in [1, 15, 16, 17, 33, 65, 129, 1025, 4097] {
            let mut data = || (0..len).map(|_| rng.bipolar()).collect::<Vec<f32>>();
            let spectra: Vec<Vec<f32>> = (0..8).map(|_| data()).collect();
            let [x, y, h, g] = [0, 2, 4, 6].map(|k| spectrum(&spectra[k], &spectra[k + 1]));
            let start = [data(), data(), data(), data()];
            let mut sums = [start.clone(), start];
            for (kernels, [a_re, a_im, b_re, b_im]) in [wide, narrow].into_iter().zip(&mut sums) {
                for _ in 0..20 {
                    (kernels.single)(acc(a_re, a_im), x, h);
                    (kernels.dual)(acc(b_re, b_im), [x, y], [h, g]);
                    (kernels.pair)(acc(a_re, a_im), [], y, acc(b_re, b_im), x, g);
                    (kernels.lead_pair)(acc(b_re, b_im), [(y, h)], x, acc(a_re, a_im), y, g);
                }
            }
            let bits = |sums: &[Vec<f32>; 4]| -> Vec<u32> {
                sums.iter().flatten().map(|v| v.to_bits()).collect()
            };
            assert_eq!(bits(&sums[0]), bits(&sums[1]), "len {len}");
        }
    }

    #[test]
    fn the_pair_kernel_is_two_single_macs() {
        let mut rng = crate::rng::Rng::new(7);
        let mut data = || (0..100).map(|_| rng.bipolar()).collect::<Vec<f32>>();
        let (x_re, x_im, y_re, y_im, h_re, h_im) = (data(), data(), data(), data(), data(), data());
        let (x, y, h) = (
            spectrum(&x_re, &x_im),
            spectrum(&y_re, &y_im),
            spectrum(&h_re, &h_im),
        );
        let kernels = best_mac_kernels(false);
        let [mut a_re, mut a_im, mut b_re, mut b_im] = [data(), data(), data(), data()];
        let [mut c_re, mut c_im, mut d_re, mut d_im] =
            [a_re.clone(), a_im.clone(), b_re.clone(), b_im.clone()];
        (kernels.pair)(
            acc(&mut a_re, &mut a_im),
            [],
            x,
            acc(&mut b_re, &mut b_im),
            y,
            h,
        );
        (kernels.single)(acc(&mut c_re, &mut c_im), x, h);
        (kernels.single)(acc(&mut d_re, &mut d_im), y, h);
        assert_eq!((a_re, a_im, b_re, b_im), (c_re, c_im, d_re, d_im));
    }

    /// The dual kernel sums its two terms in the order two single calls would, so a level
    /// computes the same bits whichever way it walks its partitions.
    #[test]
    fn the_dual_kernel_is_two_single_macs() {
        let mut rng = crate::rng::Rng::new(9);
        let mut data = || (0..100).map(|_| rng.bipolar()).collect::<Vec<f32>>();
        let [x_re, x_im, y_re, y_im] = [data(), data(), data(), data()];
        let [g_re, g_im, h_re, h_im] = [data(), data(), data(), data()];
        let (x, y) = (spectrum(&x_re, &x_im), spectrum(&y_re, &y_im));
        let (g, h) = (spectrum(&g_re, &g_im), spectrum(&h_re, &h_im));
        for kernels in [
            scalar_kernels(),
            best_mac_kernels(false),
            best_mac_kernels(true),
        ] {
            let [mut a_re, mut a_im] = [data(), data()];
            let [mut b_re, mut b_im] = [a_re.clone(), a_im.clone()];
            (kernels.dual)(acc(&mut a_re, &mut a_im), [x, y], [g, h]);
            (kernels.single)(acc(&mut b_re, &mut b_im), x, g);
            (kernels.single)(acc(&mut b_re, &mut b_im), y, h);
            assert_eq!((a_re, a_im), (b_re, b_im));
        }
    }

    /// The lead pair adds its leading term to `a` before the pair's, in the order a single call
    /// then the pair would: a carrying level folds them into one pass for the same bits.
    #[test]
    fn the_lead_pair_kernel_is_a_single_then_the_pair() {
        let mut rng = crate::rng::Rng::new(13);
        let mut data = || (0..100).map(|_| rng.bipolar()).collect::<Vec<f32>>();
        let [w_re, w_im, x_re, x_im, y_re, y_im] = [data(), data(), data(), data(), data(), data()];
        let [g_re, g_im, h_re, h_im] = [data(), data(), data(), data()];
        let (w, x, y) = (
            spectrum(&w_re, &w_im),
            spectrum(&x_re, &x_im),
            spectrum(&y_re, &y_im),
        );
        let (g, h) = (spectrum(&g_re, &g_im), spectrum(&h_re, &h_im));
        for kernels in [
            scalar_kernels(),
            best_mac_kernels(false),
            best_mac_kernels(true),
        ] {
            let [mut a_re, mut a_im, mut b_re, mut b_im] = [data(), data(), data(), data()];
            let [mut c_re, mut c_im, mut d_re, mut d_im] =
                [a_re.clone(), a_im.clone(), b_re.clone(), b_im.clone()];
            (kernels.lead_pair)(
                acc(&mut a_re, &mut a_im),
                [(w, g)],
                x,
                acc(&mut b_re, &mut b_im),
                y,
                h,
            );
            (kernels.single)(acc(&mut c_re, &mut c_im), w, g);
            (kernels.pair)(
                acc(&mut c_re, &mut c_im),
                [],
                x,
                acc(&mut d_re, &mut d_im),
                y,
                h,
            );
            assert_eq!((a_re, a_im, b_re, b_im), (c_re, c_im, d_re, d_im));
        }
    }
}
