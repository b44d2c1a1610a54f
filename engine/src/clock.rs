//! The injected clock: every time-dependent rule reads one of these.
//!
//! `*` ids, idle times and blocking deadlines all come from [`Clock::now_ms`], read once per
//! top-level command (the keyspace takes one snapshot and passes it down), so a test can move
//! time with a [`ManualClock`] instead of sleeping.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(unix))]
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of Unix time in milliseconds.
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;

    /// [`Clock::now_ms`], or `extrapolated` when the caller has it: a recent reading of the
    /// wall clock carried forward along the monotonic clock (a server reads the wall clock
    /// once per batch of pipelined requests, see `Batch::set_wall_ms`). Only the system
    /// clock takes it; any other clock moves only as it is told, so it is read.
    fn now_ms_or(&self, extrapolated: Option<u64>) -> u64 {
        let _ = extrapolated;
        self.now_ms()
    }

    /// This clock as a [`ManualClock`], when it is one: what lets a server started on a
    /// manual clock move it for its clients (`EMQ.CLOCK`).
    fn as_manual(&self) -> Option<&ManualClock> {
        None
    }
}

/// The machine's wall clock (CLOCK_REALTIME), the one every server and test reads: the
/// server reads it for every command's time snapshot, so on Unix it is read as integer
/// milliseconds straight from `clock_gettime`, without `SystemTime`'s checked subtraction and
/// 128-bit division.
///
/// A clock before 1970 reads as 0: ids stay monotone anyway because `*` never goes below the
/// stream's last id.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl SystemClock {
    /// Unix time in nanoseconds, read from the same clock; `None` before 1970 or past `u64`
    /// (what a server pairs with its monotonic readings, `protocol/src/monotonic.rs`).
    #[cfg(unix)]
    pub fn unix_ns() -> Option<u64> {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        u64::try_from(t.tv_sec)
            .ok()?
            .checked_mul(1_000_000_000)?
            .checked_add(t.tv_nsec as u64)
    }

    /// Unix time in nanoseconds; `None` before 1970 or past `u64`.
    #[cfg(not(unix))]
    pub fn unix_ns() -> Option<u64> {
        let since = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        u64::try_from(since.as_nanos()).ok()
    }
}

impl Clock for SystemClock {
    fn now_ms_or(&self, extrapolated: Option<u64>) -> u64 {
        extrapolated.unwrap_or_else(|| self.now_ms())
    }

    #[cfg(unix)]
    fn now_ms(&self) -> u64 {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        match u64::try_from(t.tv_sec) {
            Ok(secs) => secs * 1000 + t.tv_nsec as u64 / 1_000_000,
            Err(_) => 0,
        }
    }

    #[cfg(not(unix))]
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}

/// A clock that moves only when told to: the test double's clock.
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicU64,
}

impl ManualClock {
    /// A clock showing `ms`.
    pub fn new(ms: u64) -> ManualClock {
        ManualClock {
            ms: AtomicU64::new(ms),
        }
    }

    /// Sets the time (it may go backwards, as a real clock can).
    pub fn set(&self, ms: u64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms` and returns the new time, or `None` (and leaves it) if
    /// that would pass `u64::MAX`.
    pub fn try_advance(&self, ms: u64) -> Option<u64> {
        self.ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                now.checked_add(ms)
            })
            .ok()
            .map(|before| before + ms)
    }

    /// Sets the time to `ms` unless that is earlier than it shows: `Ok(ms)`, or `Err(now)`
    /// leaving it. Two clients moving the clock at once cannot take it backwards between
    /// them.
    pub fn set_forward(&self, ms: u64) -> Result<u64, u64> {
        self.ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                (ms >= now).then_some(ms)
            })
            .map(|_| ms)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.ms.load(Ordering::SeqCst)
    }

    fn as_manual(&self) -> Option<&ManualClock> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use super::{Clock, ManualClock, SystemClock};

    fn std_now_ms() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    #[test]
    fn a_manual_clock_moves_forward_only_through_its_checked_moves() {
        let clock = ManualClock::new(1000);
        assert!(SystemClock.as_manual().is_none());
        assert_eq!(clock.as_manual().map(Clock::now_ms), Some(1000));
        assert_eq!(clock.try_advance(500), Some(1500));
        assert_eq!(clock.try_advance(u64::MAX), None);
        assert_eq!(clock.set_forward(1400), Err(1500));
        assert_eq!(clock.set_forward(1500), Ok(1500));
        assert_eq!(clock.set_forward(9000), Ok(9000));
        assert_eq!(clock.now_ms(), 9000);
    }

    #[test]
    fn the_system_clock_reads_as_std_system_time() {
        let before = std_now_ms();
        let ours = SystemClock.now_ms();
        let after = std_now_ms();
        assert!(before <= ours && ours <= after, "{before} {ours} {after}");
    }

    #[test]
    fn only_the_system_clock_takes_an_extrapolated_time() {
        assert_eq!(SystemClock.now_ms_or(Some(1234)), 1234);
        let before = std_now_ms();
        let read = SystemClock.now_ms_or(None);
        assert!(before <= read && read <= std_now_ms());
        assert_eq!(ManualClock::new(77).now_ms_or(Some(1234)), 77);
    }
}
