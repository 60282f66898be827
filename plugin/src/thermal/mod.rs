//! Thermal awareness: probes, five normalised states with hysteresis, and the policy that moves
//! work away from hot hardware.
//!
//! # Threads
//!
//! Everything here runs off the audio thread. [`ThermalMonitor::spawn`] starts a monitor thread
//! that polls the probes about once a second ([`POLL_INTERVAL`]) and publishes a
//! [`ThermalSnapshot`] behind a mutex that only the editor, the CLI and the policy read; the
//! audio thread never touches this module.
//!
//! # Probes
//!
//! - Linux: thermal zones (`class/thermal/thermal_zone*/temp` with their `trip_point_*`) and
//!   hwmon sensors (`class/hwmon/hwmon*/temp*_input` with `_max` and `_crit`), read under a
//!   sysfs root that tests replace with a fake tree ([`read_sysfs`]). Files that are missing,
//!   unreadable or hold garbage are skipped, so zones may appear and vanish between polls.
//! - NVIDIA GPUs: NVML, loaded at run time through `nvml-wrapper` ([`NvmlProbe`]). No library
//!   (no NVIDIA driver) means no GPU reading, not an error. Temperature, slowdown and shutdown
//!   thresholds, and the clock-throttle reasons (thermal or power brake slowdowns count as
//!   throttling).
//! - macOS: `NSProcessInfo.thermalState` ([`macos_thermal_state`]), the system's own
//!   four-level state for the whole machine (CPU and GPU share one package and one state). It
//!   has no temperature: the reading carries the state itself ([`Reading::reported`]), read
//!   through the Objective-C runtime that every macOS process has, so no extra crate.
//! - Elsewhere: no probe, and the state is [`ThermalState::Unknown`].
//!
//! # States
//!
//! A reading becomes one of five states by its distance to its own trip points where the
//! hardware reports them ([`Thresholds::from_trips`]), else by fixed defaults. Each device kind
//! (CPU, GPU) takes its hottest reading. States rise at once and fall only when the temperature
//! is [`HYSTERESIS_C`] below the threshold it crossed ([`Hysteresis`]), so a sensor hovering at
//! a threshold does not make the policy flap. A state the OS reports itself (macOS) is taken as
//! it is: the OS applies its own hysteresis.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the monitor thread reads the probes.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Degrees a temperature must fall below a threshold before the state drops.
pub const HYSTERESIS_C: f32 = 3.0;

/// The normalised thermal state of a device, as the editor shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThermalState {
    /// No reading (no sensor, unsupported platform).
    #[default]
    Unknown,
    /// Cool.
    Nominal,
    /// Warm, far from throttling.
    Fair,
    /// At or near the throttling point: performance may already be reduced.
    Serious,
    /// At or near the shutdown point.
    Critical,
}

impl ThermalState {
    /// Order of severity (Unknown counts as cool, so it never triggers the policy).
    pub fn severity(self) -> u8 {
        match self {
            Self::Unknown | Self::Nominal => 0,
            Self::Fair => 1,
            Self::Serious => 2,
            Self::Critical => 3,
        }
    }

    /// Serious or Critical.
    pub fn is_hot(self) -> bool {
        self.severity() >= 2
    }

    /// Name as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unknown => "Unknown",
            Self::Nominal => "Nominal",
            Self::Fair => "Fair",
            Self::Serious => "Serious",
            Self::Critical => "Critical",
        }
    }
}

/// What a sensor measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu,
    Gpu,
    /// Anything else (chipset, NVMe, battery, ...): shown, not acted on.
    Other,
}

impl DeviceKind {
    /// Name as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
            Self::Other => "other",
        }
    }

    /// Guesses the device from a zone type or hwmon chip name.
    pub fn from_sensor_name(name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        const CPU: [&str; 8] = [
            "x86_pkg_temp",
            "coretemp",
            "k10temp",
            "zenpower",
            "cpu",
            "soc",
            "acpitz",
            "tcpu",
        ];
        const GPU: [&str; 5] = ["gpu", "amdgpu", "nouveau", "radeon", "nvidia"];
        if GPU.iter().any(|key| name.contains(key)) {
            Self::Gpu
        } else if CPU.iter().any(|key| name.contains(key)) {
            Self::Cpu
        } else {
            Self::Other
        }
    }
}

