//! A first-fit allocator over the units of a GPU arena (`Arena`): the places of the levels'
//! input streams, delay lines and spectra in their class's buffers.
//!
//! Uses nothing else of the crate.

use std::ops::Range;

/// A first-fit allocator over units of an arena.
#[derive(Debug, Default)]
pub(super) struct Arena {
    /// High-water mark.
    pub(super) end: u32,
    free: Vec<Range<u32>>,
}

impl Arena {
    pub(super) fn alloc(&mut self, len: u32) -> u32 {
        if let Some(idx) = self.free.iter().position(|r| r.len() as u32 >= len) {
            let start = self.free[idx].start;
            self.free[idx].start += len;
            if self.free[idx].is_empty() {
                self.free.remove(idx);
            }
            return start;
        }
        let start = self.end;
        self.end += len;
        start
    }

    pub(super) fn release(&mut self, start: u32, len: u32) {
        if len == 0 {
            return;
        }
        self.free.push(start..start + len);
        self.free.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<u32>> = Vec::with_capacity(self.free.len());
        for range in self.free.drain(..) {
            match merged.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                _ => merged.push(range),
            }
        }
        if let Some(last) = merged.last()
            && last.end == self.end
        {
            self.end = last.start;
            merged.pop();
        }
        self.free = merged;
    }
}
