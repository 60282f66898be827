//! Sample rings shared by the engine's head and levels.
//!
//! Both rings are allocated once, at their maximum size, when the engine is built (off the audio
//! thread), in huge pages where they are big enough and the block being filled has room for them
//! ([`PageBuf::resident_in_room`]: cut last, they never open a block); on the audio thread they
//! only read, write and clear in place.

use super::pages::PageBuf;

/// Input history of one input channel, mirrored so that any window of up to `len()` samples is
/// one contiguous slice (every sample is written twice, at `i` and `i + len`).
#[derive(Debug)]
pub struct InputRing {
    /// `2 * len` samples: the ring and its mirror.
    data: PageBuf,
    /// `len - 1`; `len` is a power of two.
    mask: usize,
}

impl InputRing {
    /// A ring holding at least `min_len` samples of history. Allocates.
    pub fn new(min_len: usize) -> Self {
        let len = min_len.max(1).next_power_of_two();
        Self {
            data: PageBuf::resident_in_room(2 * len),
            mask: len - 1,
        }
    }

    /// History length in samples.
    pub fn history_len(&self) -> usize {
        self.mask + 1
    }

    /// Stores the sample of absolute time `time`, in the ring and its mirror: the
    /// sample-by-sample reference the tests hold [`Self::write_slice`] to (the engine and the
    /// dry path write slices).
    #[cfg(test)]
    pub fn write(&mut self, time: u64, sample: f32) {
        let idx = time as usize & self.mask;
        self.data[idx] = sample;
        self.data[idx + self.mask + 1] = sample;
    }

    /// Stores `samples` as the times `[start, start + samples.len())`, at most the history's
    /// length, in the ring and its mirror: at most two copies into each half.
    #[inline]
    pub fn write_slice(&mut self, start: u64, samples: &[f32]) {
        let len = self.mask + 1;
        debug_assert!(samples.len() <= len);
        let first = start as usize & self.mask;
        let split = (len - first).min(samples.len());
        let (head, tail) = samples.split_at(split);
        self.data[first..first + split].copy_from_slice(head);
        self.data[len + first..len + first + split].copy_from_slice(head);
        self.data[..tail.len()].copy_from_slice(tail);
        self.data[len..len + tail.len()].copy_from_slice(tail);
    }

    /// Asks the caches for the lines that [`Self::write_slice`] of `len` samples at `start`
    /// will write, in the ring and its mirror.
    #[inline]
    pub fn prefetch(&self, start: u64, len: usize) {
        let ring_len = self.mask + 1;
        let first = start as usize & self.mask;
        let end = (first + len).min(ring_len);
        prefetch_for_write(&self.data[first..end]);
        prefetch_for_write(&self.data[ring_len + first..ring_len + end]);
    }

    /// The `len` samples of times `[end - len, end)`, oldest first. `len <= self.history_len()`.
    #[inline]
    pub fn window(&self, end: u64, len: usize) -> &[f32] {
        debug_assert!(len <= self.history_len());
        let stop = (end as usize & self.mask) + self.mask + 1;
        &self.data[stop - len..stop]
    }

    /// Forgets all history. Does not allocate.
    pub fn clear(&mut self) {
        self.data.fill(0.0);
    }
}

/// Output accumulator of one output channel: levels add their results at the future times they
/// are due, the audio thread reads and clears each sample as it plays it.
#[derive(Debug)]
pub struct OutputRing {
    data: PageBuf,
    mask: usize,
}

impl OutputRing {
    /// A ring that can hold results up to `max_ahead` samples in the future. Allocates.
    pub fn new(max_ahead: usize) -> Self {
        let len = (max_ahead + 1).next_power_of_two();
        Self {
            data: PageBuf::resident_in_room(len),
            mask: len - 1,
        }
    }

    /// Adds `samples` at times `[start, start + samples.len())`.
    #[inline]
    pub fn add(&mut self, start: u64, samples: &[f32]) {
        let first = start as usize & self.mask;
        let split = (self.data.len() - first).min(samples.len());
        let (head, tail) = samples.split_at(split);
        for (out, sample) in self.data[first..first + split].iter_mut().zip(head) {
            *out += sample;
        }
        for (out, sample) in self.data[..tail.len()].iter_mut().zip(tail) {
            *out += sample;
        }
    }

