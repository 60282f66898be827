//! Memory for what the engine streams every period, packed into transparent huge pages where
//! the OS offers them.
//!
//! A level's MAC reads its IR spectra and its FDL once per period, megabytes that no cache
//! holds, and in 4 KiB pages every 4 KiB of them costs a TLB miss and a page walk; the audio
//! thread's rings, the input history and the workers' result slots are spread over as many
//! pages, which the workers' streaming evicts from the TLB between calls. Measured on the
//! 2-core EPYC VM with glibc's heap in huge pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`),
//! 20 s runs side by side: 16 stereo 10 s reverbs at B = 64 in the offload mode, the audio
//! thread 0.0228 to 0.0168 CPU-s/s and the process 0.216 to 0.180; a dense 12 x 12 x 2 s
//! matrix at B = 128, 0.155 to 0.132 (with THP off, no difference). A plugin cannot set the
//! host's allocator, so the engine takes these buffers from here ([`PageBuf`]). With them here
//! (2026-11-30, 5 pairs): the offload run's audio thread 0.0221 to 0.0195, the process 0.215
//! to 0.202; the dense matrices 7 to 20 % less CPU in eight of nine cells
//! (`docs/benchmarks.md`). The spectra alone gained the offload run nothing: its audio
//! thread's rings, history and slots did it.
//!
//! Buffers of at least [`POOLED_MIN_BYTES`] come from blocks of 2 MiB-aligned anonymous memory
//! advised `MADV_HUGEPAGE` (Linux; elsewhere, or where a mapping fails, the heap), cut in order,
//! so that an engine's buffers lie packed in as few huge pages as they fill. Blocks are shared
//! by the whole process: a block lives while a buffer cut from it does and goes back to the OS
//! with the last (the pool holds only a weak reference to the block it is filling). A buffer of
//! half a huge page or more ([`OWN_BLOCK_BYTES`]) gets a block of its own, its length rounded up
//! to 4 KiB only: its last part, short of a huge page, stays in small pages. An engine's rings,
//! cut last, take the heap rather than open a block ([`PageBuf::resident_in_room`]). Only
//! threads that build engines take the pool's lock, never the audio thread, and they cut in
//! the build's order, so that an engine's buffers lie the same way in every run.
//!
//! So a buffer of 1 to 2 MiB (a stereo 10 s reverb's last level holds 1.8 MB spectra) lies in
//! small pages. Rounded up to a whole huge page (its rest taking smaller buffers), a lone stereo
//! 10 s engine took 3 to 11 % less CPU in the harness at blocks of 64, 256 and 1024 (5 rounds
//! alternated), but 16 of them paced at 64 took 1 to 21 % more, at zero latency and in the
//! offload mode (2 and 3 rounds); starting each such buffer a small page and a cache line
//! further than the one before (they all began on the same cache sets) evened that out and
//! gained nothing. Neither was kept (2026-11-30).
//!
//! A mapped page is backed at its first write. The buffers the audio thread writes (its
//! rings, the input history, the levels it runs) are made resident where the engine is built
//! ([`PageBuf::resident`], [`PageBuf::prefault`]): before, a stereo 10 s engine's audio thread
//! took over 300 page faults in its first seconds at block 64, as its history and delay lines
//! filled, and its calls' p99 over the first 3 s paced at real time was 30 to 65 us against 17
//! to 27 us since (2026-12-05, EPYC VM, 5 rounds alternated); with huge pages each such fault
//! zeroes 2 MiB and may compact memory first. The workers' buffers stay lazy: with every
//! pooled buffer backed at build, the peak RSS in the harness rose from 52.3 to 56.9 MB for a
//! stereo 10 s reverb and from 220 to 243 MB for a dense 12 x 12 x 2 s matrix, their levels'
//! delay lines then resident beside the IR being transformed. The audio thread's alone add
//! about 6 MB to that matrix's peak, 1 MB to a 4 x 4 one's 46 MB, and nothing measurable to
//! the stereo reverb's or to a 16 x 16 x 4 s matrix's 644 MB.

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pool::Block;

/// Size and alignment of a huge page (x86-64 and aarch64 Linux with 4 KiB base pages).
pub const HUGE_PAGE: usize = 2 << 20;

/// A base page, the unit the OS backs memory in where no huge page is given.
const PAGE: usize = 4 << 10;

