//! What this process holds at one moment: resident memory, open files (descriptors, or handles
//! on Windows) and threads. The soak judges their growth; the benchmark reports memory per
//! instance.
//!
//! Where the numbers come from:
//!
//! - Linux: `/proc/self` (`VmRSS` of `status`, the entries of `fd` and `task`).
//! - Windows: the working set of `K32GetProcessMemoryInfo` (the pages of the process in physical
//!   memory, Windows' resident set), `GetProcessHandleCount` (every kernel handle the process
//!   holds: files, but also events, threads, registry keys, ... ; the Windows analogue of file
//!   descriptors, so its baseline is higher, a few hundred) and the threads of a Toolhelp32
//!   snapshot whose owner is this process. Under Wine (8.0) the handle count reads 0: its
//!   `GetProcessHandleCount` says so.
//! - macOS: `proc_pidinfo(PROC_PIDTASKINFO)` (resident size and thread count of the task) and
//!   the entries of `/dev/fd` (the process's descriptors).
//! - Elsewhere every field reads 0 but the pool's.
//! - Everywhere: the engine's huge-page pool's own counts ([`crate::engine::memory::pages`]).
//!
//! Uses the engine's pages.

/// Resident memory, open descriptors (handles on Windows) and threads of this process at one
/// moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// Resident memory, in KiB: `VmRSS` of `/proc/self/status` on Linux, the working set on
    /// Windows, the task's resident size on macOS.
    pub rss_kb: u64,
    /// Open file descriptors (entries of `/proc/self/fd`, of `/dev/fd` on macOS); on Windows
    /// the process's handles (`GetProcessHandleCount`: files and every other kernel object).
    pub fds: usize,
    /// Threads (entries of `/proc/self/task` on Linux).
    pub threads: usize,
    /// Memory the allocator has handed out and not had back, in KiB: with glibc, `mallinfo2`'s
    /// `uordblks` (in use in the arenas) plus `hblkhd` (blocks mapped on their own); 0
    /// elsewhere. Unlike the resident size it does not depend on which thread's arena holds
    /// what, or on how the freed memory lies in the arenas.
    pub heap_kb: u64,
    /// The engine's huge-page pool's buffers alive, in KiB
    /// ([`crate::engine::memory::pages::pool_stats`]): exact, whatever the blocks they lie in.
    pub pool_live_kb: u64,
    /// The blocks mapped for those buffers, in KiB: in `rss_kb` as far as touched, and whole
    /// while any buffer of theirs lives.
    pub pool_mapped_kb: u64,
}

impl Resources {
    /// Reads the process's counts (see the module docs for the sources). Allocates on Linux
    /// and macOS. A count the OS does not give reads 0, and so does every field but the pool's
    /// on other systems.
    ///
    /// With glibc, first returns the allocator's free pages to the system (`malloc_trim`):
    /// glibc keeps freed memory of every thread's arena mapped at whatever high-water mark the
    /// largest engine left, so without this the resident size says more about the order of the
    /// IR switches than about what is still allocated.
    pub fn sample() -> Self {
        let pool = crate::engine::memory::pages::pool_stats();
        Self {
            pool_live_kb: pool.live_bytes as u64 / 1024,
            pool_mapped_kb: pool.mapped_bytes as u64 / 1024,
            ..Self::sample_os()
        }
    }

    fn sample_os() -> Self {
        #[cfg(target_os = "linux")]
        {
            linux()
        }
        #[cfg(windows)]
        {
            windows::sample()
        }
        #[cfg(target_os = "macos")]
        {
            macos()
        }
        #[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
        {
            Self::default()
        }
    }
}

/// Entries of a directory (0 if it cannot be read).
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn count_entries(path: &str) -> usize {
    std::fs::read_dir(path).map_or(0, |dir| dir.count())
}

#[cfg(target_os = "linux")]
fn linux() -> Resources {
    #[cfg(target_env = "gnu")]
    // SAFETY: `malloc_trim` only releases free memory; it is safe at any time.
    unsafe {
        libc::malloc_trim(0);
    }
    let rss_kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    #[cfg(target_env = "gnu")]
    // SAFETY: `mallinfo2` only reads the allocator's counters.
    let heap_kb = unsafe {
        let info = libc::mallinfo2();
        (info.uordblks + info.hblkhd) as u64 / 1024
    };
    #[cfg(not(target_env = "gnu"))]
    let heap_kb = 0;
    Resources {
        rss_kb,
        fds: count_entries("/proc/self/fd"),
        threads: count_entries("/proc/self/task"),
        heap_kb,
        ..Resources::default()
    }
}

