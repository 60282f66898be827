//! Every kernel: validated by naga, its structs laid out as in Rust, its CPU twin against
//! realfft or a float64 DFT, and the kernel itself (on the GPU, lavapipe in CI) against its twin
//! on seeded random data, for several sizes and batch counts.

use crate::common;

use common::kernel_bench::{Bench, as_complex, assert_close, complex_noise, flat, params};
use common::noise;
use longtail_gpu::layout::{InJob, OutJob, Params, PathJob};
use longtail_gpu::reference::{self, C32};
use longtail_gpu::shaders::{self, Kernel};
use realfft::RealFftPlanner;

fn parse(kernel: Kernel) -> naga::Module {
    naga::front::wgsl::parse_str(kernel.source)
        .unwrap_or_else(|err| panic!("{}: {}", kernel.name, err.emit_to_string(kernel.source)))
}

#[test]
fn every_kernel_is_valid_wgsl() {
    for kernel in shaders::ALL {
        let module = parse(kernel);
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|err| panic!("{}: {}", kernel.name, err.emit_to_string(kernel.source)));
        assert!(
            module.entry_points.iter().any(|e| e.name == "main"),
            "{}: no main",
            kernel.name
        );
    }
}

/// The tiled kernels are valid WGSL for every tile they may get, with all their entry points.
#[test]
fn the_tiled_kernels_are_valid_wgsl_for_every_tile() {
    let mut tile = longtail_gpu::convolver::kernels::MIN_TILE;
    while tile <= longtail_gpu::convolver::kernels::MAX_TILE {
        let source = shaders::tiled_source(tile);
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|err| panic!("tile {tile}: {}", err.emit_to_string(&source)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|err| panic!("tile {tile}: {}", err.emit_to_string(&source)));
        for entry in [
            "forward_whole",
            "inverse_whole",
            "forward_columns",
            "forward_rows",
            "inverse_columns",
            "inverse_rows",
        ] {
            assert!(
                module.entry_points.iter().any(|e| e.name == entry),
                "tile {tile}: no {entry}"
            );
        }
        tile *= 2;
    }
    let module = parse(shaders::FDL_UPDATE);
    assert!(module.entry_points.iter().any(|e| e.name == "with_history"));
}

/// The WGSL structs have the Rust structs' size and field offsets.
#[test]
fn wgsl_structs_match_the_rust_layouts() {
    let module = parse(shaders::SPECTRAL_MAC);
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).unwrap();
    type Fields = Vec<(&'static str, usize)>;
    let expected: [(&str, usize, Fields); 4] = [
        (
            "Params",
            size_of::<Params>(),
            vec![
                ("total", std::mem::offset_of!(Params, total)),
                ("row", std::mem::offset_of!(Params, row)),
                ("m", std::mem::offset_of!(Params, m)),
                ("span", std::mem::offset_of!(Params, span)),
                ("inverse", std::mem::offset_of!(Params, inverse)),
                ("count", std::mem::offset_of!(Params, count)),
                ("len", std::mem::offset_of!(Params, len)),
                ("batch", std::mem::offset_of!(Params, batch)),
            ],
        ),
        (
            "InJob",
            size_of::<InJob>(),
            vec![
                ("stream", std::mem::offset_of!(InJob, stream)),
                ("fdl_base", std::mem::offset_of!(InJob, fdl_base)),
                ("slots", std::mem::offset_of!(InJob, slots)),
                ("head", std::mem::offset_of!(InJob, head)),
            ],
        ),
        (
            "OutJob",
            size_of::<OutJob>(),
            vec![
                ("path_start", std::mem::offset_of!(OutJob, path_start)),
                ("path_count", std::mem::offset_of!(OutJob, path_count)),
            ],
        ),
        (
            "PathJob",
            size_of::<PathJob>(),
            vec![
                ("in_job", std::mem::offset_of!(PathJob, in_job)),
                ("spectra_base", std::mem::offset_of!(PathJob, spectra_base)),
            ],
        ),
    ];
    for (name, size, fields) in expected {
        let (handle, ty) = module
            .types
            .iter()
            .find(|(_, ty)| ty.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no struct {name} in the shaders"));
        assert_eq!(layouter[handle].size as usize, size, "size of {name}");
        let naga::TypeInner::Struct { members, .. } = &ty.inner else {
            panic!("{name} is not a struct");
        };
        for (field, offset) in fields {
            let member = members
                .iter()
                .find(|m| m.name.as_deref() == Some(field))
                .unwrap_or_else(|| panic!("{name}.{field} missing in WGSL"));
            assert_eq!(member.offset as usize, offset, "offset of {name}.{field}");
        }
    }
}

fn dft(x: &[C32], inverse: bool) -> Vec<(f64, f64)> {
    let m = x.len();
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..m)
        .map(|k| {
            x.iter().enumerate().fold((0.0, 0.0), |(re, im), (n, v)| {
                let angle = sign * 2.0 * std::f64::consts::PI * (k * n % m) as f64 / m as f64;
                let (s, c) = angle.sin_cos();
                let (a, b) = (f64::from(v[0]), f64::from(v[1]));
                (re + a * c - b * s, im + a * s + b * c)
            })
        })
        .collect()
}