/// Temperatures (°C) at which a reading becomes Fair, Serious and Critical.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub fair_c: f32,
    pub serious_c: f32,
    pub critical_c: f32,
}

impl Thresholds {
    /// Defaults for sensors without trip points: a desktop CPU or GPU throttles around 90 °C
    /// and shuts down around 100 °C.
    pub const DEFAULT: Self = Self {
        fair_c: 70.0,
        serious_c: 85.0,
        critical_c: 95.0,
    };

    /// Thresholds from a sensor's own trip points: Serious from its throttling point
    /// (`passive`, or hwmon `max`, or NVML slowdown) less 5 °C, Critical from its shutdown
    /// point (`critical`/`hot`, or NVML shutdown) less 5 °C, Fair 15 °C below Serious. Missing
    /// points are derived from the other one or the defaults.
    pub fn from_trips(throttle_c: Option<f32>, shutdown_c: Option<f32>) -> Self {
        let throttle_c = throttle_c.filter(|t| plausible_celsius(*t));
        let shutdown_c = shutdown_c.filter(|t| plausible_celsius(*t));
        let (serious_c, critical_c) = match (throttle_c, shutdown_c) {
            (Some(throttle), Some(shutdown)) => (throttle - 5.0, shutdown.max(throttle) - 5.0),
            (Some(throttle), None) => (throttle - 5.0, throttle + 10.0),
            (None, Some(shutdown)) => (shutdown - 15.0, shutdown - 5.0),
            (None, None) => return Self::DEFAULT,
        };
        Self {
            fair_c: serious_c - 15.0,
            serious_c,
            critical_c,
        }
    }

    /// The state of a temperature, without hysteresis.
    pub fn classify(&self, celsius: f32) -> ThermalState {
        if !plausible_celsius(celsius) {
            ThermalState::Unknown
        } else if celsius >= self.critical_c {
            ThermalState::Critical
        } else if celsius >= self.serious_c {
            ThermalState::Serious
        } else if celsius >= self.fair_c {
            ThermalState::Fair
        } else {
            ThermalState::Nominal
        }
    }
}

/// Sensors report nonsense on some machines (-273, 0 or 255 °C); those readings are dropped.
fn plausible_celsius(celsius: f32) -> bool {
    celsius.is_finite() && celsius > 0.0 && celsius < 150.0
}

/// One sensor's reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// Where it came from, e.g. `thermal_zone0 (x86_pkg_temp)`, `hwmon1 coretemp temp1`,
    /// `nvml 0 NVIDIA H100`.
    pub source: String,
    pub device: DeviceKind,
    /// The temperature; `None` where the platform reports a state instead (macOS).
    pub celsius: Option<f32>,
    pub thresholds: Thresholds,
    /// The hardware says it is slowing down (NVML throttle reasons).
    pub throttling: bool,
    /// A state the OS reports itself, with no temperature (macOS `thermalState`).
    pub reported: Option<ThermalState>,
}

impl Reading {
    /// The temperature as text, e.g. `45.0 °C`, or `reported by the OS` for a state without one.
    pub fn temperature_text(&self) -> String {
        match self.celsius {
            Some(celsius) => format!("{celsius:.1} °C"),
            None => "reported by the OS".to_owned(),
        }
    }

