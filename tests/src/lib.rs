//! Reference harness for Longtail's end-to-end tests: float64 convolution (direct, and by FFT
//! for multi-second IRs), seeded signals, SNR, host block sequences, and locating the built
//! plugin library.
//!
//! Tolerances: the engine computes in float32 and sums up to a few hundred partition products
//! per bin, so its error against the float64 reference sits near -120 dB relative to the
//! output; tests require [`MIN_SNR_DB`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use longtail::engine::{Engine, route_plain};
use longtail::ir::Ir;
use longtail::rng::Rng;
use realfft::RealFftPlanner;

/// Seed of every generated test signal.
pub const RNG_SEED: u64 = 20_240_601;
/// SNR every engine output must reach against the float64 reference.
pub const MIN_SNR_DB: f64 = 100.0;
/// SNR every output of a matrix (`engine_matrix.rs`, the GPU's matrix test) must reach against
/// the float64 matrix convolution ([`matrix_reference`]).
pub const MIN_MATRIX_SNR_DB: f64 = 120.0;

/// `(IR channels, inputs, outputs)`: every layout the plugin offers.
pub const LAYOUTS: [(usize, usize, usize); 7] = [
    (2, 2, 2),
    (2, 1, 2),
    (2, 1, 1),
    (4, 2, 2),
    (4, 1, 2),
    (1, 2, 2),
    (1, 1, 1),
];

/// A stereo IR of `len` samples at `rate`: seeded decaying noise per channel (seeds `seed`
/// and `seed + 1`).
pub fn stereo_decaying_ir(name: &str, rate: u32, len: usize, seed: u64) -> Ir {
    let channels = (0..2).map(|c| decaying_noise(len, seed + c)).collect();
    Ir::new(name, rate, channels).expect("a valid IR")
}

/// Two channels of seeded noise at half scale (seeds `seed` and `seed + 1`).
pub fn stereo_noise(len: usize, seed: u64) -> [Vec<f32>; 2] {
    [noise(len, 0.5, seed), noise(len, 0.5, seed + 1)]
}

/// Seeded white noise in `[-amplitude, amplitude)`.
pub fn noise(num_samples: usize, amplitude: f32, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..num_samples)
        .map(|_| amplitude * rng.bipolar())
        .collect()
}

/// Seeded noise with an exponential decay to -60 dB over its length, like a reverb IR.
pub fn decaying_noise(num_samples: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let decay = (-(1000f64.ln()) / num_samples.max(1) as f64).exp();
    let mut envelope = 1.0f64;
    (0..num_samples)
        .map(|_| {
            let s = (envelope * rng.bipolar() as f64) as f32;
            envelope *= decay;
            s
        })
        .collect()
}

/// Direct-form float64 convolution, full length (`x.len() + h.len() - 1`).
pub fn direct_convolution(x: &[f32], h: &[f32]) -> Vec<f64> {
    if x.is_empty() || h.is_empty() {
        return Vec::new();
    }
    let mut y = vec![0.0f64; x.len() + h.len() - 1];
    for (i, &xi) in x.iter().enumerate() {
        let xi = f64::from(xi);
        if xi == 0.0 {
            continue;
        }
        for (yk, &hk) in y[i..].iter_mut().zip(h) {
            *yk += xi * f64::from(hk);
        }
    }
    y
}

/// Float64 convolution by one large FFT, full length. Its error (~1e-13 relative) is far below
/// what the tests measure; `fft_reference_matches_direct` checks it against the direct form.
pub fn fft_convolution(x: &[f32], h: &[f32]) -> Vec<f64> {
    if x.is_empty() || h.is_empty() {
        return Vec::new();
    }
    let len = x.len() + h.len() - 1;
    let fft_len = len.next_power_of_two();
    let mut planner = RealFftPlanner::<f64>::new();
    let r2c = planner.plan_fft_forward(fft_len);
    let c2r = planner.plan_fft_inverse(fft_len);
    let spectrum = |signal: &[f32]| {
        let mut time: Vec<f64> = signal.iter().map(|&s| f64::from(s)).collect();
        time.resize(fft_len, 0.0);
        let mut bins = r2c.make_output_vec();
        r2c.process(&mut time, &mut bins)
            .expect("sized for the plan");
        bins
    };
    let (sx, sh) = (spectrum(x), spectrum(h));
    let mut product: Vec<_> = sx.iter().zip(&sh).map(|(a, b)| a * b).collect();
    product[0].im = 0.0;
    let last = product.len() - 1;
    product[last].im = 0.0;
    let mut y = c2r.make_output_vec();
    c2r.process(&mut product, &mut y)
        .expect("sized for the plan");
    y.truncate(len);
    let scale = 1.0 / fft_len as f64;
    y.iter_mut().for_each(|v| *v *= scale);
    y
}

