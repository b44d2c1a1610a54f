//! The injected clock: every time-dependent rule reads one of these.
//!
//! `*` ids, idle times and blocking deadlines all come from [`Clock::now_ms`], read once per
//! top-level command (the keyspace takes one snapshot and passes it down), so a test can move
//! time with a [`ManualClock`] instead of sleeping.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of Unix time in milliseconds.
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The machine's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // A clock before 1970 reads as 0: ids stay monotone anyway because `*` never goes
        // below the stream's last id.
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
