//! Real-time scheduling for worker threads and the GPU hub's, below typical audio threads:
//! SCHED_FIFO on Linux and on macOS (whose pthreads turn it into a fixed-priority Mach thread;
//! its priorities stop at `sched_get_priority_max`, 47, so ours are clamped there); on Windows
//! the MMCSS "Pro Audio" task (`AvSetMmThreadCharacteristicsW`), or
//! `THREAD_PRIORITY_TIME_CRITICAL` where MMCSS refuses. Elsewhere the default policy.
//!
//! Uses nothing of the engine; the worker thread ([`crate::engine::worker::thread`]) raises itself
//! at start, and the GPU hub's thread runs [`raise_gpu_hub`] at start (set by
//! [`open_gpu`](crate::engine::open_gpu) through `longtail_gpu::set_thread_start`).
//!
//! # Priorities
//!
//! Level `i` of the plan asks for `WORKER_PRIORITY - i`: 39 for level 1 (level 0 runs on the
//! audio thread), 38 for level 2, and so on, so a level with shorter deadlines (smaller
//! partitions) runs before the ones after it.
//!
//! The GPU hub asks for [`GPU_HUB_PRIORITY`], level 1's. It serves every GPU level of the
//! process, all of at least 1024 samples; the smallest may be level 1 of an engine at large
//! host buffers. Above the later workers (levels 2 and on), none of their FFT rounds
//! (milliseconds) can delay the one submit that every GPU level waits for. Not above level 1:
//! level 1's deadlines are the tightest after the audio thread's, and a period's CPU work on
//! the hub is short (copies and a submit; the thread sleeps while the GPU computes), so at the
//! same priority neither holds the other up for long. All of them stay below typical audio
//! threads (60-90). A CPU adapter (lavapipe) is the exception: its GPU work runs on the CPU's
//! ordinary threads, which a real-time hub thread would take cores from, so its hub keeps the
//! default policy (measured on 2 cores: the Auto placement test's way back to lavapipe slowed
//! so far that the test ran out of audio).

/// The priority [`raise_priority`] counts down from; typical audio threads run above it.
const WORKER_PRIORITY: usize = 40;

/// The GPU hub's thread's priority: level 1's, the first level on a worker (see the module
/// docs). On Windows: MMCSS "Pro Audio" at its normal priority, as the workers.
pub const GPU_HUB_PRIORITY: u32 = WORKER_PRIORITY as u32 - 1;

/// Asks for real-time scheduling below typical audio threads (SCHED_FIFO, one step lower per
/// level; on Windows MMCSS "Pro Audio" at its normal priority, below the hosts' audio threads
/// at high or critical); quietly keeps the default policy where the OS does not allow it.
///
/// The audio thread must run above the workers: on a machine with fewer free cores than busy
/// workers, a real-time worker otherwise takes the core from a default-policy audio thread for
/// a whole FFT round (milliseconds). Hosts give their audio threads 60-90 (JACK, Ardour).
pub(crate) fn raise_priority(level_idx: usize) {
    let priority = WORKER_PRIORITY.saturating_sub(level_idx).max(1) as u32;
    // Dropping the guard would restore the old policy; the worker keeps it until it exits.
    std::mem::forget(RealtimeGuard::raise(priority));
}

/// Raises the calling thread, the GPU hub's, to [`GPU_HUB_PRIORITY`] for as long as it runs;
/// whether the OS allowed it (where it refuses, the hub keeps the default policy and serves
/// all the same). Not for a CPU adapter's hub (see the module docs). A
/// `longtail_gpu::ThreadStart`.
pub fn raise_gpu_hub(adapter: &longtail_gpu::AdapterSummary) -> bool {
    if adapter.kind == longtail_gpu::AdapterKind::Cpu {
        return false;
    }
    let guard = RealtimeGuard::raise(GPU_HUB_PRIORITY);
    let raised = guard.is_some();
    // As for a worker: the hub's thread keeps the priority until it exits.
    std::mem::forget(guard);
    raised
}

