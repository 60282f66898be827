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
//! - Windows: NVML as above (`nvml.dll`, loaded at run time); no CPU probe, since Windows has
//!   no documented CPU temperature source a plugin can read without admin rights, so the CPU
//!   state is [`ThermalState::Unknown`] and the snapshot's sources say so.
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
//!
//! # Layout
//!
//! One file per concept, each using only those listed before it:
//!
//! - `state`: readings, the five states, thresholds and hysteresis (pure arithmetic),
//! - `sysfs`, `nvml`, `macos`: one probe source each, producing readings,
//! - `monitor`: the probes together, the snapshot of a poll and the monitor thread,
//! - `policy`: the decision of where work runs, from a snapshot.
//!
//! Everything public is re-exported here, so callers name `crate::thermal::ThermalPolicy` and
//! never the file it lives in.

mod macos;
mod monitor;
mod nvml;
mod policy;
mod state;
mod sysfs;

pub use macos::{macos_readings, macos_thermal_state, state_from_macos};
pub use monitor::{POLL_INTERVAL, ThermalMonitor, ThermalProbes, ThermalSnapshot};
pub use nvml::NvmlProbe;
pub use policy::{Action, Decision, GpuStatus, Placement, RETURN_AFTER_POLLS, ThermalPolicy};
pub use state::{DeviceKind, HYSTERESIS_C, Hysteresis, Reading, ThermalState, Thresholds};
pub use sysfs::read_sysfs;
