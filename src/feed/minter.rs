//! The writer's mint: one monotone cell per writer.
//!
//! `mint(now)` returns `max(last + 1, now_ms << 22)`, taken with a compare-and-swap, so mints
//! strictly increase across threads even when the clock stands still or steps back, and a
//! full millisecond of sequence spills into the next millisecond. Seeding the cell from a
//! stream's last id makes the next mint exceed it, so a single writer's XADD is never refused.

use std::sync::atomic::{AtomicU64, Ordering};

use echomq_engine::StreamId;

use super::brand::{Brand, Branded, BrandedError, MS_MAX, SEQ_BITS, SEQ_MAX};

/// A monotone source of branded ids.
#[derive(Debug, Default)]
pub struct Minter {
    last: AtomicU64,
}

impl Minter {
    /// A minter that has minted nothing.
    pub fn new() -> Minter {
        Minter::default()
    }

    /// The next id for `brand` at Unix millisecond `now_ms`.
    pub fn mint(&self, brand: Brand, now_ms: u64) -> Result<Branded, BrandedError> {
        let floor = now_ms.min(MS_MAX) << SEQ_BITS;
        let mut last = self.last.load(Ordering::Relaxed);
        loop {
            let next = last
                .checked_add(1)
                .ok_or(BrandedError::OutOfRange)?
                .max(floor);
            match self
                .last
                .compare_exchange_weak(last, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Ok(Branded::new(brand, next)),
                Err(seen) => last = seen,
            }
        }
    }

    /// Makes every later mint greater than the stream id `top` (a stream's last id).
    pub fn seed(&self, top: StreamId) {
        let value = if top.ms > MS_MAX {
            u64::MAX
        } else if top.seq > SEQ_MAX {
            // Past this millisecond's branded range: the next mint starts the next millisecond.
            ((top.ms + 1) << SEQ_BITS).wrapping_sub(1)
        } else {
            (top.ms << SEQ_BITS) | top.seq
        };
        self.last.fetch_max(value, Ordering::AcqRel);
    }

    /// The last value handed out (or seeded).
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    #[test]
    fn mints_strictly_increase_when_the_clock_stands_still_or_goes_back() {
        let m = Minter::new();
        let a = m.mint(Brand::Evt, 1000).unwrap();
        let b = m.mint(Brand::Evt, 1000).unwrap();
        let c = m.mint(Brand::Evt, 10).unwrap();
        assert!(a < b && b < c);
        assert_eq!((a.ms(), a.seq()), (1000, 0));
        assert_eq!((c.ms(), c.seq()), (1000, 2));
    }

    #[test]
    fn a_full_millisecond_spills_into_the_next() {
        let m = Minter::new();
        m.seed(StreamId::new(5, SEQ_MAX));
        let next = m.mint(Brand::Evt, 5).unwrap();
        assert_eq!((next.ms(), next.seq()), (6, 0));
        m.seed(StreamId::new(9, SEQ_MAX + 7));
        let next = m.mint(Brand::Evt, 0).unwrap();
        assert_eq!((next.ms(), next.seq()), (10, 0));
    }

    #[test]
    fn seeding_puts_mints_past_the_stream_top() {
        let m = Minter::new();
        m.seed(StreamId::new(2000, 3));
        let next = m.mint(Brand::Evt, 1500).unwrap();
        assert!(next.stream_id() > StreamId::new(2000, 3));
    }

    #[test]
    fn concurrent_mints_are_unique_and_increase_per_thread() {
        let m = Arc::new(Minter::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    (0..10_000)
                        .map(|i| m.mint(Brand::Evt, 100 + (i % 3)).unwrap().value())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in threads {
            let ids = t.join().unwrap();
            assert!(ids.windows(2).all(|w| w[0] < w[1]));
            all.extend(ids);
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 40_000);
    }

    proptest! {
        #[test]
        fn any_clock_sequence_mints_increasing_ids(clock in proptest::collection::vec(0u64..5000, 1..200)) {
            let m = Minter::new();
            let mut prev = None;
            for now in clock {
                let id = m.mint(Brand::Evt, now).unwrap();
                prop_assert!(id.ms() >= now.min(MS_MAX));
                prop_assert!(prev.is_none_or(|p| p < id));
                prev = Some(id);
            }
        }
    }
}
