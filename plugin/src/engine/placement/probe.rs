//! What other threads (the editor, the governor) may see of an engine, and the thermal and
//! load policies' lever on it: the [`BackendProbe`].
//!
//! Uses the worker levels' own views ([`LevelProbe`]), the thermal policy's
//! types ([`crate::thermal`]), the load policy's decision ([`super::load_policy`]) and the GPU
//! hub's counters; nothing else of the engine, and not
//! the governor that watches it ([`crate::engine::placement::governor`] uses this module, not the
//! other way round).

use crate::engine::worker::LevelProbe;

/// Whether the process has a usable GPU adapter, once [`BackendProbe::gpu_available`] looked.
static ADAPTER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// Where an engine's worker levels run, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendReport {
    /// Worker levels on the GPU now.
    pub gpu_levels: usize,
    /// Worker levels on CPU threads now.
    pub cpu_levels: usize,
    /// Times levels went back to the GPU after leaving it (see
    /// [`crate::engine::worker::gpu::way_back`]).
    pub gpu_returns: u64,
    /// The GPU adapter, when one was opened for this engine.
    pub adapter: Option<String>,
    /// Why, in one line (e.g. "CPU: the Backend parameter", "GPU: 3 of 4 levels on ...").
    pub reason: String,
}

/// Where a level of the plan runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
    /// The audio thread: level 0 with the head (not in the offload mode), a level spread
    /// over its period, or every level with the inline executor.
    AudioThread,
    /// A worker thread.
    CpuWorker,
    /// The GPU hub (its worker thread the standby).
    Gpu,
}

/// One level as a [`BackendProbe`] sees it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelStatus {
    pub partition_size: usize,
    pub num_partitions: usize,
    /// Samples between the level's chunk completing and its result being due.
    pub slack_samples: usize,
    pub runs_on: RunsOn,
    pub late_results: u64,
    pub dropped_chunks: u64,
    /// Why it left the GPU, when it did and has not gone back.
    pub left_gpu: Option<String>,
}

/// What other threads may see of an engine: where each level runs now, why, and the GPU's
/// round trips. Reads atomics and the levels' notes; keeps the engine's shared memory (and its
/// GPU hub) alive, not its threads. Cheap to clone.
#[derive(Clone)]
pub struct BackendProbe(pub(in crate::engine) std::sync::Arc<ProbeInner>);

pub(in crate::engine) struct ProbeInner {
    pub(in crate::engine) engine_id: u64,
    /// The thermal policy's last decision for this engine ([`crate::engine::placement::governor`]).
    pub(in crate::engine) thermal: std::sync::Mutex<Option<crate::thermal::Decision>>,
    /// The load policy's last decision, for an engine whose levels it may move.
    pub(in crate::engine) load: std::sync::Mutex<Option<super::load_policy::LoadDecision>>,
    /// Paths after routing, and the IR's sample rate: the engine's work per second.
    pub(in crate::engine) num_paths: usize,
    pub(in crate::engine) sample_rate: u32,
    pub(in crate::engine) adapter: Option<String>,
    /// Weak: a probe kept after its engine is gone holds no device.
    pub(in crate::engine) hub: Option<std::sync::Weak<longtail_gpu::Hub>>,
    pub(in crate::engine) build_reason: String,
    pub(in crate::engine) levels: Vec<ProbeLevel>,
    /// Set when the engine is dropped: the governor stops watching it.
    pub(in crate::engine) engine_dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

pub(in crate::engine) struct ProbeLevel {
    pub(in crate::engine) partition_size: usize,
    pub(in crate::engine) num_partitions: usize,
    pub(in crate::engine) slack_samples: usize,
    pub(in crate::engine) worker: Option<LevelProbe>,
    /// Placed on the GPU when the engine was built.
    pub(in crate::engine) started_on_gpu: bool,
}

impl std::fmt::Debug for BackendProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendProbe")
            .field("engine_id", &self.0.engine_id)
            .field("report", &self.report())
            .finish()
    }
}

impl BackendProbe {
    /// The engine's [`Engine::id`](crate::engine::Engine::id).
    pub fn engine_id(&self) -> u64 {
        self.0.engine_id
    }

