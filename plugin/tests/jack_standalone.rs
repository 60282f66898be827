//! The standalone on a real JACK server: `jackd` with its dummy driver (48 kHz, 1024-frame
//! periods; real-time scheduling where the process may use it, else jackd goes on without)
//! under a server name of its own, the standalone as a client of it (`longtail --backend jack`,
//! default settings: the Hall IR, mix 35 %), and two clients of this test (through the `jack`
//! crate, the binding nice-plug's JACK backend uses) that play a known stereo signal into it
//! and record what it outputs. The recording, aligned by cross-correlation, must match
//! `longtail-cli render` of the same signal through the same built-in IR and mix within 90 dB
//! SNR, and the server must report no xrun while it plays (xruns while clients join and the
//! graph changes are counted and printed only).
//!
//! Skipped, with a message, only when `jackd` is not installed and `CI` is not set (CI installs
//! it through `scripts/deps.sh`). Takes about 10 s, most of it real-time audio.
//!
//! Unix only: it runs `jackd` and stops processes with POSIX signals.
#![cfg(unix)]

#[path = "support/jack_server.rs"]
mod jack_server;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use jack::{AudioIn, AudioOut, Client, Control, Port, ProcessScope};
use jack_server::{Spawned, XrunCounter, connect, open_client, read, wait_for_ports};
use longtail::ir::builtin::BuiltinIr;
use longtail::ir::wav;
use longtail::params::DEFAULT_MIX;
use longtail::rng::Rng;

const STANDALONE: &str = env!("CARGO_BIN_EXE_longtail");
const CLI: &str = env!("CARGO_BIN_EXE_longtail-cli");
const RATE: u32 = 48_000;
const PERIOD: u32 = 1024;
/// Length of the test signal, and of the recording (which also catches the start of the tail).
const SIGNAL_FRAMES: usize = 3 * RATE as usize / 2;
const RECORD_FRAMES: usize = 3 * RATE as usize;
/// Largest alignment searched between the recording and the render, in frames.
const MAX_LAG: usize = 16 * PERIOD as usize;
/// Smallest acceptable agreement with `longtail-cli render`.
const MIN_SNR_DB: f64 = 90.0;
/// Attempts at a run without xruns.
const ATTEMPTS: usize = 3;

#[test]
fn standalone_on_a_jack_server_plays_what_render_renders() {
    if !jack_server::jackd_installed() {
        return;
    }
    let work_dir = std::env::temp_dir().join(format!("longtail-jack-{}", std::process::id()));
    std::fs::create_dir_all(&work_dir).unwrap();
    let server = format!("longtail-test-{}", std::process::id());
    // SAFETY: this is the only test of this binary, and no thread of its own runs yet.
    unsafe { jack_server::use_server(&server) };

    // The reference: the signal rendered offline through the standalone's default settings.
    let signal = test_signal();
    let (signal_path, ir_path, reference_path) = (
        work_dir.join("signal.wav"),
        work_dir.join("ir-hall.wav"),
        work_dir.join("reference.wav"),
    );
    wav::write_f32(&signal_path, RATE, &signal).unwrap();
    wav::write_f32(&ir_path, RATE, &BuiltinIr::Hall.generate(RATE).channels).unwrap();
    let mix = DEFAULT_MIX.to_string();
    let block = PERIOD.to_string();
    let render = Command::new(CLI)
        .args(["render", "--block", &block, "--mix", &mix, "--ir"])
        .args([&ir_path, Path::new("--input"), &signal_path])
        .args([Path::new("--output"), &reference_path])
        .output()
        .unwrap();
    assert!(render.status.success(), "{render:?}");
    let limits = longtail::ir::decode::Limits {
        max_channels: 2,
        max_seconds: None,
    };
    let reference = longtail::ir::decode::read(&reference_path, limits)
        .unwrap()
        .0
        .channels;

    // A real-time run on a shared 2-core machine can be disturbed from outside (another
    // process taking both cores for a few periods): each attempt is a fresh server and
    // standalone, and one clean attempt out of ATTEMPTS passes. Every attempt is printed.
    let mut attempts = Vec::new();
    for attempt in 1..=ATTEMPTS {
        let run = play_through_jack(&server, &work_dir, &signal);
        let (lag, snr) = align_and_compare(&run.recording, &reference);
        println!(
            "JACK attempt {attempt}: lag {lag} frames, SNR {snr:.1} dB against longtail-cli \
             render, {} xruns while playing ({} while the clients joined)",
            run.xruns, run.setup_xruns
        );
        if run.xruns == 0 && snr >= MIN_SNR_DB {
            let _ = std::fs::remove_dir_all(&work_dir);
            return;
        }
        attempts.push(format!(
            "attempt {attempt}: {} xruns, SNR {snr:.1} dB at lag {lag}\nserver log: {}\n\
             standalone log: {}",
            run.xruns, run.jackd_log, run.standalone_log
        ));
    }
    panic!(
        "no clean run in {ATTEMPTS} attempts:\n{}",
        attempts.join("\n")
    );
}

