//! Thermal probes against fake sysfs trees: normal, near a trip point, over critical, missing
//! files, garbage values, zones appearing and vanishing between polls; and the states'
//! hysteresis through the probes.

use std::path::{Path, PathBuf};

use longtail::thermal::{DeviceKind, ThermalProbes, ThermalState, read_sysfs};

/// A fresh, empty fake sysfs root for one test.
fn fake_root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("longtail-thermal-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A thermal zone with a passive (throttling) and a critical trip point, in °C.
fn zone(root: &Path, idx: usize, kind: &str, celsius: f32, passive: f32, critical: f32) {
    let dir = root.join(format!("class/thermal/thermal_zone{idx}"));
    write(&dir.join("type"), &format!("{kind}\n"));
    write(
        &dir.join("temp"),
        &format!("{}\n", (celsius * 1000.0) as i64),
    );
    write(&dir.join("trip_point_0_type"), "passive\n");
    write(
        &dir.join("trip_point_0_temp"),
        &format!("{}\n", (passive * 1000.0) as i64),
    );
    write(&dir.join("trip_point_1_type"), "critical\n");
    write(
        &dir.join("trip_point_1_temp"),
        &format!("{}\n", (critical * 1000.0) as i64),
    );
}

fn set_temp(root: &Path, idx: usize, celsius: f32) {
    let path = root.join(format!("class/thermal/thermal_zone{idx}/temp"));
    write(&path, &format!("{}\n", (celsius * 1000.0) as i64));
}

fn probes(root: &Path) -> ThermalProbes {
    ThermalProbes::new(Some(root.to_path_buf()), false)
}

#[test]
fn normal_near_trip_and_over_critical() {
    let root = fake_root("levels");
    // Passive at 90 °C (Serious from 85), critical at 105 °C (Critical from 100).
    zone(&root, 0, "x86_pkg_temp", 45.0, 90.0, 105.0);
    let mut probes = probes(&root);
    let snapshot = probes.poll();
    assert_eq!(snapshot.cpu, ThermalState::Nominal);
    assert_eq!(snapshot.gpu, ThermalState::Unknown);
    assert_eq!(snapshot.readings.len(), 1);
    assert_eq!(snapshot.readings[0].source, "thermal_zone0 (x86_pkg_temp)");
    assert_eq!(snapshot.readings[0].celsius, Some(45.0));

    set_temp(&root, 0, 76.0);
    assert_eq!(probes.poll().cpu, ThermalState::Fair);
    set_temp(&root, 0, 88.0);
    assert_eq!(
        probes.poll().cpu,
        ThermalState::Serious,
        "near the trip point"
    );
    set_temp(&root, 0, 110.0);
    assert_eq!(probes.poll().cpu, ThermalState::Critical, "over critical");
}

#[test]
fn hwmon_sensors_with_max_and_crit() {
    let root = fake_root("hwmon");
    let chip = root.join("class/hwmon/hwmon2");
    write(&chip.join("name"), "amdgpu\n");
    write(&chip.join("temp1_input"), "91000\n");
    write(&chip.join("temp1_label"), "edge\n");
    write(&chip.join("temp1_max"), "94000\n");
    write(&chip.join("temp1_crit"), "110000\n");
    let readings = read_sysfs(&root);
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].device, DeviceKind::Gpu);
    assert_eq!(readings[0].source, "hwmon2 amdgpu edge");
    assert_eq!(probes(&root).poll().gpu, ThermalState::Serious);
}