    /// Every level of the plan, level 0 first.
    pub fn levels(&self) -> Vec<LevelStatus> {
        self.0
            .levels
            .iter()
            .map(|level| {
                let (runs_on, late_results, dropped_chunks, left_gpu) = match &level.worker {
                    Some(worker) => {
                        let (late, dropped) = worker.lates();
                        (
                            if worker.on_gpu() {
                                RunsOn::Gpu
                            } else {
                                RunsOn::CpuWorker
                            },
                            late,
                            dropped,
                            worker.gpu_exit(),
                        )
                    }
                    None => (RunsOn::AudioThread, 0, 0, None),
                };
                LevelStatus {
                    partition_size: level.partition_size,
                    num_partitions: level.num_partitions,
                    slack_samples: level.slack_samples,
                    runs_on,
                    late_results,
                    dropped_chunks,
                    left_gpu,
                }
            })
            .collect()
    }

    /// Where the worker levels run now and why. A level that left the GPU says why.
    pub fn report(&self) -> BackendReport {
        let mut report = BackendReport {
            adapter: self.0.adapter.clone(),
            reason: self.0.build_reason.clone(),
            ..BackendReport::default()
        };
        for level in &self.0.levels {
            let Some(worker) = &level.worker else {
                continue;
            };
            report.gpu_returns += worker.gpu_returns();
            if worker.on_gpu() {
                report.gpu_levels += 1;
            } else {
                report.cpu_levels += 1;
                if let Some(exit) = worker.gpu_exit() {
                    // A level the load policy sent and brought back says why it came back.
                    let exit = match self.load_decision().and_then(|load| load.last_return) {
                        Some(why) if !level.started_on_gpu => exit.replacen(
                            crate::engine::worker::HELD_REASON,
                            &format!("the load policy brought it back ({why})"),
                            1,
                        ),
                        _ => exit,
                    };
                    report.reason = format!("CPU: left the GPU: {exit}");
                }
            }
        }
        if report.gpu_levels > 0 && !self.has_gpu_levels() {
            let by = match self.load_decision() {
                Some(load) if load.placement == crate::thermal::Placement::Gpu => {
                    format!("the load policy: {load}")
                }
                _ => "the thermal policy (the CPU is hot)".into(),
            };
            report.reason = format!(
                "GPU: {} of {} worker levels sent there by {by}",
                report.gpu_levels,
                report.gpu_levels + report.cpu_levels
            );
        } else if report.gpu_levels == 0
            && let Some(load) = self.load_decision()
        {
            report.reason = format!("{}; Auto for the process: {load}", report.reason);
        }
        report
    }

    /// The GPU hub's counters and round trips, when the engine uses it.
    pub fn gpu_stats(&self) -> Option<longtail_gpu::HubStats> {
        self.0.hub.as_ref()?.upgrade().map(|hub| hub.stats())
    }

    /// Whether levels were placed on the GPU when the engine was built (they may have left).
    pub fn has_gpu_levels(&self) -> bool {
        self.0.levels.iter().any(|l| l.started_on_gpu)
    }

    /// Whether some level has a way to the GPU (it started there, or the thermal policy may
    /// send it there).
    pub fn can_use_gpu(&self) -> bool {
        self.0
            .levels
            .iter()
            .any(|l| l.worker.as_ref().is_some_and(LevelProbe::has_gpu_home))
    }

    /// Whether a GPU could serve this engine: its hub still serves, or, with none, a usable
    /// adapter exists. The adapter lookup is made once per process, by the first caller: it
    /// creates the graphics API's instance, which loads every installed driver into the
    /// process. So only a caller that is about to use the GPU asks this; the others ask
    /// [`gpu_known`](Self::gpu_known).
    pub fn gpu_available(&self) -> bool {
        match &self.0.hub {
            Some(hub) => hub.upgrade().is_some_and(|hub| hub.broken().is_none()),
            None => *ADAPTER.get_or_init(|| {
                let allow_cpu = longtail_gpu::OpenOptions::from_env().allow_cpu_adapter;
                longtail_gpu::list_adapters()
                    .iter()
                    .any(|a| allow_cpu || a.kind != longtail_gpu::AdapterKind::Cpu)
            }),
        }
    }

