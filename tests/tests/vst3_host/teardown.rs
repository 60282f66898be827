//! Instances released right after tasks were posted to nice-plug's shared task thread.
//!
//! nice-plug's VST3 wrapper runs every task posted off the thread that created an instance (a
//! parameter change's notice to the editor, a latency change's `restartComponent`) on one
//! background thread that every instance of the process shares (on Linux; elsewhere the host's
//! message loop takes the GUI tasks). That thread ends for good when it meets a task whose
//! instance is gone: every later task of the living instances is lost, and the last instance's
//! release then aborts the host (nice-plug 0.4.2's `WorkerThread::drop` panics inside
//! `extern "C"`). pluginval met it 1 run in 7. The plugin's `deactivate()` now drains its tasks
//! before it returns (`longtail::host::fence`).
//!
//! These tests post many tasks from other threads than the creating one: parameter automation
//! and a latency change through `process()`, as a host's audio thread makes them, in random
//! order; then, once processing has stopped, parameter changes through the controller. Then
//! they deactivate and release the instance at once, for many cycles:
//!
//! - one instance at a time: no abort, and every latency change posted before
//!   `setActive(false)` has reached the host when that call returns;
//! - beside a living instance: the same, and the living one's latency changes still reach the
//!   host after each release.
//!
//! An abort kills the process, so each runs in a child process of its own.
//!
//! Linux only: there nice-plug sends a task posted off the creating thread to its shared
//! thread. On Windows (and macOS) it goes to the creating thread's message loop, which this host
//! does not pump (a latency change reaches a host there through its own loop), and no shared
//! thread can end on a stale task.

use std::time::{Duration, Instant};

use longtail::rng::Rng;
use longtail_tests::{RNG_SEED, run_test_in_child};
use vst3::Steinberg::PClassInfo;

use crate::host::{Instance, Module, Point};

/// Instances created, flooded and released per child.
const CYCLES: usize = 100;
/// The host's block size; a flooded block carries a parameter change at every sample.
const BLOCK: usize = 256;
/// Parameter changes made through the controller from another thread between
/// `setProcessing(false)` and `setActive(false)`, at most.
const CONTROLLER_FLOOD: usize = 300;
/// How long a latency change may take to be built and reported (the preparation thread
/// builds the new engine; a few milliseconds on an idle machine).
const LATENCY_CHANGE_LIMIT: Duration = Duration::from_secs(20);

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "Linux only: elsewhere these tasks go to the message loop, which this host does not pump"
)]
fn releasing_one_instance_after_its_tasks_neither_aborts_nor_drops_them() {
    run_in_child("teardown::one_instance_at_a_time");
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "Linux only: elsewhere these tasks go to the message loop, which this host does not pump"
)]
fn a_living_instance_still_reaches_the_host_after_others_are_released() {
    run_in_child("teardown::beside_a_living_instance");
}

/// The child of [`releasing_one_instance_after_its_tasks_neither_aborts_nor_drops_them`].
#[test]
#[ignore = "run in a process of its own by its parent test"]
fn one_instance_at_a_time() {
    cycles(false);
}

/// The child of [`a_living_instance_still_reaches_the_host_after_others_are_released`].
#[test]
#[ignore = "run in a process of its own by its parent test"]
fn beside_a_living_instance() {
    cycles(true);
}

/// Runs the ignored test `name` in a child process: an abort kills only the child, and a panic
/// on nice-plug's shared thread, which does not abort by itself, shows in its stderr.
fn run_in_child(name: &str) {
    let (_, stderr) = run_test_in_child(name, |command| command);
    assert!(
        !stderr.contains("panicked"),
        "a thread of the child panicked:\n{stderr}"
    );
}

