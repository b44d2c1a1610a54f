//! The random numbers HRANDFIELD, SRANDMEMBER and SPOP draw: a SplitMix64 sequence shared by
//! the process. Redis's picks are random too, so nothing depends on the sequence; it only
//! needs to be cheap and spread evenly.

use std::sync::atomic::{AtomicU64, Ordering};

/// The sequence's state, advanced by the golden-ratio increment on every draw.
static STATE: AtomicU64 = AtomicU64::new(0x853c_49e6_748f_ea9b);

/// A random `u64`.
pub fn next_u64() -> u64 {
    let mut z = STATE
        .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A random index below `n` (which must not be 0).
pub fn below(n: usize) -> usize {
    (next_u64() % n as u64) as usize
}

/// `count` distinct indices below `n` (`count <= n`), in random order.
pub fn distinct(n: usize, count: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for i in 0..count.min(n) {
        let j = i + below(n - i);
        all.swap(i, j);
    }
    all.truncate(count.min(n));
    all
}