    /// Adds `samples` at times `[start, start + samples.len())`, the first `fade_len` of them
    /// faded in linearly (a late result joining mid-slot).
    pub fn add_faded_in(&mut self, start: u64, samples: &[f32], fade_len: usize) {
        for (offset, &sample) in samples.iter().enumerate() {
            self.data[(start as usize + offset) & self.mask] +=
                fade_in_gain(offset, fade_len) * sample;
        }
    }

    /// Adds the samples of times `[start, start + out.len())` to `out` and clears them.
    #[inline]
    pub fn drain_add(&mut self, start: u64, out: &mut [f32]) {
        let first = start as usize & self.mask;
        let split = (self.data.len() - first).min(out.len());
        let (head, tail) = out.split_at_mut(split);
        for (out, slot) in head.iter_mut().zip(&mut self.data[first..first + split]) {
            *out += *slot;
            *slot = 0.0;
        }
        for (out, slot) in tail.iter_mut().zip(&mut self.data[..]) {
            *out += *slot;
            *slot = 0.0;
        }
        // The next call's samples, most likely as many: fetched meanwhile.
        self.prefetch(start + out.len() as u64, out.len());
    }

    /// Clears all pending results. Does not allocate.
    pub fn clear(&mut self) {
        self.data.fill(0.0);
    }

    /// Asks the caches for the lines of times `[start, start + len)` (up to the ring's end), which
    /// [`Self::drain_add`] reads and clears.
    #[inline]
    pub fn prefetch(&self, start: u64, len: usize) {
        let first = start as usize & self.mask;
        prefetch_for_write(&self.data[first..(first + len).min(self.data.len())]);
    }
}

/// The gain of the sample `offset` samples into a linear fade-in of `fade_len` samples (1 from
/// there on): a late result joining mid-slot, in the rings or from its slot.
#[inline]
pub fn fade_in_gain(offset: usize, fade_len: usize) -> f32 {
    if offset < fade_len {
        (offset + 1) as f32 / (fade_len + 1) as f32
    } else {
        1.0
    }
}

/// Asks the caches to fetch the lines of `cells` for writing, ahead of a call that will write
/// them: a ring the audio thread walks through once per lap is out of its caches by the time
/// it comes round again, and the host's wait between calls hides the fetch. A hint only (no
/// memory access); nothing where the target has no such instruction.
#[inline]
pub fn prefetch_for_write<T>(cells: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
        let bytes = std::mem::size_of_val(cells);
        let start = cells.as_ptr() as *const i8;
        for offset in (0..bytes).step_by(64) {
            // SAFETY: a prefetch reads nothing and cannot fault; the address is inside `cells`.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(start.add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cells;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_written_as_their_samples_are() {
        let (mut by_sample, mut by_slice) = (InputRing::new(8), InputRing::new(8));
        let mut time = 0u64;
        for len in [3usize, 8, 1, 5, 7, 2, 8, 4] {
            let samples: Vec<f32> = (0..len).map(|i| (time + i as u64) as f32).collect();
            for (i, &sample) in samples.iter().enumerate() {
                by_sample.write(time + i as u64, sample);
            }
            by_slice.write_slice(time, &samples);
            time += len as u64;
            assert_eq!(*by_slice.data, *by_sample.data, "after {time}");
        }
    }

    #[test]
    fn input_windows_are_contiguous_across_the_wrap() {
        let mut ring = InputRing::new(8);
        for time in 0..20u64 {
            ring.write(time, time as f32);
        }
        assert_eq!(
            ring.window(20, 8),
            &[12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0]
        );
        assert_eq!(ring.window(17, 3), &[14.0, 15.0, 16.0]);
    }

    #[test]
    fn output_ring_adds_and_drains_across_the_wrap() {
        let mut ring = OutputRing::new(7);
        ring.add(6, &[1.0, 2.0, 3.0, 4.0]);
        ring.add(7, &[10.0, 10.0]);
        let mut out = [0.0; 5];
        ring.drain_add(5, &mut out);
        assert_eq!(out, [0.0, 1.0, 12.0, 13.0, 4.0]);
        let mut again = [0.0; 5];
        ring.drain_add(5, &mut again);
        assert_eq!(again, [0.0; 5]);
    }
}