/// [`CYCLES`] instances, each activated, flooded with tasks from another thread and released at
/// once; with `keep_one`, beside one instance that lives through all of them and whose latency
/// changes must reach the host every few cycles.
fn cycles(keep_one: bool) {
    let module = Module::load();
    let class = module.audio_class();
    let living = keep_one.then(|| new_instance(&module, &class));
    let mut rng = Rng::new(RNG_SEED + 300);
    let started = Instant::now();
    for cycle in 0..CYCLES {
        let instance = new_instance(&module, &class);
        let posted = post_from_another_thread(&instance, rng.next_u64());
        instance.stop_processing();
        flood_the_controller(&instance, rng.next_u64());
        instance.set_inactive();
        let heard = instance.handler.latency_restarts();
        assert_eq!(
            heard, posted,
            "cycle {cycle}: {posted} latency changes posted before setActive(false), {heard} \
             reached the host by its return"
        );
        drop(instance);
        if let Some(living) = &living
            && cycle % 3 == 2
        {
            assert_reaches_the_host(living, cycle);
        }
    }
    if let Some(living) = living {
        assert_reaches_the_host(&living, CYCLES);
        living.deactivate();
    }
    println!(
        "{CYCLES} instances released after their tasks in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// A stereo instance with the small room (a quick engine to build), activated for blocks of
/// [`BLOCK`] at 48 kHz from this thread, which becomes its main thread.
fn new_instance(module: &Module, class: &PClassInfo) -> Instance {
    let instance = module.instantiate(class);
    // The first choice of "Impulse response": the small room.
    instance.set_param("Impulse response", 0.0);
    instance.activate(48_000.0, BLOCK);
    instance
}

/// What a host's audio thread does to `instance` before it is released: blocks that carry a
/// parameter change at every sample (each one a task for nice-plug's shared thread) and at most
/// one latency change, in an order drawn from `seed`. Returns the latency changes the plugin
/// reported (each one posts a `restartComponent` task).
fn post_from_another_thread(instance: &Instance, seed: u64) -> usize {
    let flooded = ["Mix", "Output gain", "Width"].map(|title| instance.param_id(title));
    let silence = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut rng = Rng::new(seed);
                // 3: no latency change this cycle.
                let latency_at = rng.range(0, 3);
                let mut posted = 0;
                for step in 0..3 {
                    if step == latency_at {
                        posted += change_latency(instance);
                    }
                    for _ in 0..rng.range(0, 2) {
                        let points: Vec<Point> = (0..BLOCK as i32)
                            .map(|offset| {
                                let id = flooded[rng.range(0, flooded.len() - 1)];
                                (id, offset, rng.next_f64())
                            })
                            .collect();
                        instance.process_automated(&silence, 2, BLOCK, &points);
                    }
                }
                posted
            })
            .join()
            .expect("the other thread")
    })
}

/// Parameter changes through the edit controller from another thread, as a host's own threads
/// may make them once processing has stopped (nice-plug takes them there only then; each one
/// is a task for its shared thread).
fn flood_the_controller(instance: &Instance, seed: u64) {
    let flooded = ["Mix", "Output gain", "Width"].map(|title| instance.param_id(title));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut rng = Rng::new(seed);
            for _ in 0..rng.range(0, CONTROLLER_FLOOD) {
                let id = flooded[rng.range(0, flooded.len() - 1)];
                instance.set_param_id(id, rng.next_f64());
            }
        });
    });
}

/// Flips `instance` between zero and low-CPU latency through the Latency parameter and plays
/// silence until the new engine reports its latency (from `process()`, on this thread). Returns
/// 1, the one latency change.
fn change_latency(instance: &Instance) -> usize {
    let before = instance.latency();
    // The Latency parameter's values: Zero (0), Low CPU (0.2), ...
    let target = if before == 0 { 0.2 } else { 0.0 };
    let silence = [vec![0.0f32; BLOCK], vec![0.0f32; BLOCK]];
    let change = [(instance.param_id("Latency"), 0, target)];
    instance.process_automated(&silence, 2, BLOCK, &change);
    let started = Instant::now();
    while instance.latency() == before {
        assert!(
            started.elapsed() < LATENCY_CHANGE_LIMIT,
            "the latency stayed {before} for {LATENCY_CHANGE_LIMIT:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
        instance.process(&silence, BLOCK);
    }
    1
}

/// Changes `instance`'s latency from another thread and waits for its handler to hear the
/// restart: the shared task thread still runs.
fn assert_reaches_the_host(instance: &Instance, cycle: usize) {
    let before = instance.handler.latency_restarts();
    std::thread::scope(|scope| {
        scope
            .spawn(|| change_latency(instance))
            .join()
            .expect("the other thread")
    });
    let started = Instant::now();
    while instance.handler.latency_restarts() == before {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "after cycle {cycle}: the living instance's latency change never reached the host \
             (nice-plug's shared task thread has ended)"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}