/// Float64 reference convolution: direct for short IRs, FFT for long ones.
pub fn reference_convolution(x: &[f32], h: &[f32]) -> Vec<f64> {
    if h.len() <= 2048 || x.len() <= 2048 {
        direct_convolution(x, h)
    } else {
        fft_convolution(x, h)
    }
}

/// Signal-to-noise ratio of `actual` against `expected` in dB, over the longer of the two
/// (missing samples count as zeros). Infinite when they are equal.
pub fn snr_db(actual: &[f32], expected: &[f64]) -> f64 {
    let len = actual.len().max(expected.len());
    let mut signal = 0.0f64;
    let mut noise = 0.0f64;
    for idx in 0..len {
        let a = actual.get(idx).map_or(0.0, |&v| f64::from(v));
        let e = expected.get(idx).copied().unwrap_or(0.0);
        signal += e * e;
        noise += (a - e) * (a - e);
    }
    if noise == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (signal / noise).log10()
    }
}

/// Largest absolute difference, over the longer of the two slices.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    let len = a.len().max(b.len());
    (0..len)
        .map(|idx| (a.get(idx).copied().unwrap_or(0.0) - b.get(idx).copied().unwrap_or(0.0)).abs())
        .fold(0.0, f32::max)
}

/// Host block sequences the tests drive engines with.
#[derive(Debug, Clone, Copy)]
pub enum Blocks {
    /// Always this many samples.
    Fixed(usize),
    /// Cycling through a few primes (and 1).
    Primes,
    /// Seeded random sizes in `[1, max]`.
    Random { max: usize, seed: u64 },
    /// Whole blocks of this power of two (the engine's quantum) mixed with blocks of the same
    /// size that arrive in pieces: the fused head and the piecewise head taking turns.
    Mixed(usize),
}

impl Blocks {
    /// Block sizes covering `total` samples.
    pub fn sizes(self, total: usize) -> Vec<usize> {
        let mut sizes = Vec::new();
        let mut covered = 0;
        let mut rng = Rng::new(match self {
            Blocks::Random { seed, .. } => seed,
            _ => 0,
        });
        let primes = [1usize, 7, 13, 127, 509, 2, 61];
        let mixed = |q: usize| {
            let half = q / 2;
            [
                q,
                q,
                half - 19,
                half + 19,
                q,
                1,
                q - 1,
                13,
                q - 13,
                q,
                7,
                half - 7,
                half,
                q,
            ]
        };
        while covered < total {
            let size = match self {
                Blocks::Fixed(size) => size,
                Blocks::Primes => primes[sizes.len() % primes.len()],
                Blocks::Random { max, .. } => rng.range(1, max),
                Blocks::Mixed(q) => mixed(q)[sizes.len() % 14],
            }
            .min(total - covered);
            sizes.push(size);
            covered += size;
        }
        sizes
    }

    /// Largest block this sequence can produce.
    pub fn max(self) -> usize {
        match self {
            Blocks::Fixed(size) => size,
            Blocks::Primes => 509,
            Blocks::Random { max, .. } => max,
            Blocks::Mixed(q) => q,
        }
    }
}

