//! The standalone app runs headless on nice-plug's dummy audio backend, processes audio through
//! the plugin, and stops cleanly on SIGINT.
//!
//! Unix only: SIGINT is a POSIX signal. On Windows scripts/windows.sh checks that the standalone
//! starts headless on the dummy backend and keeps running.
#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STANDALONE: &str = env!("CARGO_BIN_EXE_longtail");

#[test]
fn runs_headless_on_the_dummy_backend_and_stops_on_sigint() {
    let mut child = Command::new(STANDALONE)
        .args([
            "--headless",
            "--backend",
            "dummy",
            "--sample-rate",
            "48000",
            "--period-size",
            "128",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the standalone");

    // It must still be running (processing audio) after a while.
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the standalone exited on its own"
    );

    // SAFETY: sending a signal to our own child process.
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the standalone did not stop within 20 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(status.success(), "exit status {status:?}: {log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(!log.to_lowercase().contains("error"), "{log}");
}
