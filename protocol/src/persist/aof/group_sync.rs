//! `appendfsync always` as a group commit: many connections' writes, one fsync.
//!
//! A connection's commit writes its bytes (and everyone else's pending ones) to the
//! incremental file without an fsync and gets a *target*, the total bytes written so far; it
//! then waits, without holding the runtime thread, until the syncer thread has fsynced at
//! least that far ([`GroupSync::wait`]) before its replies go out. While one fsync runs, other
//! connections run their commands and write, and the next fsync covers all of them, as Redis
//! covers a whole event-loop turn with one fsync in `beforeSleep`.
//!
//! With the syncer running, a connection under `always` does not write on its own: it waits for
//! a *round* that covers the offset its commands' bytes end at in the stream of everything fed
//! ([`GroupSync::wait_fed`]); a round writes everything pending and fsyncs it, one write and
//! one fsync for every connection whose bytes were fed by then. The connection yields once
//! before it waits, so every connection ready to run feeds first and one round covers the
//! whole turn of the event loop, as Redis's `beforeSleep` does.
//!
//! Of the connections waiting, one (the *leader*) runs the round itself, on the runtime's
//! thread, as Redis writes and fsyncs on its one thread, and wakes the other waiters on the
//! same thread (a task woken from outside the runtime costs a system call to wake the
//! runtime's thread). It then asks the syncer's thread for the next round, which takes what
//! the connections feed meanwhile, so that fsync overlaps their work. A leader that leaves
//! (done, or dropped) hands over by waking the others, one of whom takes the lead.
//!
//! Invariants: `durable.synced` only grows and never passes `written`; `durable.fed` only
//! grows, and everything fed below it is fsynced; a failed fsync marks everything written
//! until then (`failed_upto`, `failed_fed`) as not acknowledged, so its waiters fail (the
//! connection closes unanswered, as for a failed write) while later writes get a new chance.

use std::fs::File;
use std::sync::Weak;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::sync::watch;

use super::Aof;
use crate::error::AofWriteError;

/// How far the file is known durable.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Durable {
    /// Bytes (counted as [`GroupSync::written`]) fsynced.
    pub synced: u64,
    /// Bytes up to which an fsync failed: waiters at or below it are refused.
    pub failed_upto: u64,
    /// The fed offset (see the AOF's `Buffer`) below which everything is written and fsynced.
    pub fed: u64,
    /// The fed offset up to which a round's write or fsync failed: its waiters, and earlier
    /// ones not yet served, are refused.
    pub failed_fed: u64,
}

impl Durable {
    /// Whether a wait for the fed offset `fed` is over, and how: `Some(Ok)` fsynced,
    /// `Some(Err)` failed.
    fn outcome(&self, fed: u64) -> Option<Result<(), AofWriteError>> {
        if self.fed >= fed {
            Some(Ok(()))
        } else if self.failed_fed >= fed {
            Some(Err(AofWriteError::RoundFailed))
        } else {
            None
        }
    }
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
    /// Whether a waiter leads (see the module docs).
    leader: AtomicBool,
    /// The leader's relay of `durable`'s changes to the other waiters.
    relayed: watch::Sender<()>,
}

