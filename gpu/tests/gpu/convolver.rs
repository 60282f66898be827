//! The whole GPU pipeline against a float64 direct convolution: levels of several shapes and
//! partition sizes in one batch, levels registered and unregistered while others run, resets
//! and missing chunks, and the hub with its feeds, delays and a lost device, and the hook its
//! thread starts with.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{direct, noise, snr_db};
use longtail_gpu::{ChunkStart, Convolver, Feed, FftKernels, Hub, LevelSpec};
use realfft::RealFftPlanner;

/// A level's spec for taps `[0, n * P)` of each path's IR, spectra scaled by `1 / 2P` as the
/// CPU level makes them.
fn spec(
    p: usize,
    n: usize,
    ins: usize,
    outs: usize,
    paths: &[(usize, usize)],
    irs: &[Vec<f32>],
) -> LevelSpec {
    let mut planner = RealFftPlanner::<f32>::new();
    let r2c = planner.plan_fft_forward(2 * p);
    let spectra = irs
        .iter()
        .map(|ir| {
            let mut all = Vec::with_capacity(n * (p + 1));
            for j in 0..n {
                let mut buffer = vec![0.0f32; 2 * p];
                let taps = &ir[(j * p).min(ir.len())..((j + 1) * p).min(ir.len())];
                buffer[..taps.len()].copy_from_slice(taps);
                let mut spectrum = r2c.make_output_vec();
                r2c.process(&mut buffer, &mut spectrum).unwrap();
                let scale = 1.0 / (2 * p) as f32;
                all.extend(spectrum.iter().map(|c| [c.re * scale, c.im * scale]));
            }
            all
        })
        .collect();
    LevelSpec {
        partition_size: p,
        num_partitions: n,
        num_inputs: ins,
        num_outputs: outs,
        paths: paths.to_vec(),
        spectra,
    }
}

/// Expected output per output channel: the sum over its paths of input * IR.
fn expected(spec: &LevelSpec, irs: &[Vec<f32>], inputs: &[Vec<f32>], len: usize) -> Vec<Vec<f64>> {
    let mut outs = vec![vec![0.0; len]; spec.num_outputs];
    for (&(i, o), ir) in spec.paths.iter().zip(irs) {
        for (acc, v) in outs[o].iter_mut().zip(direct(&inputs[i], ir, len)) {
            *acc += v;
        }
    }
    outs
}

struct Running {
    spec: LevelSpec,
    irs: Vec<Vec<f32>>,
    inputs: Vec<Vec<f32>>,
    outputs: Vec<Vec<f32>>,
    chunks_done: usize,
}

impl Running {
    fn new(
        p: usize,
        n: usize,
        ins: usize,
        outs: usize,
        paths: &[(usize, usize)],
        chunks: usize,
        seed: u32,
    ) -> Self {
        let irs: Vec<Vec<f32>> = (0..paths.len())
            .map(|k| {
                // Decaying noise, shorter than n * P so the last partition is partly empty.
                let len = n * p - p / 3;
                noise(len, seed + k as u32)
                    .iter()
                    .enumerate()
                    .map(|(t, v)| v * (-3.0 * t as f32 / len as f32).exp())
                    .collect()
            })
            .collect();
        let inputs = (0..ins)
            .map(|i| noise(chunks * p, seed + 100 + i as u32))
            .collect();
        Self {
            spec: spec(p, n, ins, outs, paths, &irs),
            irs,
            inputs,
            outputs: vec![Vec::new(); outs],
            chunks_done: 0,
        }
    }

    fn stage(&self, convolver: &mut Convolver, id: longtail_gpu::LevelId) {
        let p = self.spec.partition_size;
        let slice = convolver.stage(id, ChunkStart::default());
        for (i, input) in self.inputs.iter().enumerate() {
            slice[i * p..(i + 1) * p]
                .copy_from_slice(&input[self.chunks_done * p..(self.chunks_done + 1) * p]);
        }
    }

