//! The Linux probe: thermal zones (`class/thermal/thermal_zone*`) and hwmon sensors
//! (`class/hwmon/hwmon*`) read under a sysfs root, normally `/sys`.
//!
//! Uses only the readings of [`super::state`]; plain file reads, so tests point it at a fake
//! tree.

use std::path::{Path, PathBuf};

use super::state::{DeviceKind, Reading, Thresholds, plausible_celsius};

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