/// Runs the ignored test `name` of the calling test binary in a child process of its own (so
/// that an abort, or a count of the process's threads, stays there), with `configure` applied to
/// its command, and prints and returns its stdout and stderr. Fails with both where the child
/// failed or ran no test.
pub fn run_test_in_child(
    name: &str,
    configure: impl FnOnce(&mut std::process::Command) -> &mut std::process::Command,
) -> (String, String) {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut command = std::process::Command::new(exe);
    command.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    let output = configure(&mut command)
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    println!("{stdout}{stderr}");
    assert!(
        output.status.success(),
        "the child failed ({}):\n{stdout}{stderr}",
        output.status
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
    (stdout, stderr)
}

/// Runs `create` (making a plugin instance through its CLAP or VST3 entry) while no other
/// thread of the test binary makes one.
///
/// nice-plug's Windows event loop names its window class after the `QueryPerformanceCounter`
/// tick at which the instance is made, and aborts (a panic in a function that cannot unwind)
/// when that class exists already: two instances made at once on two threads can get one tick,
/// as parallel tests under Wine did in CI. A host makes its instances on one thread; the tests
/// take turns here.
pub fn one_instance_at_a_time<T>(create: impl FnOnce() -> T) -> T {
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = CREATING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    create()
}

/// The environment variable that points the host tests at another plugin library: the
/// `Longtail.clap` a release archive installed, say (scripts/dist-check.sh). Such a library is
/// built without `assert_process_allocs`, so the test that expects an abort does not apply.
pub const PLUGIN_LIBRARY_ENV: &str = "LONGTAIL_PLUGIN_LIBRARY";

/// Path of the plugin library under test: the file [`PLUGIN_LIBRARY_ENV`] names when set, else
/// the one cargo built for this test run (`liblongtail.so` on Linux), which is the same file the
/// bundler copies into `Longtail.clap`.
pub fn plugin_library() -> PathBuf {
    if let Some(path) = std::env::var_os(PLUGIN_LIBRARY_ENV) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{PLUGIN_LIBRARY_ENV}: {} is not a file",
            path.display()
        );
        return path;
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test binary>
    let deps = exe.parent().expect("deps directory");
    let profile = deps.parent().expect("profile directory");
    let name = format!(
        "{}longtail{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    // The test build writes its copy (with the tests' features) to deps/; the copy one level up
    // is only refreshed by builds of the plugin crate itself and may be stale.
    for candidate in [deps.join(&name), profile.join(&name)] {
        if candidate.exists() {
            return candidate;
        }
    }
    panic!(
        "the plugin library {name} was not built next to {}",
        deps.display()
    );
}

/// Feeds `inputs` (padded with silence to `total` samples) to `engine` in `blocks` and returns
/// its outputs, `total` samples each. With `poison`, the engine's scratch buffers are filled
/// with NaN before every block (a result must never depend on them).
pub fn run_engine(
    engine: &mut Engine,
    inputs: &[Vec<f32>],
    total: usize,
    blocks: Blocks,
    poison: bool,
) -> Vec<Vec<f32>> {
    let num_outputs = engine.config().num_outputs;
    let padded: Vec<Vec<f32>> = inputs
        .iter()
        .map(|x| {
            let mut x = x.clone();
            x.resize(total, 0.0);
            x
        })
        .collect();
    let mut outputs = vec![vec![0.0f32; total]; num_outputs];
    let mut start = 0;
    for size in blocks.sizes(total) {
        if poison {
            engine.poison_scratch(f32::NAN);
        }
        let ins: Vec<&[f32]> = padded.iter().map(|x| &x[start..start + size]).collect();
        let mut outs: Vec<&mut [f32]> = outputs
            .iter_mut()
            .map(|y| &mut y[start..start + size])
            .collect();
        engine.process(&ins, &mut outs);
        start += size;
    }
    outputs
}

/// [`run_engine`] over `inputs` and the IR's tail, each output with the engine's latency
/// removed (`inputs[0].len() + ir_len - 1` samples).
pub fn run_without_latency(
    engine: &mut Engine,
    inputs: &[Vec<f32>],
    blocks: Blocks,
    poison: bool,
) -> Vec<Vec<f32>> {
    let latency = engine.latency_samples();
    let total = inputs[0].len() + engine.plan().ir_len - 1 + latency;
    let mut outputs = run_engine(engine, inputs, total, blocks, poison);
    outputs.iter_mut().for_each(|y| {
        y.drain(..latency);
    });
    outputs
}

/// The float64 reference of each of `num_outputs` outputs, `len` samples: the sum of the
/// convolutions of that output's paths as the engine routes `ir`.
pub fn reference_outputs(
    ir: &Ir,
    inputs: &[Vec<f32>],
    num_outputs: usize,
    len: usize,
) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0f64; len]; num_outputs];
    for (path, taps) in route_plain(ir, inputs.len(), num_outputs).expect("the IR fits the bus") {
        for (e, v) in out[path.output_idx]
            .iter_mut()
            .zip(reference_convolution(&inputs[path.input_idx], &taps))
        {
            *e += v;
        }
    }
    out
}

