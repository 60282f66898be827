//! The allocation check itself, many instances created and destroyed without leaving threads or
//! file descriptors behind, a session that prints nothing to the host's stdout or stderr, and the
//! many-instance measurement.

use std::time::{Duration, Instant};

use longtail_tests::{RNG_SEED, plugin_library, run_test_in_child};

use super::*;

/// The library under test is the one built with `assert_process_allocs`, so every test below
/// aborts on an allocation inside `process()`: it carries nice-assert-no-alloc's allocator.
#[test]
fn library_under_test_aborts_on_process_allocations() {
    let path = plugin_library();
    let bytes = std::fs::read(&path).expect("the plugin library is readable");
    let needle = b"AllocDisabler";
    assert!(
        bytes.windows(needle.len()).any(|window| window == needle),
        "{} was built without `assert_process_allocs` (a stale library from another build?); \
         `cargo test -p longtail-tests` rebuilds it",
        path.display()
    );
}

/// Many instances created, played and destroyed one after another leave no thread and no file
/// descriptor behind. Runs [`many_instances_in_a_process_of_their_own`] in a child process, so
/// that the other tests of this binary, running in parallel, do not move the counts.
#[test]
fn many_instances_leave_no_threads_or_fds_behind() {
    run_test_in_child(
        "allocations_and_instances::many_instances_in_a_process_of_their_own",
        |command| command,
    );
}

/// The child of [`many_instances_leave_no_threads_or_fds_behind`].
#[test]
#[ignore = "run in a process of its own by many_instances_leave_no_threads_or_fds_behind"]
fn many_instances_in_a_process_of_their_own() {
    const NUM_INSTANCES: usize = 50;
    let input = stereo_noise(4_096, RNG_SEED + 70);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    let count = |path: &str| std::fs::read_dir(path).map_or(0, |dir| dir.count());
    let mut baseline = None;
    for instance_idx in 0..NUM_INSTANCES {
        {
            let mut host = TestHost::new();
            // Every other instance plays the largest IR, so engines of all sizes come and go.
            if instance_idx % 2 == 1 {
                let ir = host.param(IMPULSE_RESPONSE);
                host.flush(&[(ir, IR_CATHEDRAL)]);
            }
            host.activate(MAX_BLOCK);
            let run = host.process([&input[0], &input[1]], &sizes, &[]);
            assert_finite(&run);
            host.assert_threading_respected();
        }
        let mut counts = (count("/proc/self/task"), count("/proc/self/fd"));
        // The first instance may start what lives as long as the library (nice-plug's
        // background thread); from then on nothing may accumulate. A short-lived helper
        // thread may still be on its way out: give it a moment, but a leak stays a leak.
        if let Some(baseline) = baseline {
            let deadline = Instant::now() + Duration::from_secs(2);
            while counts != baseline && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                counts = (count("/proc/self/task"), count("/proc/self/fd"));
            }
        }
        match baseline {
            None => baseline = Some(counts),
            Some(baseline) => assert_eq!(
                counts, baseline,
                "(threads, fds) after instance {instance_idx}"
            ),
        }
    }
    println!("{NUM_INSTANCES} instances, (threads, fds) after each: {baseline:?}");
}

/// Nothing of the plugin or its libraries reaches the host's stdout or stderr in normal
/// operation. Runs [`quiet_in_a_process_of_its_own`] in a child process with `XDG_RUNTIME_DIR`
/// (whose absence makes Wayland's client library complain) and the log variables unset, and
/// fails on any line that is not the test harness's own.
#[test]
fn prints_nothing_to_the_hosts_stdout_or_stderr() {
    const CHILD: &str = "allocations_and_instances::quiet_in_a_process_of_its_own";
    let (stdout, stderr) = run_test_in_child(CHILD, |command| {
        command
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("LONGTAIL_LOG")
            .env_remove("NICE_LOG")
    });
    let harness = |line: &str| {
        line.is_empty()
            || line == "running 1 test"
            || line == format!("test {CHILD} ... ok")
            || line.starts_with("test result: ok. 1 passed;")
    };
    let printed: Vec<&str> = stdout.lines().filter(|line| !harness(line)).collect();
    assert!(
        printed.is_empty(),
        "printed to stdout:\n{}",
        printed.join("\n")
    );
    assert!(stderr.is_empty(), "printed to stderr:\n{stderr}");
}

