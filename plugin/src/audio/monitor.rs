//! What the audio thread tells the editor: the running engine's shape, lateness and load, and
//! (from `activate()`) why the plugin passes the dry signal through when it cannot convolve.
//!
//! [`EngineMonitor`] is shared (`Arc`) between the plugin and its editor. The audio thread only
//! stores atomics into it (relaxed stores of plain numbers, never a lock or an allocation); the
//! editor reads them at its own pace, so nothing it does can make the audio thread wait.
//! [`LoadMeter`] is owned by the audio thread: a fixed histogram of callback time over the
//! deadline, published as p99 and maximum once per window.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::audio::meters::MeterLevels;
use crate::engine::{BackendProbe, LateStats, LatencyMode};

/// Load buckets: 1 % each, the last one for everything at or over the deadline.
const LOAD_BUCKETS: usize = 101;

/// Numbers the audio thread publishes for the editor.
#[derive(Debug, Default)]
pub struct EngineMonitor {
    /// An activation is running.
    pub active: AtomicBool,
    /// Session sample rate, in Hz.
    pub sample_rate: AtomicU32,
    /// Host maximum block size.
    pub max_block_size: AtomicU32,
    /// Input channels of the bus the host chose.
    pub num_inputs: AtomicU32,
    /// Output channels of the bus the host chose.
    pub num_outputs: AtomicU32,
    /// Length of the playing engine's IR, in samples.
    pub ir_len: AtomicU32,
    /// Reported latency, in samples.
    pub latency_samples: AtomicU32,
    /// The playing engine's latency mode, in one word so that a reader never sees half of a
    /// change: 0 zero latency, `u64::MAX` low CPU, else the latency the offload mode asked for
    /// ([`Self::latency_mode`]).
    latency_mode: AtomicU64,
    /// Worker threads of the playing engine.
    pub worker_threads: AtomicU32,
    /// Late worker results of the playing engine.
    pub late_results: AtomicU64,
    /// Chunks dropped because every worker slot was busy.
    pub dropped_chunks: AtomicU64,
    /// Some level has been late several times in a row.
    pub degraded: AtomicBool,
    /// A panic in the audio thread's code was caught (`guard::unwind`): the plugin plays
    /// silence until the host activates it again.
    pub faulted: AtomicBool,
    /// Times the playing engine waited for a result while the host ran ahead of real time
    /// (`engine::realtime::pace`), and the longest wait in nanoseconds.
    pub waits: AtomicU64,
    pub wait_max_ns: AtomicU64,
    /// CPU time the workers spent computing, in nanoseconds.
    pub worker_busy_ns: AtomicU64,
    /// 99th percentile of callback time over the deadline, in per mille, over the last window.
    pub load_p99_permille: AtomicU32,
    /// Largest callback time over the deadline, in per mille, over the last window.
    pub load_max_permille: AtomicU32,
    /// The input meter's levels (the bus's input channels, before the engine).
    pub input_levels: MeterLevels,
    /// The output meter's levels (after the mix and the output gain).
    pub output_levels: MeterLevels,
    /// Messages for the user, added with [`report_error`](Self::report_error). Written and
    /// read off the audio thread only.
    pub errors: Mutex<Vec<String>>,
    /// [`crate::engine::Engine::id`] of the engine playing now.
    pub playing_engine: AtomicU64,
    /// The host's tempo at the last `process()` call, as `f64` bits; 0: none given.
    host_tempo_bits: AtomicU64,
    /// The ducking's reduction at the end of the last `process()` call, in dB, as `f32` bits.
    duck_reduction_bits: AtomicU32,
    /// Why this activation passes the dry signal through instead of convolving (see
    /// [`crate::audio::passthrough`]); `None` while it convolves. Written by `activate()`, read by
    /// the editor, never touched by the audio thread.
    pass_through: Mutex<Option<String>>,
    /// Probes of the engines built lately (newest last), offered by the threads that build
    /// them; the editor shows the one playing.
    backends: Mutex<Vec<BackendProbe>>,
}

/// Probes kept: the engine playing, the one it may be crossfading from, one being built.
const BACKENDS_KEPT: usize = 4;