/// How [`matrix_ir`] fills a matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatrixFill {
    /// Every path, each its own IR.
    Dense,
    /// The diagonal and about a third of the other paths; the rest silent (no path).
    Sparse,
    /// Every path, each one of three IRs (their spectra shared in the engine).
    Shared,
}

/// A seeded `inputs` x `outputs` matrix IR of `len` samples per path at 48 kHz, each path at
/// `1 / sqrt(inputs)` so every output has about the level of one path.
pub fn matrix_ir(inputs: usize, outputs: usize, fill: MatrixFill, len: usize, seed: u64) -> Ir {
    let mut rng = Rng::new(seed);
    let gain = 1.0 / (inputs as f32).sqrt();
    let shared: Vec<Vec<f32>> = (0..3)
        .map(|k| decaying_noise(len, seed + 1000 + k))
        .collect();
    let channels = (0..inputs * outputs)
        .map(|channel| {
            let (i, o) = (channel / outputs, channel % outputs);
            let taps = match fill {
                MatrixFill::Dense => decaying_noise(len, seed + channel as u64),
                MatrixFill::Sparse if i == o || rng.range(0, 2) == 0 => {
                    decaying_noise(len, seed + channel as u64)
                }
                MatrixFill::Sparse => return vec![0.0; len],
                MatrixFill::Shared => shared[rng.range(0, 2)].clone(),
            };
            taps.into_iter().map(|t| gain * t).collect()
        })
        .collect();
    let layout = longtail::ir::IrLayout::matrix(inputs, outputs).expect("1 to 64 a side");
    Ir::with_layout("matrix", 48_000, layout, channels).expect("a valid matrix IR")
}

/// The float64 matrix convolution, written from the matrix layout alone (not the engine's
/// routing): output `o` is the sum over inputs `i` of input `i` convolved with IR channel
/// `i * outputs + o`, `len` samples each.
pub fn matrix_reference(ir: &Ir, inputs: &[Vec<f32>], len: usize) -> Vec<Vec<f64>> {
    let longtail::ir::IrLayout::Matrix {
        inputs: num_inputs,
        outputs: num_outputs,
    } = ir.layout
    else {
        panic!("not a matrix IR: {}", ir.layout);
    };
    assert_eq!(inputs.len(), num_inputs);
    let mut out = vec![vec![0.0f64; len]; num_outputs];
    for (i, x) in inputs.iter().enumerate() {
        for (o, y) in out.iter_mut().enumerate() {
            let h = &ir.channels[i * num_outputs + o];
            if h.iter().all(|&t| t == 0.0) {
                continue;
            }
            for (e, v) in y.iter_mut().zip(reference_convolution(x, h)) {
                *e += v;
            }
        }
    }
    out
}

/// SNR every output of the offload mode must reach against the float64 reference delayed by
/// exactly the latency the engine reports ([`check_offload`]).
pub const MIN_OFFLOAD_SNR_DB: f64 = 120.0;