    /// [`gpu_available`](Self::gpu_available) where the process knows it without loading
    /// anything: the hub's state, or the adapter lookup some caller already made. `None`: no
    /// hub and no lookup yet (no driver is loaded for this engine).
    pub fn gpu_known(&self) -> Option<bool> {
        match &self.0.hub {
            Some(_) => Some(self.gpu_available()),
            None => ADAPTER.get().copied(),
        }
    }

    /// The thermal and load policies' lever. [`Placement::Cpu`](crate::thermal::Placement):
    /// every level on the CPU (those on the GPU move, as after a fault). `Gpu`: levels placed
    /// on the GPU go back; an engine Auto kept on the CPU sends its big levels to the GPU (each
    /// goes only if its slack covers the hub's round trip). Levels Auto kept off the GPU of an
    /// engine that uses it stay on the CPU either way.
    pub fn place(&self, placement: crate::thermal::Placement) {
        let to_cpu = placement == crate::thermal::Placement::Cpu;
        let engine_on_gpu = self.has_gpu_levels();
        for level in &self.0.levels {
            if let Some(worker) = &level.worker {
                if level.started_on_gpu {
                    worker.hold_gpu(to_cpu);
                } else if worker.has_gpu_home() {
                    worker.hold_gpu(to_cpu || engine_on_gpu);
                }
            }
        }
    }

    /// Time the engine's worker threads have spent computing, in nanoseconds.
    pub fn worker_busy_ns(&self) -> u64 {
        self.0
            .levels
            .iter()
            .filter_map(|l| l.worker.as_ref())
            .map(LevelProbe::busy_ns)
            .sum()
    }

    /// The work of the levels with a way to the GPU, in path-partitions of `partition_size`
    /// samples per second: `(all of them, those on the GPU now that were not placed there when
    /// the engine was built)`. A level of partition `P` runs `rate / P` jobs a second of
    /// `paths x partitions` path-partitions of `P`, each worth `P / partition_size` of the
    /// reference (the MAC is linear in `P`, the transforms close to it).
    pub fn gpu_work_per_second(&self, partition_size: usize) -> (f64, f64) {
        let mut all = 0.0;
        let mut moved = 0.0;
        for level in &self.0.levels {
            let Some(worker) = &level.worker else {
                continue;
            };
            if !worker.has_gpu_home() {
                continue;
            }
            let work = (self.0.num_paths * level.num_partitions) as f64
                * f64::from(self.0.sample_rate)
                / partition_size.max(1) as f64;
            all += work;
            if !level.started_on_gpu && worker.on_gpu() {
                moved += work;
            }
        }
        (all, moved)
    }

    /// The load policy's last decision, when it may move this engine's levels
    /// ([`super::load_policy`]).
    pub fn load_decision(&self) -> Option<super::load_policy::LoadDecision> {
        *self.0.load.lock().ok()?
    }

    pub(crate) fn set_load_decision(&self, decision: super::load_policy::LoadDecision) {
        if let Ok(mut load) = self.0.load.lock() {
            *load = Some(decision);
        }
    }

    /// The thermal policy's last decision for this engine, when it watches it.
    pub fn thermal_decision(&self) -> Option<crate::thermal::Decision> {
        *self.0.thermal.lock().ok()?
    }

    pub(crate) fn set_thermal_decision(&self, decision: crate::thermal::Decision) {
        if let Ok(mut thermal) = self.0.thermal.lock() {
            *thermal = Some(decision);
        }
    }

    pub(crate) fn downgrade(&self) -> WeakProbe {
        WeakProbe {
            inner: std::sync::Arc::downgrade(&self.0),
            engine_dropped: std::sync::Arc::clone(&self.0.engine_dropped),
        }
    }
}

/// A [`BackendProbe`] that does not keep the engine's memory alive.
pub(crate) struct WeakProbe {
    inner: std::sync::Weak<ProbeInner>,
    engine_dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl WeakProbe {
    pub(crate) fn upgrade(&self) -> Option<BackendProbe> {
        self.inner.upgrade().map(BackendProbe)
    }

    /// Whether the engine still lives (its probe may outlive it, in the editor's monitor).
    pub(crate) fn is_alive(&self) -> bool {
        !self
            .engine_dropped
            .load(std::sync::atomic::Ordering::Acquire)
    }
}
