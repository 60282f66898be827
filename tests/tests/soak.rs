//! Ten minutes of audio through the plugin as a host drives it (`longtail::tools::soak`, the engine
//! of `longtail-cli soak`), every `process()` call under `assert_no_alloc`: random block sizes with
//! empty calls, automation, IR and latency switches through the preparation thread (with the
//! restarts a latency change asks for), sleep and wake, non-finite input. The output must stay
//! finite, and memory, threads and file descriptors must not grow. Its own test binary, so no other
//! test shares the process whose resources it counts.

use longtail::tools::soak::{self, SoakOptions};
use nice_assert_no_alloc::assert_no_alloc;

#[test]
fn ten_minutes_of_audio_stay_finite_and_leak_nothing() {
    let options = SoakOptions {
        audio_seconds: 600.0,
        // Two minutes. The resident size still moves by a few MiB after the warm-up checkpoint
        // (huge pages of the engine's pool, freed memory glibc's arenas keep) while the heap in
        // use and the pool's live buffers stay within a few KiB: the resident limit (12 MiB
        // beyond the pool's blocks) allows it; the heap's and the pool's (256 KiB) judge leaks.
        warmup_seconds: 120.0,
        rate: 48_000,
        max_block: 1024,
        seed: 7,
        progress: false,
    };
    let report = soak::run(&options, |process| assert_no_alloc(process)).unwrap();
    println!("{}", report.to_table());
    println!("{}", report.to_json());
    assert!(report.failures().is_empty(), "{:?}", report.failures());
    // The run must have exercised what it claims to.
    assert!(report.audio_s >= 600.0);
    assert!(report.switches >= 100, "{} switches", report.switches);
    // Latency switches tell a CLAP host through a restart, which the soak's host carries out.
    assert!(report.restarts > 0, "no restart was asked for");
    assert!(report.empty_blocks > 0 && report.automation_steps > 1000);
    assert!(report.peak_output > 0.1, "peak {}", report.peak_output);
    assert!(
        report.warm.threads > report.start.threads,
        "workers were running"
    );
}