    /// The state of this reading alone (throttling counts as at least Serious).
    pub fn state(&self) -> ThermalState {
        let state = match (self.reported, self.celsius) {
            (Some(reported), _) => reported,
            (None, Some(celsius)) => self.thresholds.classify(celsius),
            (None, None) => ThermalState::Unknown,
        };
        if self.throttling && state.severity() < 2 {
            ThermalState::Serious
        } else {
            state
        }
    }
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

/// A sysfs millidegree file as °C.
fn read_millicelsius(path: &Path) -> Option<f32> {
    let value: i64 = read_trimmed(path)?.parse().ok()?;
    Some(value as f32 / 1000.0)
}

/// Entries of `dir` whose names start with `prefix`, sorted by name.
fn entries_with_prefix(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    paths
}

/// Reads Linux thermal zones and hwmon sensors under `root` (normally `/sys`). Never fails:
/// whatever cannot be read is left out.
pub fn read_sysfs(root: &Path) -> Vec<Reading> {
    let mut readings = Vec::new();
    for zone in entries_with_prefix(&root.join("class/thermal"), "thermal_zone") {
        let Some(celsius) = read_millicelsius(&zone.join("temp")) else {
            continue;
        };
        let kind = read_trimmed(&zone.join("type")).unwrap_or_default();
        let mut throttle = None::<f32>;
        let mut shutdown = None::<f32>;
        for trip_type in entries_with_prefix(&zone, "trip_point_") {
            let name = trip_type.file_name().unwrap_or_default().to_string_lossy();
            let Some(index) = name
                .strip_prefix("trip_point_")
                .and_then(|rest| rest.strip_suffix("_type"))
            else {
                continue;
            };
            let Some(temp) = read_millicelsius(&zone.join(format!("trip_point_{index}_temp")))
                .filter(|t| plausible_celsius(*t))
            else {
                continue;
            };
            match read_trimmed(&trip_type).as_deref() {
                Some("passive") => throttle = Some(throttle.map_or(temp, |t| t.min(temp))),
                Some("hot" | "critical") => {
                    shutdown = Some(shutdown.map_or(temp, |t| t.min(temp)));
                }
                _ => {}
            }
        }
        let zone_name = zone.file_name().unwrap_or_default().to_string_lossy();
        readings.push(Reading {
            source: format!("{zone_name} ({kind})"),
            device: DeviceKind::from_sensor_name(&kind),
            celsius: Some(celsius),
            thresholds: Thresholds::from_trips(throttle, shutdown),
            throttling: false,
            reported: None,
        });
    }
    for chip in entries_with_prefix(&root.join("class/hwmon"), "hwmon") {
        let chip_name = read_trimmed(&chip.join("name")).unwrap_or_default();
        let chip_dir = chip.file_name().unwrap_or_default().to_string_lossy();
        for input in entries_with_prefix(&chip, "temp") {
            let name = input.file_name().unwrap_or_default().to_string_lossy();
            let Some(sensor) = name.strip_suffix("_input") else {
                continue;
            };
            let Some(celsius) = read_millicelsius(&input) else {
                continue;
            };
            let label = read_trimmed(&chip.join(format!("{sensor}_label")))
                .unwrap_or_else(|| sensor.to_owned());
            readings.push(Reading {
                source: format!("{chip_dir} {chip_name} {label}"),
                device: DeviceKind::from_sensor_name(&chip_name),
                celsius: Some(celsius),
                thresholds: Thresholds::from_trips(
                    read_millicelsius(&chip.join(format!("{sensor}_max"))),
                    read_millicelsius(&chip.join(format!("{sensor}_crit"))),
                ),
                throttling: false,
                reported: None,
            });
        }
    }
    readings
}

/// NVIDIA GPUs through NVML, loaded at run time.
pub struct NvmlProbe {
    nvml: Option<nvml_wrapper::Nvml>,
}

impl NvmlProbe {
    /// Loads NVML if the driver provides it; without it the probe reads nothing.
    pub fn open() -> Self {
        Self {
            nvml: nvml_wrapper::Nvml::init().ok(),
        }
    }

    /// Whether NVML was found.
    pub fn is_available(&self) -> bool {
        self.nvml.is_some()
    }

