//! The host's pace: how far ahead of real time the host is running ([`HostPace`]), and so
//! how long the audio thread may wait for a worker result that is due but not ready
//! ([`Wait`]).
//!
//! Hosts do not always call at real-time pace in real-time mode. REAPER and Bitwig render
//! ahead of the playback position in bursts (anticipative processing); some hosts bounce
//! without announcing offline mode; others split one device period into several calls back to
//! back. When the host is ahead, the audio it asks for now is played only later, so the audio
//! thread can wait for a late result instead of dropping it, and the output is the offline
//! render's, sample for sample.
//!
//! # The estimate
//!
//! The engine keeps an *anchor*: a wall-clock instant and the stream position of the call
//! that started then. At each call that starts at position `p` at wall time `t`,
//!
//! ```text
//! lead = (p - anchor position) / sample rate - (t - anchor instant)
//! ```
//!
//! is the audio the host has delivered since the anchor, minus the time that has passed: how
//! far ahead of real time it runs now. The audio of this call itself is not counted, so a host
//! at exact real-time pace reads 0, with one call's duration left as its own deadline.
//!
//! The anchor is renewed (the lead is 0 again) when:
//!
//! - the engine is new, was reset, or switched between offline and real-time mode;
//! - the lead would be negative: the host is behind (late calls) or paused;
//! - calls resume after a pause: the time since the previous call started (or since its last
//!   wait ended) is more than twice that call's audio plus [`PAUSE_SLACK`]. A host that stops
//!   and starts again (each start of playback) may have lost its lead while it stopped, and
//!   the estimate must not keep the lead of before.
//!
//! The estimate is a lower bound of the host's real lead as long as the host was not behind
//! its own deadline at the anchor (it would be dropping audio already), up to two errors:
//!
//! - call jitter: a call that comes late re-anchors, the next one on time then reads a lead of
//!   up to the jitter (tenths of a millisecond, a few milliseconds on a loaded machine);
//! - clock drift: the audio device's clock and the system's may differ by up to about 100 ppm.
//!   The margin below grows by [`DRIFT_PPM`] of the time since the anchor to cover it.
//!
//! **Split periods.** A host that splits one device period of `N` samples into calls of `n`
//! back to back shows, in the `k`-th call of a period, a lead of `k` calls' audio minus the
//! time the calls took. The period's deadline is its end, so that lead is real: it is time the
//! host left for the rest of the period. The gap after a period's last call re-anchors (a
//! "pause" of about one period), so the lead never grows past one period.
//!
//! # The rule
//!
//! When a result is due and not ready, the audio thread:
//!
//! - offline mode: waits for it, however long it takes ([`Wait::Forever`]);
//! - real-time mode, lead above the margin ([`WAIT_MARGIN`] plus the drift allowance): waits
//!   until the result is ready, but never past the moment the lead has shrunk to the margin
//!   ([`Wait::Until`], an absolute instant fixed at the start of the call), then applies the
//!   late policy;
//! - real-time mode otherwise (a host at real-time pace): does not wait; the late policy
//!   applies as before ([`crate::engine::worker::late_policy`]).
//!
//! So a call waits at most `lead - margin`: nothing at real-time pace, at most one period
//! minus [`WAIT_MARGIN`] over all the calls of a split period, and with a host ahead, no more
//! than its lead minus the margin, which the host keeps for its own work. The same rule holds
//! for GPU levels (the hub's results come through the same slots). The waits, their longest
//! and their total are counted ([`crate::engine::worker::LevelStats`]) and reported by the bench.
//! Apart from them the worker counts how long the waits ran past their deadlines: the system's
//! wake-up latency, which the rule cannot choose (about 0.6 ms a wait under Wine, where the
//! wait polls in sleeps of 100 us; 0.1 to 0.3 ms on Linux's futex on the 2-core VM).
//!
//! Uses nothing of the engine.

use std::time::{Duration, Instant};

