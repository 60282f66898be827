//! Real-time scheduling for worker threads: SCHED_FIFO below typical audio threads.
//!
//! Uses nothing of the engine; the worker thread ([`super::thread`]) raises itself at start.

/// Highest real-time priority a worker asks for (level 1); typical audio threads run above it.
const WORKER_PRIORITY: usize = 40;

/// Asks for real-time scheduling below typical audio threads (SCHED_FIFO, one step lower per
/// level); quietly keeps the default policy where the OS does not allow it.
///
/// The audio thread must run above the workers: on a machine with fewer free cores than busy
/// workers, a real-time worker otherwise takes the core from a default-policy audio thread for
/// a whole FFT round (milliseconds). Hosts give their audio threads 60-90 (JACK, Ardour).
pub(crate) fn raise_priority(level_idx: usize) {
    let priority = WORKER_PRIORITY.saturating_sub(level_idx).max(1) as u32;
    // Dropping the guard would restore the old policy; the worker keeps it until it exits.
    std::mem::forget(RealtimeGuard::raise(priority));
}

/// The calling thread at a SCHED_FIFO priority until dropped, then back to its old policy.
#[derive(Debug)]
pub struct RealtimeGuard {
    /// The priority the thread runs at.
    pub priority: u32,
    #[cfg(target_os = "linux")]
    old: (libc::c_int, libc::sched_param),
    /// Not `Send`: it must be dropped by the thread it raised.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl RealtimeGuard {
    /// Raises the calling thread to SCHED_FIFO `priority`; `None` where the OS refuses
    /// (no permission, no such policy). Not for the audio thread's `process()`: a system call.
    pub fn raise(priority: u32) -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            let mut old_policy = 0;
            let mut old_param = libc::sched_param { sched_priority: 0 };
            let param = libc::sched_param {
                sched_priority: priority as libc::c_int,
            };
            // SAFETY: plain system calls on the current thread with valid pointers; failure is
            // reported through the return values.
            let ok = unsafe {
                libc::pthread_getschedparam(libc::pthread_self(), &mut old_policy, &mut old_param)
                    == 0
                    && libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param)
                        == 0
            };
            ok.then_some(Self {
                priority,
                old: (old_policy, old_param),
                _thread_bound: std::marker::PhantomData,
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = priority;
            None
        }
    }
}

impl Drop for RealtimeGuard {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        // SAFETY: restores the policy read in `raise`, on the same thread (the guard is not
        // `Send`).
        unsafe {
            libc::pthread_setschedparam(libc::pthread_self(), self.old.0, &self.old.1);
        }
    }
}
