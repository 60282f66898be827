//! The editor inside a real CLAP host, with the meters running under `assert_process_allocs`.
//!
//! The CLAP test host (`clap_host/host.rs`, shared) loads the plugin library built with
//! nice-plug's `assert_process_allocs`, opens its editor through the CLAP gui extension (X11,
//! embedded into the root window of a private Xvfb display) and processes a known signal while
//! the editor runs: a -6 dBFS 1 kHz sine on the left input, a -20 dBFS 440 Hz sine on the right,
//! the mix fully dry so the output carries the same levels. Any allocation in `process()`
//! aborts this binary. The editor's probe (`LONGTAIL_EDITOR_PROBE`, see
//! `plugin/src/editor/probe.rs`) records what its meters show, and the test holds them to the
//! signal: each channel's held sample peak within 0.01 dB of the sine's amplitude, its RMS
//! within 0.1 dB of the amplitude less 3.01 dB, on the input and the output meters.
//!
//! Its own binary with its own `main()` (no libtest harness): it starts Xvfb and sets DISPLAY
//! (which the plugin's window reads) while this is the only thread. Skipped with a message when
//! Xvfb is missing, except under CI (`CI` set), where that is a failure.

#[path = "../clap_host/host.rs"]
#[expect(
    dead_code,
    reason = "the editor test uses a part of the shared CLAP host"
)]
mod host;

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use clack_extensions::gui::{GuiApiType, GuiConfiguration, PluginGui, Window};
use host::*;

const PLUGIN_ID: &CStr = c"audio.longtail.convolver";
const SAMPLE_RATE: u32 = 48_000;
const MAX_BLOCK: u32 = 512;
/// How long the test waits for the editor's meters to show the signal before it fails. Not a
/// performance bound: only a guard against waiting forever.
const PATIENCE: Duration = Duration::from_secs(60);

/// The signal: per input channel, the sine's frequency and amplitude.
const SINES: [(f32, f32); 2] = [(1000.0, 0.5), (440.0, 0.1)];

/// Xvfb on a display it picks itself, killed on drop, or when this process has ended
/// ([`Display::outlive`]).
struct Display {
    server: Child,
    dir: PathBuf,
}

