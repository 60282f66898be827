//! `longtail`: the standalone app (nice-plug standalone). Audio backends: JACK, ALSA and a
//! dummy backend that needs no audio device (`--backend dummy`); `--help` lists every option.
//! Without an editor it runs until interrupted (Ctrl+C / SIGINT).

use std::process::ExitCode;

use longtail::Longtail;
use nice_plug::prelude::nice_export_standalone;

fn main() -> ExitCode {
    if nice_export_standalone::<Longtail>() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
