//! `appendfsync always` as a group commit: many connections' writes, one fsync.
//!
//! A connection's commit writes its bytes (and everyone else's pending ones) to the
//! incremental file without an fsync and gets a *target*, the total bytes written so far; it
//! then waits, without holding the runtime thread, until the syncer thread has fsynced at
//! least that far ([`GroupSync::wait`]) before its replies go out. While one fsync runs, other
//! connections run their commands and write, and the next fsync covers all of them, as Redis
//! covers a whole event-loop turn with one fsync in `beforeSleep`.
//!
//! With the syncer running, a connection under `always` does not even write: it asks for a
//! *round* ([`GroupSync::request_round`]) and the syncer writes everything pending and
//! fsyncs it, one write and one fsync for every connection that asked meanwhile.
//!
//! Invariants: `durable.synced` only grows and never passes `written`; a failed fsync marks
//! everything written until then (`failed_upto`) as not acknowledged, so its waiters fail (the
//! connection closes unanswered, as for a failed write) while later writes get a new chance.

use std::fs::File;
use std::sync::Weak;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::sync::watch;

use super::Aof;

/// How far the file is known durable.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Durable {
    /// Bytes (counted as [`GroupSync::written`]) fsynced.
    pub synced: u64,
    /// Bytes up to which an fsync failed: waiters at or below it are refused.
    pub failed_upto: u64,
    /// The last round (see [`GroupSync::request_round`]) written and fsynced.
    pub round: u64,
    /// The last round whose write or fsync failed: its waiters, and earlier ones not yet
    /// served, are refused.
    pub failed_round: u64,
}

/// The written and durable counters, and the syncer's wake-up.
#[derive(Debug)]
pub(crate) struct GroupSync {
    /// Bytes written to the incremental files since the server started, across files.
    written: AtomicU64,
    /// Set when a commit wrote bytes that await an fsync.
    wanted: Mutex<bool>,
    wake: Condvar,
    durable: watch::Sender<Durable>,
    started: AtomicBool,
    /// Rounds asked for by connections under `always` whose writes the syncer does.
    rounds_asked: AtomicU64,
}

impl Default for GroupSync {
    fn default() -> Self {
        GroupSync {
            written: AtomicU64::new(0),
            wanted: Mutex::new(false),
            wake: Condvar::new(),
            durable: watch::Sender::new(Durable::default()),
            started: AtomicBool::new(false),
            rounds_asked: AtomicU64::new(0),
        }
    }
}

/// Longest the syncer sleeps without work before checking that its AOF still exists.
const IDLE_CHECK: Duration = Duration::from_secs(1);

impl GroupSync {
    /// Counts `len` bytes just written (under the files lock) and, when `sync` (`always`),
    /// asks for an fsync; returns the target to [`GroupSync::wait`] for.
    pub(crate) fn wrote(&self, len: u64, sync: bool) -> u64 {
        let target = self.written.fetch_add(len, Ordering::AcqRel) + len;
        if sync {
            *self.wanted.lock() = true;
            self.wake.notify_one();
        }
        target
    }

    /// Whether the syncer thread runs.
    pub(crate) fn running(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Asks the syncer for a round that writes everything pending now and fsyncs it; returns
    /// the round to [`GroupSync::wait_round`] for. The caller's bytes were fed before this
    /// call, and a round takes the pending bytes only after reading the rounds asked, so the
    /// round that covers this one writes them.
    pub(crate) fn request_round(&self) -> u64 {
        let round = self.rounds_asked.fetch_add(1, Ordering::AcqRel) + 1;
        *self.wanted.lock() = true;
        self.wake.notify_one();
        round
    }

    /// Waits until round `round` is written and fsynced; an error if it failed.
    pub(crate) async fn wait_round(&self, round: u64) -> Result<(), String> {
        let mut durable = self.durable.subscribe();
        let reached = durable
            .wait_for(|d| d.round >= round || d.failed_round >= round)
            .await
            .map(|d| d.round >= round);
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err("the AOF write or fsync failed".into()),
            Err(_) => Err("the AOF is gone".into()),
        }
    }

    /// The bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Waits until everything up to `target` is fsynced; an error if its fsync failed.
    pub(crate) async fn wait(&self, target: u64) -> Result<(), String> {
        let mut durable = self.durable.subscribe();
        let reached = durable
            .wait_for(|d| d.synced >= target || d.failed_upto >= target)
            .await
            .map(|d| d.synced >= target);
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err("the AOF fsync failed".into()),
            Err(_) => Err("the AOF is gone".into()),
        }
    }

    /// Starts the syncer thread for `aof` once.
    pub(crate) fn start(&self, aof: Weak<Aof>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("aof-group-sync".into())
            .spawn(move || {
                while let Some(aof) = aof.upgrade() {
                    let group = &aof.group;
                    let wanted = {
                        let mut wanted = group.wanted.lock();
                        if !*wanted {
                            group.wake.wait_for(&mut wanted, IDLE_CHECK);
                        }
                        std::mem::take(&mut *wanted)
                    };
                    if wanted {
                        // Rounds first, then the pending bytes: every round asked by now
                        // had its bytes fed before it was asked.
                        let round = group.rounds_asked.load(Ordering::Acquire);
                        match aof.write_for_group() {
                            Ok(()) => {
                                let (target, file) = aof.sync_point();
                                group.sync(target, round, file, &aof);
                            }
                            Err(_) => group
                                .durable
                                .send_modify(|d| d.failed_round = d.failed_round.max(round)),
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the AOF group-sync thread");
            self.started.store(false, Ordering::Release);
        }
    }

    /// One group fsync: `file` (a handle of the current incremental file, taken with
    /// `target` under the files lock) fsynced, outside every lock; then the waiters up to
    /// `target` are released (or failed).
    fn sync(&self, target: u64, round: u64, file: Option<File>, aof: &Aof) {
        let synced = file.map_or(Ok(()), |f| f.sync_data());
        match synced {
            Ok(()) => {
                self.durable.send_modify(|d| {
                    d.synced = d.synced.max(target);
                    d.round = d.round.max(round);
                });
                aof.synced_upto(target);
            }
            Err(e) => {
                aof.fail_write(&format!("fsync failed: {e}"));
                self.durable.send_modify(|d| {
                    d.failed_upto = d.failed_upto.max(target);
                    d.failed_round = d.failed_round.max(round);
                });
            }
        }
    }
}
