//! The thermal and load policies at work, whether an editor is open or not.
//!
//! One thread per process (started by the first engine it watches, gone with the last) polls the
//! thermal probes every [`POLL_INTERVAL`] and runs each watched engine's [`ThermalPolicy`]: a hot
//! or throttling GPU moves the engine's GPU levels to the CPU ([`BackendProbe::place`]: the
//! crossfaded migration of a fault), and a GPU that has stayed cool for [`RETURN_AFTER_POLLS`]
//! polls gets them back; an engine Auto kept on the CPU sends its big levels to a cool GPU when the
//! CPU is hot (they go by the way back of [`crate::engine::worker::gpu::way_back`]).
//!
//! The same poll runs Auto for the whole process ([`super::load_policy`]): it sums the worker
//! time of every watched engine Auto kept on the CPU and the work of their levels that have a
//! way to the GPU, and the process's one [`LoadPolicy`] sends those levels to the GPU when the
//! CPU is loaded and the GPU costs less, and back when the load falls. The governor opens the
//! process's hub for that itself, the first time the load is high (opening and calibrating take
//! a moment, and this thread has it), and keeps it while it runs. Heat wins: a level never goes
//! to a hot, throttling or broken GPU, and one that was hot gets levels again only after it
//! stayed cool for [`RETURN_AFTER_POLLS`] polls, as with the thermal policy's own moves.
//!
//! Nothing of the GPU is loaded before it is in play: the adapters are looked up (which loads
//! every installed driver into the process) only when an engine already uses the GPU, the CPU
//! is hot, or the load policy wants the GPU; the GPU's sensors (NVML) open at the same moment.
//! Until then a GPU not looked up counts as there for the thermal policy, which cannot send
//! anything to it while the CPU is cool. So a lone reverb on the default backend keeps no
//! Vulkan or GL library in memory.
//!
//! Every decision is kept in the engine's probe, where the editor shows it with its reason. Auto
//! engines with levels that can use the GPU are watched ([`watch`]); the audio thread is never
//! involved.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use crate::engine::placement::gpu_placement::{CostSplit, cpu_partition_cost_ns};
use crate::engine::placement::load_policy::{
    LoadPolicy, LoadSample, MOVE_AFTER_POLLS, REFERENCE_PARTITION,
    RETURN_AFTER_POLLS as LOAD_RETURN_AFTER_POLLS,
};
use crate::engine::placement::probe::{BackendProbe, WeakProbe};
use crate::thermal::{
    GpuStatus, POLL_INTERVAL, Placement, RETURN_AFTER_POLLS, ThermalPolicy, ThermalProbes,
    ThermalSnapshot,
};

struct Watched {
    probe: WeakProbe,
    engine_id: u64,
    policy: ThermalPolicy,
}

struct Governor {
    watched: Vec<Watched>,
    /// The thread and its own stop flag.
    thread: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
    /// Test hook: a fake sysfs tree instead of /sys.
    thermal_root: Option<PathBuf>,
    /// Cool polls before work moves (back) to the GPU.
    return_after_polls: u32,
    /// The load policy's polls: high ones before a move, low ones before the return.
    load_polls: (u32, u32),
    /// Test hook: this CPU load instead of the measured one.
    cpu_load: Option<f64>,
    /// Test hook: a CPU adapter (lavapipe) counts as a real GPU that pays.
    cpu_adapter_pays: bool,
}

static GOVERNOR: Mutex<Governor> = Mutex::new(Governor {
    watched: Vec::new(),
    thread: None,
    thermal_root: None,
    return_after_polls: RETURN_AFTER_POLLS,
    load_polls: (MOVE_AFTER_POLLS, LOAD_RETURN_AFTER_POLLS),
    cpu_load: None,
    cpu_adapter_pays: false,
});

fn lock() -> std::sync::MutexGuard<'static, Governor> {
    GOVERNOR.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the thermal policy for this engine from now on, until it is dropped. Starts the
/// governor's thread if it is not running. Off the audio thread.
pub fn watch(probe: &BackendProbe) {
    let preferred = if probe.has_gpu_levels() {
        Placement::Gpu
    } else {
        Placement::Cpu
    };
    let mut governor = lock();
    let policy = ThermalPolicy::new(preferred).with_return_after(governor.return_after_polls);
    governor.watched.push(Watched {
        probe: probe.downgrade(),
        engine_id: probe.engine_id(),
        policy,
    });
    if governor.thread.is_none() {
        let root = governor.thermal_root.clone();
        let (move_after, return_after) = governor.load_polls;
        let load_policy = LoadPolicy::new(move_after, return_after);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        governor.thread = std::thread::Builder::new()
            .name("longtail-governor".into())
            .spawn(move || run(root, load_policy, &thread_stop))
            .ok()
            .map(|thread| (thread, stop));
    }
}

