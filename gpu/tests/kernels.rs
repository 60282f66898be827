//! Every kernel: validated by naga, its structs laid out as in Rust, its CPU twin against
//! realfft or a float64 DFT, and the kernel itself (on the GPU, lavapipe in CI) against its twin
//! on seeded random data, for several sizes and batch counts.

mod common;

use common::noise;
use longtail_gpu::TiledPasses;
use longtail_gpu::layout::{InJob, OutJob, Params, PathJob};
use longtail_gpu::reference::{self, C32};
use longtail_gpu::shaders::{self, Kernel};
use realfft::RealFftPlanner;
use wgpu::util::DeviceExt;

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

fn complex_noise(len: usize, seed: u32) -> Vec<C32> {
    noise(2 * len, seed)
        .chunks_exact(2)
        .map(|c| [c[0], c[1]])
        .collect()
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

/// A device of our own for running one kernel at a time.
struct Bench {
    device: wgpu::Device,
    queue: wgpu::Queue,
}

impl Bench {
    fn new() -> Option<Self> {
        if !common::gpu_available() {
            return None;
        }
        let instance = longtail_gpu::device::instance();
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .ok()?;
        // The adapter's own limits, as the convolver asks: the tiled kernels' larger tiles need
        // more workgroup memory than the defaults.
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .unwrap();
        Some(Self { device, queue })
    }

    /// Runs `kernel` over `total` invocations with `bindings` (binding 0 is the params); returns
    /// every binding's contents afterwards.
    fn run(&self, kernel: Kernel, params: Params, bindings: &[&[u8]]) -> Vec<Vec<u8>> {
        let numbered: Vec<(u32, &[u8])> = (1..).zip(bindings.iter().copied()).collect();
        let groups = params.total.div_ceil(64).max(1) as usize;
        self.run_tiled(kernel.source, "main", params, &numbered, groups)
    }

    /// Runs entry point `entry` of `source` over `groups` workgroups, `params.row / 64` to a
    /// grid row, with `(binding, contents)` pairs (binding 0 is the params); returns their
    /// contents afterwards, in the order given.
    fn run_tiled(
        &self,
        source: &str,
        entry: &str,
        params: Params,
        bindings: &[(u32, &[u8])],
        groups: usize,
    ) -> Vec<Vec<u8>> {
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(entry),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
        let uniform = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let buffers: Vec<wgpu::Buffer> = bindings
            .iter()
            .map(|(_, data)| {
                let mut padded = data.to_vec();
                padded.resize(padded.len().max(16), 0);
                self.device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: None,
                        contents: &padded,
                        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    })
            })
            .collect();
        let entries: Vec<_> =
            std::iter::once(wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            })
            .chain(bindings.iter().zip(&buffers).map(|((binding, _), buffer)| {
                wgpu::BindGroupEntry {
                    binding: *binding,
                    resource: buffer.as_entire_binding(),
                }
            }))
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let readbacks: Vec<_> = buffers
            .iter()
            .map(|b| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: b.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            let groups = groups.max(1) as u32;
            let groups_x = groups.min(params.row / 64);
            pass.dispatch_workgroups(groups_x, groups.div_ceil(groups_x), 1);
        }
        for (buffer, readback) in buffers.iter().zip(&readbacks) {
            encoder.copy_buffer_to_buffer(buffer, 0, readback, 0, buffer.size());
        }
        self.queue.submit([encoder.finish()]);
        for readback in &readbacks {
            readback
                .slice(..)
                .map_async(wgpu::MapMode::Read, |r| r.unwrap());
        }
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: None,
            })
            .unwrap();
        readbacks
            .iter()
            .zip(bindings)
            .map(|(readback, (_, data))| {
                let view = readback.slice(..).get_mapped_range().unwrap();
                view[..data.len()].to_vec()
            })
            .collect()
    }
}

fn params(total: usize, m: usize, count: usize) -> Params {
    Params {
        total: total as u32,
        // Narrow rows, so the 2D grid and its row arithmetic are exercised too.
        row: 64 * 4,
        m: m as u32,
        count: count as u32,
        ..Params::default()
    }
}

fn as_complex(bytes: &[u8]) -> Vec<C32> {
    bytemuck::pod_collect_to_vec(bytes)
}

