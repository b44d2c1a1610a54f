//! [`CountingAlloc`]: an allocator (the system's unless told another), counting the bytes the process holds on the heap,
//! so `used_memory` and the `maxmemory` check see what the dataset and the server's buffers
//! hold, exactly and at once, and see it go down when data is freed (Redis counts the same way
//! in `zmalloc`). A binary opts in with `#[global_allocator]`; [`heap_bytes`] is `None` when it
//! did not, and the server falls back to the resident set size.
//!
//! Why per-thread slots rather than one shared counter: a shared `fetch_add` is a locked
//! read-modify-write on one cache line for every allocation and every free, which a request
//! does several times. Each thread instead owns one slot of [`SLOTS`] that only it writes,
//! with a plain load and store (no locked instruction, no line shared while the thread runs
//! alone); the figure is the sum of the slots. A block freed on another thread than the one
//! that allocated it makes one slot go up and another down: the sum stays exact. A thread's
//! slot keeps its count after the thread exits (what it allocated and nobody freed is still
//! held), so slots are never reused; threads beyond [`SLOTS`] share one overflow counter,
//! updated with `fetch_add`.
//!
//! Invariant: the sum of the slots and the overflow counter is the number of bytes allocated
//! and not yet freed through this allocator (requested sizes, as Redis's `used_memory`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

/// Threads that get a slot of their own: the server's runtime workers, its background threads
/// and the blocking pool fit many times over.
pub const SLOTS: usize = 256;

/// Per-thread counts; slot `i` is written only by the thread that claimed it.
static COUNTS: [AtomicI64; SLOTS] = [const { AtomicI64::new(0) }; SLOTS];
/// Slots claimed so far (the figure sums these).
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
/// The count of threads that found no slot left.
static OVERFLOW: AtomicI64 = AtomicI64::new(0);
/// Whether this allocator is the global one (set by the first thread that allocates).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A slot index not claimed yet.
const UNCLAIMED: usize = usize::MAX;
/// The overflow counter instead of a slot.
const NO_SLOT: usize = SLOTS;

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates and never fails,
    // even while the thread is being torn down, which an allocator needs.
    static SLOT: Cell<usize> = const { Cell::new(UNCLAIMED) };
}

/// Adds `delta` bytes to the calling thread's count; `INSTALL` marks the allocator as the
/// global one (only [`CountingAlloc`] passes it, so a test that counts by hand does not).
#[inline]
fn count<const INSTALL: bool>(delta: i64) {
    let slot = SLOT.with(|slot| {
        let index = slot.get();
        if index != UNCLAIMED {
            return index;
        }
        if INSTALL {
            INSTALLED.store(true, Ordering::Relaxed);
        }
        let claimed = CLAIMED.fetch_add(1, Ordering::Relaxed);
        let index = if claimed < SLOTS { claimed } else { NO_SLOT };
        slot.set(index);
        index
    });
    match COUNTS.get(slot) {
        // Only this thread writes its slot: a load and a store cannot lose an update.
        Some(own) => own.store(own.load(Ordering::Relaxed) + delta, Ordering::Relaxed),
        None => {
            OVERFLOW.fetch_add(delta, Ordering::Relaxed);
        }
    }
}

/// What INFO's `mem_allocator` names: set once by the binary that chose the allocator.
static ALLOCATOR_NAME: OnceLock<&'static str> = OnceLock::new();

/// Names the process's allocator for INFO's `mem_allocator` (as Redis's `jemalloc-5.3.0`); a
/// second call changes nothing.
pub fn name_allocator(name: &'static str) {
    // Only the first name counts: the allocator cannot change while the process runs.
    let _ = ALLOCATOR_NAME.set(name);
}

/// The allocator's name: what [`name_allocator`] set, else `libc` (the system's).
pub fn allocator_name() -> &'static str {
    ALLOCATOR_NAME.get().copied().unwrap_or("libc")
}