/// The offload mode asked for `latency` samples, against the float64 reference delayed by
/// exactly the latency the engine reports: a stereo reverb and a dense 4 x 4 matrix of
/// `ir_len` taps, host blocks of 1, 64 and 480 samples and ragged ones, offline, on `executor`
/// with `limits`, each output at [`MIN_OFFLOAD_SNR_DB`]. Returns the cases' lines.
pub fn check_offload(
    executor: longtail::engine::Executor,
    limits: longtail::engine::PlanLimits,
    latency: usize,
    ir_len: usize,
) -> Vec<String> {
    use longtail::engine::plan::offload_shape;
    use longtail::engine::{EngineConfig, LatencyMode};
    let stereo = Ir::new(
        "offload",
        48_000,
        (0..2)
            .map(|c| decaying_noise(ir_len, RNG_SEED + 70 + c))
            .collect(),
    )
    .expect("a stereo IR");
    let matrix = matrix_ir(4, 4, MatrixFill::Dense, ir_len, RNG_SEED + 80);
    let blocks = [
        Blocks::Fixed(1),
        Blocks::Fixed(64),
        Blocks::Fixed(480),
        Blocks::Random {
            max: 700,
            seed: RNG_SEED + 90,
        },
    ];
    let mut lines = Vec::new();
    for ir in [&stereo, &matrix] {
        let (num_inputs, num_outputs) = match ir.layout {
            longtail::ir::IrLayout::Matrix { inputs, outputs } => (inputs, outputs),
            _ => (2, 2),
        };
        let inputs: Vec<Vec<f32>> = (0..num_inputs)
            .map(|c| noise(6_000, 0.5, RNG_SEED + 100 + c as u64))
            .collect();
        let total = inputs[0].len() + ir.len() - 1;
        let want = match ir.layout {
            longtail::ir::IrLayout::Matrix { .. } => matrix_reference(ir, &inputs, total),
            _ => reference_outputs(ir, &inputs, num_outputs, total),
        };
        for blocks in blocks {
            let config = EngineConfig {
                max_block_size: blocks.max(),
                num_inputs,
                num_outputs,
                latency_mode: LatencyMode::Offload(latency),
                limits,
                executor,
            };
            let mut engine = Engine::new(ir, config).expect("an offload engine");
            engine.set_offline(true);
            let reported = engine.latency_samples();
            let (planned, _) = offload_shape(latency, blocks.max(), limits);
            assert_eq!(reported, planned, "{blocks:?}");
            assert!(reported >= latency);
            let plan = engine.plan().describe();
            if executor != longtail::engine::Executor::Inline {
                // Nothing on the audio thread: a worker (or the GPU) for every level.
                assert_eq!(engine.num_workers(), engine.plan().levels.len(), "{plan}");
            }
            let got = run_without_latency(&mut engine, &inputs, blocks, false);
            for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                let snr = snr_db(g, w);
                let case = format!(
                    "{num_inputs} x {num_outputs} {executor:?} {blocks:?} latency {reported} \
                     [{plan}] output {o}: {snr:.1} dB"
                );
                assert!(snr >= MIN_OFFLOAD_SNR_DB, "{case}");
                lines.push(case);
            }
            assert_eq!(engine.late_stats(), Default::default(), "{plan}");
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fft_reference_matches_direct() {
        let x = noise(5000, 0.5, 1);
        let h = decaying_noise(3000, 2);
        let direct = direct_convolution(&x, &h);
        let fft = fft_convolution(&x, &h);
        assert_eq!(direct.len(), fft.len());
        let err = direct
            .iter()
            .zip(&fft)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-10, "max error {err}");
    }

    #[test]
    fn block_sequences_cover_the_total() {
        for blocks in [
            Blocks::Fixed(64),
            Blocks::Primes,
            Blocks::Random { max: 300, seed: 3 },
        ] {
            let sizes = blocks.sizes(10_000);
            assert_eq!(sizes.iter().sum::<usize>(), 10_000);
            assert!(sizes.iter().all(|&s| s >= 1 && s <= blocks.max()));
        }
    }
}

/// A host that renders ahead of real time, as REAPER's anticipative processing and Bitwig do:
/// at each start it stops for `pause` (playback stopped), then runs `lead_s` seconds ahead of
/// real time as fast as it can, and keeps that lead at real-time pace for `paced_s` seconds of
/// audio before the next start. Call [`before`](Self::before) before each block; it sleeps as
/// the host would.
#[derive(Debug, Clone)]
pub struct AheadHost {
    rate: f64,
    lead_s: f64,
    pause: Duration,
    /// Samples per start (the burst and the paced part).
    segment: usize,
    /// The first sample of the next start.
    next_start: usize,
    /// The current start: when it began and at which sample.
    anchor: (Instant, usize),
}

