//! The tests' allocation guard: any single allocation above [`LIMIT`] fails the test binary, so
//! a length read from a damaged file or state that sizes an allocation unchecked fails the test,
//! whatever the operating system's overcommit would have let through.
//!
//! Two ways, one per build:
//! - Without nice-plug's `assert_process_allocs` (`cargo test -p longtail`), [`AllocGuard`] is
//!   the global allocator: it refuses a request above [`LIMIT`] and prints one line naming its
//!   size; the standard library then aborts the test binary ("memory allocation of N bytes
//!   failed"). Install it with `#[global_allocator] static GUARD: AllocGuard = AllocGuard;`.
//! - With it (the workspace run, `scripts/test.sh`), nice-plug's allocator is the global one and
//!   a binary has only one, so on Linux the kernel guards instead: before `main`, the binary's
//!   data limit (`RLIMIT_DATA`, which counts every private writable mapping, so every large
//!   `malloc`) is set to what it uses then plus [`LIMIT`]. A request above it fails the same way.
//!   This is how one build of the plugin serves both these tests and the host tests. (Elsewhere
//!   this build has no guard; Linux runs these tests under it.)

// `allow`, not `expect`: under Windows rustc reports these items dead without the attribute
// and yet calls an `expect(dead_code)` on them unfulfilled (CI's Windows build, both seen).
#![cfg_attr(feature = "assert_process_allocs", allow(dead_code))]

use std::alloc::{GlobalAlloc, Layout, System};

/// The largest single allocation a test may make: 1 GiB. The largest IR the limits allow (60 s,
/// 4 channels, 768 kHz, `f32`) is 737 MB, so no valid input needs more.
pub const LIMIT: usize = 1 << 30;

/// The guard: [`System`] for every request up to [`LIMIT`].
pub struct AllocGuard;

// SAFETY: every call is forwarded unchanged to `System`, or refused with a null pointer, which
// `GlobalAlloc` allows.
unsafe impl GlobalAlloc for AllocGuard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            return refuse(layout.size());
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            return refuse(layout.size());
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT {
            return refuse(new_size);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Prints the refusal without allocating (a fixed buffer and one `write(2)`), and fails it.
fn refuse(size: usize) -> *mut u8 {
    let mut line = [0u8; 96];
    let prefix = b"allocation guard: refused a single allocation of ";
    let suffix = b" bytes (limit 1 GiB)\n";
    line[..prefix.len()].copy_from_slice(prefix);
    let mut len = prefix.len();
    let mut digits = [0u8; 20];
    let mut num_digits = 0;
    let mut rest = size;
    loop {
        digits[num_digits] = b'0' + (rest % 10) as u8;
        num_digits += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for &digit in digits[..num_digits].iter().rev() {
        line[len] = digit;
        len += 1;
    }
    line[len..len + suffix.len()].copy_from_slice(suffix);
    len += suffix.len();
    // SAFETY: writes `len` initialised bytes of `line` to standard error.
    // (`len` is under 100; the CRT's `write` on Windows takes a `u32` count.)
    unsafe { libc::write(2, line.as_ptr().cast(), len as _) };
    std::ptr::null_mut()
}

/// Sets the data limit to the binary's data at start plus [`LIMIT`], from the ELF constructor
/// list, so it holds before any test thread starts.
#[cfg(all(feature = "assert_process_allocs", target_os = "linux"))]
mod kernel_limit {
    #[used]
    #[unsafe(link_section = ".init_array")]
    static SET_AT_START: extern "C" fn() = set_data_limit;

    extern "C" fn set_data_limit() {
        let in_use = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| vm_data_bytes(&status));
        let Some(in_use) = in_use else {
            panic!("allocation guard: no VmData in /proc/self/status, so no data limit");
        };
        let limit = libc::rlimit {
            rlim_cur: in_use + super::LIMIT as u64,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: a plain system call on a valid `rlimit`.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) };
        assert_eq!(rc, 0, "allocation guard: setrlimit(RLIMIT_DATA) failed");
    }

    /// `VmData:` of `/proc/self/status`, in bytes.
    fn vm_data_bytes(status: &str) -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with("VmData:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }
}