/// What the allocator tells of its heap, in bytes (Redis's `zmalloc_get_allocator_info`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// In the blocks handed out.
    pub allocated: u64,
    /// In the pages those blocks occupy.
    pub active: u64,
    /// Resident pages the allocator holds, free ones kept for reuse included.
    pub resident: u64,
    /// Given back with `MADV_FREE`: resident until the kernel takes them.
    pub muzzy: u64,
    /// In the free slots of the small-block pages in use (Redis's `frag_smallbins_bytes`).
    pub small_free: u64,
}

/// What an allocator can tell of itself and do on request; the binary that installs one
/// registers it with [`introspect_allocator`].
pub trait AllocatorIntrospection: Sync {
    /// Its figures now, `None` if it keeps none.
    fn stats(&self) -> Option<AllocatorStats>;
    /// Its own report of its state (MEMORY MALLOC-STATS), `None` if it has none.
    fn report(&self) -> Option<String>;
    /// Gives its free pages back to the system now (MEMORY PURGE).
    fn purge(&self);
    /// Turns its background purging thread on or off (`jemalloc-bg-thread`); an allocator
    /// without one ignores it.
    fn set_background_thread(&self, _on: bool) {}
    /// Whether its background purging thread is on, `None` if it has none.
    fn background_thread(&self) -> Option<bool> {
        None
    }
}

/// Set once by the binary that chose the allocator.
static INTROSPECTION: OnceLock<&'static dyn AllocatorIntrospection> = OnceLock::new();

/// Registers the process's allocator's introspection; a second call changes nothing.
pub fn introspect_allocator(introspection: &'static dyn AllocatorIntrospection) {
    let _ = INTROSPECTION.set(introspection);
}

/// The registered allocator's introspection, `None` for the system's allocator.
pub fn allocator_introspection() -> Option<&'static dyn AllocatorIntrospection> {
    INTROSPECTION.get().copied()
}

/// Bytes held on the heap through [`CountingAlloc`], or `None` if it is not the global
/// allocator.
pub fn heap_bytes() -> Option<u64> {
    if !INSTALLED.load(Ordering::Relaxed) {
        return None;
    }
    let claimed = CLAIMED.load(Ordering::Relaxed).min(SLOTS);
    let sum: i64 = COUNTS[..claimed]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum::<i64>()
        + OVERFLOW.load(Ordering::Relaxed);
    // The slots are read one after another while others move: a sum taken mid-way can be
    // briefly negative, never meaningfully so.
    Some(u64::try_from(sum).unwrap_or(0))
}

/// An allocator `A` (the system's by default), counting what it holds (see the module doc).
/// Install it in a binary:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOC: echomq_protocol::CountingAlloc = echomq_protocol::CountingAlloc(std::alloc::System);
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc<A = System>(pub A);

// SAFETY: every method forwards to `A` with the caller's own pointer and layout, so
// `A`'s guarantees (alignment, size, validity until dealloc) are exactly those required;
// the only other work is the bookkeeping in `count`, which neither allocates (its thread local
// is const-initialised and has no destructor) nor unwinds, so it cannot re-enter the allocator
// or leave it in a half-done state.
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout, whose contract the caller upholds.
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            count::<true>(layout.size() as i64);
        }
        ptr
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count::<true>(layout.size() as i64);
        }
        ptr
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `A` with `layout` (every allocation of this
        // allocator is `A`'s), as the caller guarantees.
        unsafe { self.0.dealloc(ptr, layout) };
        count::<true>(-(layout.size() as i64));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`; `new_size` is the caller's, checked by the caller.
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count::<true>(new_size as i64 - layout.size() as i64);
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_of_the_slots_follows_allocations_and_frees_across_threads() {
        // The test binary does not install the allocator: drive the counting directly.
        let before: i64 = COUNTS
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<i64>()
            + OVERFLOW.load(Ordering::Relaxed);
        count::<false>(1000);
        std::thread::spawn(|| count::<false>(-600)).join().unwrap();
        count::<false>(-400);
        let after: i64 = COUNTS
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<i64>()
            + OVERFLOW.load(Ordering::Relaxed);
        assert_eq!(after, before);
        assert_eq!(heap_bytes(), None, "not the global allocator here");
    }
}
