//! Estimates of the heap bytes std's collections hold, for memory reports
//! ([`crate::Stream::pel_heap_bytes`] and friends). They are estimates: neither `BTreeMap` nor
//! `HashMap` reports its allocation, so each follows the collection's layout.
//!
//! - A `BTreeMap` node holds up to 11 pairs beside a parent link and two counters; the entries
//!   the PEL indexes insert arrive mostly in order, which leaves nodes with about 7 pairs, and
//!   about one internal node (a node plus 12 child links) per 7 leaves (measured 78 B per
//!   40-byte pair for a million ascending inserts; this gives 76).
//! - A `HashMap` (hashbrown) has a power-of-two number of buckets, at least `capacity * 8 / 7`,
//!   each one pair plus one control byte, and 16 more control bytes.
//!
//! Invariant: each estimate is at least the pairs' own size (`len * size_of::<(K, V)>()`), so a
//! structure that is counted at all is never counted as free.

/// Pairs per `BTreeMap` node at most (std's `CAPACITY`).
const BTREE_NODE_PAIRS: usize = 11;
/// Pairs per node (and children per internal node) as in-order inserts leave them.
const BTREE_FILL: usize = 7;
/// A node's parent link and its two `u16` counters, padded.
const BTREE_NODE_HEADER: usize = 16;

/// The heap bytes of a `BTreeMap<K, V>` holding `len` pairs.
pub(crate) fn btree_map<K, V>(len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let pair = std::mem::size_of::<K>() + std::mem::size_of::<V>();
    let leaf = BTREE_NODE_HEADER + BTREE_NODE_PAIRS * pair;
    let leaves = len.div_ceil(BTREE_FILL);
    let internal = leaves / BTREE_FILL;
    let edges = (BTREE_NODE_PAIRS + 1) * std::mem::size_of::<usize>();
    leaves * leaf + internal * (leaf + edges)
}

/// The heap bytes of a `HashMap<K, V>` whose capacity is `capacity`.
pub(crate) fn hash_map<K, V>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    buckets * (std::mem::size_of::<(K, V)>() + 1) + 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_cover_at_least_the_pairs_and_grow_with_them() {
        for len in [1, 5, 6, 7, 100, 1_000, 1_000_000] {
            assert!(btree_map::<u128, u64>(len) >= len * 24, "{len}");
            assert!(hash_map::<u128, u64>(len) >= len * 32, "{len}");
            assert!(btree_map::<u128, u64>(len + 1) >= btree_map::<u128, u64>(len));
        }
        assert_eq!((btree_map::<u64, u64>(0), hash_map::<u64, u64>(0)), (0, 0));
        // A million 40-byte pairs inserted in order take 78.3 B each (measured with a
        // counting allocator); the estimate is within 10% of it.
        let per_pair = btree_map::<[u8; 24], [u8; 16]>(1_000_000) as f64 / 1e6;
        assert!((70.0..86.0).contains(&per_pair), "{per_pair}");
        // hashbrown: 1.83M capacity is 2^21 buckets of 25 bytes (52.4 B each, measured).
        let per_item = hash_map::<[u8; 16], u64>(1_835_008) as f64 / 1e6;
        assert!((52.0..53.0).contains(&per_item), "{per_item}");
    }
}