    fn collect(&mut self, convolver: &Convolver, id: longtail_gpu::LevelId) {
        let p = self.spec.partition_size;
        let result = convolver.output(id);
        for (o, out) in self.outputs.iter_mut().enumerate() {
            out.extend_from_slice(&result[o * p..(o + 1) * p]);
        }
        self.chunks_done += 1;
    }

    fn check(&self, what: &str) {
        let len = self.outputs[0].len();
        let want = expected(&self.spec, &self.irs, &self.inputs, len);
        for (o, (got, want)) in self.outputs.iter().zip(&want).enumerate() {
            let snr = snr_db(got, want);
            assert!(snr >= 100.0, "{what} output {o}: {snr:.1} dB");
        }
    }
}

fn open(kernels: FftKernels) -> Option<Convolver> {
    let options = longtail_gpu::OpenOptions {
        kernels,
        ..common::options()
    };
    common::gpu_available().then(|| Convolver::open(options).expect("open the GPU"))
}

/// Every kernel set: the device's default (tiled, with lavapipe's tile of 4096: every size here
/// runs whole), a small tile (whole in two rounds at P = 512, four-step from P = 1024) and the
/// radix-2 fallback.
const KERNELS: [FftKernels; 3] = [FftKernels::Auto, FftKernels::Tiled(256), FftKernels::Radix2];

/// Several levels of three partition sizes in every batch; one leaves halfway and a new one
/// joins, and everyone's output stays exact, with every kernel set, whether the period's wait
/// blocks or naps.
#[test]
fn batched_levels_match_direct_convolution() {
    for kernels in KERNELS {
        batched_levels(kernels);
    }
}

fn batched_levels(kernels: FftKernels) {
    let Some(mut convolver) = open(kernels) else {
        return;
    };
    eprintln!(
        "adapter: {}, {kernels:?} kernels, tile {:?}",
        convolver.adapter(),
        convolver.tile()
    );
    let true_stereo = [(0, 0), (0, 1), (1, 0), (1, 1)];
    let mut levels = [
        Running::new(64, 3, 1, 1, &[(0, 0)], 24, 1),
        Running::new(1024, 5, 2, 2, &true_stereo, 12, 2),
        Running::new(1024, 2, 1, 2, &[(0, 0), (0, 1)], 12, 3),
        Running::new(4096, 2, 2, 2, &[(0, 0), (1, 1)], 6, 4),
    ];
    let mut ids: Vec<_> = levels
        .iter()
        .map(|l| Some(convolver.register(&l.spec).unwrap()))
        .collect();
    let mut late = Running::new(1024, 4, 2, 1, &[(0, 0), (1, 0)], 6, 5);
    let mut late_id = None;
    for period in 0..24 {
        if period == 6 {
            // Level 2 leaves, the late one joins into the hole.
            convolver.unregister(ids[2].take().unwrap());
            levels[2].check("level 2 before it left");
            late_id = Some(convolver.register(&late.spec).unwrap());
        }
        for (level, id) in levels.iter().zip(&ids) {
            if let Some(id) = id
                && level.chunks_done < level.inputs[0].len() / level.spec.partition_size
            {
                level.stage(&mut convolver, *id);
            }
        }
        if let Some(id) = late_id
            && late.chunks_done < 6
        {
            late.stage(&mut convolver, id);
        }
        // Every other period waits by napping between polls instead of blocking.
        convolver.set_napping(period % 2 == 1);
        convolver.execute().unwrap();
        assert_eq!(convolver.phases().napped, period % 2 == 1);
        for (level, id) in levels.iter_mut().zip(&ids) {
            if let Some(id) = id
                && level.chunks_done < level.inputs[0].len() / level.spec.partition_size
            {
                level.collect(&convolver, *id);
            }
        }
        if let Some(id) = late_id
            && late.chunks_done < 6
        {
            late.collect(&convolver, id);
        }
        convolver.finish_period();
    }
    for (idx, level) in levels.iter().enumerate() {
        if idx != 2 {
            level.check(&format!("level {idx}"));
        }
    }
    late.check("the level that joined");
}