impl Display {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("longtail-clap-editor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let number = dir.join("display");
        // A watchdog shell: it stops Xvfb when this process ends, even by an abort (an
        // allocation in process() under assert_process_allocs), which runs no destructor.
        let server = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "Xvfb -displayfd 3 -screen 0 1600x1100x24 -nolisten tcp -noreset 3>'{}' & \
                 xvfb=$!; trap 'kill $xvfb' TERM; \
                 while kill -0 {} 2>/dev/null && kill -0 $xvfb 2>/dev/null; do sleep 0.3; done; \
                 kill $xvfb 2>/dev/null",
                number.display(),
                std::process::id()
            ))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let start = Instant::now();
        while std::fs::read_to_string(&number).map_or(true, |n| n.trim().is_empty()) {
            assert!(
                start.elapsed() < PATIENCE,
                "Xvfb did not report its display"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { server, dir }
    }

    /// Leaves the server to the watchdog, which stops it once this process has ended. The
    /// editor's X connection may outlive `destroy` on the windowing library's own thread, and
    /// Xlib ends a process whose server went away first with status 1 ("X connection to :0
    /// broken"), even after every check passed.
    fn outlive(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        std::mem::forget(self);
    }

    fn name(&self) -> String {
        let number = std::fs::read_to_string(self.dir.join("display")).expect("display number");
        format!(":{}", number.trim())
    }

    /// The root window's id (`xwininfo -root`: "Window id: 0x25d (the root window)").
    fn root_window(&self) -> u64 {
        let output = Command::new("xwininfo")
            .args(["-root", "-display", &self.name()])
            .output()
            .expect("xwininfo runs");
        let text = String::from_utf8_lossy(&output.stdout);
        let id = text
            .split_whitespace()
            .skip_while(|word| *word != "id:")
            .nth(1)
            .expect("xwininfo names the root window");
        u64::from_str_radix(id.trim_start_matches("0x"), 16).expect("a hexadecimal window id")
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        // SIGTERM: the watchdog's trap stops Xvfb.
        let _ = Command::new("kill")
            .arg(self.server.id().to_string())
            .status();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tool_present(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn read_probe(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Each channel's (peak, RMS) in dBFS as the editor's meter of `side` shows them.
fn meter_levels(probe: &serde_json::Value, side: &str) -> Vec<(f64, f64)> {
    let meter = &probe["meters"][side];
    let list = |key: &str| -> Vec<f64> {
        meter[key]
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .filter_map(serde_json::Value::as_f64)
                    .collect()
            })
            .unwrap_or_default()
    };
    list("peak_db").into_iter().zip(list("rms_db")).collect()
}

/// How far the meters of `probe` are from the signal's levels, as the first failure.
fn meters_miss(probe: &serde_json::Value) -> Option<String> {
    for side in ["in", "out"] {
        let levels = meter_levels(probe, side);
        if levels.len() != SINES.len() {
            return Some(format!("{side}: {} channels metered", levels.len()));
        }
        for (channel, (&(peak, rms), &(_, amplitude))) in levels.iter().zip(&SINES).enumerate() {
            let expect_peak = 20.0 * f64::from(amplitude).log10();
            let expect_rms = expect_peak + 20.0 * std::f64::consts::FRAC_1_SQRT_2.log10();
            if (peak - expect_peak).abs() > 0.01 || (rms - expect_rms).abs() > 0.1 {
                return Some(format!(
                    "{side} {channel}: peak {peak:.3} dB (want {expect_peak:.3}), RMS {rms:.3} dB \
                     (want {expect_rms:.3})"
                ));
            }
        }
    }
    None
}

fn main() {
    for tool in ["Xvfb", "xwininfo"] {
        if !tool_present(tool) {
            assert!(
                std::env::var_os("CI").is_none(),
                "missing {tool} under CI (scripts/deps.sh installs it)"
            );
            println!("clap_editor: skipped, {tool} is missing");
            return;
        }
    }
    let display = Display::start();
    let probe = display.dir.join("probe.json");
    // SAFETY: the only thread of this process so far (no test harness, nothing spawned yet)
    // sets the variables; every thread started later only reads them.
    unsafe {
        std::env::set_var("DISPLAY", display.name());
        std::env::set_var("LONGTAIL_EDITOR_PROBE", &probe);
        std::env::set_var("LONGTAIL_EDITOR_TAB", "reverb");
    }
    let root = display.root_window();

    let mut host = TestHost::new();
    let mix = host.param("Mix");
    host.flush(&[(mix, 0.0)]);
    let gui = host
        .instance
        .plugin_shared_handle()
        .get_extension::<PluginGui>()
        .expect("the plugin implements the gui extension");
    let x11 = GuiConfiguration {
        api_type: GuiApiType::X11,
        is_floating: false,
    };
    {
        let plugin = host.instance.plugin_handle();
        assert!(gui.is_api_supported(&plugin, x11), "X11 embedding offered");
        gui.create(&plugin, x11).expect("the editor is created");
        // SAFETY: `root` is the root window of the display the plugin connects to, alive until
        // the display is dropped, after the editor is destroyed below.
        unsafe { gui.set_parent(&plugin, Window::from_x11_handle(root as _)) }
            .expect("the editor takes the window");
        gui.show(&plugin).expect("the editor shows");
    }
    host.activate(MAX_BLOCK);

    // Half a second of the signal at a time, ragged blocks, until the editor's meters show it.
    let block = SAMPLE_RATE as usize / 2;
    let sizes: Vec<usize> = [64usize, 1, 511, 128, 300, 7]
        .iter()
        .cycle()
        .scan(0usize, |done, &size| {
            let size = size.min(block - *done);
            *done += size;
            (size > 0).then_some(size)
        })
        .collect();
    let mut position = 0usize;
    let start = Instant::now();
    let result = loop {
        let input: Vec<Vec<f32>> = SINES
            .iter()
            .map(|&(hz, amplitude)| {
                (position..position + block)
                    .map(|n| {
                        let t = n as f32 / SAMPLE_RATE as f32;
                        amplitude * (std::f32::consts::TAU * hz * t).sin()
                    })
                    .collect()
            })
            .collect();
        let run = host.process([&input[0], &input[1]], &sizes, &[]);
        assert!(run.outputs.iter().flatten().all(|s| s.is_finite()));
        position += block;
        // The editor repaints every 250 ms; give it one frame after each half second.
        std::thread::sleep(Duration::from_millis(300));
        let shown = read_probe(&probe);
        match shown.as_ref().map(meters_miss) {
            Some(None) => break Ok(shown.expect("read")),
            miss if start.elapsed() > PATIENCE => {
                break Err(format!("the meters never showed the signal: {miss:?}"));
            }
            _ => {}
        }
    };
    {
        let plugin = host.instance.plugin_handle();
        gui.hide(&plugin).expect("the editor hides");
        gui.destroy(&plugin);
    }
    host.deactivate();
    drop(host);
    match result {
        Ok(probe) => {
            for side in ["in", "out"] {
                println!(
                    "clap_editor: {side} meter (peak, RMS dBFS): {:?}",
                    meter_levels(&probe, side)
                );
            }
            println!(
                "clap_editor: ok, the editor's meters read a -6 and a -20 dBFS sine within \
                 0.01 dB (peak) and 0.1 dB (RMS); process() ran under assert_process_allocs \
                 with the editor open"
            );
            display.outlive();
        }
        Err(message) => panic!("{message}"),
    }
}
