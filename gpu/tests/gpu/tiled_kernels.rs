//! The tiled kernels (`fft_tiled.wgsl`) and the fused ones (`mac_pre.wgsl`, `fdl_update.wgsl`'s
//! `with_history`): their CPU twins against realfft and the radix-2 twins, and each entry point
//! on the GPU (lavapipe in CI) against its twin, for every shape a transform can take.

use crate::common;

use common::kernel_bench::{Bench, as_complex, assert_close, complex_noise, flat, params};
use common::noise;
use longtail_gpu::TiledPasses;
use longtail_gpu::convolver::kernels::{self, tiled_bindings};
use longtail_gpu::layout::{InJob, OutJob, Params, PathJob};
use longtail_gpu::reference::{self, C32};
use longtail_gpu::shaders;
use realfft::RealFftPlanner;

/// Sizes and tiles that reach every shape of the tiled kernels: whole transforms several and
/// one to a workgroup, in one round and in two (`M = 2 TILE`), and four-step splits with
/// log2(M) even and odd, so stages of radix 8, 4 and 2.
const TILED_CASES: [(usize, u32); 8] = [
    (64, 256),
    (1024, 1024),
    (512, 256),
    (8192, 4096),
    (2048, 256),
    (4096, 256),
    (8192, 2048),
    (16384, 4096),
];

fn shape(tile: u32, m: usize, len: usize, batch: usize, inverse: bool) -> reference::TileShape {
    reference::TileShape {
        tile: tile as usize,
        m,
        len,
        batch,
        inverse,
    }
}

/// The tiled twins' forward chain: each job's spectrum in its delay line, the history updated.
fn tiled_forward(
    jobs: &[InJob],
    history: &mut [f32],
    upload: &[f32],
    fdl: &mut [C32],
    m: usize,
    tile: u32,
) {
    match TiledPasses::new(m, tile as usize).unwrap() {
        TiledPasses::Whole { batch, split } => {
            let whole = shape(tile, m, m / split, batch, false);
            reference::forward_whole(jobs, history, upload, fdl, whole);
        }
        TiledPasses::FourStep {
            m1,
            m2,
            batch1,
            batch2,
        } => {
            let columns = reference::forward_columns(
                jobs,
                history,
                upload,
                shape(tile, m, m1, batch1, false),
            );
            let rows =
                reference::forward_rows(&columns, jobs.len(), shape(tile, m, m2, batch2, false));
            reference::fdl_update(jobs, &rows, fdl, m);
            reference::update_history(jobs, history, upload, m);
        }
    }
}

/// The tiled twins' inverse chain: half-length spectra to the overlap-save output.
fn tiled_inverse(z: &[C32], count: usize, m: usize, tile: u32) -> Vec<f32> {
    match TiledPasses::new(m, tile as usize).unwrap() {
        TiledPasses::Whole { batch, split } => {
            reference::inverse_whole(z, count, shape(tile, m, m / split, batch, true))
        }
        TiledPasses::FourStep {
            m1,
            m2,
            batch1,
            batch2,
        } => {
            let columns = reference::columns(count, shape(tile, m, m1, batch1, true), |job, n| {
                z[job * m + n]
            });
            reference::inverse_rows(&columns, count, shape(tile, m, m2, batch2, true))
        }
    }
}

fn stream_jobs(batch: usize, streams: usize) -> Vec<InJob> {
    (0..batch)
        .map(|j| InJob {
            stream: ((j * 3 + 1) % streams) as u32,
            fdl_base: (j * 2) as u32,
            slots: 2,
            head: (j % 2) as u32,
        })
        .collect()
}

