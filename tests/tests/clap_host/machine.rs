//! The machine, for the tests that measure what the plugin does when the host leaves it time
//! (the pacing tests): they hold it for writing ([`alone`]), every other test's hosts for
//! reading while one exists ([`share`], [`release_share`]). On CI's two cores the other tests'
//! hosts once took the cores from a pacing test's workers in the first moments after a start,
//! while the plugin still assumes real-time pace (its lead estimate begins at 0), and a late
//! result was dropped (50.5 dB against the offline render).
//!
//! Uses nothing of the host.

use std::cell::{Cell, RefCell};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread's share of [`MACHINE`] and its hosts that hold it: one read guard per
    /// thread (a second read while a writer waits would block on the first).
    static SHARE: RefCell<Option<(RwLockReadGuard<'static, ()>, usize)>> =
        const { RefCell::new(None) };
    /// This thread holds [`MACHINE`] for writing.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// Holds the machine for the current test: no other test's host exists until it is dropped.
pub(crate) struct Alone(
    #[expect(dead_code, reason = "held, not read")] RwLockWriteGuard<'static, ()>,
);

pub(crate) fn alone() -> Alone {
    let guard = MACHINE.write().unwrap_or_else(|p| p.into_inner());
    ALONE.with(|alone| alone.set(true));
    Alone(guard)
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.with(|alone| alone.set(false));
    }
}

/// A new host's share of the machine: nothing for a test that holds it alone.
pub(crate) fn share() {
    if ALONE.with(Cell::get) {
        return;
    }
    SHARE.with(|share| {
        let mut share = share.borrow_mut();
        match share.as_mut() {
            Some((_, hosts)) => *hosts += 1,
            None => *share = Some((MACHINE.read().unwrap_or_else(|p| p.into_inner()), 1)),
        }
    });
}

/// A host is gone: its share goes, and the thread's read guard with its last host.
pub(crate) fn release_share() {
    SHARE.with(|share| {
        let mut share = share.borrow_mut();
        if let Some((_, hosts)) = share.as_mut() {
            *hosts -= 1;
            if *hosts == 0 {
                *share = None;
            }
        }
    });
}
