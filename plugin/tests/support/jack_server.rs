//! What the tests on a real JACK server share (`jack_standalone.rs`, `jack_capture.rs`): the
//! check that `jackd` is there, a server of the test's own (the dummy driver), the test's
//! clients of it (through the `jack` crate, the binding nice-plug's JACK backend uses), the
//! wait for the standalone's ports and the connections to them, and child processes stopped
//! with POSIX signals. Unix only.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use jack::{Client, ClientOptions};

/// How long any step may take before the test gives up.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Whether `jackd` is installed. Where it is not, fails under CI (`scripts/deps.sh` installs
/// it) and elsewhere prints that the test is skipped.
pub fn jackd_installed() -> bool {
    if Command::new("jackd").arg("--version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "jackd is not installed, and CI must run this test (scripts/deps.sh installs jackd2)"
    );
    eprintln!("skipped: jackd is not installed (apt-get install jackd2)");
    false
}

/// Points libjack at `server`, for the test's clients and the processes it starts.
///
/// # Safety
///
/// Call before the test starts any thread of its own, with no other test in the binary:
/// it sets environment variables, which libjack reads when a client opens.
pub unsafe fn use_server(server: &str) {
    // SAFETY: the caller's promise: no other thread runs yet.
    unsafe {
        std::env::set_var("JACK_DEFAULT_SERVER", server);
        std::env::set_var("JACK_NO_AUDIO_RESERVATION", "1");
    }
}

/// `jackd` with its dummy driver at `rate` and `period`, as `server`, its output in `log`
/// (real-time scheduling where the process may use it, else jackd goes on without).
pub fn start_jackd(server: &str, rate: u32, period: u32, log: &Path) -> Spawned {
    Spawned::new(
        Command::new("jackd")
            .args(["-n", server, "--realtime", "-d", "dummy"])
            .args(["-r", &rate.to_string(), "-p", &period.to_string()])
            .args(["-C", "2", "-P", "2"]),
        log,
    )
}

/// Opens a client of the test's server, waiting for the server to come up.
pub fn open_client(name: &str, jackd_log: &Path) -> Client {
    let started = Instant::now();
    loop {
        match Client::new(name, ClientOptions::NO_START_SERVER) {
            Ok((client, _)) => return client,
            Err(err) if started.elapsed() > PATIENCE => {
                panic!(
                    "cannot open JACK client {name}: {err}; jackd: {}",
                    read(jackd_log)
                )
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Waits until every port of `names` exists (the standalone registers them before its client
/// is active); fails if the standalone exits first.
pub fn wait_for_ports(client: &Client, names: &[&str], standalone: &mut Spawned, log: &Path) {
    let started = Instant::now();
    while !names.iter().all(|name| client.port_by_name(name).is_some()) {
        assert!(
            standalone.is_running(),
            "the standalone exited: {}",
            read(log)
        );
        assert!(
            started.elapsed() < PATIENCE,
            "the standalone registered no ports {names:?} (the server has {:?}): {}",
            client.ports(None, None, jack::PortFlags::empty()),
            read(log)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Connects `output` to `input`, retrying while the standalone's client is not active yet
/// (JACK2 connects only the ports of active clients).
pub fn connect(client: &Client, output: &str, input: &str) {
    let started = Instant::now();
    while let Err(err) = client.connect_ports_by_name(output, input) {
        assert!(
            started.elapsed() < PATIENCE,
            "cannot connect {output} to {input}: {err}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The file at `path`, or nothing.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Counts the xruns the server reports to a client.
pub struct XrunCounter(pub Arc<AtomicU32>);

impl jack::NotificationHandler for XrunCounter {
    fn xrun(&mut self, _: &Client) -> jack::Control {
        self.0.fetch_add(1, Ordering::SeqCst);
        jack::Control::Continue
    }
}

/// A child process with its output in a log file, stopped (SIGTERM, then SIGKILL) on drop.
pub struct Spawned {
    child: Child,
}

impl Spawned {
    pub fn new(command: &mut Command, log: &Path) -> Self {
        let file = std::fs::File::create(log).unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {command:?}: {err}"));
        Self { child }
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// SIGINT (the standalone's Ctrl+C), then SIGKILL after 10 s.
    pub fn stop(&mut self) {
        self.signal_and_wait(libc::SIGINT);
    }

    fn signal_and_wait(&mut self, signal: libc::c_int) {
        if !self.is_running() {
            return;
        }
        // SAFETY: sending a signal to our own child process.
        unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.signal_and_wait(libc::SIGTERM);
    }
}