/// The tiled twins (whole and four-step, every split) give realfft's spectrum of each window
/// and the radix-2 twins' inverse; the fused MAC and pre-pass equals the two it replaces.
#[test]
fn tiled_twins_match_realfft_and_the_radix2_twins() {
    let mut planner = RealFftPlanner::<f32>::new();
    for (m, tile) in TILED_CASES {
        let p = m;
        let batch = 5;
        let streams = batch + 2;
        let jobs = stream_jobs(batch, streams);
        let mut history = noise(streams * p, 3 + m as u32);
        let original = history.clone();
        let upload = noise(batch * p, 4 + m as u32);
        let mut fdl = vec![[0.0; 2]; batch * 2 * (m + 1)];
        tiled_forward(&jobs, &mut history, &upload, &mut fdl, m, tile);

        let r2c = planner.plan_fft_forward(2 * p);
        for (j, job) in jobs.iter().enumerate() {
            let stream = job.stream as usize;
            let mut window: Vec<f32> = original[stream * p..(stream + 1) * p]
                .iter()
                .chain(&upload[j * p..(j + 1) * p])
                .copied()
                .collect();
            let mut spectrum = r2c.make_output_vec();
            r2c.process(&mut window, &mut spectrum).unwrap();
            let peak = spectrum.iter().map(|c| c.norm()).fold(0.0f32, f32::max);
            let slot = (job.fdl_base + job.head) as usize * (m + 1);
            for (k, (got, want)) in fdl[slot..slot + m + 1].iter().zip(&spectrum).enumerate() {
                let err = (got[0] - want.re).hypot(got[1] - want.im);
                assert!(
                    err < 1e-5 * peak,
                    "m {m} tile {tile} job {j} bin {k}: {got:?} vs {want}"
                );
            }
            assert_eq!(
                history[stream * p..(stream + 1) * p],
                upload[j * p..(j + 1) * p],
                "m {m} tile {tile}: history of job {j}"
            );
        }

        let z = complex_noise(batch * m, 5 + m as u32);
        let got = tiled_inverse(&z, batch, m, tile);
        let mut data = z.clone();
        reference::fft(&mut data, &mut Vec::new(), m, true);
        let want = reference::overlap_save(&data, p);
        let peak = want.iter().fold(0.0f32, |a, v| a.max(v.abs()));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() < 1e-5 * peak,
                "m {m} tile {tile} inverse sample {i}: {g} vs {w}"
            );
        }
    }

    // MAC and pre-pass fused against the two twins.
    for m in [64, 256] {
        let batch = 3;
        let jobs = stream_jobs(batch, batch + 2);
        let (out_jobs, path_jobs) = two_path_outputs(batch);
        let fdl = complex_noise(batch * 2 * (m + 1), 6);
        let spectra = complex_noise(path_jobs.len() * 2 * (m + 1), 7);
        let got = reference::mac_pre(&jobs, &out_jobs, &path_jobs, &fdl, &spectra, m);
        let acc = reference::spectral_mac(&jobs, &out_jobs, &path_jobs, &fdl, &spectra, m);
        let want = reference::c2r_pre(&acc, m);
        assert_close(&flat(&got), &flat(&want), 1e-5, "mac_pre twin");
    }
}

/// Output `o` takes the paths of input jobs `o` and `o + 1` (where they exist), each with
/// `slots` partitions of spectra.
fn two_path_outputs_with(batch: usize, slots: usize) -> (Vec<OutJob>, Vec<PathJob>) {
    let mut out_jobs = Vec::new();
    let mut path_jobs = Vec::new();
    for o in 0..batch {
        let start = path_jobs.len() as u32;
        for in_job in [o, o + 1].into_iter().filter(|&j| j < batch) {
            path_jobs.push(PathJob {
                in_job: in_job as u32,
                spectra_base: (path_jobs.len() * slots) as u32,
            });
        }
        out_jobs.push(OutJob {
            path_start: start,
            path_count: path_jobs.len() as u32 - start,
        });
    }
    (out_jobs, path_jobs)
}

fn two_path_outputs(batch: usize) -> (Vec<OutJob>, Vec<PathJob>) {
    two_path_outputs_with(batch, 2)
}