impl EngineMonitor {
    /// The host's tempo in beats per minute, from the audio thread (atomics only).
    pub fn set_host_tempo(&self, tempo: Option<f64>) {
        let bits = tempo
            .filter(|bpm| bpm.is_finite() && *bpm > 0.0)
            .map_or(0, f64::to_bits);
        self.host_tempo_bits.store(bits, Relaxed);
    }

    /// The ducking's reduction now, in dB (0 or more), from the audio thread (atomics only).
    pub fn set_duck_reduction(&self, db: f32) {
        self.duck_reduction_bits
            .store(db.max(0.0).to_bits(), Relaxed);
    }

    /// The ducking's reduction at the end of the last `process()` call, in dB.
    pub fn duck_reduction_db(&self) -> f32 {
        f32::from_bits(self.duck_reduction_bits.load(Relaxed))
    }

    /// The host's tempo at the last `process()` call, where it gave one.
    pub fn host_tempo(&self) -> Option<f64> {
        match self.host_tempo_bits.load(Relaxed) {
            0 => None,
            bits => Some(f64::from_bits(bits)),
        }
    }

    /// Publishes the playing engine's shape. Atomics only: safe on the audio thread.
    pub fn publish_engine(
        &self,
        ir_len: usize,
        latency_samples: usize,
        latency_mode: LatencyMode,
        workers: usize,
        engine_id: u64,
    ) {
        self.playing_engine.store(engine_id, Relaxed);
        self.ir_len.store(ir_len as u32, Relaxed);
        self.latency_samples.store(latency_samples as u32, Relaxed);
        let code = match latency_mode {
            LatencyMode::Zero => 0,
            LatencyMode::LowCpu => u64::MAX,
            LatencyMode::Offload(requested) => requested as u64,
        };
        self.latency_mode.store(code, Relaxed);
        self.worker_threads.store(workers as u32, Relaxed);
    }

    /// The playing engine's latency mode, as published.
    pub fn latency_mode(&self) -> LatencyMode {
        match self.latency_mode.load(Relaxed) {
            0 => LatencyMode::Zero,
            u64::MAX => LatencyMode::LowCpu,
            requested => LatencyMode::Offload(requested as usize),
        }
    }

    /// Keeps the probe of an engine just built, for when it plays. Never call from the audio
    /// thread (locks; drops the oldest probe).
    pub fn offer_backend(&self, probe: BackendProbe) {
        if let Ok(mut backends) = self.backends.lock() {
            if backends.len() >= BACKENDS_KEPT {
                backends.remove(0);
            }
            backends.push(probe);
        }
    }

    /// The probe of the engine playing now, if it was offered. Off the audio thread.
    pub fn playing_backend(&self) -> Option<BackendProbe> {
        let id = self.playing_engine.load(Relaxed);
        let backends = self.backends.lock().ok()?;
        backends.iter().find(|b| b.engine_id() == id).cloned()
    }

    /// Adds a message for the editor. Never call from the audio thread (locks, allocates).
    pub fn report_error(&self, message: impl Into<String>) {
        if let Ok(mut errors) = self.errors.lock() {
            let message = message.into();
            if !errors.contains(&message) {
                errors.push(message);
            }
        }
    }

    /// Records why the activation passes the dry signal through (`None`: it convolves). Main
    /// thread (`activate()`); locks.
    pub fn set_pass_through(&self, reason: Option<String>) {
        if let Ok(mut slot) = self.pass_through.lock() {
            *slot = reason;
        }
    }

    /// Why the activation passes the dry signal through, if it does. Off the audio thread.
    pub fn pass_through(&self) -> Option<String> {
        self.pass_through.lock().ok()?.clone()
    }

    /// Publishes the playing engine's lateness. Atomics only: safe on the audio thread.
    pub fn publish_lates(&self, stats: LateStats, worker_busy_ns: u64) {
        self.late_results.store(stats.late_results, Relaxed);
        self.dropped_chunks.store(stats.dropped_chunks, Relaxed);
        self.degraded.store(stats.degraded, Relaxed);
        self.waits.store(stats.waits, Relaxed);
        self.wait_max_ns.store(stats.wait_max_ns, Relaxed);
        self.worker_busy_ns.store(worker_busy_ns, Relaxed);
    }
}

/// Histogram of callback load, owned by the audio thread. No allocation: fixed array.
#[derive(Debug, Clone)]
pub struct LoadMeter {
    buckets: [u32; LOAD_BUCKETS],
    count: u32,
    max_permille: u32,
    /// Callbacks per published window.
    window: u32,
}

