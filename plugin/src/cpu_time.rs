//! CPU time clocks for reports (`render`, `bench`): user plus system time of the whole process
//! or of the calling thread, as `getrusage(RUSAGE_SELF / RUSAGE_THREAD)` reports it, read
//! through the POSIX CPU-time clocks for nanosecond resolution, and the monotonic clock that
//! profilers stamp events with. Any thread; no allocation.

use std::time::Instant;

/// CPU seconds of the calling thread (wall time where the OS has no such clock).
pub fn thread_seconds() -> f64 {
    #[cfg(unix)]
    if let Some(seconds) = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID) {
        return seconds;
    }
    wall_seconds_since_start()
}

/// CPU seconds of the whole process, all threads (wall time where the OS has no such clock).
pub fn process_seconds() -> f64 {
    #[cfg(unix)]
    if let Some(seconds) = cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID) {
        return seconds;
    }
    wall_seconds_since_start()
}

/// CLOCK_MONOTONIC in nanoseconds, the clock `perf record -k CLOCK_MONOTONIC` stamps events
/// with (0 where the OS has no such clock).
pub fn monotonic_ns() -> u64 {
    #[cfg(unix)]
    if let Some(ts) = clock_gettime(libc::CLOCK_MONOTONIC) {
        return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    }
    0
}

#[cfg(unix)]
fn cpu_clock(clock: libc::clockid_t) -> Option<f64> {
    clock_gettime(clock).map(|ts| ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(unix)]
fn clock_gettime(clock: libc::clockid_t) -> Option<libc::timespec> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let ok = unsafe { libc::clock_gettime(clock, &mut ts) } == 0;
    ok.then_some(ts)
}

fn wall_seconds_since_start() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
