//! What jemalloc tells of the server's heap, read through its `mallctl` interface as Redis
//! reads it (`zmalloc_get_allocator_info` and `zmalloc_get_frag_smallbins` in zmalloc.c):
//! INFO memory's `allocator_*` fields, MEMORY MALLOC-STATS (jemalloc's own report) and
//! MEMORY PURGE; and what Redis asks of it to give memory back (`jemalloc_purge` and
//! `set_jemalloc_bg_thread` in zmalloc.c): [`release`] after a flush, and the background
//! thread that purges freed pages while the server is idle (`jemalloc-bg-thread`).
//!
//! jemalloc caches its statistics; writing `epoch` refreshes them, so every read of the
//! figures starts with that write. A name jemalloc does not know, or a value of another
//! size than asked, reads as `None`: the figures are then not reported, never wrong.

// jemalloc's C interface: each call's contract is stated where it is made.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_void};

use echomq_protocol::alloc::{AllocatorIntrospection, AllocatorStats};

/// jemalloc's introspection, for [`echomq_protocol::alloc::introspect_allocator`].
#[derive(Debug, Clone, Copy, Default)]
pub struct JemallocStats;

/// `MALLCTL_ARENAS_ALL`: the index that names every arena at once.
const ALL_ARENAS: u32 = 4096;

/// Reads the value of `name`, of type `T` (jemalloc's `size_t`, `unsigned` ...).
fn read<T: Copy + Default>(name: &CStr) -> Option<T> {
    let mut value = T::default();
    let mut len = std::mem::size_of::<T>();
    // SAFETY: `name` is NUL-terminated; jemalloc writes at most `len` bytes into `value`, which
    // is `len` bytes long, and reports how many it wrote; nothing new is written (null, 0).
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            (&raw mut value).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0 && len == std::mem::size_of::<T>()).then_some(value)
}

/// [`read`] of a name made at run time.
fn read_named<T: Copy + Default>(name: String) -> Option<T> {
    read(&CString::new(name).ok()?)
}

/// Refreshes jemalloc's cached statistics.
fn refresh() {
    let mut epoch: u64 = 1;
    let mut len = std::mem::size_of::<u64>();
    // SAFETY: `epoch` is a `uint64_t`, as jemalloc documents `epoch`; it is read into and
    // written from the same valid local of the size given.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"epoch".as_ptr(),
            (&raw mut epoch).cast::<c_void>(),
            &mut len,
            (&raw mut epoch).cast::<c_void>(),
            std::mem::size_of::<u64>(),
        );
    }
}

/// The bytes in the free regions of the slabs of every small size class (Redis's
/// `zmalloc_get_frag_smallbins`): what a slab holds but its blocks do not use.
fn small_free() -> Option<u64> {
    let bins: u32 = read(c"arenas.nbins")?;
    let mut free = 0u64;
    for bin in 0..bins {
        let size: usize = read_named(format!("arenas.bin.{bin}.size"))?;
        let per_slab: u32 = read_named(format!("arenas.bin.{bin}.nregs"))?;
        let used: usize = read_named(format!("stats.arenas.{ALL_ARENAS}.bins.{bin}.curregs"))?;
        let slabs: usize = read_named(format!("stats.arenas.{ALL_ARENAS}.bins.{bin}.curslabs"))?;
        let slots = u64::from(per_slab) * slabs as u64;
        free += slots.saturating_sub(used as u64) * size as u64;
    }
    Some(free)
}

/// Appends one piece of jemalloc's report to the `String` behind `out`.
unsafe extern "C" fn append(out: *mut c_void, text: *const c_char) {
    // SAFETY: `out` is the `String` `report` passes, borrowed for the call alone; `text` is a
    // NUL-terminated string jemalloc owns for the call.
    let (out, text) = unsafe { (&mut *out.cast::<String>(), CStr::from_ptr(text)) };
    out.push_str(&text.to_string_lossy());
}

