//! `longtail`: the standalone app (nice-plug standalone). Audio backends: JACK, ALSA and a
//! dummy backend that needs no audio device (`--backend dummy`); `--help` lists every option.
//! It opens the editor in a window and runs until the window is closed or the process is
//! interrupted (Ctrl+C / SIGINT); `--headless` runs without the editor (no display needed).
//! `--capture` and its `--capture-*` settings measure a room once the audio runs and save the IR
//! into the library's first folder (`capture::live::autostart`); both are Longtail's own flags,
//! taken out before nice-plug parses the rest.

// Proving the plugin's types `Send`/`Sync` goes through wgpu's deep types (as in lib.rs).
#![recursion_limit = "256"]

use std::process::ExitCode;

use longtail::Longtail;
use nice_plug::prelude::nice_export_standalone_with_args;

fn main() -> ExitCode {
    // The standalone's own process: its log goes to stderr unless LONGTAIL_LOG says otherwise.
    longtail::logging::init_with_default(longtail::logging::Destination::Stderr);
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(idx) = args.iter().position(|arg| arg == "--headless") {
        args.remove(idx);
        longtail::editor::HEADLESS.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if let Err(message) = longtail::capture::live::autostart::strip_args(&mut args) {
        eprintln!("error: {message}");
        return ExitCode::FAILURE;
    }
    if args.iter().any(|arg| arg == "--help" || arg == "-h") {
        println!(
            "Longtail standalone. Longtail's own options:\n  --headless             run without the editor window (no display needed)\n{}\n",
            longtail::capture::live::autostart::HELP
        );
    }
    if nice_export_standalone_with_args::<Longtail, _>(args) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
