//! Steady-state pieces of the engine, timed by criterion: the spectral MAC (scalar reference,
//! the kernel this CPU uses and its two-period pair), a period's real FFTs (against realfft with
//! the passes it needs around it), one level's FFT round, and the audio thread's callback.
//! Run with `cargo bench -p longtail-tests --features bench`. Timings only; correctness lives in the tests.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use longtail::engine::upols::mac::{Acc, Spectrum, best_mac_kernels, spectral_mac};
use longtail::engine::upols::split_fft::SplitRealFft;
use longtail::engine::upols::{LevelShape, UpolsLevel};
use longtail::engine::{Engine, EngineConfig, Executor, LatencyMode, Path, PlanLimits};
use longtail::ir::Ir;
use longtail::rng::Rng;
use realfft::RealFftPlanner;
use realfft::num_complex::Complex;
use rustfft::FftPlanner;

fn noise(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| rng.bipolar()).collect()
}

fn mac(c: &mut Criterion) {
    // One partition of the largest level: 16384 + 1 bins. The ten streams lie in one buffer,
    // 512 bytes apart modulo 4 KiB as the engine's are not always: streams at about the same
    // address modulo 4 KiB (4K aliasing) make loads wait on unrelated stores, and the pair
    // kernel ran 2.7 times slower than two single ones that way.
    let num_bins = 16_385;
    let stride = num_bins + 127;
    let mut pool = noise(10 * stride, 1);
    let (accs, inputs) = pool.split_at_mut(4 * stride);
    let stream = |idx: usize| &inputs[idx * stride..idx * stride + num_bins];
    let (x, y, h) = (
        Spectrum {
            re: stream(0),
            im: stream(1),
        },
        Spectrum {
            re: stream(2),
            im: stream(3),
        },
        Spectrum {
            re: stream(4),
            im: stream(5),
        },
    );
    let mut accs: Vec<&mut [f32]> = accs
        .chunks_exact_mut(stride)
        .map(|chunk| &mut chunk[..num_bins])
        .collect();
    let [a_re, a_im, b_re, b_im] = &mut accs[..] else {
        unreachable!()
    };
    c.bench_function("spectral_mac/scalar/16385", |bench| {
        bench.iter(|| spectral_mac(Acc { re: a_re, im: a_im }, black_box(x), h))
    });
    // The kernels of a level whose spectra stay in the caches (AVX2 where the CPU has it), and
    // of one whose spectra stream from memory or a big dense matrix's (AVX-512 on AMD CPUs that
    // have it).
    let kernels = best_mac_kernels(false);
    c.bench_function("spectral_mac/best/16385", |bench| {
        bench.iter(|| (kernels.single)(Acc { re: a_re, im: a_im }, black_box(x), h))
    });
    let wide = best_mac_kernels(true);
    c.bench_function("spectral_mac/best_streamed/16385", |bench| {
        bench.iter(|| (wide.single)(Acc { re: a_re, im: a_im }, black_box(x), h))
    });
    // Two periods' products of one partition, against two calls of the single kernel.
    c.bench_function("spectral_mac/best_twice/16385", |bench| {
        bench.iter(|| {
            (kernels.single)(Acc { re: a_re, im: a_im }, black_box(x), h);
            (kernels.single)(Acc { re: b_re, im: b_im }, black_box(y), h);
        })
    });
    // Two partitions into one sum, against two calls of the single kernel.
    c.bench_function("spectral_mac/best_single_two_terms/16385", |bench| {
        bench.iter(|| {
            (kernels.single)(Acc { re: a_re, im: a_im }, black_box(x), h);
            (kernels.single)(Acc { re: a_re, im: a_im }, black_box(y), x);
        })
    });
    c.bench_function("spectral_mac/best_dual/16385", |bench| {
        bench.iter(|| (kernels.dual)(Acc { re: a_re, im: a_im }, [black_box(x), y], [h, x]))
    });
    c.bench_function("spectral_mac/best_pair/16385", |bench| {
        bench.iter(|| {
            (kernels.pair)(
                Acc { re: a_re, im: a_im },
                [],
                black_box(x),
                Acc { re: b_re, im: b_im },
                y,
                h,
            )
        })
    });
}

/// One forward and one inverse real FFT between samples and split spectra, as a level runs
/// them each period: `SplitRealFft`, and realfft with the split and interleave passes.
fn period_fft(c: &mut Criterion) {
    let mut group = c.benchmark_group("period_fft");
    for fft_size in [2048, 3072, 4096, 32768, 49152, 65536] {
        let num_bins = fft_size / 2 + 1;
        let signal = noise(fft_size, 3);
        let (mut input, mut output) = (signal.clone(), vec![0.0; fft_size]);
        let (mut re, mut im) = (vec![0.0; num_bins], vec![0.0; num_bins]);
        let mut split = SplitRealFft::new(&mut FftPlanner::new(), fft_size);
        group.bench_function(format!("split_real_fft/{fft_size}"), |b| {
            b.iter(|| {
                input.copy_from_slice(&signal);
                split.forward(&mut input, &mut re, &mut im);
                split.inverse(&re, &im, &mut output);
                black_box(&output);
            })
        });
        let mut planner = RealFftPlanner::<f32>::new();
        let (r2c, c2r) = (
            planner.plan_fft_forward(fft_size),
            planner.plan_fft_inverse(fft_size),
        );
        let mut bins = vec![Complex::default(); num_bins];
        let mut scratch =
            vec![Complex::default(); r2c.get_scratch_len().max(c2r.get_scratch_len())];
        group.bench_function(format!("realfft_and_passes/{fft_size}"), |b| {
            b.iter(|| {
                input.copy_from_slice(&signal);
                let _ = r2c.process_with_scratch(&mut input, &mut bins, &mut scratch);
                for ((re, im), bin) in re.iter_mut().zip(&mut im).zip(&bins) {
                    (*re, *im) = (bin.re, bin.im);
                }
                for ((bin, re), im) in bins.iter_mut().zip(&re).zip(&im) {
                    *bin = Complex::new(*re, *im);
                }
                bins[0].im = 0.0;
                bins[num_bins - 1].im = 0.0;
                let _ = c2r.process_with_scratch(&mut bins, &mut output, &mut scratch);
                black_box(&output);
            })
        });
    }
    group.finish();
}

