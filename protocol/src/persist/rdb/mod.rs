//! RDB snapshots on disk: the files SAVE and BGSAVE write, when a `save` point is due, and
//! `dump.rdb` loaded at start. When to save, where and how (the settings) is decided above, in
//! the server state (`crate::state`'s persistence).
//!
//! The format is the engine's ([`echomq_engine::rdb`]); this module owns the file and the
//! figures INFO reports. SAVE writes the keyspace as it is while it holds the keyspace lock
//! (as Redis blocks); BGSAVE forks under the lock and the child writes the keyspace from its
//! image of the parent's memory while clients go on (`crate::persist::fork`: nothing is copied
//! but the pages writers touch meanwhile).
//!
//! Invariants:
//! - `dump.rdb` is only ever replaced whole: the file is written to `temp-<pid>.rdb` in `dir`,
//!   fsynced, renamed over `dbfilename`, and the directory fsynced, so a crash at any point
//!   leaves the previous file or the new one, never a mix (`save::write_atomically`);
//! - one save runs at a time (`in_progress`), but for DEBUG RELOAD's, which writes beside a
//!   BGSAVE's child under its own temp name, as Redis's does;
//! - a failed BGSAVE is recorded (`last_failed`) until a save succeeds: with save points
//!   configured and `stop-writes-on-bgsave-error yes`, write commands (and PING) get Redis's
//!   `-MISCONF` meanwhile.

pub(crate) mod load;
pub(crate) mod save;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// Seconds after a failed background save before a save point may try again (Redis's
/// `CONFIG_BGSAVE_RETRY_DELAY`).
pub(crate) const BGSAVE_RETRY_DELAY_S: u64 = 5;

/// Parses `save`: pairs of `seconds changes`, or nothing (no automatic save). `None` if
/// malformed.
pub(crate) fn save_points(text: &str) -> Option<Vec<(u64, u64)>> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() % 2 != 0 {
        return None;
    }
    words
        .chunks(2)
        .map(|pair| Some((pair[0].parse().ok()?, pair[1].parse().ok()?)))
        .collect()
}

/// The RDB state and INFO's `rdb_*` figures.
#[derive(Debug)]
pub(crate) struct Rdb {
    /// A save (SAVE or BGSAVE) is running.
    in_progress: AtomicBool,
    /// `rdb_bgsave_in_progress`: the running save is a background one.
    background: AtomicBool,
    /// `rdb_last_save_time`: Unix seconds of the last successful save (start time at first).
    last_save_s: AtomicU64,
    /// When the last background save was tried (Unix seconds), for the retry delay.
    last_try_s: AtomicU64,
    /// `rdb_last_bgsave_status` is `err`.
    last_failed: AtomicBool,
    /// `rdb_last_bgsave_time_sec`, -1 before the first.
    last_bgsave_time_s: AtomicI64,
    /// When the running background save started (Unix ms).
    started_ms: AtomicU64,
    /// `rdb_saves`.
    saves: AtomicU64,
    /// `rdb_saves_consecutive_failures`.
    failures: AtomicU64,
    /// The dirty counter the last successful save covered.
    dirty_saved: AtomicU64,
    /// The dirty counter the running save covers.
    dirty_saving: AtomicU64,
    /// A BGSAVE was scheduled (`rdb_bgsave_scheduled`): the cron starts it once no child runs.
    scheduled: AtomicBool,
    /// SHUTDOWN saved already (or was told not to): the stop does not save again.
    final_save_done: AtomicBool,
    /// `rdb_last_load_keys_loaded`, `rdb_last_load_keys_expired`.
    keys_loaded: AtomicU64,
    keys_expired: AtomicU64,
    /// The BGSAVE child (INFO's `rdb_last_cow_size`, the fork figures).
    pub(crate) fork: crate::persist::fork::Slot,
}

impl Rdb {
    /// The state of a server started at `started_s`.
    pub(crate) fn new(started_s: u64) -> Rdb {
        Rdb {
            in_progress: AtomicBool::new(false),
            background: AtomicBool::new(false),
            last_save_s: AtomicU64::new(started_s),
            last_try_s: AtomicU64::new(0),
            last_failed: AtomicBool::new(false),
            last_bgsave_time_s: AtomicI64::new(-1),
            started_ms: AtomicU64::new(0),
            saves: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            dirty_saved: AtomicU64::new(0),
            dirty_saving: AtomicU64::new(0),
            scheduled: AtomicBool::new(false),
            final_save_done: AtomicBool::new(false),
            keys_loaded: AtomicU64::new(0),
            keys_expired: AtomicU64::new(0),
            fork: crate::persist::fork::Slot::default(),
        }
    }