    /// One reading per NVIDIA GPU.
    pub fn read(&self) -> Vec<Reading> {
        use nvml_wrapper::bitmasks::device::ThrottleReasons;
        use nvml_wrapper::enum_wrappers::device::{TemperatureSensor, TemperatureThreshold};
        let Some(nvml) = &self.nvml else {
            return Vec::new();
        };
        let count = nvml.device_count().unwrap_or(0);
        (0..count)
            .filter_map(|index| {
                let device = nvml.device_by_index(index).ok()?;
                let celsius = device.temperature(TemperatureSensor::Gpu).ok()? as f32;
                let threshold = |kind| device.temperature_threshold(kind).ok().map(|t| t as f32);
                let hot_reasons = ThrottleReasons::HW_SLOWDOWN
                    | ThrottleReasons::SW_THERMAL_SLOWDOWN
                    | ThrottleReasons::HW_THERMAL_SLOWDOWN
                    | ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN;
                let throttling = device
                    .current_throttle_reasons()
                    .is_ok_and(|reasons| reasons.intersects(hot_reasons));
                let name = device.name().unwrap_or_else(|_| "NVIDIA GPU".to_owned());
                Some(Reading {
                    source: format!("nvml {index} {name}"),
                    device: DeviceKind::Gpu,
                    celsius: Some(celsius),
                    thresholds: Thresholds::from_trips(
                        threshold(TemperatureThreshold::Slowdown),
                        threshold(TemperatureThreshold::Shutdown),
                    ),
                    throttling,
                    reported: None,
                })
            })
            .collect()
    }
}

/// The state of a raw `NSProcessInfoThermalState` value (0 nominal, 1 fair, 2 serious,
/// 3 critical); anything else is Unknown.
pub fn state_from_macos(raw: isize) -> ThermalState {
    match raw {
        0 => ThermalState::Nominal,
        1 => ThermalState::Fair,
        2 => ThermalState::Serious,
        3 => ThermalState::Critical,
        _ => ThermalState::Unknown,
    }
}

/// The readings for a macOS thermal state: one per device kind, since the state covers the
/// whole machine (on Apple silicon CPU and GPU share the package; on Intel Macs the state
/// still reflects the fans and clocks of both).
pub fn macos_readings(raw: isize) -> Vec<Reading> {
    let reported = state_from_macos(raw);
    [DeviceKind::Cpu, DeviceKind::Gpu]
        .into_iter()
        .map(|device| Reading {
            source: "macOS thermalState (whole machine)".to_owned(),
            device,
            celsius: None,
            thresholds: Thresholds::DEFAULT,
            throttling: false,
            reported: Some(reported),
        })
        .collect()
}

/// `NSProcessInfo.processInfo.thermalState` as its raw value; `None` off macOS.
#[cfg(not(target_os = "macos"))]
pub fn macos_thermal_state() -> Option<isize> {
    None
}

/// `NSProcessInfo.processInfo.thermalState` as its raw value, through the Objective-C runtime
/// (`objc_msgSend` cast to each message's signature, as the runtime requires on arm64). No
/// object is created, so no autorelease pool is needed; `None` if the class or the selector
/// is missing (before macOS 10.10.3).
#[cfg(target_os = "macos")]
pub fn macos_thermal_state() -> Option<isize> {
    use std::ffi::{c_char, c_void};
    type Id = *mut c_void;
    type Sel = *mut c_void;
    #[link(name = "Foundation", kind = "framework")]
    unsafe extern "C" {}
    #[link(name = "objc")]
    unsafe extern "C" {
        fn objc_getClass(name: *const c_char) -> Id;
        fn sel_registerName(name: *const c_char) -> Sel;
        fn objc_msgSend();
    }
    // SAFETY: the class and selectors are checked before use; `processInfo` returns the
    // process's shared instance; `respondsToSelector:` returns a BOOL (a signed char) and
    // `thermalState` an NSInteger, and each call goes through a pointer of that signature.
    unsafe {
        let send = objc_msgSend as unsafe extern "C" fn();
        let send_id: unsafe extern "C" fn(Id, Sel) -> Id = std::mem::transmute(send);
        let send_responds: unsafe extern "C" fn(Id, Sel, Sel) -> i8 = std::mem::transmute(send);
        let send_integer: unsafe extern "C" fn(Id, Sel) -> isize = std::mem::transmute(send);
        let class = objc_getClass(c"NSProcessInfo".as_ptr());
        if class.is_null() {
            return None;
        }
        let info = send_id(class, sel_registerName(c"processInfo".as_ptr()));
        if info.is_null() {
            return None;
        }
        let thermal_state = sel_registerName(c"thermalState".as_ptr());
        let responds = sel_registerName(c"respondsToSelector:".as_ptr());
        if send_responds(info, responds, thermal_state) == 0 {
            return None;
        }
        Some(send_integer(info, thermal_state))
    }
}

/// The state of one device kind over time: rises at once, falls with [`HYSTERESIS_C`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Hysteresis {
    state: ThermalState,
}