/// An engine was dropped: once no watched engine is left, the thread is stopped and joined, so
/// nothing of the library runs after its last engine (a host may unload it). Called by
/// `Engine`'s drop, never on the audio thread, and never on the governor's own thread (it
/// holds probes, not engines).
pub(crate) fn release() {
    let thread = {
        let mut governor = lock();
        governor.watched.retain(|w| w.probe.is_alive());
        if !governor.watched.is_empty() {
            return;
        }
        governor.thread.take()
    };
    if let Some((thread, stop)) = thread {
        stop.store(true, Ordering::Release);
        thread.thread().unpark();
        let _ = thread.join();
    }
}

/// Test hook: the governor's next thread reads this fake sysfs tree instead of /sys.
#[doc(hidden)]
pub fn set_thermal_root(root: Option<PathBuf>) {
    lock().thermal_root = root;
}

/// Test hook: engines watched from now on need this many cool polls (instead of
/// [`RETURN_AFTER_POLLS`]) before work moves to the GPU.
#[doc(hidden)]
pub fn set_return_after_polls(polls: u32) {
    lock().return_after_polls = polls;
}

/// Test hook: the load policy sees this CPU load (a share of all cores) instead of the measured
/// one; `None` measures again.
#[doc(hidden)]
pub fn set_cpu_load(load: Option<f64>) {
    lock().cpu_load = load;
}

/// Test hook: the load policy treats a CPU adapter (lavapipe) as a real GPU whose cost pays,
/// so that its moves can be tested on machines without one. The levels' own way to the GPU
/// must accept the adapter too (`LONGTAIL_GPU_ALLOW_CPU=1`).
#[doc(hidden)]
pub fn set_cpu_adapter_pays(pays: bool) {
    lock().cpu_adapter_pays = pays;
}

/// Test hook: the governor's next thread moves levels after `move_after` loaded polls and
/// brings them back after `return_after` light ones (instead of the load policy's defaults).
#[doc(hidden)]
pub fn set_load_polls(move_after: u32, return_after: u32) {
    lock().load_polls = (move_after, return_after);
}

/// What the governor knows of the process's GPU for the load policy: its hub (kept open while
/// the thread runs, when it pays, so the levels' way there finds it) and whether it pays.
struct GpuVerdict {
    hub: Option<Arc<longtail_gpu::Hub>>,
    pays: bool,
    partition_ns: Option<f64>,
}

/// Opens the process's hub and says whether it pays (see [`super::load_policy`]).
fn gpu_verdict(cpu_adapter_pays: bool, cpu_ns: f64) -> GpuVerdict {
    let mut options = longtail_gpu::OpenOptions::from_env();
    options.allow_cpu_adapter |= cpu_adapter_pays;
    match longtail_gpu::shared(options) {
        Ok(hub) => {
            let gpu_ns = CostSplit::of_gpu(&hub.calibration()).per_stereo_partition();
            let real = hub.adapter().kind != longtail_gpu::AdapterKind::Cpu;
            let pays = cpu_adapter_pays || (real && gpu_ns < cpu_ns);
            GpuVerdict {
                // A GPU that does not pay is let go (its verdict stays).
                hub: pays.then_some(hub),
                pays,
                partition_ns: Some(gpu_ns),
            }
        }
        Err(_) => GpuVerdict {
            hub: None,
            pays: false,
            partition_ns: None,
        },
    }
}

/// The load figures of one poll: worker time since the last poll, per engine.
struct LoadMeter {
    last_poll: Instant,
    busy: HashMap<u64, u64>,
    cores: f64,
}