/// Smallest buffer, in bytes, taken from the pool; smaller ones stay on the heap, starting on a
/// cache line as the pooled ones do ([`CUT_ALIGN`]): the MAC kernels' loads of a spectrum that
/// starts 16 bytes into a line split lines.
pub const POOLED_MIN_BYTES: usize = 4 << 10;

/// Buffers of at least this many bytes get a block of their own, of their length (rounded up
/// to 4 KiB), so that no huge page is left half used after them; smaller ones share blocks of
/// one huge page.
pub const OWN_BLOCK_BYTES: usize = HUGE_PAGE / 2;

/// Alignment of the buffers cut from a block: a cache line.
const CUT_ALIGN: usize = 64;

/// Where the pool puts a buffer of `bytes` (a multiple of [`CUT_ALIGN`]), given the room left
/// in the block being filled (none without one) and whether the buffer may open a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Cut {
    /// A block of its own ([`OWN_BLOCK_BYTES`]).
    Own,
    /// The block being filled.
    Filling,
    /// A new shared block, which it starts filling.
    NewBlock,
    /// The heap ([`PageBuf::resident_in_room`]).
    Heap,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn cut_for(bytes: usize, room: Option<usize>, may_open: bool) -> Cut {
    if bytes >= OWN_BLOCK_BYTES {
        Cut::Own
    } else if room.is_some_and(|room| room >= bytes) {
        Cut::Filling
    } else if may_open {
        Cut::NewBlock
    } else {
        Cut::Heap
    }
}

/// What the pool holds now, for the soak's leak checks: the bytes of the buffers alive in it,
/// and the bytes of the blocks mapped for them. The second may grow while the first does not:
/// a block stays mapped, whole, while any buffer cut from it lives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes of the pooled buffers alive.
    pub live_bytes: usize,
    /// Bytes of the blocks mapped.
    pub mapped_bytes: usize,
}

/// Bytes of the pooled buffers alive (see [`PoolStats`]).
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// What the pool holds now ([`PoolStats`]; zeros where it maps nothing).
pub fn pool_stats() -> PoolStats {
    PoolStats {
        live_bytes: LIVE_BYTES.load(Ordering::Relaxed),
        mapped_bytes: pool::mapped_bytes(),
    }
}

/// A type whose value of all-zero bytes is valid (zero, or an atomic or cell holding zero), as
/// the pool's memory comes from the OS zeroed.
///
/// # Safety
///
/// All-zero bytes must be a valid value of the type, and it must need no drop.
pub unsafe trait Zeroable {}

// SAFETY: 0.0, and atomics and cells of it, are all-zero bytes.
unsafe impl Zeroable for f32 {}
// SAFETY: as above.
unsafe impl Zeroable for std::sync::atomic::AtomicU32 {}
// SAFETY: as above.
unsafe impl Zeroable for std::cell::UnsafeCell<f32> {}
// SAFETY: two floats, `repr(C)`.
unsafe impl Zeroable for rustfft::num_complex::Complex<f32> {}

/// A zeroed buffer of fixed length, in huge pages where the pool could give it (see the
/// module docs). Dereferences to a slice, like the `Box<[T]>` it replaces.
pub struct PageBuf<T: Zeroable = f32> {
    storage: Storage<T>,
}

enum Storage<T> {
    /// `len` values from `start` in `data`, the first on a cut's alignment ([`CUT_ALIGN`]).
    Heap {
        data: Box<[T]>,
        start: usize,
        len: usize,
    },
    /// `len` values at `ptr`, inside the block, cut for this buffer alone.
    Pooled {
        /// Held so that the block stays mapped while the buffer lives.
        _block: Arc<Block>,
        ptr: NonNull<T>,
        len: usize,
    },
}

// SAFETY: a pooled buffer owns its part of the block alone, as a `Box<[T]>` owns its heap
// memory; the block itself is only mapped and unmapped.
unsafe impl<T: Zeroable + Send> Send for PageBuf<T> {}
// SAFETY: as above; shared references give `&[T]` only.
unsafe impl<T: Zeroable + Sync> Sync for PageBuf<T> {}

impl<T: Zeroable> PageBuf<T> {
    /// `len` zeros. Allocates (and may map memory); call off the audio thread.
    pub fn zeroed(len: usize) -> Self {
        Self::zeroed_opening(len, true)
    }

