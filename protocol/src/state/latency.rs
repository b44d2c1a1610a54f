//! Per-command latency histograms for INFO latencystats.
//!
//! Redis keeps an HDR histogram per command (values in nanoseconds, two significant digits,
//! 1 ns to 1 s) and reports `p50`, `p99` and `p99.9` in microseconds. This is the same idea,
//! smaller: a value falls in a bucket named by its power of two and the next
//! [`SUB_BUCKET_BITS`] bits below its leading one, so each bucket spans under 1% of its
//! value; a percentile reports the highest value of the bucket it falls in, as
//! `hdr_value_at_percentile` reports the highest equivalent value.

/// Bits of precision below a value's leading one: 128 sub-buckets per power of two.
const SUB_BUCKET_BITS: u32 = 7;
/// Sub-buckets per power of two.
const SUB_BUCKETS: usize = 1 << SUB_BUCKET_BITS;
/// The range Redis records: at least 1 ns, at most 1 s.
const MIN_NS: u64 = 1;
const MAX_NS: u64 = 1_000_000_000;
/// Groups of [`SUB_BUCKETS`] buckets: values below 128 fill group 0 one per bucket, then one
/// group per power of two up to [`MAX_NS`]'s (2^29).
const GROUPS: usize = (64 - MAX_NS.leading_zeros()) as usize - SUB_BUCKET_BITS as usize + 1;

/// One command's latencies: counts per bucket, in groups allocated when first used (a
/// command's calls usually fall in two or three powers of two), so recording is an index
/// and an add.
#[derive(Debug, Default, Clone)]
pub struct Histogram {
    groups: [Option<Box<[u64; SUB_BUCKETS]>>; GROUPS],
    total: u64,
}

/// The bucket of `ns` (already clamped to the recorded range).
fn bucket(ns: u64) -> u32 {
    let exponent = 63 - ns.leading_zeros();
    if exponent < SUB_BUCKET_BITS {
        return ns as u32;
    }
    let sub = (ns >> (exponent - SUB_BUCKET_BITS)) as u32 & ((1 << SUB_BUCKET_BITS) - 1);
    ((exponent - SUB_BUCKET_BITS + 1) << SUB_BUCKET_BITS) | sub
}

/// The highest value in bucket `index`.
fn highest(index: u32) -> u64 {
    let group = index >> SUB_BUCKET_BITS;
    if group == 0 {
        return u64::from(index);
    }
    let sub = u64::from(index & ((1 << SUB_BUCKET_BITS) - 1));
    let shift = group - 1;
    (((1 << SUB_BUCKET_BITS) | sub) << shift) + (1 << shift) - 1
}

impl Histogram {
    /// Records one call that took `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let index = bucket(ns.clamp(MIN_NS, MAX_NS)) as usize;
        let group =
            self.groups[index / SUB_BUCKETS].get_or_insert_with(|| Box::new([0; SUB_BUCKETS]));
        group[index % SUB_BUCKETS] += 1;
        self.total += 1;
    }

    /// Adds `other`'s calls to these.
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.groups.iter_mut().zip(&other.groups) {
            let Some(theirs) = theirs else { continue };
            let mine = mine.get_or_insert_with(|| Box::new([0; SUB_BUCKETS]));
            for (m, t) in mine.iter_mut().zip(theirs.iter()) {
                *m += t;
            }
        }
        self.total += other.total;
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The buckets holding calls, lowest first: (index, count).
    fn counts(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.groups.iter().enumerate().flat_map(|(g, group)| {
            group.iter().flat_map(move |counts| {
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(move |(sub, &c)| ((g * SUB_BUCKETS + sub) as u32, c))
            })
        })
    }

    /// How many calls were recorded.
    pub fn calls(&self) -> u64 {
        self.total
    }

    /// LATENCY HISTOGRAM's cumulative distribution: for each power of two from 1024 ns up
    /// (Redis's `hdr_iter_log_init(…, 1024, 2)`), the highest value of its bucket in
    /// microseconds and the calls at or below it, where that count grew; up to the last call.
    pub fn cumulative_usec(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let counts: Vec<(u32, u64)> = self.counts().collect();
        let (mut at, mut cumulative, mut previous) = (0, 0, 0);
        let mut step: u64 = 1024;
        while cumulative < self.total && step <= MAX_NS * 2 {
            let last = bucket(step);
            while at < counts.len() && counts[at].0 <= last {
                cumulative += counts[at].1;
                at += 1;
            }
            if cumulative > previous {
                out.push((highest(last) / 1000, cumulative));
            }
            previous = cumulative;
            step *= 2;
        }
        out
    }

    /// The value (ns) at or below which `percentile`% of the calls fall.
    pub fn value_at(&self, percentile: f64) -> u64 {
        let wanted = ((percentile / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        let mut last = None;
        for (index, count) in self.counts() {
            seen += count;
            if seen >= wanted {
                return highest(index);
            }
            last = Some(index);
        }
        last.map_or(0, highest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cumulative_distribution_steps_by_powers_of_two_as_redis() {
        let mut h = Histogram::default();
        for ns in [500, 1_500, 1_600, 30_000] {
            h.record(ns);
        }
        // Highest values of the buckets of 1024, 2048 and 32768 ns: 1031, 2063, 33023.
        assert_eq!(h.cumulative_usec(), vec![(1, 1), (2, 3), (33, 4)]);
    }

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

    #[test]
    fn merged_histograms_hold_both_sets_of_calls() {
        let (mut a, mut b, mut both) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for ns in 1..=50u64 {
            a.record(ns * 1000);
            both.record(ns * 1000);
        }
        for ns in 51..=100u64 {
            b.record(ns * 3000);
            both.record(ns * 3000);
        }
        a.merge(&b);
        for p in [10.0, 50.0, 90.0, 99.9] {
            assert_eq!(a.value_at(p), both.value_at(p), "p{p}");
        }
        assert!(a.value_at(50.0) < 60_000 && a.value_at(90.0) > 150_000);
    }

    #[test]
    fn the_extremes_of_the_range_have_buckets() {
        let mut h = Histogram::default();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.value_at(1.0), 1);
        let top = h.value_at(100.0);
        assert!((MAX_NS..=MAX_NS + MAX_NS / 100).contains(&top), "{top}");
    }
}
