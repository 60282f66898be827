//! The results a worker level is playing, read straight from their slots into the host's
//! output at every call: the big ones ([`super::SLOT_PLAY_MIN`]; the small ones go into the
//! engine's output rings whole).
//!
//! A big result added to the output rings read the slot, read and wrote the ring, and the ring
//! was read and cleared again when it played; whole, it made one call put up to 768 KB into the
//! rings, and in pieces spread over its period (as it was before) each piece's call was still
//! the slow one, and the rings had to be as long as the level's delay. Played from the slot,
//! each call reads its own part of the result once, as it is due, and writes the host's buffer.
//!
//! The slot is then held until its last sample has played (one partition longer than when
//! the rings took the result: [`super::num_slots`] counts it). The sum is each output's ring
//! (the head, the levels on the audio thread and the small results) plus the big results in
//! level order, whatever the workers' timing, so host pacing still gives the offline render
//! bit for bit.
//!
//! A late result (see [`super::late_policy`]) plays from the boundary where it was found
//! complete, faded in over [`LATE_FADE_SAMPLES`]; what it would have played before stays
//! silent. Uses the job protocol ([`super::protocol`]), the late policy's fade and the rings'
//! fade gain and prefetch ([`crate::engine::memory::rings`]).

use std::ops::Range;

use super::late_policy::LATE_FADE_SAMPLES;
use super::protocol::Shared;
use crate::engine::memory::rings::{fade_in_gain, prefetch_for_write};

/// Results of one level playing at once, at most: they tile time, each `P` samples long, and
/// a quantum (at most `P`) holds the end of one and the start of the next.
const MAX_PLAYING: usize = 2;

/// A result being played: its slot, the time of its first sample (`due`), and the time
/// `from` which it plays (`due`, or later for a late result, faded in from there).
#[derive(Clone, Copy, Default)]
struct Playing {
    slot_idx: usize,
    due: u64,
    from: u64,
    faded: bool,
}

/// The results a level is playing, oldest first. Audio thread; never allocates.
#[derive(Default)]
pub(crate) struct Player {
    playing: [Playing; MAX_PLAYING],
    len: usize,
}

impl Player {
    /// Results playing now: the jobs `consumed..consumed + len()`.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether as many results play as a quantum holds: the next one waits for a retire.
    pub(crate) fn is_full(&self) -> bool {
        self.len == MAX_PLAYING
    }

    /// Forgets every result (a reset).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Removes the results whose last sample played before `now`; returns how many, which
    /// the level then consumes (oldest first, the order of the jobs).
    pub(crate) fn retire(&mut self, now: u64, partition_size: usize) -> usize {
        let ended = self.playing[..self.len]
            .iter()
            .take_while(|p| p.due + partition_size as u64 <= now)
            .count();
        self.playing.copy_within(ended..self.len, 0);
        self.len -= ended;
        ended
    }

    /// Starts the result in `slot_idx`, whose first sample is due at `due`; a late one plays
    /// from `from` on, faded in. The caller has seen its job completed (acquire) and keeps the
    /// slot until [`Self::retire`] returns it.
    pub(crate) fn start(&mut self, slot_idx: usize, due: u64, from: u64) {
        debug_assert!(!self.is_full(), "more results playing than a quantum holds");
        if self.is_full() {
            return;
        }
        self.playing[self.len] = Playing {
            slot_idx,
            due,
            from: from.max(due),
            faded: from > due,
        };
        self.len += 1;
    }

    /// Each result playing with its part of times `[start, end)`: the part's first time and
    /// its samples' range in the slot (results with nothing there left out).
    fn parts(
        &self,
        partition_size: usize,
        start: u64,
        end: u64,
    ) -> impl Iterator<Item = (&Playing, u64, Range<usize>)> {
        self.playing[..self.len].iter().filter_map(move |playing| {
            let lo = start.max(playing.from);
            let hi = end.min(playing.due + partition_size as u64);
            (lo < hi).then(|| {
                (
                    playing,
                    lo,
                    (lo - playing.due) as usize..(hi - playing.due) as usize,
                )
            })
        })
    }

    /// Adds what the results playing hold for times `[start, start + range.len())` to
    /// `outputs[..][range]`: each result's part of that span, straight from its slot.
    pub(crate) fn play(
        &self,
        shared: &Shared,
        start: u64,
        outputs: &mut [&mut [f32]],
        range: Range<usize>,
    ) {
        let end = start + range.len() as u64;
        for (playing, lo, slot_part) in self.parts(shared.partition_size, start, end) {
            let out_start = range.start + (lo - start) as usize;
            for (output_idx, output) in outputs.iter_mut().enumerate().take(shared.num_outputs) {
                // SAFETY: the job was completed (acquire) when it started playing, and its
                // slot is consumed only after it is retired.
                let result = unsafe { shared.result(playing.slot_idx, output_idx) };
                let out = &mut output[out_start..out_start + slot_part.len()];
                let result = &result[slot_part.clone()];
                if playing.faded && lo < playing.from + LATE_FADE_SAMPLES as u64 {
                    add_faded(out, result, (lo - playing.from) as usize);
                } else {
                    for (out, sample) in out.iter_mut().zip(result) {
                        *out += sample;
                    }
                }
            }
        }
    }

    /// Asks the caches for the slot lines of times `[start, start + len)` that
    /// [`Self::play`] will read, so that their misses overlap.
    pub(crate) fn prefetch(&self, shared: &Shared, start: u64, len: usize) {
        let end = start + len as u64;
        for (playing, _, slot_part) in self.parts(shared.partition_size, start, end) {
            for output_idx in 0..shared.num_outputs {
                // SAFETY: as in `play`.
                let result = unsafe { shared.result(playing.slot_idx, output_idx) };
                prefetch_for_write(&result[slot_part.clone()]);
            }
        }
    }
}

/// Adds `result` to `out`, the sample at `offset + k` from the start of a late result's play
/// faded in linearly over [`LATE_FADE_SAMPLES`].
fn add_faded(out: &mut [f32], result: &[f32], offset: usize) {
    for (k, (out, &sample)) in out.iter_mut().zip(result).enumerate() {
        *out += fade_in_gain(offset + k, LATE_FADE_SAMPLES) * sample;
    }
}