    /// [`Self::zeroed`], but where the block being filled lacks room for it (and it is under
    /// [`OWN_BLOCK_BYTES`]) from the heap, unless `may_open`.
    fn zeroed_opening(len: usize, may_open: bool) -> Self {
        // A length past what any buffer can hold panics here, as `vec!` would.
        let bytes = len
            .checked_mul(size_of::<T>())
            .filter(|&bytes| bytes <= isize::MAX as usize / 2)
            .expect("buffer length overflows");
        let storage = if bytes >= POOLED_MIN_BYTES
            && align_of::<T>() <= CUT_ALIGN
            && let Some((block, ptr)) = pool::cut(bytes, may_open)
        {
            LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed);
            Storage::Pooled {
                _block: block,
                ptr: ptr.cast(),
                len,
            }
        } else {
            // Room to start the buffer on a cut's alignment, as pooled ones do.
            let slack = if len == 0 {
                0
            } else {
                CUT_ALIGN / size_of::<T>().max(1)
            };
            // SAFETY: `T: Zeroable`.
            let data: Box<[T]> = (0..len + slack)
                .map(|_| unsafe { std::mem::zeroed() })
                .collect();
            let start = data.as_ptr().align_offset(CUT_ALIGN).min(slack);
            Storage::Heap { data, start, len }
        };
        Self { storage }
    }

    /// `len` zeros, resident ([`Self::prefault`]): for a buffer the audio thread writes.
    /// Allocates (and may map memory); call off the audio thread.
    pub fn resident(len: usize) -> Self {
        let mut buf = Self::zeroed(len);
        buf.prefault();
        buf
    }

    /// [`Self::resident`] for an engine's last buffers (its rings): cut from the room left in
    /// the block being filled, else from the heap, never opening a block. A block's huge page
    /// is backed whole at its first write, so a block opened by the last buffers of a build
    /// held 2 MiB for them: a stereo 10 s engine's second output ring (64 KiB) did, and took
    /// the harness's peak from 51.7 to 53.5 MB, over zita-convolver's 52 (2026-12-06, EPYC VM,
    /// `docs/benchmarks.md`). On the heap such a buffer costs its own small pages.
    pub fn resident_in_room(len: usize) -> Self {
        let mut buf = Self::zeroed_opening(len, false);
        buf.prefault();
        buf
    }

    /// Whether the buffer lies in a mapped block (advised huge pages) rather than the heap.
    pub fn is_pooled(&self) -> bool {
        matches!(self.storage, Storage::Pooled { .. })
    }

    /// Makes every page of the buffer resident now, on this thread, by writing back one byte of
    /// each page: the OS backs a mapped page at its first write, and that fault, on the audio
    /// thread, zeroes a page (2 MiB for a huge one) and, where THP's defragmentation is on for
    /// advised memory (`madvise`, the usual default), may first compact memory. A heap buffer
    /// (every buffer off Linux) may be just as fresh: its zeros may come from the allocator's
    /// zeroed path, whose big blocks are newly mapped pages. Values are unchanged, so a buffer
    /// that shares a page with another keeps both intact. Call off the audio thread, where the
    /// buffer is built.
    pub fn prefault(&mut self) {
        let values: &mut [T] = self;
        let start = values.as_mut_ptr() as usize;
        let end = start + size_of_val(values);
        let mut addr = start;
        while addr < end {
            // SAFETY: inside this buffer, which `&mut self` holds alone; the byte written is
            // the one read.
            unsafe {
                let byte = addr as *mut u8;
                byte.write_volatile(byte.read_volatile());
            }
            addr = (addr / PAGE + 1) * PAGE;
        }
    }
}

impl<T: Zeroable> Drop for PageBuf<T> {
    fn drop(&mut self) {
        if let Storage::Pooled { len, .. } = self.storage {
            LIVE_BYTES.fetch_sub(len * size_of::<T>(), Ordering::Relaxed);
        }
    }
}

impl<T: Zeroable> Default for PageBuf<T> {
    /// An empty buffer, which allocates nothing (for `std::mem::take` on the audio thread).
    fn default() -> Self {
        Self {
            storage: Storage::Heap {
                data: Box::default(),
                start: 0,
                len: 0,
            },
        }
    }
}

impl<T: Zeroable> Deref for PageBuf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Heap { data, start, len } => &data[*start..*start + *len],
            // SAFETY: `ptr` points at `len` values in the block, zeroed by the OS when mapped
            // (valid: `T: Zeroable`), that no other buffer is cut from, and the block stays
            // mapped while we hold it.
            Storage::Pooled { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Zeroable> DerefMut for PageBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Heap { data, start, len } => &mut data[*start..*start + *len],
            // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
            Storage::Pooled { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Zeroable> std::fmt::Debug for PageBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageBuf")
            .field("len", &self.len())
            .field("pooled", &self.is_pooled())
            .finish()
    }
}

