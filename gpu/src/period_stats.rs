//! What the hub's periods took, kept for status displays and the GPU check: the round trip of
//! each period, split into its phases, and grouped by the largest partition in its batch.
//!
//! A period's round trip ([`Convolver::execute`](crate::Convolver::execute)) has three phases:
//!
//! - *submit*: the staged chunks and job tables written to the device, the command buffer
//!   recorded and submitted (CPU work in wgpu and the driver);
//! - *wait*: the hub's thread waits for the GPU (the device's own work, its queue, and the
//!   driver's wake-up); its *CPU time* says whether the driver sleeps there or spins;
//! - *readback*: the results copied out of the mapped readback buffers.
//!
//! A late level needs to know which phase its tail comes from, and whether the periods that
//! carry a big level (one partition of 16384 samples for 256 paths) delay the small levels
//! batched with them: so every period also records its batch's largest partition
//! ([`PeriodStats::by_largest`]).
//!
//! Pure bookkeeping, no wgpu; the thread CPU clock is the one OS call (POSIX; `None` on
//! other systems, whose thread clocks tick too coarsely for a period of a millisecond).

/// Percentiles of a duration over recent periods, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundTrip {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest.
    pub max_us: f64,
    /// Periods measured.
    pub count: usize,
}

impl RoundTrip {
    /// The percentiles of `samples` (all zero when there are none).
    pub fn of(samples: &[f64]) -> Self {
        if samples.is_empty() {
            return Self::default();
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
        Self {
            p50_us: at(0.5),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: sorted[sorted.len() - 1],
            count: sorted.len(),
        }
    }
}

/// The phases of one period, in microseconds ([`crate::Convolver::phases`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    /// Writing the chunks and job tables, recording and submitting.
    pub submit_us: f64,
    /// Waiting for the GPU, wall time.
    pub wait_us: f64,
    /// CPU time of the waiting thread meanwhile (`None` without a thread CPU clock).
    pub wait_cpu_us: Option<f64>,
    /// Copying the results out.
    pub readback_us: f64,
    /// Largest partition size in the batch (0 for an empty period).
    pub largest_partition: usize,
    /// Whether the wait napped (polled between short sleeps) instead of blocking in the
    /// driver ([`crate::Convolver::set_napping`]).
    pub napped: bool,
}

/// One period as the hub saw it: its round trip (the whole of `execute`) and its phases.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Period {
    /// The whole round trip, in microseconds.
    pub round_trip_us: f64,
    /// Its phases.
    pub phases: Phases,
}

/// The recent periods' figures ([`PeriodLog::stats`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeriodStats {
    /// The submit phase.
    pub submit: RoundTrip,
    /// The wait, wall time.
    pub wait: RoundTrip,
    /// The readback.
    pub readback: RoundTrip,
    /// CPU time over wall time of the waits, summed over the periods (about 1 when the driver
    /// spins, near 0 when the thread sleeps); `None` without a thread CPU clock.
    pub wait_cpu_share: Option<f64>,
    /// Round trips grouped by the largest partition in the batch, smallest size first.
    pub by_largest: Vec<(usize, RoundTrip)>,
    /// Periods whose wait napped instead of blocking.
    pub napped: usize,
}

/// The last `capacity` periods, oldest overwritten first. [`Self::push`] never allocates; what
/// returns a `Vec` or [`PeriodStats`] does.
#[derive(Debug, Clone)]
pub struct PeriodLog {
    periods: Vec<Period>,
    next: usize,
    capacity: usize,
}

impl PeriodLog {
    /// An empty log of `capacity` periods (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            periods: Vec::with_capacity(capacity),
            next: 0,
            capacity,
        }
    }

    /// Records a period.
    pub fn push(&mut self, period: Period) {
        if self.periods.len() < self.capacity {
            self.periods.push(period);
        } else {
            self.periods[self.next] = period;
            self.next = (self.next + 1) % self.capacity;
        }
    }

    /// Periods kept.
    pub fn len(&self) -> usize {
        self.periods.len()
    }

    /// Whether no period was recorded.
    pub fn is_empty(&self) -> bool {
        self.periods.is_empty()
    }

    /// Round trips of every period kept, in no particular order.
    pub fn round_trips(&self) -> Vec<f64> {
        self.periods.iter().map(|p| p.round_trip_us).collect()
    }

    /// The newest `count` periods (fewer when fewer were kept), newest first.
    fn newest(&self, count: usize) -> impl Iterator<Item = &Period> {
        let kept = self.periods.len();
        // Once full, the newest entry is just before `next`.
        let newest_end = if kept < self.capacity {
            kept
        } else {
            self.next
        };
        (0..count.min(kept)).map(move |back| &self.periods[(newest_end + kept - 1 - back) % kept])
    }

    /// Round trips of the newest `count` periods (fewer when fewer were kept), newest first.
    pub fn newest_round_trips(&self, count: usize) -> Vec<f64> {
        self.newest(count).map(|p| p.round_trip_us).collect()
    }

    /// CPU time over wall time of the newest `count` periods' waits (`None` without a thread
    /// CPU clock, or before any wait).
    pub fn newest_wait_cpu_share(&self, count: usize) -> Option<f64> {
        let (wall, cpu) = self.newest(count).fold((0.0, Some(0.0)), |(wall, cpu), p| {
            (
                wall + p.phases.wait_us,
                cpu.zip(p.phases.wait_cpu_us).map(|(a, b)| a + b),
            )
        });
        cpu.filter(|_| wall > 0.0).map(|cpu| cpu / wall)
    }

    /// The figures of every period kept.
    pub fn stats(&self) -> PeriodStats {
        let of = |phase: fn(&Phases) -> f64| {
            RoundTrip::of(
                &self
                    .periods
                    .iter()
                    .map(|p| phase(&p.phases))
                    .collect::<Vec<_>>(),
            )
        };
        let mut sizes: Vec<usize> = self
            .periods
            .iter()
            .map(|p| p.phases.largest_partition)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        let by_largest = sizes
            .into_iter()
            .map(|size| {
                let trips: Vec<f64> = self
                    .periods
                    .iter()
                    .filter(|p| p.phases.largest_partition == size)
                    .map(|p| p.round_trip_us)
                    .collect();
                (size, RoundTrip::of(&trips))
            })
            .collect();
        PeriodStats {
            submit: of(|p| p.submit_us),
            wait: of(|p| p.wait_us),
            readback: of(|p| p.readback_us),
            wait_cpu_share: self.newest_wait_cpu_share(self.periods.len()),
            by_largest,
            napped: self.periods.iter().filter(|p| p.phases.napped).count(),
        }
    }
}

