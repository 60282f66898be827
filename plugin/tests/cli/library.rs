//! `ir-list`: the IR library's listing, as lines and as JSON, with its refusals.

use super::*;

/// Files in nested folders list with their header's fields, a broken one with its reason, a
/// symlink loop once; a folder that does not exist fails the command with one line.
#[test]
fn ir_list_lists_headers_and_reasons() {
    let dir = temp_dir("ir-list");
    std::fs::create_dir_all(dir.join("halls/big")).unwrap();
    write_float_wav(&dir.join("room.wav"), 44_100, &[noise(4410, 1, 0.5)]);
    write_float_wav(
        &dir.join("halls/big/hall.wav"),
        48_000,
        &[noise(96_000, 2, 0.5), noise(96_000, 3, 0.5)],
    );
    std::fs::write(dir.join("halls/broken.flac"), b"fLaC not really").unwrap();
    std::fs::write(dir.join("halls/readme.txt"), b"not listed").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&dir, dir.join("halls/loop")).unwrap();
    let folder = dir.to_str().unwrap();
    let stdout = cli_stdout(&["ir-list", folder, "--json"]);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["hall.wav", "broken.flac", "room.wav"], "{stdout}");
    let hall = &lines[0];
    assert_eq!(hall["channels"], 2);
    assert_eq!(hall["sample_rate"], 48_000);
    assert_eq!(hall["frames"], 96_000);
    assert_eq!(hall["seconds"], 2.0);
    assert_eq!(hall["folder"], folder);
    let error = lines[1]["error"].as_str().expect("a reason");
    assert!(
        error.contains("broken.flac") && !error.contains('\n'),
        "{error}"
    );
    assert!(lines[1].get("channels").is_none());

    let text = cli_stdout(&["ir-list", folder]);
    assert!(text.contains("room.wav\t1 ch\t0.100 s\t44100 Hz"), "{text}");
    assert!(text.contains("broken.flac\trefused: "), "{text}");

    let missing = dir.join("missing");
    let result = cli(&["ir-list", missing.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(!result.status.success());
    assert!(
        stderr.contains("cannot read") && stderr.contains("missing"),
        "{stderr}"
    );
}

/// Without folders, `ir-list` scans the library's: those of the settings file the editor uses
/// (here LONGTAIL_CONFIG_DIR's), and refuses a settings file from a newer version, naming it.
#[test]
fn ir_list_without_folders_lists_the_librarys() {
    let dir = temp_dir("ir-list-library");
    let irs = dir.join("irs");
    std::fs::create_dir_all(&irs).unwrap();
    write_float_wav(&irs.join("plate.wav"), 48_000, &[noise(480, 4, 0.5)]);
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let settings = serde_json::json!({"version": 1, "folders": [irs], "favourites": []});
    std::fs::write(config.join("library.json"), settings.to_string()).unwrap();
    let listed = Command::new(CLI)
        .arg("ir-list")
        .env("LONGTAIL_CONFIG_DIR", &config)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{listed:?}");
    assert!(
        stdout.contains("plate.wav\t1 ch\t0.010 s\t48000 Hz"),
        "{stdout}"
    );

    std::fs::write(
        config.join("library.json"),
        r#"{"version": 99, "folders": []}"#,
    )
    .unwrap();
    let refused = Command::new(CLI)
        .arg("ir-list")
        .env("LONGTAIL_CONFIG_DIR", &config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("library.json"), "{stderr}");
}