#[test]
fn fft_twin_matches_a_float64_dft() {
    for m in [2, 4, 8, 64, 512] {
        for inverse in [false, true] {
            let batch = 3;
            let input = complex_noise(m * batch, m as u32);
            let mut data = input.clone();
            let mut scratch = Vec::new();
            reference::fft(&mut data, &mut scratch, m, inverse);
            for b in 0..batch {
                let expected = dft(&input[b * m..(b + 1) * m], inverse);
                for (got, want) in data[b * m..(b + 1) * m].iter().zip(&expected) {
                    let err = (f64::from(got[0]) - want.0).hypot(f64::from(got[1]) - want.1);
                    assert!(
                        err < 1e-4 * (m as f64).sqrt(),
                        "m {m} inverse {inverse}: {err}"
                    );
                }
            }
        }
    }
}

/// window → FFT → FDL update twins give realfft's spectrum of the window; the inverse chain
/// gives realfft's inverse.
#[test]
fn real_fft_twins_match_realfft() {
    let mut planner = RealFftPlanner::<f32>::new();
    for p in [64, 1024, 4096] {
        let history = noise(p, 1);
        let upload = noise(p, 2);
        let job = InJob {
            stream: 0,
            fdl_base: 0,
            slots: 1,
            head: 0,
        };
        let mut packed = reference::window(&[job], &history, &upload, p);
        let mut scratch = Vec::new();
        reference::fft(&mut packed, &mut scratch, p, false);
        let mut fdl = vec![[0.0; 2]; p + 1];
        reference::fdl_update(&[job], &packed, &mut fdl, p);

        let r2c = planner.plan_fft_forward(2 * p);
        let mut window: Vec<f32> = history.iter().chain(&upload).copied().collect();
        let mut spectrum = r2c.make_output_vec();
        r2c.process(&mut window, &mut spectrum).unwrap();
        let peak = spectrum.iter().map(|c| c.norm()).fold(0.0f32, f32::max);
        for (k, (got, want)) in fdl.iter().zip(&spectrum).enumerate() {
            let err = (got[0] - want.re).hypot(got[1] - want.im);
            assert!(err < 1e-5 * peak, "p {p} bin {k}: {got:?} vs {want}");
        }

        // Back: c2r pre-pass → inverse FFT → overlap-save = realfft's c2r, last P samples.
        let mut pre = reference::c2r_pre(&fdl, p);
        reference::fft(&mut pre, &mut scratch, p, true);
        let tail = reference::overlap_save(&pre, p);
        let c2r = planner.plan_fft_inverse(2 * p);
        let mut back = c2r.make_output_vec();
        spectrum[0].im = 0.0;
        spectrum[p].im = 0.0;
        c2r.process(&mut spectrum, &mut back).unwrap();
        let scale = 2.0 * p as f32;
        for (i, (got, want)) in tail.iter().zip(&back[p..]).enumerate() {
            assert!(
                (got - want).abs() < 1e-4 * scale,
                "p {p} sample {i}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn kernels_match_their_twins_on_the_gpu() {
    let Some(bench) = Bench::new() else {
        return;
    };
    for (m, batch) in [(64, 1), (256, 3), (2048, 5)] {
        let p = m;
        let streams = batch + 2;
        // Jobs out of order, so stream indirection is exercised.
        let jobs: Vec<InJob> = (0..batch)
            .map(|j| InJob {
                stream: ((j * 3 + 1) % streams) as u32,
                fdl_base: (j * 4) as u32,
                slots: 4,
                head: (j % 4) as u32,
            })
            .collect();
        let history = noise(streams * p, 10 + m as u32);
        let upload = noise(batch * p, 20 + m as u32);

        // window
        let out = bench.run(
            shaders::WINDOW,
            params(batch * m, m, batch),
            &[
                bytemuck::cast_slice(&jobs),
                bytemuck::cast_slice(&history),
                bytemuck::cast_slice(&upload),
                &vec![0u8; batch * m * 8],
            ],
        );
        let want = reference::window(&jobs, &history, &upload, p);
        assert_close(&flat(&as_complex(&out[3])), &flat(&want), 0.0, "window");

        // history
        let out = bench.run(
            shaders::HISTORY,
            params(batch * p, m, batch),
            &[
                bytemuck::cast_slice(&jobs),
                bytemuck::cast_slice(&history),
                bytemuck::cast_slice(&upload),
            ],
        );
        let mut want = history.clone();
        reference::update_history(&jobs, &mut want, &upload, p);
        assert_close(bytemuck::cast_slice(&out[1]), &want, 0.0, "history");

        // every FFT stage, both directions
        let twiddles = reference::twiddles(m);
        let src = complex_noise(batch * m, 30 + m as u32);
        for inverse in [false, true] {
            let mut span = 1;
            while span < m {
                let mut p_ = params(batch * m / 2, m, batch);
                p_.span = span as u32;
                p_.inverse = u32::from(inverse);
                let out = bench.run(
                    shaders::FFT_STOCKHAM,
                    p_,
                    &[
                        bytemuck::cast_slice(&twiddles),
                        bytemuck::cast_slice(&src),
                        &vec![0u8; batch * m * 8],
                    ],
                );
                let mut want = vec![[0.0; 2]; batch * m];
                reference::fft_stage(&src, &mut want, m, span, inverse, &twiddles);
                let what = format!("fft m {m} span {span} inverse {inverse}");
                assert_close(&flat(&as_complex(&out[2])), &flat(&want), 1e-6, &what);
                span *= 2;
            }
        }

        // FDL update
        let half = reference::half_twiddles(m);
        let fdl = complex_noise(batch * 4 * (m + 1), 40 + m as u32);
        let out = bench.run(
            shaders::FDL_UPDATE,
            params(batch * (m + 1), m, batch),
            &[
                bytemuck::cast_slice(&jobs),
                bytemuck::cast_slice(&half),
                bytemuck::cast_slice(&src),
                bytemuck::cast_slice(&fdl),
            ],
        );
        let mut want = fdl.clone();
        reference::fdl_update(&jobs, &src, &mut want, m);
        assert_close(
            &flat(&as_complex(&out[3])),
            &flat(&want),
            1e-6,
            "fdl_update",
        );

        // spectral MAC: output o takes paths from jobs o and o + 1 (where they exist).
        let outputs = batch;
        let mut out_jobs = Vec::new();
        let mut path_jobs = Vec::new();
        for o in 0..outputs {
            let start = path_jobs.len() as u32;
            for in_job in [o, o + 1].into_iter().filter(|&j| j < batch) {
                path_jobs.push(PathJob {
                    in_job: in_job as u32,
                    spectra_base: (path_jobs.len() * 4) as u32,
                });
            }
            out_jobs.push(OutJob {
                path_start: start,
                path_count: path_jobs.len() as u32 - start,
            });
        }
        let spectra = complex_noise(path_jobs.len() * 4 * (m + 1), 50 + m as u32);
        let out = bench.run(
            shaders::SPECTRAL_MAC,
            params(outputs * (m + 1), m, outputs),
            &[
                bytemuck::cast_slice(&jobs),
                bytemuck::cast_slice(&out_jobs),
                bytemuck::cast_slice(&path_jobs),
                bytemuck::cast_slice(&fdl),
                bytemuck::cast_slice(&spectra),
                &vec![0u8; outputs * (m + 1) * 8],
            ],
        );
        let want = reference::spectral_mac(&jobs, &out_jobs, &path_jobs, &fdl, &spectra, m);
        assert_close(
            &flat(&as_complex(&out[5])),
            &flat(&want),
            1e-5,
            "spectral_mac",
        );

        // c2r pre-pass
        let acc = complex_noise(outputs * (m + 1), 60 + m as u32);
        let out = bench.run(
            shaders::C2R_PRE,
            params(outputs * m, m, outputs),
            &[
                bytemuck::cast_slice(&half),
                bytemuck::cast_slice(&acc),
                &vec![0u8; outputs * m * 8],
            ],
        );
        let want = reference::c2r_pre(&acc, m);
        assert_close(&flat(&as_complex(&out[2])), &flat(&want), 1e-6, "c2r_pre");

        // overlap-save
        let signal = complex_noise(outputs * m, 70 + m as u32);
        let out = bench.run(
            shaders::OVERLAP_SAVE,
            params(outputs * p, m, outputs),
            &[bytemuck::cast_slice(&signal), &vec![0u8; outputs * p * 4]],
        );
        let want = reference::overlap_save(&signal, p);
        assert_close(bytemuck::cast_slice(&out[1]), &want, 0.0, "overlap_save");
    }
}
