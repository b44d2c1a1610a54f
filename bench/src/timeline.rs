//! Ids that map to instants: entry `i` of a bench stream is minted at `base + i / rate`
//! seconds, so a window of a given span holds `span x rate` entries wherever it lies.
//!
//! Entry `i` gets stream id `<ms>-<seq>` with `ms = base_ms + floor(i * 1000 / rate)` and `seq`
//! its rank among the entries of that millisecond, and the branded `EVT` id of the same value
//! in its `id` field, exactly as `Feed::append` writes it, so `read_window` reads it back.

use echomq::engine::StreamId;
use echomq::feed::{Brand, Branded};
use time::OffsetDateTime;

/// Entry `i`'s id and instant.
#[derive(Debug, Clone, Copy)]
pub struct Timeline {
    /// Unix ms of entry 0.
    pub base_ms: u64,
    /// Entries per second.
    pub rate: u64,
}

impl Timeline {
    /// A timeline whose entry `entries - 1` is at about now, so `*` appends after it look real.
    pub fn ending_now(entries: u64, rate: u64) -> Timeline {
        let now_ms = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
        let now_ms = u64::try_from(now_ms).unwrap_or(0);
        let span_ms = entries.saturating_mul(1000) / rate;
        Timeline {
            base_ms: now_ms.saturating_sub(span_ms),
            rate,
        }
    }

    /// Milliseconds after `base_ms` of entry `i`.
    fn offset_ms(&self, i: u64) -> u64 {
        (u128::from(i) * 1000 / u128::from(self.rate)) as u64
    }

    /// Unix ms of entry `i`.
    pub fn ms(&self, i: u64) -> u64 {
        self.base_ms + self.offset_ms(i)
    }

    /// The stream id of entry `i`.
    pub fn id(&self, i: u64) -> StreamId {
        let m = u128::from(self.offset_ms(i));
        // The first entry of millisecond m is ceil(m * rate / 1000).
        let first = (m * u128::from(self.rate)).div_ceil(1000) as u64;
        StreamId::new(self.ms(i), i - first)
    }

    /// The branded id text of entry `i`.
    pub fn branded(&self, i: u64) -> Vec<u8> {
        let id = self.id(i);
        Branded::new(Brand::Evt, (id.ms << 22) | id.seq)
            .to_text()
            .to_vec()
    }
}

/// The instant of a unix millisecond.
pub fn instant(ms: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_increase_and_match_their_instants_at_any_rate() {
        for rate in [1, 10, 999, 1000, 1001, 7919, 1_000_000] {
            let t = Timeline {
                base_ms: 1_000_000,
                rate,
            };
            let mut last = None;
            for i in 0..5000 {
                let id = t.id(i);
                assert!(Some(id) > last, "rate {rate} entry {i}");
                assert_eq!(id.ms, t.ms(i));
                assert!(id.seq < rate.div_ceil(1000) + 1);
                last = Some(id);
            }
            // A span of one second holds `rate` entries.
            let in_second = (0..5000).filter(|&i| t.ms(i) < 1_001_000).count() as u64;
            assert_eq!(in_second, rate.min(5000));
        }
    }

    #[test]
    fn branded_text_names_the_same_id() {
        let t = Timeline {
            base_ms: 1_796_000_000_000,
            rate: 3000,
        };
        for i in [0, 1, 2, 3, 2999, 3000] {
            let text = String::from_utf8(t.branded(i)).unwrap();
            let parsed = Branded::parse_as(&text, Brand::Evt).unwrap();
            assert_eq!(parsed.stream_id(), t.id(i));
        }
    }
}
