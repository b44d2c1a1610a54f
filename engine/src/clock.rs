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

impl Clock for SystemClock {
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
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use super::{Clock, SystemClock};

    fn std_now_ms() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    #[test]
    fn the_system_clock_reads_as_std_system_time() {
        let before = std_now_ms();
        let ours = SystemClock.now_ms();
        let after = std_now_ms();
        assert!(before <= ours && ours <= after, "{before} {ours} {after}");
    }
}