/// The lead a host keeps for its own work: the audio thread never waits past the moment the
/// host's lead has shrunk to this (plus the drift allowance).
pub const WAIT_MARGIN: Duration = Duration::from_millis(5);
/// Clock drift allowed for, in parts per million of the time since the anchor, added to the
/// margin (the audio device's clock against the system's).
pub const DRIFT_PPM: f64 = 200.0;
/// A gap between calls longer than twice the previous call's audio plus this is a pause, after
/// which the anchor is renewed.
pub const PAUSE_SLACK: Duration = Duration::from_millis(1);

/// How long the audio thread may wait for a due result that is not ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// At real-time pace: a result not ready when due is late (the late policy).
    Never,
    /// The host is ahead: wait until `deadline` at most, then the late policy. `ended` is
    /// when the call's last wait ended, if it waited.
    Until {
        deadline: Instant,
        ended: Option<Instant>,
    },
    /// Offline mode: wait however long it takes.
    Forever,
}

impl Wait {
    /// Whether the audio thread may wait at all.
    pub fn may_wait(self) -> bool {
        self != Self::Never
    }

    /// Whether this is offline mode's unbounded wait.
    pub fn is_forever(self) -> bool {
        self == Self::Forever
    }
}

/// What the engine knows of the host's pace (see the module docs). Audio thread; never
/// allocates.
#[derive(Debug, Clone)]
pub struct HostPace {
    sample_rate: f64,
    /// The anchor: a call started at this instant at this stream position (or the same point
    /// of the host's schedule, moved along it by [`Self::moved`]).
    anchor: Option<(Instant, u64)>,
    /// When the anchor was renewed, for the drift allowance.
    anchored_at: Instant,
    /// The previous call: when it started (or its last wait ended), where it ended, and its
    /// length in samples.
    last: Option<(Instant, u64, u64)>,
}

impl HostPace {
    /// A pace for a stream at `sample_rate` Hz, with no anchor yet.
    pub fn new(sample_rate: u32) -> Self {
        Self {
            sample_rate: f64::from(sample_rate.max(1)),
            anchor: None,
            anchored_at: Instant::now(),
            last: None,
        }
    }

    /// Forgets the anchor: the next call starts a new one (reset, mode switch).
    pub fn forget(&mut self) {
        self.anchor = None;
        self.last = None;
    }

    fn seconds(&self, samples: u64) -> f64 {
        samples as f64 / self.sample_rate
    }

    /// A call of `len` samples starts at stream position `position` at `now`: renews the
    /// anchor where the module docs say, and returns how long the call may wait for a result.
    pub fn call(&mut self, now: Instant, position: u64, len: usize) -> Wait {
        let resumed = match self.last {
            Some((busy_until, end, last_len)) => {
                end != position
                    || now.saturating_duration_since(busy_until).as_secs_f64()
                        > 2.0 * self.seconds(last_len) + PAUSE_SLACK.as_secs_f64()
            }
            None => true,
        };
        self.last = Some((now, position + len as u64, len as u64));
        let (anchor_time, anchor_position) = match self.anchor {
            Some(anchor) if !resumed && position >= anchor.1 => anchor,
            _ => {
                self.anchored_at = now;
                (now, position)
            }
        };
        let lead = self.seconds(position - anchor_position) - seconds_since(anchor_time, now);
        if lead < 0.0 {
            // Behind: the host calls late. Start again from here.
            self.anchor = Some((now, position));
            self.anchored_at = now;
            return Wait::Never;
        }
        self.anchor = Some((anchor_time, anchor_position));
        let anchor_age = now
            .saturating_duration_since(self.anchored_at)
            .as_secs_f64();
        let margin = WAIT_MARGIN.as_secs_f64() + DRIFT_PPM * 1e-6 * anchor_age;
        if lead <= margin {
            Wait::Never
        } else {
            Wait::Until {
                deadline: now + Duration::from_secs_f64(lead - margin),
                ended: None,
            }
        }
    }

    /// The call that got `wait` from [`Self::call`] has finished: a wait it made counts as
    /// time the host was busy, not as a pause.
    pub fn end_call(&mut self, wait: Wait) {
        if let (
            Wait::Until {
                ended: Some(ended), ..
            },
            Some(last),
        ) = (wait, &mut self.last)
        {
            last.0 = last.0.max(ended);
        }
    }

