//! What this process holds at one moment: resident memory, file descriptors and threads, read
//! from `/proc/self`. The soak judges their growth; the benchmark reports memory per instance.
//!
//! Uses nothing of the crate.

/// Resident memory, file descriptors and threads of this process at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resources {
    /// Resident set size (`VmRSS` of `/proc/self/status`), in KiB.
    pub rss_kb: u64,
    /// Open file descriptors (entries of `/proc/self/fd`).
    pub fds: usize,
    /// Threads (entries of `/proc/self/task`).
    pub threads: usize,
}

impl Resources {
    /// Reads `/proc/self`. Allocates; Linux only (elsewhere every field reads 0).
    ///
    /// With glibc, first returns the allocator's free pages to the system (`malloc_trim`):
    /// glibc keeps freed memory of every thread's arena mapped at whatever high-water mark the
    /// largest engine left, so without this the resident size says more about the order of the
    /// IR switches than about what is still allocated.
    pub fn sample() -> Self {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: `malloc_trim` only releases free memory; it is safe at any time.
        unsafe {
            libc::malloc_trim(0);
        }
        let count = |path: &str| std::fs::read_dir(path).map_or(0, |dir| dir.count());
        let rss_kb = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix("VmRSS:"))
                    .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0);
        Self {
            rss_kb,
            fds: count("/proc/self/fd"),
            threads: count("/proc/self/task"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_read_this_process() {
        let resources = Resources::sample();
        assert!(resources.rss_kb > 0 && resources.fds >= 3 && resources.threads >= 1);
    }
}