fn level_round(c: &mut Criterion) {
    for (partition_size, num_partitions) in [(1024, 6), (16_384, 28)] {
        let taps = [
            noise(partition_size * num_partitions, 5),
            noise(partition_size * num_partitions, 6),
        ];
        let paths = [
            Path {
                input_idx: 0,
                output_idx: 0,
            },
            Path {
                input_idx: 1,
                output_idx: 1,
            },
        ];
        let shape = LevelShape {
            partition_size,
            span: 1,
            num_partitions,
            ir_offset: 0,
            output_delay: 2 * partition_size,
            num_inputs: 2,
            num_outputs: 2,
        };
        let mut level = UpolsLevel::new(
            &mut FftPlanner::new(),
            shape,
            &paths,
            &[&taps[0], &taps[1]],
            &[0, 1],
        );
        let windows = [noise(2 * partition_size, 7), noise(2 * partition_size, 8)];
        let mut outputs = [vec![0.0f32; partition_size], vec![0.0f32; partition_size]];
        c.bench_function(
            &format!("level_round/stereo/{partition_size}x{num_partitions}"),
            |b| {
                b.iter(|| {
                    let [left, right] = &mut outputs;
                    level.compute(&[&windows[0], &windows[1]], &mut [left, right]);
                })
            },
        );
    }
}

/// One period of a dense 12 x 12 level covering `6P` taps per path with partitions of one,
/// two and three hops (`P x 6`, `P x 3 / 2`, `P x 2 / 3`): what the plan's cost model weighs
/// for a matrix's levels. Run whole, as a worker runs it (carrying as the level chooses).
fn level_span(c: &mut Criterion) {
    let (num_inputs, num_outputs) = (12, 12);
    let paths: Vec<Path> = (0..num_inputs * num_outputs)
        .map(|idx| Path {
            input_idx: idx / num_outputs,
            output_idx: idx % num_outputs,
        })
        .collect();
    for partition_size in [512, 1024, 2048, 4096] {
        let taps: Vec<Vec<f32>> = (0..paths.len())
            .map(|idx| noise(6 * partition_size, 20 + idx as u64))
            .collect();
        let tap_refs: Vec<&[f32]> = taps.iter().map(Vec::as_slice).collect();
        let shared: Vec<usize> = (0..paths.len()).collect();
        for span in 1..=3 {
            let shape = LevelShape {
                partition_size,
                span,
                num_partitions: 6 / span,
                ir_offset: 0,
                output_delay: 2 * partition_size,
                num_inputs,
                num_outputs,
            };
            let mut level =
                UpolsLevel::new(&mut FftPlanner::new(), shape, &paths, &tap_refs, &shared);
            let windows: Vec<Vec<f32>> = (0..num_inputs)
                .map(|idx| noise(level.window_len(), 200 + idx as u64))
                .collect();
            let window_refs: Vec<&[f32]> = windows.iter().map(Vec::as_slice).collect();
            let mut outputs = vec![vec![0.0f32; partition_size]; num_outputs];
            c.bench_function(
                &format!("level_span/12x12/{partition_size}x{}/{span}", 6 / span),
                |b| {
                    b.iter(|| {
                        let mut refs: Vec<&mut [f32]> =
                            outputs.iter_mut().map(Vec::as_mut_slice).collect();
                        level.compute(&window_refs, &mut refs);
                    })
                },
            );
        }
    }
}

fn audio_thread_callback(c: &mut Criterion) {
    // What the audio thread runs per 64-sample block: the 64-tap head and level 0 (64 x 7).
    let ir = Ir::new("bench", 48_000, vec![noise(512, 9), noise(512, 10)]).unwrap();
    let config = EngineConfig {
        max_block_size: 64,
        num_inputs: 2,
        num_outputs: 2,
        latency_mode: LatencyMode::Zero,
        limits: PlanLimits::default(),
        executor: Executor::Workers,
    };
    let mut engine = Engine::new(&ir, config).unwrap();
    assert_eq!(engine.num_workers(), 0);
    let input = [noise(64, 11), noise(64, 12)];
    let mut output = [vec![0.0f32; 64], vec![0.0f32; 64]];
    c.bench_function("audio_thread_callback/stereo/block64", |b| {
        b.iter(|| {
            let [left, right] = &mut output;
            engine.process(&[&input[0], &input[1]], &mut [left, right]);
        })
    });
}

criterion_group!(
    benches,
    mac,
    period_fft,
    level_round,
    level_span,
    audio_thread_callback
);
criterion_main!(benches);
