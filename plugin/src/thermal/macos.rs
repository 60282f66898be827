//! The macOS probe: `NSProcessInfo.thermalState`, the system's own four-level state for the
//! whole machine, read through the Objective-C runtime (no extra crate). Off macOS it reads
//! nothing.
//!
//! Uses only the readings of [`super::state`].

use super::state::{DeviceKind, Reading, ThermalState, Thresholds};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thermal::Hysteresis;

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
}