impl LoadMeter {
    /// A meter that publishes every `window` callbacks (about a second's worth).
    pub fn new(window: u32) -> Self {
        Self {
            buckets: [0; LOAD_BUCKETS],
            count: 0,
            max_permille: 0,
            window: window.max(1),
        }
    }

    /// Records one callback that took `elapsed_ns` against a deadline of `deadline_ns`, and
    /// publishes p99 and max into `monitor` when the window is full. Audio thread; no
    /// allocation.
    pub fn record(&mut self, elapsed_ns: u64, deadline_ns: u64, monitor: &EngineMonitor) {
        let permille =
            (elapsed_ns.saturating_mul(1000) / deadline_ns.max(1)).min(u32::MAX as u64) as u32;
        let bucket = ((permille / 10) as usize).min(LOAD_BUCKETS - 1);
        self.buckets[bucket] += 1;
        self.max_permille = self.max_permille.max(permille);
        self.count += 1;
        if self.count >= self.window {
            let p99 = self.p99_permille().min(self.max_permille);
            monitor.load_p99_permille.store(p99, Relaxed);
            monitor.load_max_permille.store(self.max_permille, Relaxed);
            self.buckets = [0; LOAD_BUCKETS];
            self.count = 0;
            self.max_permille = 0;
        }
    }

    /// Upper edge of the bucket that holds the 99th percentile, in per mille.
    fn p99_permille(&self) -> u32 {
        let target = self.count - self.count / 100;
        let mut seen = 0;
        for (idx, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return if idx == LOAD_BUCKETS - 1 {
                    self.max_permille
                } else {
                    (idx as u32 + 1) * 10
                };
            }
        }
        self.max_permille
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_sees_the_probe_of_the_engine_playing() {
        use crate::engine::plan::{LatencyMode, PlanLimits};
        use crate::engine::{Engine, EngineConfig, Executor, RunsOn};
        let ir = crate::ir::Ir::new("t", 48_000, vec![vec![0.5; 5000]]).unwrap();
        let config = EngineConfig {
            max_block_size: 64,
            num_inputs: 1,
            num_outputs: 1,
            latency_mode: LatencyMode::Zero,
            limits: PlanLimits::default(),
            executor: Executor::Inline,
        };
        let engines: Vec<Engine> = (0..5).map(|_| Engine::new(&ir, config).unwrap()).collect();
        let monitor = EngineMonitor::default();
        for engine in &engines {
            monitor.offer_backend(engine.backend_probe());
        }
        // The oldest was let go; the playing one is found by its id.
        monitor.publish_engine(5000, 0, LatencyMode::Zero, 0, engines[0].id());
        assert!(monitor.playing_backend().is_none());
        monitor.publish_engine(5000, 0, LatencyMode::Zero, 0, engines[3].id());
        let probe = monitor.playing_backend().unwrap();
        assert_eq!(probe.engine_id(), engines[3].id());
        assert!(
            probe
                .levels()
                .iter()
                .all(|l| l.runs_on == RunsOn::AudioThread)
        );
        assert_eq!(probe.report().gpu_levels, 0);
    }

    #[test]
    fn load_meter_publishes_p99_and_max_per_window() {
        let monitor = EngineMonitor::default();
        let mut meter = LoadMeter::new(1000);
        // 990 callbacks at 4 % of the deadline, 9 at 42 %, one at 150 %.
        for _ in 0..990 {
            meter.record(40, 1000, &monitor);
        }
        assert_eq!(
            monitor.load_max_permille.load(Relaxed),
            0,
            "not published yet"
        );
        for _ in 0..9 {
            meter.record(420, 1000, &monitor);
        }
        meter.record(1500, 1000, &monitor);
        assert_eq!(monitor.load_p99_permille.load(Relaxed), 50);
        assert_eq!(monitor.load_max_permille.load(Relaxed), 1500);
        // The next window starts empty.
        for _ in 0..1000 {
            meter.record(100, 1000, &monitor);
        }
        // The bucket's upper edge (110) is capped by the largest callback seen.
        assert_eq!(monitor.load_p99_permille.load(Relaxed), 100);
        assert_eq!(monitor.load_max_permille.load(Relaxed), 100);
    }
}