impl AheadHost {
    pub fn new(rate: u32, lead_s: f64, paced_s: f64, pause: Duration) -> Self {
        Self {
            rate: f64::from(rate),
            lead_s,
            pause,
            segment: ((lead_s + paced_s) * f64::from(rate)).ceil() as usize,
            next_start: 0,
            anchor: (Instant::now(), 0),
        }
    }

    /// Samples that `starts` starts cover.
    pub fn total(&self, starts: usize) -> usize {
        self.segment * starts
    }

    /// Before the block that starts at sample `start`: a new start stops for the pause first;
    /// then the block waits until it is `lead_s` ahead of its real-time deadline.
    pub fn before(&mut self, start: usize) {
        if start >= self.next_start {
            std::thread::sleep(self.pause);
            self.anchor = (Instant::now(), start);
            self.next_start += self.segment;
        }
        let ahead_of_anchor = (start - self.anchor.1) as f64 / self.rate - self.lead_s;
        if ahead_of_anchor > 0.0 {
            let due = self.anchor.0 + Duration::from_secs_f64(ahead_of_anchor);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
    }
}

/// What the pacing tests ask of a host ahead of real time ([`AheadHost`]): each lead at 3
/// starts, with blocks of 64 to 1024 samples and a ragged sequence.
pub mod ahead {
    use super::{Blocks, RNG_SEED};
    use std::time::Duration;

    /// How far ahead of real time the host runs, in seconds.
    pub const LEADS_S: [f64; 3] = [0.2, 0.5, 1.0];
    /// Starts of playback per lead.
    pub const STARTS: usize = 3;
    /// Audio at real-time pace after each burst.
    pub const PACED_S: f64 = 0.25;
    /// How long the host stops before each start.
    pub const PAUSE: Duration = Duration::from_millis(100);
    pub const BLOCKS: [Blocks; 5] = [
        Blocks::Fixed(64),
        Blocks::Fixed(128),
        Blocks::Fixed(512),
        Blocks::Fixed(1024),
        Blocks::Random {
            max: 1024,
            seed: RNG_SEED,
        },
    ];
}

/// Runs `engine` over `inputs` in `blocks`, paced by `host`, every call under
/// `assert_no_alloc`; returns its outputs.
pub fn run_paced(
    engine: &mut Engine,
    inputs: &[Vec<f32>],
    blocks: Blocks,
    host: &mut AheadHost,
) -> Vec<Vec<f32>> {
    let total = inputs[0].len();
    let mut outputs = vec![vec![0.0f32; total]; engine.config().num_outputs];
    let mut start = 0;
    for size in blocks.sizes(total) {
        host.before(start);
        let ins: Vec<&[f32]> = inputs.iter().map(|x| &x[start..start + size]).collect();
        let mut outs: Vec<&mut [f32]> = outputs
            .iter_mut()
            .map(|y| &mut y[start..start + size])
            .collect();
        nice_assert_no_alloc::assert_no_alloc(|| engine.process(&ins, &mut outs));
        start += size;
    }
    outputs
}

/// One `#[test]` per built-in IR (`small_room`, `plate`, `hall`, `cathedral`, `wide_hall`),
/// each calling `$check(BuiltinIr::...)`: slow checks of every IR run two at a time under the
/// test harness. Use it inside a module named after the check.
#[macro_export]
macro_rules! test_every_builtin_ir {
    ($check:path) => {
        #[test]
        fn small_room() {
            $check(::longtail::ir::builtin::BuiltinIr::SmallRoom);
        }

        #[test]
        fn plate() {
            $check(::longtail::ir::builtin::BuiltinIr::Plate);
        }

        #[test]
        fn hall() {
            $check(::longtail::ir::builtin::BuiltinIr::Hall);
        }

        #[test]
        fn cathedral() {
            $check(::longtail::ir::builtin::BuiltinIr::Cathedral);
        }

        #[test]
        fn wide_hall() {
            $check(::longtail::ir::builtin::BuiltinIr::WideHall);
        }
    };
}
