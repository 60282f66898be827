//! The thermal policy at work, whether an editor is open or not.
//!
//! One thread per process (started by the first engine it watches, gone with the last) polls the
//! thermal probes every [`POLL_INTERVAL`] and runs each watched engine's [`ThermalPolicy`]: a hot
//! or throttling GPU moves the engine's GPU levels to the CPU ([`BackendProbe::place`]: the
//! crossfaded migration of a fault), and a GPU that has stayed cool for [`RETURN_AFTER_POLLS`]
//! polls gets them back; an engine Auto kept on the CPU sends its big levels to a cool GPU when the
//! CPU is hot (they go by the way back of [`crate::engine::worker::gpu::way_back`]). Every decision
//! is kept in the engine's probe, where the editor shows it with its reason. Auto engines with
//! levels that can use the GPU are watched ([`watch`]); the audio thread is never involved.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::engine::probe::{BackendProbe, WeakProbe};
use crate::thermal::{
    GpuStatus, POLL_INTERVAL, Placement, RETURN_AFTER_POLLS, ThermalPolicy, ThermalProbes,
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
}

static GOVERNOR: Mutex<Governor> = Mutex::new(Governor {
    watched: Vec::new(),
    thread: None,
    thermal_root: None,
    return_after_polls: RETURN_AFTER_POLLS,
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
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        governor.thread = std::thread::Builder::new()
            .name("longtail-governor".into())
            .spawn(move || run(root, &thread_stop))
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

fn run(root: Option<PathBuf>, stop: &AtomicBool) {
    let mut probes = ThermalProbes::new(root, true);
    loop {
        std::thread::park_timeout(POLL_INTERVAL);
        if stop.load(Ordering::Acquire) {
            return;
        }
        let snapshot = probes.poll();
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
        for (probe, policy) in &mut live {
            let gpu = GpuStatus {
                available: probe.gpu_available(),
                slack_allows: probe.can_use_gpu(),
            };
            let decision = policy.update(&snapshot, gpu);
            probe.place(decision.placement);
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