/// Runs the `mallctl` command `name`, which reads and writes no value.
fn run(name: &CStr) {
    // SAFETY: a NUL-terminated name; the command reads and writes no value (null, 0).
    unsafe {
        tikv_jemalloc_sys::mallctl(
            name.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}

/// Gives the pages a flush freed back to the system, on the thread that freed them, as Redis
/// does after a flush (`flushallSyncBgDone` in db.c): this thread's cache returns its blocks to
/// their slabs, and every arena purges its free pages. Registered with
/// `echomq_engine::lazyfree::set_release`.
pub fn release() {
    run(c"thread.tcache.flush");
    JemallocStats.purge();
}

impl AllocatorIntrospection for JemallocStats {
    fn stats(&self) -> Option<AllocatorStats> {
        refresh();
        let bytes = |name: &CStr| read::<usize>(name).map(|n| n as u64);
        let page: usize = read(c"arenas.page")?;
        let muzzy_pages: usize = read_named(format!("stats.arenas.{ALL_ARENAS}.pmuzzy"))?;
        Some(AllocatorStats {
            allocated: bytes(c"stats.allocated")?,
            active: bytes(c"stats.active")?,
            resident: bytes(c"stats.resident")?,
            muzzy: (muzzy_pages * page) as u64,
            small_free: small_free()?,
        })
    }

    fn report(&self) -> Option<String> {
        let mut out = String::new();
        // SAFETY: `append` matches the callback jemalloc calls, with `out` as its argument, a
        // `String` that outlives the call; null options ask for the default report.
        unsafe {
            tikv_jemalloc_sys::malloc_stats_print(
                Some(append),
                (&raw mut out).cast::<c_void>(),
                std::ptr::null(),
            );
        }
        Some(out)
    }

    fn purge(&self) {
        if let Ok(name) = CString::new(format!("arena.{ALL_ARENAS}.purge")) {
            run(&name);
        }
    }

    fn set_background_thread(&self, on: bool) {
        let mut value = on;
        // SAFETY: `background_thread` is a `bool`, as jemalloc documents it; it is written from
        // a valid local of that size and nothing is read (null).
        unsafe {
            tikv_jemalloc_sys::mallctl(
                c"background_thread".as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                (&raw mut value).cast::<c_void>(),
                std::mem::size_of::<bool>(),
            );
        }
    }

    fn background_thread(&self) -> Option<bool> {
        read(c"background_thread")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Blocks taken from jemalloc directly, so the figures move by them whatever else runs.
    fn held(bytes: usize) -> Vec<*mut c_void> {
        (0..64)
            // SAFETY: plain allocations, freed by `free_all`.
            .map(|_| unsafe { tikv_jemalloc_sys::malloc(bytes) })
            .collect()
    }

    fn free_all(blocks: Vec<*mut c_void>) {
        for block in blocks {
            // SAFETY: each came from jemalloc's malloc and is freed once.
            unsafe { tikv_jemalloc_sys::free(block) };
        }
        flush_thread_cache();
    }

    /// Hands the blocks this thread's cache keeps back to their slabs, where the figures
    /// count them free.
    fn flush_thread_cache() {
        run(c"thread.tcache.flush");
    }

    #[test]
    fn the_figures_follow_the_blocks_jemalloc_holds() {
        let before = JemallocStats
            .stats()
            .expect("jemalloc is built with statistics");
        let blocks = held(4000);
        let during = JemallocStats.stats().expect("figures");
        assert!(
            during.allocated >= before.allocated + 64 * 4000,
            "{before:?} then {during:?}"
        );
        assert!(during.active >= during.allocated, "{during:?}");
        assert!(during.resident >= during.active, "{during:?}");
        free_all(blocks);
        let after = JemallocStats.stats().expect("figures");
        assert!(
            after.allocated < during.allocated,
            "{during:?} then {after:?}"
        );
    }

    #[test]
    fn half_emptied_slabs_count_as_free_small_slots() {
        let blocks = held(48);
        flush_thread_cache();
        let full = JemallocStats.stats().expect("figures").small_free;
        let (kept, freed): (Vec<_>, Vec<_>) = blocks
            .into_iter()
            .enumerate()
            .partition(|(i, _)| i % 2 == 0);
        free_all(freed.into_iter().map(|(_, b)| b).collect());
        let holed = JemallocStats.stats().expect("figures").small_free;
        assert!(
            holed >= full + 32 * 48,
            "free small slots {full} then {holed}"
        );
        free_all(kept.into_iter().map(|(_, b)| b).collect());
    }

    #[test]
    fn the_background_thread_is_turned_on_and_off() {
        JemallocStats.set_background_thread(true);
        assert_eq!(JemallocStats.background_thread(), Some(true));
        JemallocStats.set_background_thread(false);
        assert_eq!(JemallocStats.background_thread(), Some(false));
    }

    #[test]
    fn a_release_gives_freed_pages_back() {
        let blocks = held(1 << 16);
        let during = JemallocStats.stats().expect("figures");
        free_all(blocks);
        release();
        let after = JemallocStats.stats().expect("figures");
        assert!(
            after.resident + 32 * (1 << 16) <= during.resident,
            "resident {} then {}",
            during.resident,
            after.resident
        );
    }

    #[test]
    fn the_report_is_jemallocs_own() {
        let report = JemallocStats.report().expect("a report");
        assert!(report.contains("jemalloc"), "{report}");
        assert!(report.contains("Allocated:"), "{report}");
        JemallocStats.purge();
    }
}