/// Each tiled entry point on the GPU against its twin, for every shape, with a narrow 2D grid.
#[test]
fn tiled_kernels_match_their_twins_on_the_gpu() {
    let Some(bench) = Bench::new() else {
        return;
    };
    let limit = bench.device.limits().max_compute_workgroup_storage_size;
    for (m, tile) in TILED_CASES {
        if u64::from(tile * kernels::TILE_POINT_BYTES) > u64::from(limit) {
            eprintln!("tile {tile} skipped: the adapter has {limit} bytes of workgroup memory");
            continue;
        }
        let source = shaders::tiled_source(tile);
        let p = m;
        let batch = 5;
        let streams = batch + 2;
        let jobs = stream_jobs(batch, streams);
        let history = noise(streams * p, 13 + m as u32);
        let upload = noise(batch * p, 14 + m as u32);
        let twiddles = reference::full_twiddles(m);
        let half = reference::half_twiddles(m);
        let fdl = complex_noise(batch * 2 * (m + 1), 16);
        let z = complex_noise(batch * m, 15 + m as u32);
        let (dst, output) = (vec![0u8; batch * m * 8], vec![0u8; batch * p * 4]);
        // Every binding of fft_tiled.wgsl, by number; an entry point gets the ones its layout
        // has (the convolver's own lists), and `binding` finds one's contents afterwards.
        let all: [(u32, &[u8]); 9] = [
            (1, bytemuck::cast_slice(&twiddles)),
            (2, bytemuck::cast_slice(&jobs)),
            (3, bytemuck::cast_slice(&history)),
            (4, bytemuck::cast_slice(&upload)),
            (5, bytemuck::cast_slice(&half)),
            (6, bytemuck::cast_slice(&fdl)),
            (7, bytemuck::cast_slice(&z)),
            (8, &dst),
            (9, &output),
        ];
        let run =
            |entry: &str, used: &'static [u32], len: usize, per_group: usize, groups: usize| {
                let inverse = entry.starts_with("inverse");
                let params = Params {
                    total: groups as u32,
                    row: 64 * 3,
                    m: m as u32,
                    count: batch as u32,
                    len: len as u32,
                    batch: per_group as u32,
                    inverse: u32::from(inverse),
                    ..Params::default()
                };
                let bindings: Vec<(u32, &[u8])> =
                    all.into_iter().filter(|(n, _)| used.contains(n)).collect();
                let out = bench.run_tiled(&source, entry, params, &bindings, groups);
                move |n: u32| out[used.iter().position(|&u| u == n).unwrap()].clone()
            };
        let what = |entry: &str| format!("{entry} m {m} tile {tile}");
        match TiledPasses::new(m, tile as usize).unwrap() {
            TiledPasses::Whole {
                batch: per_group,
                split,
            } => {
                let groups = batch.div_ceil(per_group);
                let len = m / split;
                let entry = "forward_whole";
                let binding = run(entry, tiled_bindings::FORWARD_WHOLE, len, per_group, groups);
                let (mut want_history, mut want_fdl) = (history.clone(), fdl.clone());
                let whole = shape(tile, m, len, per_group, false);
                reference::forward_whole(&jobs, &mut want_history, &upload, &mut want_fdl, whole);
                let history_of = what("forward_whole history");
                assert_close(
                    bytemuck::cast_slice(&binding(3)),
                    &want_history,
                    0.0,
                    &history_of,
                );
                let got = flat(&as_complex(&binding(6)));
                assert_close(&got, &flat(&want_fdl), 1e-5, &what(entry));

                let entry = "inverse_whole";
                let binding = run(entry, tiled_bindings::INVERSE_WHOLE, len, per_group, groups);
                let whole = shape(tile, m, len, per_group, true);
                let want = reference::inverse_whole(&z, batch, whole);
                assert_close(bytemuck::cast_slice(&binding(9)), &want, 1e-5, &what(entry));
            }
            TiledPasses::FourStep {
                m1,
                m2,
                batch1,
                batch2,
            } => {
                for inverse in [false, true] {
                    let direction = if inverse { "inverse" } else { "forward" };
                    let entry = &format!("{direction}_columns");
                    let groups = batch * (m2 / batch1);
                    let binding = run(entry, tiled_bindings::COLUMNS, m1, batch1, groups);
                    let columns = shape(tile, m, m1, batch1, inverse);
                    let want = if inverse {
                        reference::columns(batch, columns, |job, n| z[job * m + n])
                    } else {
                        reference::forward_columns(&jobs, &history, &upload, columns)
                    };
                    let got = flat(&as_complex(&binding(8)));
                    assert_close(&got, &flat(&want), 1e-5, &what(entry));

                    let entry = &format!("{direction}_rows");
                    let groups = batch * (m1 / batch2);
                    let binding = run(entry, tiled_bindings::ROWS, m2, batch2, groups);
                    let rows = shape(tile, m, m2, batch2, inverse);
                    if inverse {
                        let want = reference::inverse_rows(&z, batch, rows);
                        assert_close(bytemuck::cast_slice(&binding(9)), &want, 1e-5, &what(entry));
                    } else {
                        let want = reference::forward_rows(&z, batch, rows);
                        let got = flat(&as_complex(&binding(8)));
                        assert_close(&got, &flat(&want), 1e-5, &what(entry));
                    }
                }
            }
        }
    }
}

