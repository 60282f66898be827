//! Polling: [`ThermalProbes`] reads every probe of the platform and turns the readings into a
//! [`ThermalSnapshot`] (each device kind's hottest reading through its [`Hysteresis`]), and
//! [`ThermalMonitor`] does that on a thread of its own every [`POLL_INTERVAL`].
//!
//! Uses the probes ([`super::sysfs`], [`super::nvml`], [`super::macos`]) and the readings
//! ([`super::state`]); knows nothing of the policy.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::macos::{macos_readings, macos_thermal_state};
use super::nvml::NvmlProbe;
use super::state::{DeviceKind, Hysteresis, Reading, ThermalState, plausible_celsius};
use super::sysfs::read_sysfs;

/// How often the monitor thread reads the probes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// What the monitor saw at its last poll.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThermalSnapshot {
    /// CPU state after hysteresis.
    pub cpu: ThermalState,
    /// GPU state after hysteresis.
    pub gpu: ThermalState,
    /// Whether any GPU reports throttling.
    pub gpu_throttling: bool,
    /// Every reading of the poll.
    pub readings: Vec<Reading>,
    /// Which probes ran, e.g. `sysfs /sys, nvml (not found)`.
    pub sources: String,
}

/// The probes and the hysteresis of each device kind.
pub struct ThermalProbes {
    sysfs_root: Option<PathBuf>,
    nvml: Option<NvmlProbe>,
    /// Read the OS's own state (macOS) each poll.
    os_state: bool,
    cpu: Hysteresis,
    gpu: Hysteresis,
}

impl ThermalProbes {
    /// The probes of this platform: sysfs under `sysfs_root` (default `/sys` on Linux), NVML,
    /// and on macOS the system's thermal state unless a sysfs root was given (a test's fake
    /// tree is then the only source).
    pub fn new(sysfs_root: Option<PathBuf>, use_nvml: bool) -> Self {
        let os_state = cfg!(target_os = "macos") && sysfs_root.is_none();
        let sysfs_root =
            sysfs_root.or_else(|| cfg!(target_os = "linux").then(|| PathBuf::from("/sys")));
        Self {
            sysfs_root,
            nvml: use_nvml.then(NvmlProbe::open),
            os_state,
            cpu: Hysteresis::default(),
            gpu: Hysteresis::default(),
        }
    }

    /// Opens NVML now, for a caller that started without it ([`Self::new`]'s `use_nvml`) and
    /// now needs the GPU's readings. Returns whether it was opened by this call.
    pub fn open_nvml(&mut self) -> bool {
        if self.nvml.is_some() {
            return false;
        }
        self.nvml = Some(NvmlProbe::open());
        true
    }

    /// Reads every probe once and updates the states.
    pub fn poll(&mut self) -> ThermalSnapshot {
        let mut readings = Vec::new();
        let mut sources = Vec::new();
        if let Some(root) = &self.sysfs_root {
            readings.extend(read_sysfs(root));
            sources.push(format!("sysfs {}", root.display()));
        }
        if let Some(nvml) = &self.nvml {
            readings.extend(nvml.read());
            sources.push(
                if nvml.is_available() {
                    "nvml"
                } else {
                    "nvml (no NVIDIA driver)"
                }
                .to_owned(),
            );
        }
        if self.os_state {
            match macos_thermal_state() {
                Some(raw) => {
                    readings.extend(macos_readings(raw));
                    sources.push("macOS thermalState".to_owned());
                }
                None => sources.push("macOS thermalState (not available)".to_owned()),
            }
        }
        if cfg!(windows) {
            // Windows has no documented, unprivileged CPU temperature source (WMI's
            // MSAcpi_ThermalZoneTemperature needs admin rights and is empty on most machines),
            // so the CPU state stays Unknown there; the editor and `status` show this line.
            sources.push("CPU: no Windows sensor source read".to_owned());
        }
        if sources.is_empty() {
            sources.push("none on this platform".to_owned());
        }
        let hottest = |kind: DeviceKind| {
            readings
                .iter()
                .filter(|r| {
                    r.device == kind
                        && (r.reported.is_some() || r.celsius.is_some_and(plausible_celsius))
                })
                .max_by_key(|r| {
                    let tenths = r.celsius.map_or(0, |celsius| (celsius * 10.0) as i64);
                    (r.state().severity(), tenths)
                })
        };
        let cpu = self.cpu.update(hottest(DeviceKind::Cpu));
        let gpu = self.gpu.update(hottest(DeviceKind::Gpu));
        let gpu_throttling = readings
            .iter()
            .any(|r| r.device == DeviceKind::Gpu && r.throttling);
        ThermalSnapshot {
            cpu,
            gpu,
            gpu_throttling,
            readings,
            sources: sources.join(", "),
        }
    }
}

/// The monitor thread and its latest snapshot.
pub struct ThermalMonitor {
    latest: Arc<Mutex<ThermalSnapshot>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ThermalMonitor {
    /// Starts polling `probes` every [`POLL_INTERVAL`] on a thread of its own.
    pub fn spawn(mut probes: ThermalProbes) -> std::io::Result<Self> {
        let latest = Arc::new(Mutex::new(probes.poll()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("longtail-thermal".to_owned())
            .spawn({
                let latest = Arc::clone(&latest);
                let stop = Arc::clone(&stop);
                move || {
                    while !stop.load(Ordering::Acquire) {
                        std::thread::park_timeout(POLL_INTERVAL);
                        if stop.load(Ordering::Acquire) {
                            break;
                        }
                        let snapshot = probes.poll();
                        if let Ok(mut latest) = latest.lock() {
                            *latest = snapshot;
                        }
                    }
                }
            })?;
        Ok(Self {
            latest,
            stop,
            thread: Some(thread),
        })
    }

    /// The latest snapshot (a copy; never call from the audio thread).
    pub fn snapshot(&self) -> ThermalSnapshot {
        self.latest
            .lock()
            .map(|snapshot| snapshot.clone())
            .unwrap_or_default()
    }
}

impl Drop for ThermalMonitor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