/// The calling thread at a SCHED_FIFO priority (Windows: in the MMCSS "Pro Audio" task, or at
/// `THREAD_PRIORITY_TIME_CRITICAL`) until dropped, then back to its old policy.
#[derive(Debug)]
pub struct RealtimeGuard {
    /// The priority the thread runs at (Linux's SCHED_FIFO scale; on Windows the priority asked
    /// for, which picks the MMCSS priority, see [`RealtimeGuard::raise`]).
    pub priority: u32,
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    old: (libc::c_int, libc::sched_param),
    #[cfg(windows)]
    old: windows::Raised,
    /// Not `Send`: it must be dropped by the thread it raised.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl RealtimeGuard {
    /// Raises the calling thread to SCHED_FIFO `priority`; `None` where the OS refuses
    /// (no permission, no such policy). Not for the audio thread's `process()`: a system call.
    ///
    /// On Windows the thread joins MMCSS's "Pro Audio" task: at its normal priority for a
    /// worker's `priority` (at most the workers' 40), at critical above that (an audio thread,
    /// such as `bench --audio-priority`). Without MMCSS (the service stopped, Wine) it falls
    /// back to `THREAD_PRIORITY_TIME_CRITICAL`.
    pub fn raise(priority: u32) -> Option<Self> {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        {
            let mut old_policy = 0;
            // SAFETY: a zeroed sched_param is valid (plain integers; macOS adds padding).
            let mut old_param: libc::sched_param = unsafe { std::mem::zeroed() };
            let mut param = old_param;
            param.sched_priority = priority as libc::c_int;
            #[cfg(target_os = "macos")]
            {
                // SAFETY: a plain query.
                let max = unsafe { libc::sched_get_priority_max(libc::SCHED_FIFO) };
                if max > 0 {
                    param.sched_priority = param.sched_priority.min(max);
                }
            }
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
        #[cfg(windows)]
        {
            let audio = priority > WORKER_PRIORITY as u32;
            windows::raise(audio).map(|old| Self {
                priority,
                old,
                _thread_bound: std::marker::PhantomData,
            })
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
        {
            let _ = priority;
            None
        }
    }
}

impl Drop for RealtimeGuard {
    fn drop(&mut self) {
        #[cfg(any(target_os = "linux", target_os = "macos"))]
        // SAFETY: restores the policy read in `raise`, on the same thread (the guard is not
        // `Send`).
        unsafe {
            libc::pthread_setschedparam(libc::pthread_self(), self.old.0, &self.old.1);
        }
        #[cfg(windows)]
        windows::restore(&self.old);
    }
}

/// The Windows calls: MMCSS (avrt.dll) and thread priorities (kernel32), through `windows-sys`.
#[cfg(windows)]
mod windows {
    use windows_sys::Win32::Foundation::HANDLE;
    use windows_sys::Win32::System::Threading::{
        AVRT_PRIORITY_CRITICAL, AvRevertMmThreadCharacteristics, AvSetMmThreadCharacteristicsW,
        AvSetMmThreadPriority, GetCurrentThread, GetThreadPriority, SetThreadPriority,
        THREAD_PRIORITY_TIME_CRITICAL,
    };

    /// `GetThreadPriority`'s failure value (`MAXLONG`; windows-sys has it under
    /// `Win32_System_WindowsProgramming`, a feature nothing else here needs).
    const THREAD_PRIORITY_ERROR_RETURN: i32 = i32::MAX;

    /// How the thread was raised, to undo it.
    #[derive(Debug)]
    pub(super) enum Raised {
        /// Joined the MMCSS task through this handle.
        Mmcss(HANDLE),
        /// Set to `THREAD_PRIORITY_TIME_CRITICAL` from this priority.
        Priority(i32),
    }

    /// The MMCSS task name, NUL-terminated UTF-16.
    const PRO_AUDIO: [u16; 10] = {
        let ascii = *b"Pro Audio\0";
        let mut wide = [0u16; 10];
        let mut idx = 0;
        while idx < ascii.len() {
            wide[idx] = ascii[idx] as u16;
            idx += 1;
        }
        wide
    };

    /// Joins the calling thread to "Pro Audio" (at critical priority for an `audio` thread),
    /// else raises it to `THREAD_PRIORITY_TIME_CRITICAL`; `None` if both are refused.
    pub(super) fn raise(audio: bool) -> Option<Raised> {
        let mut task_index = 0u32;
        // SAFETY: a NUL-terminated UTF-16 task name and a writable index; the call affects the
        // calling thread only and reports failure as a null handle.
        let handle = unsafe { AvSetMmThreadCharacteristicsW(PRO_AUDIO.as_ptr(), &mut task_index) };
        if !handle.is_null() {
            if audio {
                // SAFETY: the handle MMCSS just returned for this thread. A refusal leaves the
                // task's normal priority, still real-time.
                unsafe { AvSetMmThreadPriority(handle, AVRT_PRIORITY_CRITICAL) };
            }
            return Some(Raised::Mmcss(handle));
        }
        // SAFETY: the pseudo handle of the calling thread; failures are return values.
        unsafe {
            let thread = GetCurrentThread();
            let old = GetThreadPriority(thread);
            (old != THREAD_PRIORITY_ERROR_RETURN
                && SetThreadPriority(thread, THREAD_PRIORITY_TIME_CRITICAL) != 0)
                .then_some(Raised::Priority(old))
        }
    }

    /// Undoes [`raise`] on the thread that raised (the guard is not `Send`).
    pub(super) fn restore(raised: &Raised) {
        // SAFETY: the handle from `AvSetMmThreadCharacteristicsW` on this thread, or the
        // calling thread's pseudo handle and the priority it had.
        unsafe {
            match *raised {
                Raised::Mmcss(handle) => {
                    AvRevertMmThreadCharacteristics(handle);
                }
                Raised::Priority(old) => {
                    SetThreadPriority(GetCurrentThread(), old);
                }
            }
        }
    }
}