impl Hysteresis {
    /// Feeds the hottest reading of the device kind (`None`: no sensor this poll).
    pub fn update(&mut self, hottest: Option<&Reading>) -> ThermalState {
        let Some(reading) = hottest else {
            self.state = ThermalState::Unknown;
            return self.state;
        };
        let raw = reading.state();
        if raw.severity() >= self.state.severity()
            || self.state == ThermalState::Unknown
            || reading.reported.is_some()
        {
            self.state = raw;
        } else if let Some(celsius) = reading.celsius {
            // Falling: take the state the reading would have a few degrees hotter.
            let cooled = Reading {
                celsius: Some(celsius + HYSTERESIS_C),
                ..reading.clone()
            };
            let guarded = cooled.state();
            if guarded.severity() < self.state.severity() {
                self.state = guarded;
            }
        }
        self.state
    }

    /// The current state.
    pub fn state(&self) -> ThermalState {
        self.state
    }
}

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

/// Where the plan's big levels run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    Cpu,
    Gpu,
}

/// What the policy did at a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Nothing to change.
    Stay,
    /// Move the GPU levels to the CPU (crossfaded migration, as for faults).
    MoveToCpu,
    /// Move the big levels (back) to the GPU.
    MoveToGpu,
    /// Both devices are hot: the editor suggests a larger host buffer.
    SuggestLargerBuffer,
}

/// A decision and its reason, for the editor and `longtail-cli status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub placement: Placement,
    pub action: Action,
    pub reason: &'static str,
}

/// Inputs of one policy step besides the thermal snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuStatus {
    /// A GPU executor is open and healthy (no faults).
    pub available: bool,
    /// The plan's slack covers the GPU's measured round trip for the levels that would move.
    pub slack_allows: bool,
}

/// Polls (seconds) the GPU must stay cool before work moves back to it.
pub const RETURN_AFTER_POLLS: u32 = 30;

/// The Auto backend's thermal policy. `preferred` is where Auto's measurement put the big
/// levels; heat moves them, and they go back with hysteresis ([`RETURN_AFTER_POLLS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThermalPolicy {
    preferred: Placement,
    placement: Placement,
    gpu_cool_polls: u32,
    /// Cool polls before work moves (back) to the GPU.
    return_after: u32,
}

impl ThermalPolicy {
    /// Starts where the measurement says the levels should run.
    pub fn new(preferred: Placement) -> Self {
        Self {
            preferred,
            placement: preferred,
            gpu_cool_polls: 0,
            return_after: RETURN_AFTER_POLLS,
        }
    }

    /// The same, needing `polls` cool polls instead of [`RETURN_AFTER_POLLS`] (tests).
    pub fn with_return_after(self, polls: u32) -> Self {
        Self {
            return_after: polls,
            ..self
        }
    }

    /// Where the levels run now.
    pub fn placement(&self) -> Placement {
        self.placement
    }

