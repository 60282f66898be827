//! Shared by the GPU tests: the adapter rule, seeded noise and a float64 direct convolution.

pub mod kernel_bench;

/// Options that accept lavapipe: the tests check correctness, not speed.
pub fn options() -> longtail_gpu::OpenOptions {
    longtail_gpu::OpenOptions {
        allow_cpu_adapter: true,
        ..Default::default()
    }
}

/// Whether the GPU tests can run here (see [`longtail_gpu::available_for_tests`]).
pub fn gpu_available() -> bool {
    longtail_gpu::available_for_tests()
}

/// Seeded noise in [-0.5, 0.5).
pub fn noise(len: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect()
}

/// `x * h`, first `len` samples, in float64.
pub fn direct(x: &[f32], h: &[f32], len: usize) -> Vec<f64> {
    (0..len)
        .map(|t| {
            let lo = t.saturating_sub(x.len() - 1);
            (lo..=t.min(h.len() - 1))
                .map(|k| f64::from(h[k]) * f64::from(x[t - k]))
                .sum()
        })
        .collect()
}

/// Signal-to-error ratio in dB.
pub fn snr_db(actual: &[f32], expected: &[f64]) -> f64 {
    let signal: f64 = expected.iter().map(|e| e * e).sum();
    let error: f64 = actual
        .iter()
        .zip(expected)
        .map(|(a, e)| (f64::from(*a) - e).powi(2))
        .sum();
    10.0 * (signal / error.max(1e-300)).log10()
}