#[test]
fn missing_files_and_garbage_are_skipped() {
    let root = fake_root("garbage");
    // A zone without a temperature file, one with garbage, one with an absurd value, and one
    // good zone whose trip points are garbage (defaults apply: Fair from 70 °C).
    write(&root.join("class/thermal/thermal_zone0/type"), "acpitz\n");
    write(&root.join("class/thermal/thermal_zone1/type"), "acpitz\n");
    write(&root.join("class/thermal/thermal_zone1/temp"), "hot!\n");
    write(
        &root.join("class/thermal/thermal_zone2/type"),
        "cpu-thermal\n",
    );
    write(&root.join("class/thermal/thermal_zone2/temp"), "-273000\n");
    zone(&root, 3, "cpu-thermal", 72.0, 90.0, 105.0);
    write(
        &root.join("class/thermal/thermal_zone3/trip_point_0_temp"),
        "banana\n",
    );
    write(
        &root.join("class/thermal/thermal_zone3/trip_point_1_temp"),
        "999999999\n",
    );
    write(&root.join("class/hwmon/hwmon0/name"), "coretemp\n");
    write(&root.join("class/hwmon/hwmon0/temp1_input"), "\n");
    let snapshot = probes(&root).poll();
    assert_eq!(snapshot.cpu, ThermalState::Fair);
    // The absurd reading is listed but never decides the state.
    assert!(
        snapshot
            .readings
            .iter()
            .all(|r| r.source != "thermal_zone1 (acpitz)")
    );

    // An empty tree, or no tree at all, is Unknown and not an error.
    assert_eq!(
        probes(&fake_root("empty")).poll().cpu,
        ThermalState::Unknown
    );
    let absent = root.join("does-not-exist");
    assert_eq!(probes(&absent).poll().cpu, ThermalState::Unknown);
}

#[test]
fn zones_appear_and_vanish_between_polls() {
    let root = fake_root("churn");
    let mut probes = probes(&root);
    assert_eq!(probes.poll().cpu, ThermalState::Unknown);
    zone(&root, 0, "x86_pkg_temp", 50.0, 90.0, 105.0);
    assert_eq!(probes.poll().cpu, ThermalState::Nominal);
    // A second, hotter CPU zone appears: the hottest decides.
    zone(&root, 1, "cpu", 87.0, 90.0, 105.0);
    let snapshot = probes.poll();
    assert_eq!(snapshot.cpu, ThermalState::Serious);
    assert_eq!(snapshot.readings.len(), 2);
    // It vanishes: the cool one is left, and the state falls (far below the threshold).
    std::fs::remove_dir_all(root.join("class/thermal/thermal_zone1")).unwrap();
    assert_eq!(probes.poll().cpu, ThermalState::Nominal);
    // All vanish.
    std::fs::remove_dir_all(root.join("class/thermal")).unwrap();
    assert_eq!(probes.poll().cpu, ThermalState::Unknown);
}

#[test]
fn states_fall_only_past_the_hysteresis() {
    let root = fake_root("hysteresis");
    zone(&root, 0, "x86_pkg_temp", 86.0, 90.0, 105.0);
    let mut probes = probes(&root);
    assert_eq!(probes.poll().cpu, ThermalState::Serious);
    // Hovering just under the Serious threshold (85 °C) keeps Serious...
    for celsius in [84.9, 84.0, 85.5, 83.0, 82.1] {
        set_temp(&root, 0, celsius);
        assert_eq!(probes.poll().cpu, ThermalState::Serious, "{celsius} °C");
    }
    // ...until 3 °C below it.
    set_temp(&root, 0, 81.5);
    assert_eq!(probes.poll().cpu, ThermalState::Fair);
    set_temp(&root, 0, 85.0);
    assert_eq!(probes.poll().cpu, ThermalState::Serious, "rises at once");
}