impl LoadMeter {
    fn new() -> Self {
        Self {
            last_poll: Instant::now(),
            busy: HashMap::new(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
        }
    }

    /// The CPU load the engines Auto keeps on the CPU would put on the machine with all their
    /// levels there: their workers' time since the last poll, plus what their levels on the
    /// GPU would cost the CPU, over the poll's length times the cores.
    fn measure(&mut self, engines: &[&BackendProbe], cpu_ns: f64) -> f64 {
        let now = Instant::now();
        let elapsed = now.duration_since(self.last_poll).as_secs_f64().max(1e-3);
        self.last_poll = now;
        let mut busy_ns = 0u64;
        let mut moved_work = 0.0;
        let mut seen = HashMap::with_capacity(engines.len());
        for probe in engines {
            let busy = probe.worker_busy_ns();
            let before = self.busy.get(&probe.engine_id()).copied().unwrap_or(busy);
            busy_ns += busy.saturating_sub(before);
            seen.insert(probe.engine_id(), busy);
            moved_work += probe.gpu_work_per_second(REFERENCE_PARTITION).1;
        }
        self.busy = seen;
        (busy_ns as f64 * 1e-9 / elapsed + moved_work * cpu_ns * 1e-9) / self.cores
    }
}

/// Opens the GPU's sensors (NVML) the first time a GPU is in play, and reads the probes again so
/// that this poll's decisions see its heat. Before that no GPU reading can change a decision, so
/// a process whose engines all stay on a cool CPU loads no GPU library.
fn sense_gpu(probes: &mut ThermalProbes, snapshot: &mut ThermalSnapshot) {
    if probes.open_nvml() {
        *snapshot = probes.poll();
    }
}

fn run(root: Option<PathBuf>, mut load_policy: LoadPolicy, stop: &AtomicBool) {
    let mut probes = ThermalProbes::new(root, false);
    let mut meter = LoadMeter::new();
    let mut verdict: Option<GpuVerdict> = None;
    loop {
        std::thread::park_timeout(POLL_INTERVAL);
        if stop.load(Ordering::Acquire) {
            return;
        }
        let mut snapshot = probes.poll();
        // Probes are used outside the lock: their levels' and hub's locks are never taken
        // under the governor's.
        let mut live: Vec<(BackendProbe, ThermalPolicy)> = {
            let governor = lock();
            governor
                .watched
                .iter()
                .filter(|w| w.probe.is_alive())
                .filter_map(|w| w.probe.upgrade().map(|probe| (probe, w.policy)))
                .collect()
        };
        // The GPU is in play when an engine uses it, or when the CPU is hot and the thermal
        // policy may send levels there (if an adapter exists: looking it up loads the drivers,
        // so only now).
        let cpu_hot = snapshot.cpu.is_hot();
        if live.iter().any(|(probe, _)| probe.has_gpu_levels())
            || (cpu_hot
                && live
                    .iter()
                    .any(|(probe, _)| probe.can_use_gpu() && probe.gpu_available()))
        {
            sense_gpu(&mut probes, &mut snapshot);
        }
        // Auto for the process: the engines Auto kept on the CPU whose levels may go.
        let mut gpu_hot = snapshot.gpu_throttling || snapshot.gpu.is_hot();
        let movable: Vec<&BackendProbe> = live
            .iter()
            .map(|(probe, _)| probe)
            .filter(|probe| !probe.has_gpu_levels() && probe.can_use_gpu())
            .collect();
        let load = if movable.is_empty() {
            None
        } else {
            let (load_override, cpu_adapter_pays) = {
                let governor = lock();
                (governor.cpu_load, governor.cpu_adapter_pays)
            };
            let cpu_ns = cpu_partition_cost_ns();
            let measured = meter.measure(&movable, cpu_ns);
            let mut sample = LoadSample {
                cpu_load: load_override.unwrap_or(measured),
                gpu_pays: verdict.as_ref().map(|v| v.pays),
                gpu_partition_ns: verdict.as_ref().and_then(|v| v.partition_ns),
                cpu_partition_ns: cpu_ns,
            };
            if LoadPolicy::wants_gpu_verdict(&sample) && !gpu_hot {
                let opened = gpu_verdict(cpu_adapter_pays, cpu_ns);
                if opened.partition_ns.is_some() {
                    sense_gpu(&mut probes, &mut snapshot);
                    gpu_hot = snapshot.gpu_throttling || snapshot.gpu.is_hot();
                }
                sample.gpu_pays = Some(opened.pays);
                sample.gpu_partition_ns = opened.partition_ns;
                verdict = Some(opened);
            }
            let hub_broken = verdict
                .as_ref()
                .and_then(|v| v.hub.as_ref())
                .is_some_and(|hub| hub.broken().is_some());
            let gpu_usable = !gpu_hot && !hub_broken && verdict.as_ref().is_none_or(|v| v.pays);
            if hub_broken {
                // Let the broken hub go: the next loaded poll opens a new one.
                verdict = None;
            }
            Some(load_policy.update(sample, gpu_usable))
        };
        let load_wants_gpu = load.is_some_and(|load| load.placement == Placement::Gpu);
        for (probe, policy) in &mut live {
            // Asked only where the answer can change a placement; else what the process
            // knows, and a GPU not looked up yet counts as there (nothing goes to it unless
            // the CPU gets hot or loaded, and then it is asked).
            let ask = probe.has_gpu_levels() || cpu_hot || load_wants_gpu;
            let gpu = GpuStatus {
                available: if ask {
                    probe.gpu_available()
                } else {
                    probe.gpu_known().unwrap_or(true)
                },
                slack_allows: probe.can_use_gpu(),
            };
            let decision = policy.update(&snapshot, gpu);
            let mut placement = decision.placement;
            if let Some(load) = load
                && !probe.has_gpu_levels()
                && probe.can_use_gpu()
            {
                probe.set_load_decision(load);
                // Heat wins: a GPU that was hot must have stayed cool for the thermal
                // policy's polls first.
                if load.placement == Placement::Gpu && gpu.available && policy.gpu_cool_enough() {
                    placement = Placement::Gpu;
                }
            }
            probe.place(placement);
            probe.set_thermal_decision(decision);
        }
        {
            let mut governor = lock();
            for watched in &mut governor.watched {
                if let Some((_, policy)) = live
                    .iter()
                    .find(|(probe, _)| probe.engine_id() == watched.engine_id)
                {
                    watched.policy = *policy;
                }
            }
        }
        drop(live);
    }
}