    /// One step, once per poll.
    pub fn update(&mut self, thermal: &ThermalSnapshot, gpu: GpuStatus) -> Decision {
        let gpu_hot = thermal.gpu_throttling || thermal.gpu.is_hot();
        let cpu_hot = thermal.cpu.is_hot();
        if gpu_hot || !gpu.available {
            self.gpu_cool_polls = 0;
        } else {
            self.gpu_cool_polls = self.gpu_cool_polls.saturating_add(1);
        }
        let decide = |placement, action, reason| Decision {
            placement,
            action,
            reason,
        };

        if self.placement == Placement::Gpu && gpu_hot {
            self.placement = Placement::Cpu;
            let reason = if thermal.gpu_throttling {
                "the GPU is throttling"
            } else {
                "the GPU is hot"
            };
            return decide(Placement::Cpu, Action::MoveToCpu, reason);
        }
        if self.placement == Placement::Cpu
            && gpu.available
            && gpu.slack_allows
            && self.gpu_cool_polls >= self.return_after
        {
            if self.preferred == Placement::Gpu {
                self.placement = Placement::Gpu;
                return decide(Placement::Gpu, Action::MoveToGpu, "the GPU has cooled down");
            }
            if cpu_hot {
                self.placement = Placement::Gpu;
                return decide(
                    Placement::Gpu,
                    Action::MoveToGpu,
                    "the CPU is hot and the GPU is healthy",
                );
            }
        }
        if cpu_hot && (gpu_hot || !gpu.available || self.placement == Placement::Gpu) {
            return decide(
                self.placement,
                Action::SuggestLargerBuffer,
                "the CPU is hot and no cooler device can take more work: a larger host buffer \
                 lowers the load",
            );
        }
        let reason = match self.placement {
            Placement::Gpu => "the GPU is healthy",
            Placement::Cpu if !gpu.available => "no GPU executor",
            Placement::Cpu => "the CPU has room",
        };
        decide(self.placement, Action::Stay, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(device: DeviceKind, celsius: f32) -> Reading {
        Reading {
            source: "test".to_owned(),
            device,
            celsius: Some(celsius),
            thresholds: Thresholds::DEFAULT,
            throttling: false,
            reported: None,
        }
    }

    #[test]
    fn trip_points_set_the_thresholds() {
        let t = Thresholds::from_trips(Some(90.0), Some(105.0));
        assert_eq!(t.classify(60.0), ThermalState::Nominal);
        assert_eq!(t.classify(72.0), ThermalState::Fair);
        assert_eq!(t.classify(86.0), ThermalState::Serious);
        assert_eq!(t.classify(100.0), ThermalState::Critical);
        assert_eq!(t.classify(f32::NAN), ThermalState::Unknown);
        assert_eq!(t.classify(-273.0), ThermalState::Unknown);
        // Garbage trip points fall back to the defaults.
        assert_eq!(
            Thresholds::from_trips(Some(-1.0), Some(1000.0)),
            Thresholds::DEFAULT
        );
    }

    #[test]
    fn sensor_names_map_to_devices() {
        assert_eq!(
            DeviceKind::from_sensor_name("x86_pkg_temp"),
            DeviceKind::Cpu
        );
        assert_eq!(DeviceKind::from_sensor_name("k10temp"), DeviceKind::Cpu);
        assert_eq!(DeviceKind::from_sensor_name("amdgpu"), DeviceKind::Gpu);
        assert_eq!(DeviceKind::from_sensor_name("nvme"), DeviceKind::Other);
    }

    #[test]
    fn hysteresis_rises_at_once_and_falls_three_degrees_late() {
        let mut h = Hysteresis::default();
        let cpu = |c| reading(DeviceKind::Cpu, c);
        assert_eq!(h.update(Some(&cpu(60.0))), ThermalState::Nominal);
        assert_eq!(h.update(Some(&cpu(86.0))), ThermalState::Serious);
        // Just under the Serious threshold (85): stays Serious until 82.
        assert_eq!(h.update(Some(&cpu(84.0))), ThermalState::Serious);
        assert_eq!(h.update(Some(&cpu(82.5))), ThermalState::Serious);
        assert_eq!(h.update(Some(&cpu(81.9))), ThermalState::Fair);
        // From Critical straight down to Nominal when far below.
        assert_eq!(h.update(Some(&cpu(99.0))), ThermalState::Critical);
        assert_eq!(h.update(Some(&cpu(40.0))), ThermalState::Nominal);
        // A vanished sensor is Unknown, and the next reading is taken as is.
        assert_eq!(h.update(None), ThermalState::Unknown);
        assert_eq!(h.update(Some(&cpu(72.0))), ThermalState::Fair);
    }

    #[test]
    fn macos_states_cover_both_devices_and_are_taken_as_reported() {
        assert_eq!(state_from_macos(0), ThermalState::Nominal);
        assert_eq!(state_from_macos(1), ThermalState::Fair);
        assert_eq!(state_from_macos(2), ThermalState::Serious);
        assert_eq!(state_from_macos(3), ThermalState::Critical);
        assert_eq!(state_from_macos(4), ThermalState::Unknown);
        assert_eq!(state_from_macos(-1), ThermalState::Unknown);
        let readings = macos_readings(2);
        let devices: Vec<DeviceKind> = readings.iter().map(|r| r.device).collect();
        assert_eq!(devices, [DeviceKind::Cpu, DeviceKind::Gpu]);
        assert!(readings.iter().all(|r| r.celsius.is_none()));
        assert!(readings.iter().all(|r| r.state() == ThermalState::Serious));
        // The OS applies its own hysteresis, so a falling state is taken at once.
        let mut h = Hysteresis::default();
        assert_eq!(
            h.update(Some(&macos_readings(3)[0])),
            ThermalState::Critical
        );
        assert_eq!(h.update(Some(&macos_readings(1)[0])), ThermalState::Fair);
        assert_eq!(h.update(Some(&macos_readings(0)[0])), ThermalState::Nominal);
        // Off macOS there is no such state to read.
        assert_eq!(macos_thermal_state().is_some(), cfg!(target_os = "macos"));
    }

    fn snapshot(cpu: ThermalState, gpu: ThermalState, throttling: bool) -> ThermalSnapshot {
        ThermalSnapshot {
            cpu,
            gpu,
            gpu_throttling: throttling,
            ..ThermalSnapshot::default()
        }
    }

    const HEALTHY_GPU: GpuStatus = GpuStatus {
        available: true,
        slack_allows: true,
    };

    #[test]
    fn hot_gpu_moves_work_to_the_cpu_and_back_after_cooling() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Gpu);
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::Stay));
        let d = policy.update(&snapshot(Nominal, Fair, true), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Cpu, Action::MoveToCpu));
        assert_eq!(d.reason, "the GPU is throttling");
        // Cool again, but it must stay cool for RETURN_AFTER_POLLS polls.
        for _ in 0..RETURN_AFTER_POLLS - 1 {
            let d = policy.update(&snapshot(Nominal, Fair, false), HEALTHY_GPU);
            assert_eq!((d.placement, d.action), (Placement::Cpu, Action::Stay));
        }
        // A hot blip restarts the count.
        policy.update(&snapshot(Nominal, Serious, false), HEALTHY_GPU);
        for _ in 0..RETURN_AFTER_POLLS - 1 {
            policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        }
        assert_eq!(policy.placement(), Placement::Cpu);
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::MoveToGpu));
    }

    #[test]
    fn hot_cpu_moves_work_to_a_healthy_gpu_only_when_the_slack_allows() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let tight = GpuStatus {
            available: true,
            slack_allows: false,
        };
        for _ in 0..RETURN_AFTER_POLLS + 5 {
            let d = policy.update(&snapshot(Serious, Nominal, false), tight);
            assert_eq!(d.placement, Placement::Cpu);
            assert_ne!(d.action, Action::MoveToGpu);
        }
        let d = policy.update(&snapshot(Serious, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::MoveToGpu));
        // The CPU cooling down does not move the work back: the GPU is fine where it is.
        let d = policy.update(&snapshot(Nominal, Nominal, false), HEALTHY_GPU);
        assert_eq!((d.placement, d.action), (Placement::Gpu, Action::Stay));
    }

    #[test]
    fn both_hot_suggests_a_larger_buffer() {
        use ThermalState::*;
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let d = policy.update(&snapshot(Critical, Serious, false), HEALTHY_GPU);
        assert_eq!(d.action, Action::SuggestLargerBuffer);
        let no_gpu = GpuStatus {
            available: false,
            slack_allows: false,
        };
        let mut policy = ThermalPolicy::new(Placement::Cpu);
        let d = policy.update(&snapshot(Serious, Unknown, false), no_gpu);
        assert_eq!(d.action, Action::SuggestLargerBuffer);
        let d = policy.update(&snapshot(Fair, Unknown, false), no_gpu);
        assert_eq!((d.action, d.reason), (Action::Stay, "no GPU executor"));
    }
}
