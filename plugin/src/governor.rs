//! The thermal policy at work, whether an editor is open or not.
//!
//! One thread per process (started by the first engine it watches, gone with the last) polls
//! the thermal probes every [`POLL_INTERVAL`] and runs each watched engine's
//! [`ThermalPolicy`]: a hot or throttling GPU moves the engine's GPU levels to the CPU
//! ([`BackendProbe::hold_gpu`]: the crossfaded migration of a fault), and a GPU that has stayed
//! cool for [`crate::thermal::RETURN_AFTER_POLLS`] polls gets them back. Every decision is kept
//! in the engine's probe, where the editor shows it with its reason. Engines with levels on the
//! GPU under the Auto backend are watched ([`watch`]); the audio thread is never involved.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::engine::{BackendProbe, WeakProbe};
use crate::thermal::{GpuStatus, POLL_INTERVAL, Placement, ThermalPolicy, ThermalProbes};

struct Watched {
    probe: WeakProbe,
    policy: ThermalPolicy,
}

#[derive(Default)]
struct Governor {
    watched: Vec<Watched>,
    running: bool,
    /// Test hook: a fake sysfs tree instead of /sys.
    thermal_root: Option<PathBuf>,
}

static GOVERNOR: Mutex<Governor> = Mutex::new(Governor {
    watched: Vec::new(),
    running: false,
    thermal_root: None,
});

fn lock() -> std::sync::MutexGuard<'static, Governor> {
    GOVERNOR.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the thermal policy for this engine from now on, until it is dropped. Starts the
/// governor's thread if it is not running. Off the audio thread.
pub fn watch(probe: &BackendProbe) {
    let mut governor = lock();
    governor.watched.push(Watched {
        probe: probe.downgrade(),
        policy: ThermalPolicy::new(Placement::Gpu),
    });
    if !governor.running {
        let root = governor.thermal_root.clone();
        if std::thread::Builder::new()
            .name("longtail-governor".into())
            .spawn(move || run(root))
            .is_ok()
        {
            governor.running = true;
        }
    }
}

/// Test hook: the governor's next thread reads this fake sysfs tree instead of /sys.
#[doc(hidden)]
pub fn set_thermal_root(root: Option<PathBuf>) {
    lock().thermal_root = root;
}

fn run(root: Option<PathBuf>) {
    let mut probes = ThermalProbes::new(root, true);
    loop {
        std::thread::sleep(POLL_INTERVAL);
        let snapshot = probes.poll();
        let mut governor = lock();
        governor.watched.retain(|w| w.probe.upgrade().is_some());
        if governor.watched.is_empty() {
            governor.running = false;
            return;
        }
        for watched in &mut governor.watched {
            let Some(probe) = watched.probe.upgrade() else {
                continue;
            };
            let gpu = GpuStatus {
                available: probe.gpu_healthy(),
                slack_allows: probe.has_gpu_levels(),
            };
            let decision = watched.policy.update(&snapshot, gpu);
            probe.hold_gpu(decision.placement == Placement::Cpu);
            probe.set_thermal_decision(decision);
        }
    }
}
