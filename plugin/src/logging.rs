//! The one logger of the plugin, its libraries and the command-line tool: silent unless the
//! [`LOG_ENV`] environment variable names a destination.
//!
//! A plugin lives in its host's process, whose stdout and stderr belong to the host: nothing of
//! ours writes there in normal operation. nice-plug's own logger writes to stderr by default
//! (`NICE_LOG` only moves it), so [`crate::Longtail`] replaces it through
//! `Plugin::setup_logger`, which nice-plug calls once when the library is loaded. With
//! [`LOG_ENV`] unset no logger is installed at all: nice-plug's `nice_log!`/`nice_warn!`/
//! `nice_error!` events (`tracing`) and wgpu's records (`log`) go nowhere, and cost a relaxed
//! load each. With it set, one `tracing` subscriber takes both (the `log` records through
//! `tracing-log`) and writes them, one line each, to the destination:
//!
//! - `LONGTAIL_LOG=stderr`: the process's stderr;
//! - `LONGTAIL_LOG=/path/to/file`: appended to that file (created if needed);
//! - `LONGTAIL_LOG=off` (or empty): nothing, as when unset.
//!
//! [`LEVEL_ENV`] (`error`, `warn`, `info`, `debug` or `trace`; default `info`) sets the most
//! verbose level written. The standalone app (`longtail`) is its own process and logs to stderr
//! unless [`LOG_ENV`] says otherwise ([`init_with_default`]).
//!
//! Runs on whichever thread loads the library (a host's main or scanning thread), never on the
//! audio thread. Panics are not logged here: with a logger installed, nice-plug writes them to
//! it; without one, Rust's default hook prints them to stderr, as for any crash.

use std::sync::{Mutex, OnceLock};

use nice_plug::tracing;

/// Environment variable naming the log destination: `stderr`, a file path, or `off`.
pub const LOG_ENV: &str = "LONGTAIL_LOG";
/// Environment variable with the most verbose level written (default `info`).
pub const LEVEL_ENV: &str = "LONGTAIL_LOG_LEVEL";

/// Where log lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Nowhere: no logger is installed.
    Off,
    /// The process's stderr.
    Stderr,
    /// Appended to this file.
    File(std::path::PathBuf),
}

impl Destination {
    /// The destination a value of [`LOG_ENV`] names.
    pub fn parse(value: &str) -> Self {
        match value.trim() {
            "" | "off" | "none" | "0" => Self::Off,
            "stderr" | "1" => Self::Stderr,
            path => Self::File(path.into()),
        }
    }

    /// The destination [`LOG_ENV`] names, or `default` when it is unset.
    pub fn from_env_or(default: Self) -> Self {
        match std::env::var_os(LOG_ENV) {
            Some(value) => Self::parse(&value.to_string_lossy()),
            None => default,
        }
    }
}

/// Installs the logger [`LOG_ENV`] asks for (none when it is unset). Returns whether a logger
/// is installed. Only the first call in a process (per loaded copy of this library) acts.
pub fn init() -> bool {
    init_with_default(Destination::Off)
}

/// [`init`], with `default` where [`LOG_ENV`] is unset.
pub fn init_with_default(default: Destination) -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| install(Destination::from_env_or(default)))
}

fn install(destination: Destination) -> bool {
    use tracing_subscriber::util::SubscriberInitExt as _;
    let level = std::env::var(LEVEL_ENV)
        .ok()
        .and_then(|level| level.trim().parse().ok())
        .unwrap_or(tracing::Level::INFO);
    let builder = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_target(true);
    let installed = match destination {
        Destination::Off => return false,
        Destination::Stderr => builder.with_writer(std::io::stderr).finish().try_init(),
        Destination::File(path) => {
            let Ok(file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            else {
                // Nowhere to write: stay silent rather than write to the host's stderr.
                return false;
            };
            builder.with_writer(Mutex::new(file)).finish().try_init()
        }
    };
    installed.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse() {
        assert_eq!(Destination::parse(""), Destination::Off);
        assert_eq!(Destination::parse("off"), Destination::Off);
        assert_eq!(Destination::parse("stderr"), Destination::Stderr);
        assert_eq!(
            Destination::parse("/tmp/longtail.log"),
            Destination::File("/tmp/longtail.log".into())
        );
    }
}
