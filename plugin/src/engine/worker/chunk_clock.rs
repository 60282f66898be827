//! Waking: how an idle worker times its own wake-ups from the chunks' hand-over times
//! (`ChunkClock`), so the audio thread rarely pays for waking it.
//!
//! Waking a sleeping thread costs the waker a system call and, when the thread sleeps on an
//! idle core, an inter-processor interrupt: 20 us on average on the 2-core VMs we measure on,
//! paid on the audio thread at every chunk of the smallest worker level. So an idle worker
//! wakes itself instead: chunks arrive every `P` samples of host time, and the audio thread
//! stamps each one with the time it handed it over (one clock read, through the vDSO), so the
//! worker learns the interval from exact arrival times however late it looked: a timer that
//! fires late (a virtual machine's often do, by 0.1 ms or more) or a backlog does not blur
//! them. It sleeps on a timer until shortly before the next chunk is due ([`WAKE_EARLY`]) and
//! then checks every [`POLL_INTERVAL`]. Only when no chunk has come [`WAKE_WINDOW`] after its
//! expected time (a host that stopped, or calls irregularly) does it raise `needs_wake`, sleep
//! until the audio thread wakes it, as before, and learn the interval afresh. Offline mode
//! always wakes the worker (the audio thread waits for it anyway) and leaves its chunks
//! unstamped, so an offline pace never becomes the worker's timing. The bench reports the
//! wakes the audio thread made (`wakes_per_s`).
//!
//! A host that runs ahead of real time hands chunks over in bursts, far faster than the pace
//! the worker learnt. So a worker sleeping on its timer publishes when it will look next
//! (`own_wake_at`), and the audio thread wakes it when a chunk comes more than
//! [`EARLY_CHUNK_WAKE`] before that: a chunk handed over early is started at once, and the
//! clock learns the new interval from the stamps. At real-time pace chunks come within the
//! calls' jitter of the expected time, and the worker is already polling for them.
//!
//! Uses nothing of the engine; the worker thread ([`super::thread`]) keeps one clock.

use std::time::{Duration, Instant};

/// A self-timed worker wakes this long before its next chunk is expected (see the module docs).
pub const WAKE_EARLY: Duration = Duration::from_micros(150);
/// Then checks for the chunk this often.
pub const POLL_INTERVAL: Duration = Duration::from_micros(100);
/// The audio thread wakes a worker sleeping on its timer when a chunk comes this long before
/// the worker would look for it.
pub const EARLY_CHUNK_WAKE: Duration = Duration::from_micros(500);
/// And gives up timing itself (asks to be woken) this long after the expected time, or a
/// quarter of the interval if that is shorter.
pub const WAKE_WINDOW: Duration = Duration::from_millis(2);

/// What an idle worker knows of the chunks' timing (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ChunkClock {
    /// The last chunk seen: its job number and when the audio thread handed it over.
    last_arrival: Option<(u64, Instant)>,
    /// Estimated interval between chunks.
    interval: Option<Duration>,
}

impl ChunkClock {
    /// When the next chunk is expected: one interval after the last one came; `None` while the
    /// timing is unknown or was missed, when the worker sleeps until woken.
    fn expected(&self) -> Option<Instant> {
        Some(self.last_arrival?.1 + self.interval?)
    }

    /// A chunk came with no time (offline mode): the worker will be woken for the next one.
    pub(crate) fn forget(&mut self) {
        self.last_arrival = None;
    }

    /// Job `job` was handed over at `submitted_at` (stamped by the audio thread, so the time
    /// is exact however late the worker saw it).
    pub(crate) fn arrived(&mut self, job: u64, submitted_at: Instant) {
        if let Some((last_job, last_time)) = self.last_arrival
            && job > last_job
        {
            let measured =
                submitted_at.saturating_duration_since(last_time) / (job - last_job) as u32;
            // Smoothed, so one late host call does not move the next wake-up much.
            self.interval = Some(match self.interval {
                Some(interval) => (interval * 3 + measured) / 4,
                None => measured,
            });
        }
        self.last_arrival = Some((job, submitted_at));
    }

    /// How long an idle worker may sleep on its own timer at `now`: until shortly before the
    /// next chunk is expected, then a poll interval at a time; `None` when it must ask to be
    /// woken instead.
    pub(crate) fn own_sleep(&mut self, now: Instant) -> Option<Duration> {
        let (Some(expected), Some(interval)) = (self.expected(), self.interval) else {
            return None;
        };
        if now + WAKE_EARLY < expected {
            return Some(expected - WAKE_EARLY - now);
        }
        if now < expected + WAKE_WINDOW.min(interval / 4) {
            return Some(POLL_INTERVAL);
        }
        // Missed: the host stopped or calls irregularly, or the interval was learnt from a
        // burst of chunks after a stall. Start over, interval included, from the next two
        // arrivals; keeping a wrong interval would miss every chunk from then on, each costing
        // the audio thread a wake.
        *self = Self::default();
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_chunk_clock_learns_the_interval_from_the_hand_over_times() {
        let start = Instant::now();
        let mut clock = ChunkClock::default();
        // The first chunk gives no interval yet: the worker will ask to be woken.
        clock.arrived(0, start);
        assert_eq!(clock.expected(), None);
        clock.arrived(1, start + 10 * MS);
        assert_eq!(clock.interval, Some(10 * MS));
        assert_eq!(clock.expected(), Some(start + 20 * MS));

        // A host call 2 ms late moves the estimate by a quarter of the error, and the next
        // chunk is expected one interval after this one came.
        clock.arrived(2, start + 22 * MS);
        assert_eq!(clock.interval, Some(10 * MS + MS / 2));
        assert_eq!(clock.expected(), Some(start + 32 * MS + MS / 2));

        // An offline chunk has no time: the worker asks to be woken. The next stamped chunk
        // starts the grid again with the interval it knew, and no interval is measured across
        // the gap.
        clock.forget();
        assert_eq!(clock.expected(), None);
        clock.arrived(3, start + 100 * MS);
        assert_eq!(clock.interval, Some(10 * MS + MS / 2));
        assert_eq!(clock.expected(), Some(start + 110 * MS + MS / 2));

        // Idle: on its timer until shortly before the next chunk, then polling, and past the
        // window it starts over and asks to be woken.
        let expected = clock.expected().unwrap();
        assert_eq!(
            clock.own_sleep(expected - 5 * MS),
            Some(5 * MS - WAKE_EARLY)
        );
        assert_eq!(clock.own_sleep(expected), Some(POLL_INTERVAL));
        assert_eq!(
            clock.own_sleep(expected + WAKE_WINDOW / 2),
            Some(POLL_INTERVAL)
        );
        assert_eq!(clock.own_sleep(expected + WAKE_WINDOW), None);
        assert_eq!(clock.interval, None);
        assert_eq!(clock.own_sleep(expected + WAKE_WINDOW), None);

        // A dropped chunk (no job for it) spreads its gap over the jobs in between.
        let mut clock = ChunkClock::default();
        clock.arrived(5, start);
        clock.arrived(7, start + 20 * MS);
        assert_eq!(clock.interval, Some(10 * MS));
    }
}
