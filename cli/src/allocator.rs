//! The server's allocator: jemalloc built as Redis builds it, with an 8-byte quantum
//! (`--with-lg-quantum=3`, Redis's deps/Makefile; `.cargo/config.toml` here), so a small
//! value is held in the size class nearest its size (24, 40 and 56 bytes are classes, as they
//! are for Redis) rather than rounded to 16.
//!
//! [`Jemalloc8`] keeps Rust's alignment promise under that quantum. `tikv_jemallocator` takes a
//! block whose alignment is at most 16 and at most its size from plain `malloc`, trusting that
//! `malloc` aligns to 16 (C's `max_align_t`); with an 8-byte quantum a 24-byte block is only
//! 8-aligned. So a block asking for more than 8-byte alignment (16: the hash tables' control
//! bytes, `u128`) is asked for at a size rounded up to that alignment.
//!
//! Invariant: every block this allocator returns is aligned as its layout asks. Why rounding
//! the size gives it: a size that is a multiple of 16 falls in a class that is a multiple of 16
//! (the classes are 8, 16, 24, … 64, then 80, 96, 112, 128, then four between each power of two
//! and the next, all multiples of 16 from 64 on); a slab's regions sit at multiples of their
//! class from its page-aligned start, and larger blocks are whole pages. Blocks asking for more
//! than 16 get jemalloc's own aligned path (`MALLOCX_ALIGN`) from `tikv_jemallocator`.

use std::alloc::{GlobalAlloc, Layout};

use tikv_jemallocator::Jemalloc;

/// jemalloc with an 8-byte quantum, aligning as Rust requires (see the module doc).
#[derive(Debug, Default, Clone, Copy)]
pub struct Jemalloc8;

/// The alignment every block of the 8-byte quantum has.
const QUANTUM: usize = 8;

/// The layout to hand jemalloc for `layout`: the same, or for an alignment above the quantum
/// and up to 16, its size rounded up to the alignment. The same rounding on every call for one
/// block (alloc, realloc, dealloc) keeps the sizes jemalloc sees consistent.
#[inline(always)]
fn quantum_safe(size: usize, align: usize) -> usize {
    if align > QUANTUM && align <= 16 {
        size.next_multiple_of(align)
    } else {
        size
    }
}

// SAFETY: each method forwards to `Jemalloc` with a layout of the caller's alignment and a size
// at least the caller's, rounded the same way for one block on every call, so `Jemalloc`'s
// guarantees hold for the caller's block (which is within the bigger one); the module doc says
// why the rounded size makes the block as aligned as asked.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Jemalloc8 {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = quantum_safe(layout.size(), layout.align());
        // SAFETY: a size rounded up to a power-of-two alignment below 2^4 cannot overflow
        // `isize` where the caller's did not (a `Layout`'s size is at most `isize::MAX` rounded
        // down to its alignment).
        unsafe { Jemalloc.alloc(Layout::from_size_align_unchecked(size, layout.align())) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let size = quantum_safe(layout.size(), layout.align());
        // SAFETY: as `alloc`.
        unsafe { Jemalloc.alloc_zeroed(Layout::from_size_align_unchecked(size, layout.align())) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let size = quantum_safe(layout.size(), layout.align());
        // SAFETY: `ptr` came from `alloc` or `realloc` here with this same rounded layout.
        unsafe { Jemalloc.dealloc(ptr, Layout::from_size_align_unchecked(size, layout.align())) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (old, new) = (
            quantum_safe(layout.size(), layout.align()),
            quantum_safe(new_size, layout.align()),
        );
        // SAFETY: `ptr` came from here with the rounded old layout; the new size is rounded as
        // `alloc` rounds it, so a later `dealloc` names the same size.
        unsafe {
            Jemalloc.realloc(
                ptr,
                Layout::from_size_align_unchecked(old, layout.align()),
                new,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size up to a few pages, at every alignment up to 64: the block is aligned, and it
    /// survives a write of its whole size, a grow and a shrink.
    #[test]
    #[allow(unsafe_code)]
    fn every_block_is_aligned_as_asked() {
        for align in [1, 2, 4, 8, 16, 32, 64] {
            for size in (1..600).chain((600..20_000).step_by(97)) {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is freed once, with its layout.
                unsafe {
                    let ptr = Jemalloc8.alloc(layout);
                    assert!(!ptr.is_null());
                    assert_eq!(ptr as usize % align, 0, "{size} bytes at {align}");
                    ptr.write_bytes(0xa5, size);
                    let grown = Jemalloc8.realloc(ptr, layout, size + 40);
                    assert_eq!(grown as usize % align, 0, "{size} grown at {align}");
                    let grown_layout = Layout::from_size_align(size + 40, align).unwrap();
                    let shrunk = Jemalloc8.realloc(grown, grown_layout, size);
                    assert_eq!(shrunk as usize % align, 0, "{size} shrunk at {align}");
                    Jemalloc8.dealloc(shrunk, layout);
                }
            }
        }
    }
}
