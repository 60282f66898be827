//! Readings and their normalisation: what a sensor measured ([`Reading`]), the five states it
//! maps to ([`ThermalState`]) by its own trip points or fixed defaults ([`Thresholds`]), and the
//! hysteresis that keeps a state from flapping ([`Hysteresis`]).
//!
//! Pure data and arithmetic: uses nothing else of the crate, and every probe and the monitor
//! build on it.

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
pub(super) fn plausible_celsius(celsius: f32) -> bool {
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
}
