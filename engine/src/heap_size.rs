//! Estimates of the heap bytes std's hash maps hold, for memory reports
//! ([`crate::Stream::pel_heap_bytes`] and friends). They are estimates: `HashMap` does not
//! report its allocation, so this follows its layout.
//!
//! - A `HashMap` (hashbrown) has a power-of-two number of buckets, at least `capacity * 8 / 7`,
//!   each one pair plus one control byte, and 16 more control bytes.
//!
//! Invariant: each estimate is at least the pairs' own size (`len * size_of::<(K, V)>()`), so a
//! structure that is counted at all is never counted as free.

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
            assert!(hash_map::<u128, u64>(len) >= len * 32, "{len}");
        }
        assert_eq!(hash_map::<u64, u64>(0), 0);
        // hashbrown: 1.83M capacity is 2^21 buckets of 25 bytes (52.4 B each, measured).
        let per_item = hash_map::<[u8; 16], u64>(1_835_008) as f64 / 1e6;
        assert!((52.0..53.0).contains(&per_item), "{per_item}");
    }
}
