//! CPU time clocks for reports (`render`, `bench`): user plus system time of the whole process
//! or of the calling thread, as `getrusage(RUSAGE_SELF / RUSAGE_THREAD)` reports it, read
//! through the POSIX CPU-time clocks for nanosecond resolution, and the monotonic clock that
//! profilers stamp events with. Any thread; no allocation.
//!
//! On Windows: `GetThreadTimes` and `GetProcessTimes` (kernel plus user time, in 100 ns units
//! but advanced only at the scheduler's clock tick, typically 15.6 ms, so short spans read
//! coarsely), and `QueryPerformanceCounter`, the clock ETW stamps events with.

use std::time::Instant;

/// CPU seconds of the calling thread (wall time where the OS has no such clock).
pub fn thread_seconds() -> f64 {
    #[cfg(unix)]
    if let Some(seconds) = cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID) {
        return seconds;
    }
    #[cfg(windows)]
    if let Some(seconds) = windows::thread_seconds() {
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
    #[cfg(windows)]
    if let Some(seconds) = windows::process_seconds() {
        return seconds;
    }
    wall_seconds_since_start()
}

/// CLOCK_MONOTONIC in nanoseconds, the clock `perf record -k CLOCK_MONOTONIC` stamps events
/// with; on Windows `QueryPerformanceCounter` in nanoseconds (0 where the OS has no such clock).
pub fn monotonic_ns() -> u64 {
    #[cfg(unix)]
    if let Some(ts) = clock_gettime(libc::CLOCK_MONOTONIC) {
        return ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    }
    #[cfg(windows)]
    if let Some(ns) = windows::performance_counter_ns() {
        return ns;
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

/// The Windows clocks, through `windows-sys`.
#[cfg(windows)]
mod windows {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Performance::{
        QueryPerformanceCounter, QueryPerformanceFrequency,
    };
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, GetCurrentThread, GetProcessTimes, GetThreadTimes,
    };

    /// Kernel plus user time of the calling thread, in seconds.
    pub(super) fn thread_seconds() -> Option<f64> {
        // SAFETY: the calling thread's pseudo handle; the four FILETIMEs are writable.
        times(|times| unsafe {
            GetThreadTimes(
                GetCurrentThread(),
                &mut times[0],
                &mut times[1],
                &mut times[2],
                &mut times[3],
            )
        })
    }

    /// Kernel plus user time of the whole process, in seconds.
    pub(super) fn process_seconds() -> Option<f64> {
        // SAFETY: the process's pseudo handle; the four FILETIMEs are writable.
        times(|times| unsafe {
            GetProcessTimes(
                GetCurrentProcess(),
                &mut times[0],
                &mut times[1],
                &mut times[2],
                &mut times[3],
            )
        })
    }

    /// Creation, exit, kernel and user times from `get`; kernel plus user in seconds.
    fn times(get: impl FnOnce(&mut [FILETIME; 4]) -> i32) -> Option<f64> {
        let mut times = [FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        }; 4];
        if get(&mut times) == 0 {
            return None;
        }
        let ticks = |t: &FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
        Some((ticks(&times[2]) + ticks(&times[3])) as f64 * 100e-9)
    }

    /// `QueryPerformanceCounter` in nanoseconds.
    pub(super) fn performance_counter_ns() -> Option<u64> {
        let (mut count, mut frequency) = (0i64, 0i64);
        // SAFETY: writable i64s; failure is the return value.
        let ok = unsafe {
            QueryPerformanceCounter(&mut count) != 0
                && QueryPerformanceFrequency(&mut frequency) != 0
        };
        (ok && frequency > 0)
            .then(|| (i128::from(count) * 1_000_000_000 / i128::from(frequency)) as u64)
    }
}

fn wall_seconds_since_start() -> f64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