fn assert_close(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tolerance * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

fn flat(c: &[C32]) -> Vec<f32> {
    c.iter().flatten().copied().collect()
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

/// Sizes and tiles that reach every shape of the tiled kernels: whole transforms several and
/// one to a workgroup, and four-step splits with log2(M) even and odd (a radix-2 last stage).
const TILED_CASES: [(usize, u32); 6] = [
    (64, 256),
    (1024, 1024),
    (512, 256),
    (2048, 256),
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
        TiledPasses::Whole { batch } => {
            reference::forward_whole(jobs, history, upload, fdl, shape(tile, m, m, batch, false));
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
        TiledPasses::Whole { batch } => {
            reference::inverse_whole(z, count, shape(tile, m, m, batch, true))
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
        if u64::from(tile) * 16 > u64::from(limit) {
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
        let tw: &[u8] = bytemuck::cast_slice(&twiddles);
        let z = complex_noise(batch * m, 15 + m as u32);
        let what = |entry: &str| format!("{entry} m {m} tile {tile}");
        let tiled_params =
            |len: usize, batch_per_group: usize, groups: usize, inverse: bool| Params {
                total: groups as u32,
                row: 64 * 3,
                m: m as u32,
                count: batch as u32,
                len: len as u32,
                batch: batch_per_group as u32,
                inverse: u32::from(inverse),
                ..Params::default()
            };
        match TiledPasses::new(m, tile as usize).unwrap() {
            TiledPasses::Whole { batch: per_group } => {
                let groups = batch.div_ceil(per_group);
                let fdl = complex_noise(batch * 2 * (m + 1), 16);
                let out = bench.run_tiled(
                    &source,
                    "forward_whole",
                    tiled_params(m, per_group, groups, false),
                    &[
                        (1, tw),
                        (2, bytemuck::cast_slice(&jobs)),
                        (3, bytemuck::cast_slice(&history)),
                        (4, bytemuck::cast_slice(&upload)),
                        (5, bytemuck::cast_slice(&half)),
                        (6, bytemuck::cast_slice(&fdl)),
                    ],
                    groups,
                );
                let (mut want_history, mut want_fdl) = (history.clone(), fdl.clone());
                reference::forward_whole(
                    &jobs,
                    &mut want_history,
                    &upload,
                    &mut want_fdl,
                    shape(tile, m, m, per_group, false),
                );
                assert_close(
                    bytemuck::cast_slice(&out[2]),
                    &want_history,
                    0.0,
                    &what("forward_whole history"),
                );
                assert_close(
                    &flat(&as_complex(&out[5])),
                    &flat(&want_fdl),
                    1e-5,
                    &what("forward_whole"),
                );

                let out = bench.run_tiled(
                    &source,
                    "inverse_whole",
                    tiled_params(m, per_group, groups, true),
                    &[
                        (1, tw),
                        (7, bytemuck::cast_slice(&z)),
                        (9, &vec![0u8; batch * p * 4]),
                    ],
                    groups,
                );
                let want = reference::inverse_whole(&z, batch, shape(tile, m, m, per_group, true));
                assert_close(
                    bytemuck::cast_slice(&out[2]),
                    &want,
                    1e-5,
                    &what("inverse_whole"),
                );
            }
            TiledPasses::FourStep {
                m1,
                m2,
                batch1,
                batch2,
            } => {
                for inverse in [false, true] {
                    let entry = if inverse {
                        "inverse_columns"
                    } else {
                        "forward_columns"
                    };
                    let groups = batch * (m2 / batch1);
                    let out = bench.run_tiled(
                        &source,
                        entry,
                        tiled_params(m1, batch1, groups, inverse),
                        &[
                            (1, tw),
                            (2, bytemuck::cast_slice(&jobs)),
                            (3, bytemuck::cast_slice(&history)),
                            (4, bytemuck::cast_slice(&upload)),
                            (7, bytemuck::cast_slice(&z)),
                            (8, &vec![0u8; batch * m * 8]),
                        ],
                        groups,
                    );
                    let columns = shape(tile, m, m1, batch1, inverse);
                    let want = if inverse {
                        reference::columns(batch, columns, |job, n| z[job * m + n])
                    } else {
                        reference::forward_columns(&jobs, &history, &upload, columns)
                    };
                    assert_close(
                        &flat(&as_complex(&out[5])),
                        &flat(&want),
                        1e-5,
                        &what(entry),
                    );

                    let entry = if inverse {
                        "inverse_rows"
                    } else {
                        "forward_rows"
                    };
                    let groups = batch * (m1 / batch2);
                    let out = bench.run_tiled(
                        &source,
                        entry,
                        tiled_params(m2, batch2, groups, inverse),
                        &[
                            (1, tw),
                            (7, bytemuck::cast_slice(&z)),
                            (8, &vec![0u8; batch * m * 8]),
                            (9, &vec![0u8; batch * p * 4]),
                        ],
                        groups,
                    );
                    let rows = shape(tile, m, m2, batch2, inverse);
                    if inverse {
                        let want = reference::inverse_rows(&z, batch, rows);
                        assert_close(bytemuck::cast_slice(&out[3]), &want, 1e-5, &what(entry));
                    } else {
                        let want = reference::forward_rows(&z, batch, rows);
                        assert_close(
                            &flat(&as_complex(&out[2])),
                            &flat(&want),
                            1e-5,
                            &what(entry),
                        );
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