/// What one run through the JACK server gave.
struct JackRun {
    recording: [Vec<f32>; 2],
    xruns: u32,
    setup_xruns: u32,
    jackd_log: String,
    standalone_log: String,
}

/// Starts a JACK server, the player, the standalone and the recorder, in that order, plays
/// `signal` through the standalone and records it.
fn play_through_jack(server: &str, work_dir: &Path, signal: &[Vec<f32>]) -> JackRun {
    let signal = signal.to_vec();
    let jackd_log = work_dir.join("jackd.log");
    let _jackd = jack_server::start_jackd(server, RATE, PERIOD, &jackd_log);
    let start = Arc::new(AtomicBool::new(false));
    let xruns = Arc::new(AtomicU32::new(0));
    let player = open_client("longtail-test-player", &jackd_log);
    let player_ports = [
        player.register_port("out_l", AudioOut::default()).unwrap(),
        player.register_port("out_r", AudioOut::default()).unwrap(),
    ];
    let player_names = player_ports.each_ref().map(|p| p.name().unwrap());
    let player = player
        .activate_async(
            XrunCounter(Arc::clone(&xruns)),
            Player {
                ports: player_ports,
                signal: signal.clone(),
                position: 0,
                start: Arc::clone(&start),
            },
        )
        .unwrap();

    let standalone_log = work_dir.join("standalone.log");
    let mut standalone = Spawned::new(
        Command::new(STANDALONE)
            .args(["--headless", "--backend", "jack", "--connect-jack-inputs"])
            .arg(player_names.join(","))
            .env_remove("DISPLAY"),
        &standalone_log,
    );
    let recorder = open_client("longtail-test-recorder", &jackd_log);
    let recorder_ports = [
        recorder.register_port("in_l", AudioIn::default()).unwrap(),
        recorder.register_port("in_r", AudioIn::default()).unwrap(),
    ];
    let recorder_names = recorder_ports.each_ref().map(|p| p.name().unwrap());
    let outputs = ["longtail:output_1", "longtail:output_2"];
    wait_for_ports(&recorder, &outputs, &mut standalone, &standalone_log);
    let recorder = recorder
        .activate_async(
            XrunCounter(Arc::clone(&xruns)),
            Recorder {
                ports: recorder_ports,
                recording: [
                    Vec::with_capacity(RECORD_FRAMES),
                    Vec::with_capacity(RECORD_FRAMES),
                ],
                start: Arc::clone(&start),
            },
        )
        .unwrap();
    // The standalone's ports exist before its client is active; connections wait for that.
    for (output, input) in outputs.iter().zip(&recorder_names) {
        connect(recorder.as_client(), output, input);
    }
    // The standalone connects its inputs right after it activates; give the graph a moment.
    std::thread::sleep(Duration::from_millis(500));
    let connected = player_names.iter().all(|name| {
        let port = player.as_client().port_by_name(name).unwrap();
        port.get_connections().len() == 1
    });
    assert!(connected, "the standalone did not connect its inputs");

    // Xruns while clients join and the graph changes are the server's business; from here on,
    // with the graph settled, there must be none.
    let setup_xruns = xruns.swap(0, Ordering::SeqCst);
    start.store(true, Ordering::SeqCst);
    let audio_seconds = RECORD_FRAMES as f64 / f64::from(RATE);
    std::thread::sleep(Duration::from_secs_f64(audio_seconds + 0.5));
    let (_, _, recorder) = recorder.deactivate().unwrap();
    let recording = recorder.recording;
    assert_eq!(
        recording[0].len(),
        RECORD_FRAMES,
        "frames recorded in {:.1} s of audio",
        audio_seconds + 0.5
    );
    drop(player.deactivate());
    assert!(
        standalone.is_running(),
        "the standalone exited: {}",
        read(&standalone_log)
    );
    standalone.stop();

    let xruns = xruns.load(Ordering::SeqCst);
    JackRun {
        recording,
        xruns,
        setup_xruns,
        jackd_log: read(&jackd_log),
        standalone_log: read(&standalone_log),
    }
}