#[test]
fn status_json_reports_the_fake_tree_and_the_policy() {
    let root = fake_root("status");
    zone(&root, 0, "x86_pkg_temp", 97.0, 90.0, 105.0);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_longtail-cli"))
        .args(["status", "--json", "--ir-seconds", "2", "--block", "128"])
        .arg("--thermal-root")
        .arg(&root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).expect("one JSON object");
    assert_eq!(json["thermal"]["cpu"], "Serious", "{text}");
    assert_eq!(
        json["thermal"]["readings"][0]["source"], "thermal_zone0 (x86_pkg_temp)",
        "{text}"
    );
    assert_eq!(json["policy"]["action"], "SuggestLargerBuffer", "{text}");
    assert_eq!(json["plan"]["quantum"], 128, "{text}");
    assert_eq!(
        json["plan"]["levels"][0]["runs_on"], "audio thread",
        "{text}"
    );
    // Auto and a small engine (2 paths of 2 s): the engine opens no GPU (the process-wide
    // rule is in "auto_process"; this engine's costs on each side in "auto_engine").
    assert_eq!(json["backend"], "auto", "{text}");
    assert!(json["gpu"]["calibration"].is_null(), "{text}");
    let reason = json["gpu"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("keeps a small engine on the CPU"), "{text}");
    assert_eq!(json["auto_process"]["load_high"], 0.6, "{text}");
    assert!(
        json["auto_engine"]["cpu"]["transform_ns"].as_f64() > Some(0.0),
        "{text}"
    );
    assert!(
        json["auto_engine"]["path_partitions"].as_f64() > Some(0.0),
        "{text}"
    );

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_longtail-cli"))
        .args(["status", "--ir-seconds", "0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--ir-seconds"));
}

/// Runs the CLI with `args` (a CPU adapter allowed), which must succeed and print every one of
/// `fields`.
fn expect_json_fields(args: &[&str], fields: &[&str]) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_longtail-cli"))
        .args(args)
        .env(longtail_gpu::ALLOW_CPU_ENV, "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    let json = String::from_utf8(output.stdout).unwrap();
    for field in fields {
        assert!(json.contains(field), "{args:?}: {field} missing: {json}");
    }
}

/// `status --backend gpu` opens the GPU as an engine would, calibrates it and places the big
/// levels there, and `bench-gpu` times a batch (lavapipe in CI, allowed by the environment).
#[test]
fn status_and_bench_gpu_open_the_gpu() {
    if !longtail_gpu::available_for_tests() {
        return;
    }
    let status = ["status", "--json", "--backend", "gpu", "--paths", "4"];
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_longtail-cli"))
        .args([&status[..], &["--ir-seconds", "10", "--block", "128"]].concat())
        .env(longtail_gpu::ALLOW_CPU_ENV, "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).expect("one JSON object");
    assert_eq!(json["backend"], "gpu", "{text}");
    assert_eq!(json["gpu"]["available"], true, "{text}");
    assert!(json["gpu"]["chosen"]["name"].is_string(), "{text}");
    let calibration = &json["gpu"]["calibration"];
    assert!(calibration["rt_p999_us"].as_f64() > Some(0.0), "{text}");
    assert!(
        calibration["gpu_partition_ns"].as_f64() >= Some(1.0),
        "{text}"
    );
    assert!(
        calibration["gpu_transform_ns"].as_f64() >= Some(1.0),
        "{text}"
    );
    let runs_on: Vec<&str> = json["plan"]["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .filter_map(|level| level["runs_on"].as_str())
        .collect();
    assert_eq!(runs_on[0], "audio thread", "{text}");
    assert!(runs_on.contains(&"gpu"), "{text}");
    // lavapipe's 32 KiB of workgroup memory hold a whole transform of 1024 points: 3
    // dispatches; the radix-2 fallback takes 6 + 2 log2 P.
    let bench_gpu = ["bench-gpu", "--json", "--partition", "1024"];
    expect_json_fields(
        &[&bench_gpu[..], &["--levels", "2", "--periods", "4"]].concat(),
        &[
            "\"paths\":8",
            "\"periods\":4",
            "\"rt_p99_us\":",
            "\"kernels\":\"tiled:",
            "\"dispatches_per_period\":3,",
            "\"gpu_period_us\":",
        ],
    );
    expect_json_fields(
        &[
            &bench_gpu[..],
            &["--levels", "1", "--periods", "2", "--kernels", "radix2"],
        ]
        .concat(),
        &["\"kernels\":\"radix2\"", "\"dispatches_per_period\":26,"],
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_longtail-cli"))
        .args(["bench-gpu", "--partition", "1000"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--partition"));
}
