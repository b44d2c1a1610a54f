//! CLIENT PAUSE: for a while, clients' commands (all of them, or only writes) wait before
//! they run, as in Redis: a paused command is postponed, not refused, and runs once the
//! pause ends (CLIENT UNPAUSE, or its timeout).
//!
//! As in Redis's `pauseActions`, a new pause replaces the mode and keeps the later end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// What is paused, until when.
#[derive(Debug, Clone, Copy)]
struct Paused {
    until: Instant,
    /// Every command (ALL), or only writes (WRITE).
    all: bool,
}

/// The server's pause.
#[derive(Debug, Default)]
pub(crate) struct Pause {
    paused: Mutex<Option<Paused>>,
    /// Whether `paused` may be set: every command checks this flag, and only while a pause
    /// is on takes the lock and reads the clock.
    active: AtomicBool,
}

impl Pause {
    /// CLIENT PAUSE `ms` [WRITE|ALL].
    pub(crate) fn pause(&self, ms: u64, all: bool) {
        let until = Instant::now() + Duration::from_millis(ms);
        let mut paused = self.paused.lock();
        let until = match *paused {
            Some(old) if old.until > until && old.until > Instant::now() => old.until,
            _ => until,
        };
        *paused = Some(Paused { until, all });
        self.active.store(true, Ordering::Release);
    }

    /// CLIENT UNPAUSE.
    pub(crate) fn unpause(&self) {
        let mut paused = self.paused.lock();
        *paused = None;
        self.active.store(false, Ordering::Release);
    }

    /// When a command (a write when `write`) may run, if it must wait.
    #[inline]
    pub(crate) fn holds(&self, write: bool) -> Option<Instant> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        self.holds_active(write)
    }

    /// [`Pause::holds`] once a pause was set.
    #[cold]
    fn holds_active(&self, write: bool) -> Option<Instant> {
        let mut paused = self.paused.lock();
        let now = Instant::now();
        match *paused {
            Some(p) if p.until <= now => {
                *paused = None;
                self.active.store(false, Ordering::Release);
                None
            }
            Some(p) if p.all || write => Some(p.until),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_pauses_hold_writes_only_and_unpause_releases() {
        let pause = Pause::default();
        assert!(pause.holds(true).is_none());
        pause.pause(60_000, false);
        assert!(pause.holds(true).is_some());
        assert!(pause.holds(false).is_none());
        pause.pause(0, true);
        // The later end is kept; the mode is the new one.
        assert!(pause.holds(false).is_some());
        pause.unpause();
        assert!(pause.holds(true).is_none());
        pause.pause(0, true);
        assert!(pause.holds(false).is_none());
    }
}