/// The fused MAC and pre-pass, and the post-pass that also writes the history, on the GPU
/// against their twins.
#[test]
fn fused_kernels_match_their_twins_on_the_gpu() {
    let Some(bench) = Bench::new() else {
        return;
    };
    for m in [64, 512] {
        let p = m;
        let batch = 3;
        let streams = batch + 2;
        let jobs = stream_jobs(batch, streams);
        let (out_jobs, path_jobs) = two_path_outputs(batch);
        let fdl = complex_noise(batch * 2 * (m + 1), 20 + m as u32);
        let spectra = complex_noise(path_jobs.len() * 2 * (m + 1), 21 + m as u32);
        let half = reference::half_twiddles(m);
        let out = bench.run(
            shaders::MAC_PRE,
            params(batch * (m / 2 + 1), m, batch),
            &[
                bytemuck::cast_slice(&jobs),
                bytemuck::cast_slice(&out_jobs),
                bytemuck::cast_slice(&path_jobs),
                bytemuck::cast_slice(&fdl),
                bytemuck::cast_slice(&spectra),
                bytemuck::cast_slice(&half),
                &vec![0u8; batch * m * 8],
            ],
        );
        let want = reference::mac_pre(&jobs, &out_jobs, &path_jobs, &fdl, &spectra, m);
        assert_close(&flat(&as_complex(&out[6])), &flat(&want), 1e-5, "mac_pre");

        let history = noise(streams * p, 22 + m as u32);
        let upload = noise(batch * p, 23 + m as u32);
        let spectrum = complex_noise(batch * m, 24 + m as u32);
        let source = shaders::FDL_UPDATE.source;
        let out = bench.run_tiled(
            source,
            "with_history",
            params(batch * (m + 1), m, batch),
            &[
                (1, bytemuck::cast_slice(&jobs)),
                (2, bytemuck::cast_slice(&half)),
                (3, bytemuck::cast_slice(&spectrum)),
                (4, bytemuck::cast_slice(&fdl)),
                (5, bytemuck::cast_slice(&upload)),
                (6, bytemuck::cast_slice(&history)),
            ],
            (batch * (m + 1)).div_ceil(64),
        );
        let (mut want_fdl, mut want_history) = (fdl.clone(), history.clone());
        reference::fdl_update(&jobs, &spectrum, &mut want_fdl, m);
        reference::update_history(&jobs, &mut want_history, &upload, m);
        assert_close(
            &flat(&as_complex(&out[3])),
            &flat(&want_fdl),
            1e-6,
            "with_history fdl",
        );
        assert_close(
            bytemuck::cast_slice(&out[5]),
            &want_history,
            0.0,
            "with_history history",
        );
    }
}