impl Default for GroupSync {
    fn default() -> Self {
        GroupSync {
            written: AtomicU64::new(0),
            wanted: Mutex::new(false),
            wake: Condvar::new(),
            durable: watch::Sender::new(Durable::default()),
            started: AtomicBool::new(false),
            leader: AtomicBool::new(false),
            relayed: watch::Sender::new(()),
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

    /// Asks the syncer for a round: it writes everything pending then and fsyncs it.
    fn ask_round(&self) {
        *self.wanted.lock() = true;
        self.wake.notify_one();
    }

    /// One round on the calling thread: everything pending written and fsynced, then the
    /// waiters it covers released (or failed).
    fn round(&self, aof: &Aof) {
        match aof.write_for_group() {
            Ok(()) => {
                let (target, fed, file) = aof.sync_point();
                self.sync(target, fed, file, aof);
            }
            Err(_) => {
                // Everything fed by now is pending still: its waiters fail.
                let fed = aof.buffer.fed();
                self.durable
                    .send_modify(|d| d.failed_fed = d.failed_fed.max(fed));
            }
        }
    }

    /// Waits until everything fed up to offset `fed` is written and fsynced, leading the
    /// round that does it if no other waiter leads; an error if its write or fsync failed.
    pub(crate) async fn wait_fed(&self, fed: u64, aof: &Aof) -> Result<(), AofWriteError> {
        if let Some(outcome) = self.durable.borrow().outcome(fed) {
            return outcome;
        }
        let mut relayed = self.relayed.subscribe();
        loop {
            // Subscribed to the relay before looking: a change or a hand-over after this
            // look wakes this waiter.
            if let Some(outcome) = self.durable.borrow().outcome(fed) {
                return outcome;
            }
            if !self.leader.swap(true, Ordering::AcqRel) {
                return self.lead(fed, aof).await;
            }
            if relayed.changed().await.is_err() {
                return Err(AofWriteError::Gone);
            }
        }
    }

    /// [`GroupSync::wait_fed`] as the leader: runs the round itself, on the runtime's thread
    /// (as Redis's `beforeSleep` writes and fsyncs on its one thread), then asks the syncer
    /// for the next one; if its own round did not cover `fed` (the AOF was switched off
    /// meanwhile), waits on the syncer, relaying each change. Hands over when it returns or
    /// is dropped.
    async fn lead(&self, fed: u64, aof: &Aof) -> Result<(), AofWriteError> {
        let _handover = Handover(self);
        if let Some(outcome) = self.durable.borrow().outcome(fed) {
            return outcome;
        }
        self.round(aof);
        self.relayed.send_replace(());
        // The syncer's thread starts the next round at once: it takes what the connections
        // feed while this thread answers, and its fsync overlaps their work.
        self.ask_round();
        let mut durable = self.durable.subscribe();
        loop {
            if let Some(outcome) = durable.borrow_and_update().outcome(fed) {
                return outcome;
            }
            if durable.changed().await.is_err() {
                return Err(AofWriteError::Gone);
            }
            self.relayed.send_replace(());
        }
    }

    /// The bytes the group fsynced so far.
    pub(crate) fn synced(&self) -> u64 {
        self.durable.borrow().synced
    }

    /// The bytes written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Waits until everything up to `target` is fsynced; an error if its fsync failed.
    pub(crate) async fn wait(&self, target: u64) -> Result<(), AofWriteError> {
        let mut durable = self.durable.subscribe();
        let reached = durable
            .wait_for(|d| d.synced >= target || d.failed_upto >= target)
            .await
            .map(|d| d.synced >= target);
        match reached {
            Ok(true) => Ok(()),
            Ok(false) => Err(AofWriteError::FsyncFailed),
            Err(_) => Err(AofWriteError::Gone),
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
                        group.round(&aof);
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the AOF group-sync thread");
            self.started.store(false, Ordering::Release);
        }
    }

    /// One group fsync: `file` (a handle of the current incremental file, taken with
    /// `target` and `fed` under the files lock; none when nothing was written since the last
    /// one) fsynced, outside every lock; then the waiters up to `target` and `fed` are
    /// released (or failed).
    fn sync(&self, target: u64, fed: u64, file: Option<File>, aof: &Aof) {
        let synced = file.map_or(Ok(()), |f| f.sync_data());
        match synced {
            Ok(()) => {
                self.durable.send_modify(|d| {
                    d.synced = d.synced.max(target);
                    d.fed = d.fed.max(fed);
                });
                aof.synced_upto(target);
            }
            Err(e) => {
                aof.fail_fsync(&e);
                self.durable.send_modify(|d| {
                    d.failed_upto = d.failed_upto.max(target);
                    d.failed_fed = d.failed_fed.max(fed);
                });
            }
        }
    }
}

/// Hands the lead over when its leader is done or dropped: the other waiters wake and one
/// takes it.
struct Handover<'a>(&'a GroupSync);

impl Drop for Handover<'_> {
    fn drop(&mut self) {
        self.0.leader.store(false, Ordering::Release);
        self.0.relayed.send_replace(());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::super::Aof;
    use super::GroupSync;
    use crate::error::AofWriteError;

    /// Publishes what a syncer round would: everything fed below `fed` is durable.
    fn round_done(group: &GroupSync, fed: u64) {
        group.durable.send_modify(|d| d.fed = d.fed.max(fed));
    }

    /// A waiter on an AOF that is off: its leader's own round covers nothing, so only the
    /// rounds the test publishes release it.
    fn waiter(aof: &Arc<Aof>, fed: u64) -> tokio::task::JoinHandle<Result<(), AofWriteError>> {
        let aof = Arc::clone(aof);
        tokio::spawn(async move { aof.group.wait_fed(fed, &aof).await })
    }

    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn every_waiter_is_released_by_the_round_that_covers_it_and_no_earlier() {
        let aof = Arc::new(Aof::default());
        let group = &aof.group;
        let waiters: Vec<_> = [10, 20, 30].iter().map(|&fed| waiter(&aof, fed)).collect();
        settle().await;
        round_done(group, 15);
        settle().await;
        let finished: Vec<bool> = waiters.iter().map(|w| w.is_finished()).collect();
        assert_eq!(finished, [true, false, false]);
        round_done(group, 30);
        for w in waiters {
            assert_eq!(w.await.unwrap(), Ok(()));
        }
        assert!(!group.leader.load(std::sync::atomic::Ordering::Acquire));
    }

    #[tokio::test]
    async fn a_leader_dropped_while_waiting_hands_over() {
        let aof = Arc::new(Aof::default());
        let group = &aof.group;
        let leader = waiter(&aof, 10);
        settle().await;
        assert!(group.leader.load(std::sync::atomic::Ordering::Acquire));
        let follower = waiter(&aof, 10);
        settle().await;
        leader.abort();
        settle().await;
        round_done(group, 10);
        let done = tokio::time::timeout(Duration::from_secs(5), follower).await;
        assert_eq!(done.expect("the follower took the lead").unwrap(), Ok(()));
    }

    #[tokio::test]
    async fn a_failed_round_fails_the_waiters_it_covered_only() {
        let aof = Arc::new(Aof::default());
        let group = &aof.group;
        let covered = waiter(&aof, 10);
        let later = waiter(&aof, 30);
        settle().await;
        group.durable.send_modify(|d| d.failed_fed = 20);
        assert!(covered.await.unwrap().is_err());
        round_done(group, 30);
        assert_eq!(later.await.unwrap(), Ok(()));
        // A wait for what is durable already returns at once.
        assert_eq!(group.wait_fed(25, &aof).await, Ok(()));
    }
}
