//! Per-command latency histograms for INFO latencystats.
//!
//! Redis keeps an HDR histogram per command (values in nanoseconds, two significant digits,
//! 1 ns to 1 s) and reports `p50`, `p99` and `p99.9` in microseconds. This is the same idea,
//! smaller: a value falls in a bucket named by its power of two and the next
//! [`SUB_BUCKET_BITS`] bits below its leading one, so each bucket spans under 1% of its
//! value; a percentile reports the highest value of the bucket it falls in, as
//! `hdr_value_at_percentile` reports the highest equivalent value.

use std::collections::BTreeMap;

/// Bits of precision below a value's leading one: 128 sub-buckets per power of two.
const SUB_BUCKET_BITS: u32 = 7;
/// The range Redis records: at least 1 ns, at most 1 s.
const MIN_NS: u64 = 1;
const MAX_NS: u64 = 1_000_000_000;

/// One command's latencies.
#[derive(Debug, Default, Clone)]
pub struct Histogram {
    /// Count per bucket index.
    buckets: BTreeMap<u32, u64>,
    total: u64,
}

/// The bucket of `ns` (already clamped to the recorded range).
fn bucket(ns: u64) -> u32 {
    let exponent = 63 - ns.leading_zeros();
    if exponent < SUB_BUCKET_BITS {
        return ns as u32;
    }
    let sub = (ns >> (exponent - SUB_BUCKET_BITS)) as u32 & ((1 << SUB_BUCKET_BITS) - 1);
    (exponent << SUB_BUCKET_BITS) | sub
}

/// The highest value in bucket `index`.
fn highest(index: u32) -> u64 {
    let exponent = index >> SUB_BUCKET_BITS;
    if exponent < SUB_BUCKET_BITS {
        return u64::from(index);
    }
    let sub = u64::from(index & ((1 << SUB_BUCKET_BITS) - 1));
    let shift = exponent - SUB_BUCKET_BITS;
    (((1 << SUB_BUCKET_BITS) | sub) << shift) + (1 << shift) - 1
}

impl Histogram {
    /// Records one call that took `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        *self
            .buckets
            .entry(bucket(ns.clamp(MIN_NS, MAX_NS)))
            .or_default() += 1;
        self.total += 1;
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The value (ns) at or below which `percentile`% of the calls fall.
    pub fn value_at(&self, percentile: f64) -> u64 {
        let wanted = ((percentile / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (&index, &count) in &self.buckets {
            seen += count;
            if seen >= wanted {
                return highest(index);
            }
        }
        self.buckets.keys().next_back().map_or(0, |&i| highest(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_values_within_one_percent() {
        for ns in [1, 5, 127, 128, 129, 1000, 5023, 156_671, 999_999_999] {
            let top = highest(bucket(ns));
            assert!(
                top >= ns && (top - ns) as f64 <= ns as f64 / 100.0,
                "{ns} -> {top}"
            );
        }
    }

    #[test]
    fn percentiles_pick_the_bucket_holding_that_share_of_calls() {
        let mut h = Histogram::default();
        for ns in 1..=100u64 {
            h.record(ns * 1000);
        }
        let p50 = h.value_at(50.0);
        assert!((50_000..=50_500).contains(&p50), "{p50}");
        let p99 = h.value_at(99.0);
        assert!((99_000..=99_800).contains(&p99), "{p99}");
        assert!(h.value_at(99.9) >= 100_000);
        assert!(Histogram::default().is_empty());
    }
}
