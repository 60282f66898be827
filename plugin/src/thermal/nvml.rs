//! The NVIDIA probe: every GPU's temperature, thresholds and throttle reasons through NVML,
//! loaded at run time by `nvml-wrapper` (no driver, no readings).
//!
//! Uses only the readings of [`super::state`].

use super::state::{DeviceKind, Reading, Thresholds};

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
