//! The monotonic clock in plain nanoseconds, for durations: timing calls (INFO commandstats,
//! latency histograms, SLOWLOG) and a client's age and idle time (CLIENT LIST), which must not
//! jump with the wall clock. Times of day are the keyspace's clock (`echomq_engine::Clock`).
//!
//! `Instant` differences go through a seconds-and-nanoseconds subtraction with checks on
//! every call; a call timed twice per request wants a `u64` and a subtraction. Invariant:
//! readings never decrease within a process (CLOCK_MONOTONIC, or `Instant` elsewhere).
//!
//! A [`Mark`] pairs a reading with the wall clock's offset from it, read once for a batch of
//! pipelined requests: each call's time of day is its start on this clock plus that offset,
//! so a batch of sixteen reads the wall clock once rather than sixteen times. Within a batch
//! (microseconds) the two clocks move together but for a slew of parts per million; a step
//! of the wall clock shows from the next batch.

/// A reading of [`now_ns`], with the wall clock's offset from that clock when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The reading, in [`now_ns`] nanoseconds.
    pub(crate) ns: u64,
    /// Unix time in nanoseconds minus [`now_ns`], read together; `None` before 1970.
    wall_offset_ns: Option<u64>,
}

impl Mark {
    /// Reads both clocks.
    pub(crate) fn now() -> Mark {
        let ns = now_ns();
        Mark {
            ns,
            wall_offset_ns: echomq_engine::SystemClock::unix_ns()
                .and_then(|wall| wall.checked_sub(ns)),
        }
    }

    /// This mark moved on to a later reading `ns`, keeping the offset.
    pub(crate) fn at(self, ns: u64) -> Mark {
        Mark { ns, ..self }
    }

    /// The time of day of this reading in Unix milliseconds.
    pub(crate) fn wall_ms(self) -> Option<u64> {
        self.wall_offset_ns
            .and_then(|offset| self.ns.checked_add(offset))
            .map(|ns| ns / 1_000_000)
    }
}

/// Nanoseconds on the monotonic clock since an arbitrary fixed point.
#[cfg(unix)]
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(t.tv_nsec as u64)
}

/// Nanoseconds on the monotonic clock since an arbitrary fixed point.
#[cfg(not(unix))]
pub(crate) fn now_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::Mark;

    #[test]
    fn a_mark_carries_the_wall_clock_forward_with_the_monotonic_one() {
        let mark = Mark::now();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or_default();
        let at_mark = mark.wall_ms().unwrap_or_default();
        assert!(at_mark.abs_diff(wall) <= 5, "{at_mark} vs {wall}");
        let later = mark
            .at(mark.ns + 2_500_000_000)
            .wall_ms()
            .unwrap_or_default();
        assert!(
            (2_499..=2_501).contains(&(later - at_mark)),
            "{at_mark} -> {later}"
        );
    }

    #[test]
    fn readings_never_go_back_and_follow_real_time() {
        let start = super::now_ns();
        let instant = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let end = super::now_ns();
        let elapsed = instant.elapsed().as_nanos() as u64;
        assert!(end >= start + 5_000_000, "{start} -> {end}");
        assert!(
            end - start <= elapsed + 5_000_000,
            "{} vs {elapsed}",
            end - start
        );
    }
}