    /// Whether a background save runs (`rdb_bgsave_in_progress`).
    pub(crate) fn bgsave_in_progress(&self) -> bool {
        self.in_progress.load(Ordering::Acquire) && self.background.load(Ordering::Acquire)
    }

    /// Whether any save runs.
    pub(crate) fn in_progress(&self) -> bool {
        self.in_progress.load(Ordering::Acquire)
    }

    /// `rdb_last_save_time` (LASTSAVE).
    pub(crate) fn last_save_s(&self) -> u64 {
        self.last_save_s.load(Ordering::Acquire)
    }

    /// Whether the last save failed (`rdb_last_bgsave_status:err`).
    pub(crate) fn last_failed(&self) -> bool {
        self.last_failed.load(Ordering::Acquire)
    }

    /// `rdb_last_bgsave_time_sec`.
    pub(crate) fn last_bgsave_time_s(&self) -> i64 {
        self.last_bgsave_time_s.load(Ordering::Acquire)
    }

    /// `rdb_current_bgsave_time_sec` at `now_ms`: -1 when none runs.
    pub(crate) fn current_bgsave_time_s(&self, now_ms: u64) -> i64 {
        if self.bgsave_in_progress() {
            (now_ms.saturating_sub(self.started_ms.load(Ordering::Acquire)) / 1000) as i64
        } else {
            -1
        }
    }

    /// `rdb_saves`, `rdb_saves_consecutive_failures`.
    pub(crate) fn saves(&self) -> (u64, u64) {
        (
            self.saves.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
        )
    }

    /// `rdb_changes_since_last_save` for a dirty counter of `dirty`.
    pub(crate) fn changes_since_save(&self, dirty: u64) -> u64 {
        dirty.saturating_sub(self.dirty_saved.load(Ordering::Acquire))
    }

    /// `rdb_last_load_keys_loaded`, `rdb_last_load_keys_expired`.
    pub(crate) fn load_keys(&self) -> (u64, u64) {
        (
            self.keys_loaded.load(Ordering::Relaxed),
            self.keys_expired.load(Ordering::Relaxed),
        )
    }

    /// Records a load's figures; the loaded data counts as saved.
    pub(crate) fn loaded(&self, keys_loaded: u64, keys_expired: u64, dirty: u64) {
        self.keys_loaded.store(keys_loaded, Ordering::Relaxed);
        self.keys_expired.store(keys_expired, Ordering::Relaxed);
        self.dirty_saved.store(dirty, Ordering::Release);
    }

