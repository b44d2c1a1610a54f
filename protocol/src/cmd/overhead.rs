//! The memory figures INFO memory and MEMORY DOCTOR share, as Redis's
//! `getMemoryOverheadData` (object.c) gathers them for both: the heap counted, the process's
//! resident size, the peak, and the allocator's own figures with the ratios between them.

use crate::alloc::AllocatorStats;
use crate::state::ServerState;

/// One reading of the server's memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Overhead {
    /// `used_memory`: counted from the empty process.
    pub used: u64,
    /// The whole heap the counting allocator holds, the empty process's included.
    pub heap: u64,
    /// The process's resident size.
    pub rss: u64,
    /// The highest `used` seen.
    pub peak: u64,
    /// The allocator's figures; for an allocator without them the heap counted and the
    /// resident size, as Redis reports for one (`cron_malloc_stats` in server.c).
    pub allocator: AllocatorStats,
}

/// `a / b`, 0 for no `b`.
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// `a - b`, signed.
fn difference(a: u64, b: u64) -> i128 {
    i128::from(a) - i128::from(b)
}

impl Overhead {
    /// The figures now.
    pub(crate) fn now(state: &ServerState) -> Overhead {
        let used = state.memory_used();
        let rss = crate::state::resident_bytes();
        let allocator = crate::alloc::allocator_introspection()
            .and_then(|a| a.stats())
            .unwrap_or(AllocatorStats {
                allocated: used,
                active: rss,
                resident: rss,
                muzzy: 0,
                small_free: 0,
            });
        Overhead {
            used,
            heap: state.memory_measure(),
            rss,
            peak: state.identity().memory_peak.lock().0,
            allocator,
        }
    }

    /// `mem_fragmentation_ratio`: resident against the heap.
    pub(crate) fn total_frag(&self) -> f64 {
        ratio(self.rss, self.heap)
    }

    /// `mem_fragmentation_bytes`.
    pub(crate) fn total_frag_bytes(&self) -> i128 {
        difference(self.rss, self.heap)
    }

    /// `allocator_frag_ratio`: the small pages' free slots against the blocks held, plus one.
    pub(crate) fn allocator_frag(&self) -> f64 {
        ratio(self.allocator.small_free, self.allocator.allocated) + 1.0
    }

    /// `allocator_rss_ratio`: the allocator's resident pages against its active ones.
    pub(crate) fn allocator_rss(&self) -> f64 {
        ratio(self.allocator.resident, self.allocator.active)
    }

    /// `allocator_rss_bytes`.
    pub(crate) fn allocator_rss_bytes(&self) -> i128 {
        difference(self.allocator.resident, self.allocator.active)
    }

    /// `rss_overhead_ratio`: the process's resident size against the allocator's.
    pub(crate) fn rss_extra(&self) -> f64 {
        ratio(self.rss, self.allocator.resident)
    }

    /// `rss_overhead_bytes`.
    pub(crate) fn rss_extra_bytes(&self) -> i128 {
        difference(self.rss, self.allocator.resident)
    }
}