#[cfg(target_os = "linux")]
mod pool {
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, PoisonError, Weak};

    use super::{CUT_ALIGN, Cut, HUGE_PAGE, PAGE, cut_for};

    /// Mapped memory, `size` bytes at `base`, aligned to a huge page.
    pub struct Block {
        base: NonNull<u8>,
        size: usize,
    }

    // SAFETY: the block is plain memory; its buffers decide who touches which part.
    unsafe impl Send for Block {}
    // SAFETY: as above.
    unsafe impl Sync for Block {}

    /// The block being cut, and how far.
    struct Filling {
        block: Weak<Block>,
        used: usize,
    }

    static FILLING: Mutex<Filling> = Mutex::new(Filling {
        block: Weak::new(),
        used: 0,
    });

    /// Bytes of the blocks mapped now.
    static MAPPED_BYTES: AtomicUsize = AtomicUsize::new(0);

    /// Bytes of the blocks mapped now.
    pub fn mapped_bytes() -> usize {
        MAPPED_BYTES.load(Ordering::Relaxed)
    }

    /// Cuts `bytes` from the block being filled, or from a new one where `may_open` or the
    /// buffer gets one of its own ([`cut_for`]); `None` where it may not open one or the OS
    /// maps nothing (the caller then takes the heap).
    pub fn cut(bytes: usize, may_open: bool) -> Option<(Arc<Block>, NonNull<u8>)> {
        let bytes = bytes.next_multiple_of(CUT_ALIGN);
        if cut_for(bytes, None, may_open) == Cut::Own {
            let block = Arc::new(Block::map(bytes.next_multiple_of(PAGE))?);
            let ptr = block.base;
            return Some((block, ptr));
        }
        let mut filling = FILLING.lock().unwrap_or_else(PoisonError::into_inner);
        let current = filling.block.upgrade();
        let room = current.as_ref().map(|block| block.size - filling.used);
        let block = match (cut_for(bytes, room, may_open), current) {
            (Cut::Filling, Some(block)) => block,
            (Cut::NewBlock, _) => {
                let block = Arc::new(Block::map(HUGE_PAGE)?);
                *filling = Filling {
                    block: Arc::downgrade(&block),
                    used: 0,
                };
                block
            }
            _ => return None,
        };
        // SAFETY: `used + bytes <= size`: inside the block.
        let ptr = unsafe { NonNull::new_unchecked(block.base.as_ptr().add(filling.used)) };
        filling.used += bytes;
        Some((block, ptr))
    }

    impl Block {
        /// Maps `size` bytes (a multiple of 4 KiB), zeroed, at an address aligned to a huge
        /// page, and advises huge pages for them.
        fn map(size: usize) -> Option<Self> {
            let total = size + HUGE_PAGE;
            // SAFETY: an anonymous private mapping; the parts outside the aligned range are
            // unmapped at once and the rest is unmapped in `drop`.
            unsafe {
                let raw = libc::mmap(
                    std::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                if raw == libc::MAP_FAILED {
                    return None;
                }
                let start = raw as usize;
                let aligned = start.next_multiple_of(HUGE_PAGE);
                let head = aligned - start;
                let tail = total - head - size;
                if head > 0 {
                    libc::munmap(raw, head);
                }
                if tail > 0 {
                    libc::munmap((aligned + size) as *mut libc::c_void, tail);
                }
                // Advice only: where transparent huge pages are off, small pages it is.
                libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
                MAPPED_BYTES.fetch_add(size, Ordering::Relaxed);
                Some(Self {
                    base: NonNull::new(aligned as *mut u8)?,
                    size,
                })
            }
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            // SAFETY: mapped in `map`, and no buffer of it is left (each held an `Arc`).
            unsafe {
                libc::munmap(self.base.as_ptr().cast(), self.size);
            }
            MAPPED_BYTES.fetch_sub(self.size, Ordering::Relaxed);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod pool {
    use std::ptr::NonNull;
    use std::sync::Arc;

    /// No mapped blocks here.
    pub enum Block {}

    /// No pool here: every buffer takes the heap.
    pub fn cut(_bytes: usize, _may_open: bool) -> Option<(Arc<Block>, NonNull<u8>)> {
        None
    }

    /// Nothing is mapped here.
    pub fn mapped_bytes() -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_apart_and_writable() {
        let sizes = [10, POOLED_MIN_BYTES / 4, 100_000, HUGE_PAGE / 4 + 3, 1000];
        let mut bufs: Vec<PageBuf> = sizes.iter().map(|&len| PageBuf::zeroed(len)).collect();
        for (idx, (buf, &len)) in bufs.iter_mut().zip(&sizes).enumerate() {
            assert_eq!(buf.len(), len);
            assert!(buf.iter().all(|&x| x == 0.0));
            buf.fill(idx as f32 + 1.0);
            // Pooled or not, a buffer starts on a cache line.
            assert_eq!(buf.as_ptr() as usize % CUT_ALIGN, 0, "buffer {idx}");
        }
        // Writing each left the others alone: no two overlap.
        for (idx, buf) in bufs.iter().enumerate() {
            assert!(buf.iter().all(|&x| x == idx as f32 + 1.0), "buffer {idx}");
        }
        assert!(!bufs[0].is_pooled());
        assert_eq!(bufs[2].is_pooled(), cfg!(target_os = "linux"));
        assert_eq!(bufs[3].is_pooled(), cfg!(target_os = "linux"));
    }

    /// A big buffer gets a block of its own; a smaller one the room left in the block being
    /// filled, else a new block where it may open one, else the heap.
    #[test]
    fn a_buffer_opens_a_block_only_where_it_may() {
        let small = 4 * CUT_ALIGN;
        for may_open in [false, true] {
            assert_eq!(cut_for(OWN_BLOCK_BYTES, None, may_open), Cut::Own);
            assert_eq!(cut_for(small, Some(small), may_open), Cut::Filling);
            let opened = if may_open { Cut::NewBlock } else { Cut::Heap };
            assert_eq!(cut_for(small, Some(small - CUT_ALIGN), may_open), opened);
            assert_eq!(cut_for(small, None, may_open), opened);
        }
    }

    /// A pooled buffer made resident has every page backed before its first write on the
    /// audio thread. (A plain one has its pages backed as they are written, unless THP gave
    /// its block a huge page already: not checked.)
    #[cfg(target_os = "linux")]
    #[test]
    fn resident_buffers_are_backed_before_their_first_write() {
        // One that shares a block (and starts inside a page another buffer began), one with a
        // block of its own.
        let _before = PageBuf::<f32>::zeroed(POOLED_MIN_BYTES / 4 + 5);
        for len in [100_000, HUGE_PAGE / 4 * 3] {
            let made = PageBuf::<f32>::resident(len);
            assert!(made.is_pooled() && made.iter().all(|&x| x == 0.0));
            assert_eq!(pages_not_resident(&made), 0, "{len}");
        }
    }

    /// Pages of `buf` that the OS has not backed yet (`mincore`).
    #[cfg(target_os = "linux")]
    fn pages_not_resident(buf: &[f32]) -> usize {
        let start = buf.as_ptr() as usize / PAGE * PAGE;
        let end = (buf.as_ptr() as usize + size_of_val(buf)).next_multiple_of(PAGE);
        let mut resident = vec![0u8; (end - start) / PAGE];
        // SAFETY: the range is mapped (the buffer's block); `resident` has a byte a page.
        let rc = unsafe {
            libc::mincore(
                start as *mut libc::c_void,
                end - start,
                resident.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0);
        resident.iter().filter(|&&page| page & 1 == 0).count()
    }

    #[test]
    #[should_panic(expected = "buffer length overflows")]
    fn a_length_past_any_buffer_panics_before_allocating() {
        // Its byte count wraps around: without the check it would cut a small buffer and
        // claim `len` floats of it.
        let _ = PageBuf::<f32>::zeroed(usize::MAX / 4 + 2);
    }

    #[test]
    fn blocks_outlive_the_pool_and_go_with_their_last_buffer() {
        let first = PageBuf::<f32>::zeroed(HUGE_PAGE / 8);
        let second = PageBuf::<f32>::zeroed(HUGE_PAGE / 8);
        drop(first);
        // The block is still mapped for `second`.
        assert!(second.iter().all(|&x| x == 0.0));
        drop(second);
        // A block of its own, longer than a huge page.
        let mut big = PageBuf::<f32>::zeroed(HUGE_PAGE / 4 * 3);
        big[HUGE_PAGE / 4 * 3 - 1] = 1.0;
        assert_eq!(big.iter().sum::<f32>(), 1.0);
    }
}