    /// This estimate for an engine whose stream position is `to` when this one's is `from`:
    /// an engine that takes over from another (an IR swap) keeps the host's lead, which the
    /// swap does not change.
    pub fn moved(&self, from: u64, to: u64) -> Self {
        // The anchor moves along the host's schedule to the position `from`, which becomes
        // `to`: the same lead at every later call.
        let anchor = self.anchor.and_then(|(time, position)| {
            let ahead = from.checked_sub(position)?;
            Some((time + Duration::from_secs_f64(self.seconds(ahead)), to))
        });
        let last = self
            .last
            .and_then(|(time, end, len)| Some((time, (end + to).checked_sub(from)?, len)));
        Self {
            sample_rate: self.sample_rate,
            anchor: last.and(anchor),
            anchored_at: self.anchored_at,
            last: anchor.and(last),
        }
    }

    /// The host's estimated lead over real time at `now` for a call at `position`, in
    /// seconds (0 without an anchor). For tests and diagnostics.
    pub fn lead_s(&self, now: Instant, position: u64) -> f64 {
        self.anchor.map_or(0.0, |(time, anchor_position)| {
            self.seconds(position.saturating_sub(anchor_position)) - seconds_since(time, now)
        })
    }
}

/// `now - then` in seconds, negative when `then` is later (an anchor moved along the host's
/// schedule may lie ahead of the clock).
fn seconds_since(then: Instant, now: Instant) -> f64 {
    match now.checked_duration_since(then) {
        Some(since) => since.as_secs_f64(),
        None => -then.duration_since(now).as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: u32 = 48_000;
    const MS: Duration = Duration::from_millis(1);

    /// A host's pace after a burst from `start`: 100 calls of 480 samples (1 s of audio) in
    /// 100 ms.
    fn after_a_burst(start: Instant) -> HostPace {
        let mut pace = HostPace::new(RATE);
        for call in 0..100u64 {
            pace.call(start + MS * call as u32, call * 480, 480);
        }
        pace
    }

    fn deadline(wait: Wait) -> Option<Instant> {
        match wait {
            Wait::Until { deadline, .. } => Some(deadline),
            _ => None,
        }
    }

    /// The deadline a call of `len` samples at `position` gets at `now`, if it may wait.
    fn deadline_of(
        pace: &mut HostPace,
        now: Instant,
        position: u64,
        len: usize,
    ) -> Option<Instant> {
        deadline(pace.call(now, position, len))
    }

    #[test]
    fn a_host_at_real_time_pace_never_waits() {
        let start = Instant::now();
        let mut pace = HostPace::new(RATE);
        // 480 samples = 10 ms, each call on time, then one 3 ms late and the next on time.
        for call in 0..100u64 {
            let wait = pace.call(start + 10 * MS * call as u32, call * 480, 480);
            assert_eq!(wait, Wait::Never, "call {call}");
        }
        assert_eq!(pace.call(start + 1003 * MS, 100 * 480, 480), Wait::Never);
        // The late call re-anchored: the next one on time reads the jitter as lead, 3 ms, under
        // the margin.
        assert_eq!(pace.call(start + 1010 * MS, 101 * 480, 480), Wait::Never);
        assert!((pace.lead_s(start + 1010 * MS, 101 * 480) - 0.003).abs() < 1e-9);
    }

    #[test]
    fn a_host_ahead_may_wait_for_its_lead_minus_the_margin() {
        let start = Instant::now();
        let mut pace = after_a_burst(start);
        let now = start + 100 * MS;
        let wait = pace.call(now, 100 * 480, 480);
        let lead = 1.0 - 0.1;
        let margin = WAIT_MARGIN.as_secs_f64() + DRIFT_PPM * 1e-6 * 0.1;
        let expected = now + Duration::from_secs_f64(lead - margin);
        let got = deadline(wait).expect("may wait");
        assert!(got.max(expected) - got.min(expected) < Duration::from_micros(1));

        // Then at real-time pace, 10 ms a call: the lead stays.
        let now = start + 110 * MS;
        let wait = pace.call(now, 101 * 480, 480);
        assert!(deadline(wait).expect("may wait") > now + 800 * MS);
    }

    #[test]
    fn a_pause_renews_the_anchor() {
        let start = Instant::now();
        let mut pace = after_a_burst(start);
        // Stopped for 50 ms (more than twice a call's 10 ms): the lead before the pause is gone.
        let now = start + 150 * MS;
        assert_eq!(pace.call(now, 100 * 480, 480), Wait::Never);
        assert_eq!(pace.lead_s(now, 100 * 480), 0.0);

        // A call that waited is not a pause: the gap is counted from the wait's end.
        let mut pace = after_a_burst(start);
        let wait = pace.call(start + 100 * MS, 100 * 480, 480);
        let Wait::Until { deadline, .. } = wait else {
            panic!("may wait");
        };
        pace.end_call(Wait::Until {
            deadline,
            ended: Some(start + 160 * MS),
        });
        assert!(deadline_of(&mut pace, start + 161 * MS, 101 * 480, 480).is_some());
    }

    #[test]
    fn a_split_period_waits_within_the_period() {
        // 1024 samples a period, split into 16 calls of 64 back to back, 0.1 ms each.
        let start = Instant::now();
        let mut pace = HostPace::new(RATE);
        let period = Duration::from_secs_f64(1024.0 / f64::from(RATE));
        for period_idx in 0..20u32 {
            let period_start = start + period * period_idx;
            for call in 0..16u32 {
                let now = period_start + Duration::from_micros(100) * call;
                let position = u64::from(period_idx * 1024 + call * 64);
                if let Some(deadline) = deadline_of(&mut pace, now, position, 64) {
                    // Never past the period's end minus the margin.
                    assert!(deadline + WAIT_MARGIN <= period_start + period);
                    assert!(call >= 4, "the lead of call {call} is under the margin");
                }
            }
        }
    }

    #[test]
    fn a_discontinuous_stream_or_a_reset_renews_the_anchor() {
        let start = Instant::now();
        let mut pace = after_a_burst(start);
        assert_eq!(pace.call(start + 100 * MS, 5 * 480, 480), Wait::Never);
        for call in 0..100u64 {
            pace.call(start + MS * (101 + call as u32), (6 + call) * 480, 480);
        }
        pace.forget();
        assert_eq!(pace.call(start + 202 * MS, 106 * 480, 480), Wait::Never);
    }

    #[test]
    fn an_engine_that_takes_over_keeps_the_lead() {
        let start = Instant::now();
        let mut pace = HostPace::new(RATE);
        for call in 0..100u64 {
            pace.call(start + MS * call as u32, 1000 + call * 480, 480);
        }
        // The new engine's stream starts at 7.
        let mut moved = pace.moved(1000 + 100 * 480, 7);
        let now = start + 100 * MS;
        assert_eq!(moved.lead_s(now, 7), pace.lead_s(now, 1000 + 100 * 480));
        assert_eq!(
            deadline(moved.call(now, 7, 480)),
            deadline(pace.call(now, 1000 + 100 * 480, 480))
        );
    }

    #[test]
    fn the_margin_grows_with_the_time_since_the_anchor() {
        // A host 20 ms ahead at real-time pace: after 100 s of anchor age the drift allowance
        // (20 ms) and the margin leave nothing to wait for.
        let start = Instant::now();
        let mut pace = HostPace::new(RATE);
        pace.call(start, 0, 960);
        let mut waits = Vec::new();
        for call in 1..=10_000u64 {
            let now = start + Duration::from_millis(call * 20) - 20 * MS;
            waits.push(deadline_of(&mut pace, now, call * 960, 960).is_some());
        }
        assert!(waits[10], "20 ms ahead early on");
        assert!(
            !waits[9_999],
            "no wait once the drift allowance ate the lead"
        );
    }
}