/// Seeded stereo noise in bursts at several levels, a few clicks, and silence at the end.
fn test_signal() -> Vec<Vec<f32>> {
    let mut rng = Rng::new(2024);
    let mut channels = vec![vec![0.0f32; SIGNAL_FRAMES]; 2];
    let burst = RATE as usize / 5;
    for (burst_idx, level) in [0.3f32, 0.05, 0.5].into_iter().enumerate() {
        let start = burst_idx * 2 * burst;
        let (left, right) = channels.split_at_mut(1);
        for (l, r) in left[0][start..start + burst]
            .iter_mut()
            .zip(&mut right[0][start..start + burst])
        {
            *l = level * rng.bipolar();
            *r = level * rng.bipolar();
        }
    }
    for click in [6 * burst + 100, 6 * burst + 4_000] {
        channels[0][click] = 0.8;
        channels[1][click + 7] = -0.6;
    }
    channels
}

/// The lag (frames the recording is behind the reference) with the largest cross-correlation,
/// and the SNR of the recording against the reference at that lag, over the recording.
fn align_and_compare(recording: &[Vec<f32>; 2], reference: &[Vec<f32>]) -> (usize, f64) {
    let window = RECORD_FRAMES - MAX_LAG;
    let correlation = |lag: usize| -> f64 {
        (0..2)
            .map(|channel| {
                recording[channel][lag..lag + window]
                    .iter()
                    .zip(&reference[channel][..window])
                    .map(|(&a, &b)| f64::from(a) * f64::from(b))
                    .sum::<f64>()
            })
            .sum()
    };
    let lag = (0..MAX_LAG)
        .max_by(|&a, &b| correlation(a).total_cmp(&correlation(b)))
        .unwrap();
    let (mut signal, mut noise) = (0.0, 0.0);
    for channel in 0..2 {
        for (&actual, &expected) in recording[channel][lag..].iter().zip(&reference[channel]) {
            signal += f64::from(expected).powi(2);
            noise += (f64::from(actual) - f64::from(expected)).powi(2);
        }
    }
    (lag, 10.0 * (signal / noise.max(f64::MIN_POSITIVE)).log10())
}

/// Plays the signal once `start` is set, then silence.
struct Player {
    ports: [Port<AudioOut>; 2],
    signal: Vec<Vec<f32>>,
    position: usize,
    start: Arc<AtomicBool>,
}

impl jack::ProcessHandler for Player {
    fn process(&mut self, _: &Client, scope: &ProcessScope) -> Control {
        let playing = self.start.load(Ordering::Relaxed);
        let mut end = self.position;
        for (port, channel) in self.ports.iter_mut().zip(&self.signal) {
            let out = port.as_mut_slice(scope);
            out.fill(0.0);
            if playing {
                let available = &channel[self.position.min(channel.len())..];
                let len = available.len().min(out.len());
                out[..len].copy_from_slice(&available[..len]);
                end = self.position + out.len();
            }
        }
        self.position = end;
        Control::Continue
    }
}

/// Records both inputs once `start` is set, up to [`RECORD_FRAMES`].
struct Recorder {
    ports: [Port<AudioIn>; 2],
    recording: [Vec<f32>; 2],
    start: Arc<AtomicBool>,
}

impl jack::ProcessHandler for Recorder {
    fn process(&mut self, _: &Client, scope: &ProcessScope) -> Control {
        if self.start.load(Ordering::Relaxed) {
            for (port, recording) in self.ports.iter().zip(&mut self.recording) {
                let room = RECORD_FRAMES - recording.len();
                let input = port.as_slice(scope);
                // Within the capacity reserved up front: no allocation here.
                recording.extend_from_slice(&input[..input.len().min(room)]);
            }
        }
        Control::Continue
    }
}
