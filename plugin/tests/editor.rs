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
    // The buses past stereo: 7.1.4 (the 12 -> 12 layout) and first-order Ambisonics (4 -> 4
    // read as Ambisonics), in a window big enough for the grid of paths. The standalone counts
    // its layouts from 1.
    let layout = |inputs: u32, outputs: u32| {
        longtail::layouts::AUDIO_IO_LAYOUTS
            .iter()
            .position(|l| {
                l.main_input_channels.map(|c| c.get()) == Some(inputs)
                    && l.main_output_channels.map(|c| c.get()) == Some(outputs)
            })
            .map(|idx| (idx + 1).to_string())
            .expect("an offered layout")
    };
    let (surround, foa) = (layout(12, 12), layout(4, 4));
    for (tab, view, name, bus, format) in [
        ("reverb", "waveform", "editor-screenshot.png", None, "auto"),
        (
            "reverb",
            "spectrogram",
            "editor-spectrogram.png",
            None,
            "auto",
        ),
        ("engine", "waveform", "editor-engine.png", None, "auto"),
        ("thermal", "waveform", "editor-thermal.png", None, "auto"),
        (
            "reverb",
            "waveform",
            "editor-7.1.4.png",
            Some(&surround),
            "auto",
        ),
        (
            "reverb",
            "waveform",
            "editor-ambisonics-1.png",
            Some(&foa),
            "ambisonics",
        ),
    ] {
        let png = dir.join(name);
        let mut command = Command::new("bash");
        command
            .arg(&script)
            .arg(&standalone)
            .arg(&png)
            .arg("4")
            .env("LONGTAIL_EDITOR_TAB", tab)
            .env("LONGTAIL_EDITOR_IR_VIEW", view)
            .env("LONGTAIL_EDITOR_FORMAT", format);
        if let Some(bus) = bus {
            command
                .env("LONGTAIL_STANDALONE_ARGS", format!("--audio-layout {bus}"))
                .env("LONGTAIL_EDITOR_SIZE", "760x900");
        }
        let output = command.output().expect("run the screenshot script");
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