/// CPU time of the calling thread in microseconds, where the OS has a fine clock for it.
pub fn thread_cpu_us() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's duration.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
        ok.then_some(ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 * 1e-3)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn period(round_trip_us: f64, largest_partition: usize) -> Period {
        Period {
            round_trip_us,
            phases: Phases {
                submit_us: round_trip_us * 0.25,
                wait_us: round_trip_us * 0.5,
                wait_cpu_us: Some(round_trip_us * 0.1),
                readback_us: round_trip_us * 0.25,
                largest_partition,
                napped: largest_partition > 4096,
            },
        }
    }

    #[test]
    fn the_log_keeps_the_newest_periods() {
        let mut log = PeriodLog::new(3);
        assert!(log.is_empty());
        for trip in 1..=5 {
            log.push(period(f64::from(trip), 1024));
        }
        assert_eq!(log.len(), 3);
        assert_eq!(log.newest_round_trips(2), vec![5.0, 4.0]);
        assert_eq!(log.newest_round_trips(9), vec![5.0, 4.0, 3.0]);
        let mut kept = log.round_trips();
        kept.sort_by(f64::total_cmp);
        assert_eq!(kept, vec![3.0, 4.0, 5.0]);
    }

    #[test]
    fn stats_split_phases_and_batches() {
        let mut log = PeriodLog::new(16);
        for _ in 0..4 {
            log.push(period(100.0, 1024));
        }
        log.push(period(1000.0, 16384));
        let stats = log.stats();
        assert_eq!(stats.by_largest.len(), 2);
        assert_eq!(stats.by_largest[0].0, 1024);
        assert_eq!(stats.by_largest[0].1.max_us, 100.0);
        assert_eq!(stats.by_largest[0].1.count, 4);
        assert_eq!(stats.by_largest[1], (16384, RoundTrip::of(&[1000.0])));
        assert_eq!(stats.submit.max_us, 250.0);
        assert_eq!(stats.wait.p50_us, 50.0);
        let share = stats.wait_cpu_share.expect("every period had a CPU time");
        assert!((share - 0.2).abs() < 1e-12, "{share}");
        assert_eq!(stats.napped, 1);
    }

    #[test]
    fn the_newest_waits_say_whether_the_driver_spins() {
        let mut log = PeriodLog::new(8);
        assert_eq!(log.newest_wait_cpu_share(4), None);
        let mut spinning = period(100.0, 1024);
        spinning.phases.wait_cpu_us = Some(spinning.phases.wait_us);
        for _ in 0..8 {
            log.push(period(100.0, 1024));
        }
        for _ in 0..4 {
            log.push(spinning);
        }
        assert_eq!(log.newest_wait_cpu_share(4), Some(1.0));
        let half = log.newest_wait_cpu_share(8).unwrap();
        assert!((half - 0.6).abs() < 1e-12, "{half}");
    }

    #[test]
    fn no_cpu_share_without_a_clock() {
        let mut log = PeriodLog::new(4);
        let mut without = period(10.0, 2048);
        without.phases.wait_cpu_us = None;
        log.push(period(10.0, 2048));
        log.push(without);
        assert_eq!(log.stats().wait_cpu_share, None);
        assert_eq!(PeriodLog::new(4).stats(), PeriodStats::default());
    }

    #[test]
    fn the_thread_clock_counts_work_not_sleep() {
        let Some(start) = thread_cpu_us() else {
            return;
        };
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = thread_cpu_us().unwrap() - start;
        let spin_start = std::time::Instant::now();
        let before = thread_cpu_us().unwrap();
        let mut x = 0u64;
        while spin_start.elapsed().as_millis() < 30 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let spun = thread_cpu_us().unwrap() - before;
        assert!(slept < 15_000.0, "sleeping 30 ms cost {slept} us of CPU");
        assert!(spun > 1_000.0, "spinning 30 ms cost only {spun} us of CPU");
    }
}
