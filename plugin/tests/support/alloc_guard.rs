//! A global allocator for tests that refuses any single allocation above [`LIMIT`], so a length
//! read from a damaged file or state that sizes an allocation unchecked fails the test, whatever
//! the operating system's overcommit would have let through.
//!
//! A refused request prints one line naming its size, and the allocation fails: the standard
//! library then aborts the test binary ("memory allocation of N bytes failed"), which fails the
//! test run. Install it in a test binary with
//! `#[global_allocator] static GUARD: AllocGuard = AllocGuard;`.

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