/// A reset clears a level's history; missing chunks count as silence; with every kernel set,
/// and on the tiled ones whole (P = 256), whole in two rounds (P = 512 with a tile of 256) and
/// four-step (P = 1024 with a tile of 256).
#[test]
fn reset_and_missing_chunks() {
    for kernels in KERNELS {
        for p in [256, 512, 1024] {
            reset_and_missing(kernels, p);
        }
    }
}

/// Dispatches per period: 3 for a class whose transforms fit a workgroup (in one round or two),
/// 6 for a four-step one, `6 + 2 log2 P` with the radix-2 kernels; a P = 8192 level stays exact
/// on each.
#[test]
fn dispatches_per_period_follow_the_kernels() {
    for (kernels, p, dispatches) in [
        (FftKernels::Tiled(256), 8192, 6),
        (FftKernels::Tiled(256), 512, 3),
        (FftKernels::Tiled(256), 256, 3),
        (FftKernels::Radix2, 8192, 32),
        (FftKernels::Radix2, 256, 22),
    ] {
        let Some(mut convolver) = open(kernels) else {
            return;
        };
        let chunks = 3;
        let mut level = Running::new(p, 1, 1, 1, &[(0, 0)], chunks, 11);
        let id = convolver.register(&level.spec).unwrap();
        for _ in 0..chunks {
            level.stage(&mut convolver, id);
            convolver.execute().unwrap();
            assert_eq!(convolver.dispatches(), dispatches, "{kernels:?} P {p}");
            level.collect(&convolver, id);
            convolver.finish_period();
        }
        level.check(&format!("{kernels:?} P {p}"));
    }
}

fn reset_and_missing(kernels: FftKernels, p: usize) {
    let Some(mut convolver) = open(kernels) else {
        return;
    };
    let mut level = Running::new(p, 4, 1, 1, &[(0, 0)], 8, 9);
    // A missing chunk's whole overlap-save window counts as silence (as on the CPU), the older
    // half included: chunk 2, before the gap, is silent, so the exact answer is known.
    level.inputs[0][2 * p..3 * p].fill(0.0);
    let id = convolver.register(&level.spec).unwrap();
    let run = |convolver: &mut Convolver, input: &[f32], start: ChunkStart| {
        convolver.stage(id, start).copy_from_slice(input);
        convolver.execute().unwrap();
        let out = convolver.output(id).to_vec();
        convolver.finish_period();
        out
    };
    for chunk in 0..5 {
        let input = level.inputs[0][chunk * p..(chunk + 1) * p].to_vec();
        run(&mut convolver, &input, ChunkStart::default());
    }
    // After a reset, the output is that of a fresh start.
    let mut got = Vec::new();
    for chunk in 0..3 {
        let start = ChunkStart {
            reset: chunk == 0,
            silent_chunks: 0,
        };
        let input = level.inputs[0][chunk * p..(chunk + 1) * p].to_vec();
        got.extend(run(&mut convolver, &input, start));
    }
    let want = direct(&level.inputs[0], &level.irs[0], 3 * p);
    assert!(
        snr_db(&got, &want) >= 100.0,
        "{kernels:?} P {p}: after reset"
    );

    // Chunks 3 and 4 never come: the input has silence there.
    let mut silenced = level.inputs[0].clone();
    silenced[3 * p..5 * p].fill(0.0);
    let mut tail = Vec::new();
    for chunk in 5..8 {
        let start = ChunkStart {
            reset: false,
            silent_chunks: if chunk == 5 { 2 } else { 0 },
        };
        let input = silenced[chunk * p..(chunk + 1) * p].to_vec();
        tail.extend(run(&mut convolver, &input, start));
    }
    let want = direct(&silenced, &level.irs[0], 8 * p);
    assert!(
        snr_db(&tail, &want[5 * p..]) >= 100.0,
        "{kernels:?} P {p}: after missing chunks"
    );
    level.chunks_done = 0;
}

