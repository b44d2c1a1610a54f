//! A global allocator that forwards to the system allocator and, while a [`Window`] is open,
//! counts live bytes, so a benchmark can say how many bytes a structure holds.
//!
//! Counting is off outside a window: the hot path then costs one relaxed load, so timed
//! benchmarks in the same binary are not slowed by atomic read-modify-writes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// Requested bytes allocated minus freed while counting.
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
/// The same in glibc malloc chunk sizes (see [`glibc_chunk_bytes`]).
static LIVE_CHUNK_BYTES: AtomicI64 = AtomicI64::new(0);
/// Calls to `alloc`, `alloc_zeroed` and `realloc` while counting.
static ALLOC_CALLS: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting while a [`Window`] is open.
#[derive(Debug)]
pub struct CountingAlloc;

/// Bytes glibc's malloc really takes for a request of `size` bytes on 64-bit Linux: an 8-byte
/// header, rounded up to 16, at least 32. The requested figure is what the engine asked for;
/// this one is closer to what the process pays (Redis's `used_memory` likewise counts
/// jemalloc's rounded size classes).
fn glibc_chunk_bytes(size: usize) -> i64 {
    ((size + 8 + 15) & !15).max(32) as i64
}

fn record(old_size: usize, new_size: usize) {
    if !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    let chunk = |size| {
        if size == 0 {
            0
        } else {
            glibc_chunk_bytes(size)
        }
    };
    LIVE_BYTES.fetch_add(new_size as i64 - old_size as i64, Ordering::Relaxed);
    LIVE_CHUNK_BYTES.fetch_add(chunk(new_size) - chunk(old_size), Ordering::Relaxed);
    if new_size != 0 {
        ALLOC_CALLS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method hands its arguments unchanged to `System`, which implements the
// `GlobalAlloc` contract, and returns `System`'s result; the bookkeeping only updates atomics
// and never allocates, so it cannot re-enter the allocator.
#[allow(
    unsafe_code,
    reason = "a global allocator is an unsafe trait impl; this one only forwards to System"
)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract (non-zero size), passed on as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            record(0, layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            record(0, layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with this layout.
        unsafe { System.dealloc(ptr, layout) };
        record(layout.size(), 0);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the size rules.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            record(layout.size(), new_size);
        }
        new
    }
}

/// What was allocated and not freed while a [`Window`] was open.
#[derive(Debug, Clone, Copy)]
pub struct AllocStats {
    /// Bytes requested and still held.
    pub live_bytes: i64,
    /// The same bytes as glibc malloc chunks (header and rounding included).
    pub live_chunk_bytes: i64,
    /// Allocation calls made (`alloc`, `alloc_zeroed`, `realloc`).
    pub alloc_calls: u64,
}

/// An open counting window: allocations are counted from [`Window::open`] to
/// [`Window::close`]. Frees inside the window of memory allocated before it count negative, so
/// build what is measured inside the window.
#[derive(Debug)]
pub struct Window(());

impl Window {
    /// Resets the counters and starts counting.
    pub fn open() -> Window {
        LIVE_BYTES.store(0, Ordering::SeqCst);
        LIVE_CHUNK_BYTES.store(0, Ordering::SeqCst);
        ALLOC_CALLS.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        Window(())
    }

    /// Stops counting and returns what the window holds.
    pub fn close(self) -> AllocStats {
        COUNTING.store(false, Ordering::SeqCst);
        AllocStats {
            live_bytes: LIVE_BYTES.load(Ordering::SeqCst),
            live_chunk_bytes: LIVE_CHUNK_BYTES.load(Ordering::SeqCst),
            alloc_calls: ALLOC_CALLS.load(Ordering::SeqCst),
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        COUNTING.store(false, Ordering::SeqCst);
    }
}
