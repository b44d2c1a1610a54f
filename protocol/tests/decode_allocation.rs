//! The decoder never allocates in proportion to a length the client merely announced
//! (`*2147483647`, `$536870912`): measured with a counting global allocator, in its own test
//! binary so no other test shares the allocator.
//!
//! The allocator records, per thread and only while [`largest_allocation`] runs its closure,
//! the largest single request; other threads (the test harness) are not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use echomq_protocol::resp::{DecodeLimits, Decoded, decode};

#[global_allocator]
static GLOBAL: LargestRequest = LargestRequest;

thread_local! {
    /// Whether this thread is being measured.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    /// The largest request this thread made while measured.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, remembering the largest request of a measured thread.
struct LargestRequest;

fn record(size: usize) {
    // `try_with`: a thread being torn down may still allocate; it is then not measured.
    // Const-initialised cells without destructors never allocate themselves.
    let measuring = MEASURING.try_with(Cell::get).unwrap_or(false);
    if measuring {
        let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
    }
}

// SAFETY: every method passes its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract, and returns `System`'s result; the bookkeeping only touches
// const-initialised thread-local cells, which never allocate, so it cannot re-enter the
// allocator.
#[allow(
    unsafe_code,
    reason = "a global allocator is an unsafe trait impl; this one only forwards to System"
)]
unsafe impl GlobalAlloc for LargestRequest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract, passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` and returns its result and the largest single allocation it made.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|largest| largest.set(0));
    MEASURING.with(|measuring| measuring.set(true));
    let result = f();
    MEASURING.with(|measuring| measuring.set(false));
    (result, LARGEST.with(Cell::get))
}

const LIMITS: DecodeLimits = DecodeLimits {
    bulk_bytes_max: 512 * 1024 * 1024,
    unauthenticated: false,
};

/// Far below any announced length here, above the decoder's fixed preallocation (1024
/// arguments).
const ALLOCATION_BYTES_MAX: usize = 256 * 1024;

#[test]
fn an_announced_multibulk_count_does_not_allocate_its_arguments() {
    let (decoded, largest) = largest_allocation(|| decode(b"*2147483647\r\n$1\r\n", &LIMITS));
    assert_eq!(decoded, Ok(Decoded::Incomplete));
    assert!(
        largest <= ALLOCATION_BYTES_MAX,
        "announcing 2^31-1 arguments made a {largest}-byte allocation"
    );
}

#[test]
fn an_announced_bulk_length_does_not_allocate_the_bulk() {
    let (decoded, largest) = largest_allocation(|| decode(b"*1\r\n$536870912\r\nab", &LIMITS));
    assert_eq!(decoded, Ok(Decoded::Incomplete));
    assert!(
        largest <= ALLOCATION_BYTES_MAX,
        "announcing a 512 MiB bulk made a {largest}-byte allocation"
    );
}

#[test]
fn the_measure_sees_an_allocation_of_the_announced_size() {
    // The allocator must see what these tests rule out, or they could not fail.
    let (buffer, largest) = largest_allocation(|| Vec::<u8>::with_capacity(1 << 20));
    assert_eq!(buffer.capacity(), 1 << 20);
    assert!(largest >= 1 << 20);
}