/// The child of [`prints_nothing_to_the_hosts_stdout_or_stderr`]: a session as a host runs
/// it. The backend on Auto with the Cathedral at 96 kHz (an engine big enough for Auto to look
/// for a GPU, which loads Vulkan and its implicit layers), a state round trip, then activations
/// at rates the plugin passes through and at 48 kHz, each playing noise.
#[test]
#[ignore = "run in a process of its own by prints_nothing_to_the_hosts_stdout_or_stderr"]
fn quiet_in_a_process_of_its_own() {
    let mut host = TestHost::new();
    let (backend, ir) = (host.param(BACKEND), host.param(IMPULSE_RESPONSE));
    let auto = host.text_to_value(backend, c"Auto");
    host.flush(&[(backend, auto), (ir, IR_CATHEDRAL)]);
    let input = stereo_noise(16_384, RNG_SEED + 90);
    let sizes = block_sizes(input[0].len(), MAX_BLOCK as usize);
    for rate in [96_000.0, 1.0, 3e6, 1_234_567.8, f64::from(SAMPLE_RATE)] {
        host.activate_at_hz(rate, MAX_BLOCK);
        assert_finite(&host.process([&input[0], &input[1]], &sizes, &[]));
        let state = host.save_state();
        host.deactivate();
        host.load_state(&state);
    }
    host.assert_threading_respected();
}

/// Instance scale, as a measurement (prints one JSON line, asserts nothing about size): 64
/// instances of the 10 s cathedral IR in this process, each activated at 128-sample blocks and
/// processing one second of audio. Resident memory per instance is the growth of the process's
/// resident set over the instances, after the allocator has returned its free pages. CPU per
/// second of audio at real-time pace is `longtail-cli bench --instances 64` (engines only).
/// Run with `cargo test --release -p longtail-tests --test clap_host -- --ignored scale`.
#[test]
#[ignore = "a measurement: run it by name"]
fn scale_64_instances_of_the_cathedral() {
    const INSTANCES: usize = 64;
    const BLOCK: u32 = 128;
    let before = longtail::tools::resources::Resources::sample();
    let mut hosts = Vec::with_capacity(INSTANCES);
    for _ in 0..INSTANCES {
        let mut host = TestHost::new();
        let ir = host.param(IMPULSE_RESPONSE);
        host.flush(&[(ir, IR_CATHEDRAL)]);
        host.activate(BLOCK);
        hosts.push(host);
    }
    let input = stereo_noise(SAMPLE_RATE as usize, 3);
    let sizes = block_sizes(input[0].len(), BLOCK as usize);
    let cpu_start = longtail::cpu_time::process_seconds();
    for host in &mut hosts {
        assert_finite(&host.process([&input[0], &input[1]], &sizes, &[]));
    }
    let cpu_s = longtail::cpu_time::process_seconds() - cpu_start;
    let after = longtail::tools::resources::Resources::sample();
    println!(
        "{{\"kind\":\"scale\",\"instances\":{INSTANCES},\"block\":{BLOCK},\"ir\":\"cathedral\",\
         \"rss_before_kb\":{},\"rss_after_kb\":{},\"mem_per_instance_kb\":{},\"threads\":{},\
         \"audio_s_per_instance\":1.0,\"cpu_s_fed\":{cpu_s:.3}}}",
        before.rss_kb,
        after.rss_kb,
        after.rss_kb.saturating_sub(before.rss_kb) / INSTANCES as u64,
        after.threads,
    );
    drop(hosts);
}