#[cfg(target_os = "macos")]
fn macos() -> Resources {
    // SAFETY: a zeroed `proc_taskinfo` is valid (plain integers).
    let mut info: libc::proc_taskinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_taskinfo>() as libc::c_int;
    // SAFETY: our own pid and a writable buffer of `size` bytes; the call returns the bytes it
    // wrote, anything else is a failure.
    let written = unsafe {
        libc::proc_pidinfo(
            libc::getpid(),
            libc::PROC_PIDTASKINFO,
            0,
            std::ptr::addr_of_mut!(info).cast(),
            size,
        )
    };
    let (rss_kb, threads) = if written == size {
        (
            info.pti_resident_size / 1024,
            usize::try_from(info.pti_threadnum).unwrap_or(0),
        )
    } else {
        (0, 0)
    };
    Resources {
        rss_kb,
        fds: count_entries("/dev/fd"),
        threads,
        ..Resources::default()
    }
}

/// The Windows calls (kernel32, through `windows-sys`).
#[cfg(windows)]
mod windows {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
    };
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, GetCurrentProcessId, GetProcessHandleCount,
    };

    use super::Resources;

    pub(super) fn sample() -> Resources {
        Resources {
            rss_kb: working_set_kb(),
            fds: handles(),
            threads: threads(),
            ..Resources::default()
        }
    }

    /// The working set, in KiB (0 if the call fails).
    fn working_set_kb() -> u64 {
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        let mut counters = PROCESS_MEMORY_COUNTERS {
            cb: size,
            ..Default::default()
        };
        // SAFETY: the current process's pseudo handle and a writable structure of `size`
        // bytes; failure is the return value.
        let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &mut counters, size) };
        if ok == 0 {
            return 0;
        }
        counters.WorkingSetSize as u64 / 1024
    }

    /// The handles the process holds (0 if the call fails).
    fn handles() -> usize {
        let mut count = 0u32;
        // SAFETY: the current process's pseudo handle and a writable count.
        let ok = unsafe { GetProcessHandleCount(GetCurrentProcess(), &mut count) };
        if ok == 0 { 0 } else { count as usize }
    }

    /// The threads of this process in a snapshot of the system's threads (0 if none can be
    /// taken). The snapshot lists every process's threads: ours are those it says we own.
    fn threads() -> usize {
        // SAFETY: a plain call; failure is `INVALID_HANDLE_VALUE`. The process id is ignored
        // for TH32CS_SNAPTHREAD.
        let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
        if snapshot == INVALID_HANDLE_VALUE || snapshot.is_null() {
            return 0;
        }
        // SAFETY: a plain query.
        let ours = unsafe { GetCurrentProcessId() };
        let mut entry = THREADENTRY32 {
            dwSize: std::mem::size_of::<THREADENTRY32>() as u32,
            ..Default::default()
        };
        let mut count = 0;
        // SAFETY: the snapshot handle just taken and a writable entry whose `dwSize` is set,
        // as the calls ask; the handle is closed once, after the last use.
        unsafe {
            let mut more = Thread32First(snapshot, &mut entry) != 0;
            while more {
                if entry.th32OwnerProcessID == ours {
                    count += 1;
                }
                more = Thread32Next(snapshot, &mut entry) != 0;
            }
            CloseHandle(snapshot);
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field is read on the systems that have a source: some memory, the standard
    /// streams (on Windows: at least the process's own handles), and this thread. Wine counts
    /// no handles.
    #[cfg(any(target_os = "linux", windows, target_os = "macos"))]
    #[test]
    fn resources_read_this_process() {
        let resources = Resources::sample();
        let fds_read = resources.fds >= 3 || (under_wine() && resources.fds == 0);
        assert!(
            resources.rss_kb > 0 && fds_read && resources.threads >= 1,
            "{resources:?}"
        );
    }

    /// Whether this Windows program runs under Wine (its ntdll exports `wine_get_version`).
    #[cfg(windows)]
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
        // SAFETY: NUL-terminated names; ntdll is loaded in every process and never unloaded.
        unsafe {
            let ntdll = GetModuleHandleA(c"ntdll.dll".as_ptr().cast());
            !ntdll.is_null() && GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast()).is_some()
        }
    }

    #[cfg(not(windows))]
    fn under_wine() -> bool {
        false
    }

    /// A thread started here shows in the count while it runs.
    #[cfg(any(target_os = "linux", windows, target_os = "macos"))]
    #[test]
    fn resources_count_a_new_thread() {
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let before = Resources::sample().threads;
        let thread = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            let _ = stop_rx.recv();
        });
        started_rx.recv().unwrap();
        let during = Resources::sample().threads;
        stop_tx.send(()).unwrap();
        thread.join().unwrap();
        // Other tests run threads of their own meanwhile: only ours is known to be there.
        assert!(
            during >= 2 && before >= 1,
            "before {before}, during {during}"
        );
    }
}
