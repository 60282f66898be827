//! The editor under Xvfb: the standalone opens its window and draws it. The screenshot is kept
//! (its path is printed) so CI logs point at it. Skipped with a message when Xvfb or ImageMagick
//! is missing, except under CI (`CI` set), where that is a failure.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_standalone_draws_its_editor_under_xvfb() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/editor-screenshot.sh");
    let missing: Vec<&str> = ["Xvfb", "xwininfo", "import", "identify"]
        .into_iter()
        .filter(|tool| {
            !Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    if !missing.is_empty() {
        assert!(
            std::env::var_os("CI").is_none(),
            "missing tools under CI: {missing:?} (scripts/deps.sh installs them)"
        );
        eprintln!("skipped: missing {missing:?}");
        return;
    }
    // target/<profile>/editor-screenshot.png, next to the binaries; then the spectrogram view
    // and the other tabs.
    let standalone = PathBuf::from(env!("CARGO_BIN_EXE_longtail"));
    let dir = standalone.parent().expect("binary directory");
    for (tab, view, name) in [
        ("reverb", "waveform", "editor-screenshot.png"),
        ("reverb", "spectrogram", "editor-spectrogram.png"),
        ("engine", "waveform", "editor-engine.png"),
        ("thermal", "waveform", "editor-thermal.png"),
    ] {
        let png = dir.join(name);
        let output = Command::new("bash")
            .arg(&script)
            .arg(&standalone)
            .arg(&png)
            .arg("4")
            .env("LONGTAIL_EDITOR_TAB", tab)
            .env("LONGTAIL_EDITOR_IR_VIEW", view)
            .output()
            .expect("run the screenshot script");
        let stdout = String::from_utf8_lossy(&output.stdout);
        println!("{stdout}");
        assert!(
            output.status.success(),
            "{name}: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        println!(
            "editor screenshot ({tab} tab, {view}) saved at {}",
            png.display()
        );
        let size = std::fs::metadata(&png).expect("screenshot written").len();
        assert!(
            size > 10_000,
            "{name}: a drawn editor compresses to more than 10 kB, got {size}"
        );
    }
}
