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
//! Then it does what a host does on removal, rescans and in sandboxes, [`CYCLES`] times: loads
//! the library, instantiates the plugin, opens the editor and closes it at once, destroys the
//! instance and unloads the library, and after each unload finds no thread named `longtail-*`
//! left in `/proc/self/task` (every thread the library starts is joined before its last instance
//! is gone; `plugin/src/editor/threads.rs`). Some cycles run beside a busy thread (a loaded machine),
//! some change the IR while the editor's preview is being made, some activate the plugin and
//! process a block (the engine's threads come and go too).
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
#[path = "../clap_host/machine.rs"]
#[expect(dead_code, reason = "the editor test has no pacing test to run alone")]
mod machine;

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

/// Load, open, close, destroy and unload cycles; `LONGTAIL_EDITOR_CYCLES` sets another count
/// (a stress run).
const CYCLES: usize = 200;
/// How long a joined thread may still be listed in `/proc/self/task`: far less than any work a
/// helper thread of the plugin does (a preview takes tens of milliseconds).
const TASK_EXIT_GRACE: Duration = Duration::from_millis(5);
/// The "Impulse response" parameter's value for the Cathedral (10 s), whose preview takes
/// longest (nice-plug exposes an enum parameter as its index).
const IR_CATHEDRAL: f64 = 3.0;

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

/// The threads of this process whose name starts with `longtail-`.
fn longtail_threads() -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .filter(|name| name.starts_with("longtail-"))
        .collect()
}

/// A thread that keeps one core busy until dropped.
struct Busy {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("busy".into())
            .spawn(move || {
                let mut x = 1u64;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005) | 1);
                }
            })
            .expect("the busy thread starts");
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opens the editor of `host`'s instance embedded in `root`, runs `while_open`, and closes it.
fn with_editor(host: &mut TestHost, root: u64, while_open: impl FnOnce(&mut TestHost)) {
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
    while_open(host);
    let plugin = host.instance.plugin_handle();
    gui.hide(&plugin).expect("the editor hides");
    gui.destroy(&plugin);
}

/// The load, open, close, destroy and unload cycles (see the module docs).
fn load_and_unload_cycles(root: u64, probe: &Path) {
    let cycles = std::env::var("LONGTAIL_EDITOR_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CYCLES);
    let start = Instant::now();
    let input = vec![0.25f32; MAX_BLOCK as usize];
    let library = longtail_tests::plugin_library();
    let library = std::fs::canonicalize(&library).unwrap_or(library);
    let mut still_mapped = 0;
    let mut slowest_exit = Duration::ZERO;
    for cycle in 0..cycles {
        let busy = (cycle % 4 >= 2).then(Busy::start);
        let _ = std::fs::remove_file(probe);
        let mut host = TestHost::new();
        with_editor(&mut host, root, |host| {
            if cycle % 3 == 1 {
                // The first frame starts the preview of the default IR; the change starts the
                // Cathedral's as soon as that one ends, and the editor closes meanwhile.
                let shown = Instant::now();
                while !probe.exists() {
                    assert!(shown.elapsed() < PATIENCE, "cycle {cycle}: no frame drawn");
                    std::thread::sleep(Duration::from_millis(5));
                }
                let ir = host.param("Impulse response");
                host.flush(&[(ir, IR_CATHEDRAL)]);
            }
        });
        if cycle % 5 == 4 {
            host.activate(MAX_BLOCK);
            let run = host.process([&input, &input], &[MAX_BLOCK as usize], &[]);
            assert!(run.outputs.iter().flatten().all(|s| s.is_finite()));
        }
        drop(host);
        drop(busy);
        // The kernel wakes a thread's joiner a moment before it removes the thread from
        // /proc/self/task; a thread still working after this grace was not joined.
        let unloaded = Instant::now();
        let mut left = longtail_threads();
        while !left.is_empty() && unloaded.elapsed() < TASK_EXIT_GRACE {
            std::thread::sleep(Duration::from_micros(100));
            left = longtail_threads();
        }
        slowest_exit = slowest_exit.max(unloaded.elapsed());
        assert!(
            left.is_empty(),
            "cycle {cycle}: threads left after the library was unloaded: {left:?}"
        );
        // Whether the loader really unmapped it (it keeps a library mapped while a thread has
        // thread-local destructors of it pending, or once it is pinned): for the record.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        if maps.contains(&*library.to_string_lossy()) {
            still_mapped += 1;
        }
    }
    println!(
        "clap_editor: {cycles} cycles of load, editor open and close, destroy and unload in \
         {:.1} s; no longtail-* thread left after any (the slowest gone from /proc after \
         {slowest_exit:?}); the library stayed mapped after {still_mapped} of the unloads",
        start.elapsed().as_secs_f64()
    );
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
    let mut result = Err(String::new());
    with_editor(&mut host, root, |host| {
        host.activate(MAX_BLOCK);
        result = meters_shown(host, &probe);
    });
    host.deactivate();
    drop(host);
    let probe_shown = match result {
        Ok(probe) => probe,
        Err(message) => panic!("{message}"),
    };
    for side in ["in", "out"] {
        println!(
            "clap_editor: {side} meter (peak, RMS dBFS): {:?}",
            meter_levels(&probe_shown, side)
        );
    }
    println!(
        "clap_editor: ok, the editor's meters read a -6 and a -20 dBFS sine within 0.01 dB \
         (peak) and 0.1 dB (RMS); process() ran under assert_process_allocs with the editor open"
    );
    load_and_unload_cycles(root, &probe);
    display.outlive();
}

/// Plays the signal through the active `host` until the editor's meters (read through `probe`)
/// show it, or [`PATIENCE`] runs out.
fn meters_shown(host: &mut TestHost, probe: &Path) -> Result<serde_json::Value, String> {
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
    loop {
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
        let shown = read_probe(probe);
        match shown.as_ref().map(meters_miss) {
            Some(None) => return Ok(shown.expect("read")),
            miss if start.elapsed() > PATIENCE => {
                return Err(format!("the meters never showed the signal: {miss:?}"));
            }
            _ => {}
        }
    }
}