    /// Waits (a minute at most) for a running save to end: a save started now would share
    /// its temporary file.
    pub(crate) fn wait_for_background_save(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while self.in_progress() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// SHUTDOWN has saved, or was told not to: the server's stop saves nothing more.
    pub(crate) fn skip_final_save(&self) {
        self.final_save_done.store(true, Ordering::Release);
    }

    /// Whether [`Rdb::skip_final_save`] was called.
    pub(crate) fn final_save_skipped(&self) -> bool {
        self.final_save_done.load(Ordering::Acquire)
    }

    /// Notes a BGSAVE to run once no child runs (`BGSAVE SCHEDULE` during an AOF rewrite, or
    /// BGSAVE inside EXEC).
    pub(crate) fn schedule(&self) {
        self.scheduled.store(true, Ordering::Release);
    }

    /// Whether a scheduled BGSAVE waits.
    pub(crate) fn scheduled(&self) -> bool {
        self.scheduled.load(Ordering::Acquire)
    }

    /// A scheduled BGSAVE started.
    pub(crate) fn clear_scheduled(&self) {
        self.scheduled.store(false, Ordering::Release);
    }

    /// Whether an automatic background save may be tried at `now_s`: the last one succeeded,
    /// or failed more than [`BGSAVE_RETRY_DELAY_S`] ago.
    pub(crate) fn retry_ok(&self, now_s: u64) -> bool {
        !self.last_failed()
            || now_s.saturating_sub(self.last_try_s.load(Ordering::Acquire)) > BGSAVE_RETRY_DELAY_S
    }

    /// Claims the one save slot; false if a save runs.
    fn begin(&self, background: bool, now_ms: u64, dirty: u64) -> bool {
        if self.in_progress.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.background.store(background, Ordering::Release);
        self.started_ms.store(now_ms, Ordering::Release);
        self.dirty_saving.store(dirty, Ordering::Release);
        if background {
            self.last_try_s.store(now_ms / 1000, Ordering::Release);
        }
        true
    }

    /// Releases the save slot with the save's outcome.
    fn finish(&self, ok: bool, now_ms: u64) {
        let background = self.background.load(Ordering::Acquire);
        if background {
            let took = now_ms.saturating_sub(self.started_ms.load(Ordering::Acquire)) / 1000;
            self.last_bgsave_time_s
                .store(took as i64, Ordering::Release);
        }
        if ok {
            self.saves.fetch_add(1, Ordering::Relaxed);
            self.failures.store(0, Ordering::Relaxed);
            self.last_save_s.store(now_ms / 1000, Ordering::Release);
            self.dirty_saved
                .store(self.dirty_saving.load(Ordering::Acquire), Ordering::Release);
            self.last_failed.store(false, Ordering::Release);
        } else if background {
            // As Redis: a failed SAVE is its reply's error; only a failed BGSAVE sets the
            // status that stops writes.
            self.failures.fetch_add(1, Ordering::Relaxed);
            self.last_failed.store(true, Ordering::Release);
        }
        self.background.store(false, Ordering::Release);
        self.in_progress.store(false, Ordering::Release);
    }

    /// Releases the save slot after the server killed its child (FLUSHALL, SHUTDOWN): neither
    /// a success nor a failure, as Redis's SIGUSR1 kill.
    fn abort(&self, now_ms: u64) {
        let took = now_ms.saturating_sub(self.started_ms.load(Ordering::Acquire)) / 1000;
        self.last_bgsave_time_s
            .store(took as i64, Ordering::Release);
        self.background.store(false, Ordering::Release);
        self.in_progress.store(false, Ordering::Release);
    }

    /// Kills a running BGSAVE's child (Redis's `killRDBChild`) and waits until its end is
    /// recorded and its temp file removed. Whether one ran.
    pub(crate) fn kill_child(&self) -> bool {
        if !self.fork.kill() {
            return false;
        }
        self.wait_for_background_save();
        true
    }

    /// Whether a save point is due at `now_s` with the dirty counter at `dirty` (Redis's
    /// `serverCron` rule: enough changes, enough time since the last save, and after a
    /// failure the retry delay passed).
    pub(crate) fn save_point_due(&self, points: &[(u64, u64)], now_s: u64, dirty: u64) -> bool {
        if self.in_progress() {
            return false;
        }
        let changes = self.changes_since_save(dirty);
        let since_save = now_s.saturating_sub(self.last_save_s());
        let retry_ok = self.retry_ok(now_s);
        points
            .iter()
            .any(|&(secs, n)| changes >= n && since_save > secs && retry_ok)
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn save_points_parse_as_redis_takes_them() {
        assert_eq!(save_points(""), Some(vec![]));
        assert_eq!(
            save_points("3600 1 300 100"),
            Some(vec![(3600, 1), (300, 100)])
        );
        assert_eq!(save_points("3600"), None);
        assert_eq!(save_points("a 1"), None);
    }

    #[test]
    fn a_failed_save_delays_the_next_automatic_one() {
        let rdb = Rdb::new(0);
        assert!(rdb.retry_ok(1));
        assert!(rdb.begin(true, 1000, 0));
        rdb.finish(false, 2000);
        assert!(!rdb.retry_ok(1 + BGSAVE_RETRY_DELAY_S));
        assert!(rdb.retry_ok(2 + BGSAVE_RETRY_DELAY_S));
    }

    #[test]
    fn a_save_point_fires_after_its_changes_and_seconds() {
        let rdb = Rdb::new(1000);
        let points = [(60, 2)];
        assert!(!rdb.save_point_due(&points, 1100, 1));
        assert!(!rdb.save_point_due(&points, 1050, 5));
        assert!(rdb.save_point_due(&points, 1100, 5));
        assert!(rdb.begin(true, 1_100_000, 5));
        assert!(!rdb.save_point_due(&points, 1100, 9));
        rdb.finish(false, 1_100_000);
        assert!(!rdb.save_point_due(&points, 1103, 9), "retry delay");
        assert!(rdb.save_point_due(&points, 1106, 9));
        assert!(rdb.begin(true, 1_106_000, 9));
        rdb.finish(true, 1_106_000);
        assert_eq!(rdb.changes_since_save(9), 0);
        assert_eq!(rdb.last_save_s(), 1106);
        assert_eq!(rdb.saves(), (1, 0));
    }
}