/// A test feed: a queue of chunks in, results out.
struct TestFeed {
    p: usize,
    chunks: Mutex<Vec<Vec<f32>>>,
    results: Mutex<Vec<Vec<f32>>>,
    failed: Mutex<Option<String>>,
    leave: AtomicBool,
    finished: AtomicUsize,
}

impl TestFeed {
    fn new(p: usize, input: &[f32]) -> Arc<Self> {
        Arc::new(Self {
            p,
            chunks: Mutex::new(input.chunks(p).rev().map(<[f32]>::to_vec).collect()),
            results: Mutex::new(Vec::new()),
            failed: Mutex::new(None),
            leave: AtomicBool::new(false),
            finished: AtomicUsize::new(0),
        })
    }
}

impl Feed for TestFeed {
    fn take(&self, inputs: &mut [f32]) -> Option<ChunkStart> {
        let chunk = self.chunks.lock().unwrap().pop()?;
        inputs[..self.p].copy_from_slice(&chunk);
        Some(ChunkStart::default())
    }
    fn finish(&self, outputs: &[f32]) {
        self.results.lock().unwrap().push(outputs.to_vec());
        self.finished.fetch_add(1, Ordering::Release);
    }
    fn wants_to_leave(&self) -> Option<&'static str> {
        self.leave
            .load(Ordering::Acquire)
            .then_some("the test asked it to leave")
    }
    fn fail(&self, reason: &str) {
        *self.failed.lock().unwrap() = Some(reason.to_string());
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The hub serves several feeds, fails over one that asks to leave and, after the device is
/// lost, fails everyone and refuses new levels.
#[test]
fn hub_serves_feeds_and_fails_them_over() {
    if !common::gpu_available() {
        return;
    }
    let hub = Arc::new(Hub::open(common::options()).unwrap());
    let calibration = hub.calibration();
    eprintln!("calibration on {}: {calibration:?}", hub.adapter());
    assert_eq!(calibration.round_trip.count, 48);
    assert_eq!(calibration.heavy_round_trip.count, 16);
    assert!(calibration.partition_cost_ns >= 1.0 && calibration.partition_cost_ns.is_finite());
    // Nothing registered yet: health measures afresh.
    let idle = hub.health().unwrap();
    assert_eq!(idle.count, 16);

    let p = 512;
    let levels: Vec<_> = (0..3)
        .map(|k| Running::new(p, 3, 1, 1, &[(0, 0)], 8, 20 + k))
        .collect();
    let feeds: Vec<_> = levels
        .iter()
        .map(|l| TestFeed::new(p, &l.inputs[0]))
        .collect();
    let registrations: Vec<_> = levels
        .iter()
        .zip(&feeds)
        .map(|(l, f)| {
            hub.register(&l.spec, Arc::clone(f) as Arc<dyn Feed>)
                .unwrap()
        })
        .collect();
    hub.thread().unpark();
    for feed in &feeds {
        wait_for("all chunks", || feed.finished.load(Ordering::Acquire) == 8);
    }
    for (level, feed) in levels.iter().zip(&feeds) {
        let got: Vec<f32> = feed.results.lock().unwrap().concat();
        let want = direct(&level.inputs[0], &level.irs[0], got.len());
        assert!(snr_db(&got, &want) >= 100.0);
    }
    let stats = hub.stats();
    assert_eq!(stats.levels, 3);
    assert!(stats.periods >= 8, "{stats:?}");
    // Levels ran: health is their recent round trips.
    let busy = hub.health().unwrap();
    assert_eq!(busy.count, stats.periods.min(64) as usize);
    // Every period's phases were kept, and every batch's largest partition is the levels' own.
    let detail = &stats.periods_detail;
    assert_eq!(detail.by_largest.len(), 1, "{detail:?}");
    assert_eq!(detail.by_largest[0].0, p);
    assert_eq!(detail.by_largest[0].1, stats.round_trip);
    for phase in [&detail.submit, &detail.wait, &detail.readback] {
        assert_eq!(phase.count, stats.round_trip.count);
        assert!(phase.max_us <= stats.round_trip.max_us, "{detail:?}");
    }
    if let Some(share) = detail.wait_cpu_share {
        assert!((0.0..=1.5).contains(&share), "{detail:?}");
    }

    // One level asks to leave.
    feeds[0].leave.store(true, Ordering::Release);
    hub.thread().unpark();
    wait_for("the leaver's failover", || {
        feeds[0].failed.lock().unwrap().is_some()
    });
    assert_eq!(hub.stats().levels, 2);
    assert_eq!(hub.stats().levels_failed_over, 1);

    // A slow GPU still answers.
    hub.inject_delay(Duration::from_millis(5));
    feeds[1].chunks.lock().unwrap().push(vec![0.0; p]);
    hub.thread().unpark();
    wait_for("a delayed period", || {
        feeds[1].finished.load(Ordering::Acquire) == 9
    });
    hub.inject_delay(Duration::ZERO);

    // The device is lost: the next period fails everyone still registered.
    hub.inject_device_loss();
    for feed in &feeds[1..] {
        feed.chunks.lock().unwrap().push(vec![0.0; p]);
    }
    hub.thread().unpark();
    for feed in &feeds[1..] {
        wait_for("failover after device loss", || {
            feed.failed.lock().unwrap().is_some()
        });
    }
    let reason = hub.broken().expect("the hub knows it is broken");
    assert!(hub.health().is_err());
    eprintln!("broken: {reason}");
    assert!(
        hub.register(&levels[0].spec, Arc::clone(&feeds[0]) as Arc<dyn Feed>)
            .is_err()
    );
    drop(registrations);
}

/// The hook set with `set_thread_start` runs on the hub's own thread before `Hub::open`
/// returns, the hub reports its answer, and a refused raise (as without permission) leaves a
/// hub that serves.
#[test]
fn hub_thread_runs_the_start_hook_and_serves_when_refused() {
    if !common::gpu_available() {
        return;
    }
    static THREADS: Mutex<Vec<Option<String>>> = Mutex::new(Vec::new());
    fn refused(_adapter: &longtail_gpu::AdapterSummary) -> bool {
        let name = std::thread::current().name().map(str::to_owned);
        THREADS.lock().unwrap().push(name);
        false
    }
    // Process-wide: a hub another test opens meanwhile runs it too, on its own hub thread.
    longtail_gpu::set_thread_start(Some(refused));
    let hub = Arc::new(Hub::open(common::options()).unwrap());
    longtail_gpu::set_thread_start(None);
    let threads = THREADS.lock().unwrap().clone();
    assert!(!threads.is_empty(), "the hook did not run");
    assert!(
        threads
            .iter()
            .all(|name| name.as_deref() == Some(longtail_gpu::hub::THREAD_NAME)),
        "the hook ran on {threads:?}"
    );
    assert_eq!(hub.stats().realtime, Some(false));

    let p = 512;
    let level = Running::new(p, 2, 1, 1, &[(0, 0)], 4, 40);
    let feed = TestFeed::new(p, &level.inputs[0]);
    let _registration = hub
        .register(&level.spec, Arc::clone(&feed) as Arc<dyn Feed>)
        .unwrap();
    hub.thread().unpark();
    wait_for("all chunks", || feed.finished.load(Ordering::Acquire) == 4);
    let got: Vec<f32> = feed.results.lock().unwrap().concat();
    let want = direct(&level.inputs[0], &level.irs[0], got.len());
    assert!(snr_db(&got, &want) >= 100.0);
}
