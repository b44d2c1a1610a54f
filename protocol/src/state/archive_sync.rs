//! The archive's syncer: the thread that folds what deferred trims remove and applies them.
//!
//! An XADD with an approximate trim on an archived stream only notes what its trim would
//! remove ([`super::ServerArchive::defer_trim`], a [`DeferredTrims`] entry); its connection
//! does not wait: the reply (the new id) does not depend on the trim, which `~` allows to come
//! late. The connection's commit asks the syncer for a round ([`ArchiveSync::request`]), and
//! the syncer thread runs [`super::ServerArchive::commit`]: the entries copied out under the
//! keyspace lock, folded outside it, one fsync for every fold of the round, then the trims
//! under the lock again. So neither a runtime thread nor the keyspace lock ever waits on the
//! archive's I/O, and many trims share one fsync. Rounds start at most every
//! [`ROUND_INTERVAL_MIN`], so under a steady load each round folds many trims' entries.
//!
//! Invariants: a request made after a deferred trim is followed by at least one round that starts after
//! it (`wanted` is set under its lock and only cleared by the round it starts); the thread
//! holds the server only for a round (a [`Weak`] otherwise), and ends when the archive is
//! dropped ([`ArchiveSync::close`]), so a stopped server's archive file closes with it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use echomq_engine::{DeleteStrategy, StreamId};
use parking_lot::{Condvar, Mutex};

use super::ServerState;

/// Longest the syncer sleeps without a request; a round then runs anyway if folds wait (the
/// cron also requests one every tick).
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// Shortest time from one round's start to the next's: a request that comes sooner waits for
/// it. Every round pays a redb commit and an fsync (about 200,000 instructions and the
/// kernel's work, whatever it holds), so a busy stream's trims fold in rounds of thousands of
/// entries rather than a round per node trimmed; a `~` trim may come this much later still.
/// At 10 ms, `XADD … MAXLEN ~ 1000` from 50 clients with an archive spent 1.76x the CPU per
/// request of the same load without; at 50 ms, 1.20x (`scripts/bench-vs-redis --loads
/// xadd_maxlen --echomq-plain`).
const ROUND_INTERVAL_MIN: Duration = Duration::from_millis(50);

#[derive(Debug, Default)]
struct Wanted {
    round: bool,
    closed: bool,
}

/// The syncer's wake-up (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ArchiveSync {
    signal: Arc<Signal>,
    started: AtomicBool,
}

#[derive(Debug, Default)]
struct Signal {
    wanted: Mutex<Wanted>,
    wake: Condvar,
}

impl ArchiveSync {
    /// Whether the syncer thread runs (else the caller commits inline).
    pub fn running(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Asks for a round.
    pub fn request(&self) {
        self.signal.wanted.lock().round = true;
        self.signal.wake.notify_one();
    }

    /// Starts the syncer thread for `state`'s archive, once.
    pub fn start(&self, state: Weak<ServerState>) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let signal = Arc::clone(&self.signal);
        let spawned = std::thread::Builder::new()
            .name("archive-sync".into())
            .spawn(move || {
                let mut last_round: Option<Instant> = None;
                loop {
                    {
                        let mut wanted = signal.wanted.lock();
                        if !wanted.round && !wanted.closed {
                            signal.wake.wait_for(&mut wanted, IDLE_CHECK);
                        }
                        if let Some(next) = last_round.map(|at| at + ROUND_INTERVAL_MIN) {
                            while !wanted.closed && Instant::now() < next {
                                signal.wake.wait_until(&mut wanted, next);
                            }
                        }
                        if wanted.closed {
                            return;
                        }
                        wanted.round = false;
                    }
                    last_round = Some(Instant::now());
                    let Some(state) = state.upgrade() else {
                        return;
                    };
                    if let Some(archive) = state.archive() {
                        archive.commit(state.keyspace());
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the archive sync thread; commits run inline");
            self.started.store(false, Ordering::Release);
        }
    }

    /// Ends the syncer thread (the archive is going away).
    pub fn close(&self) {
        self.signal.wanted.lock().closed = true;
        self.signal.wake.notify_one();
    }
}

/// The deferred trims, per key: the last id to remove and the strategy. A round takes them
/// (`in_round`) and clears them when its trims ran or were dropped; meanwhile a trim they
/// already cover is not deferred again.
#[derive(Debug, Default)]
pub(crate) struct DeferredTrims {
    waiting: HashMap<Bytes, (StreamId, DeleteStrategy)>,
    in_round: HashMap<Bytes, (StreamId, DeleteStrategy)>,
}

impl DeferredTrims {
    /// Defers a trim of `key` up to `last`; `false` when one deferred already covers it.
    pub fn defer(&mut self, key: &[u8], last: StreamId, delete: DeleteStrategy) -> bool {
        let covers = |t: Option<&(StreamId, DeleteStrategy)>| {
            t.is_some_and(|&(up_to, strategy)| strategy == delete && up_to >= last)
        };
        if covers(self.waiting.get(key)) || covers(self.in_round.get(key)) {
            return false;
        }
        let entry = self
            .waiting
            .entry(Bytes::copy_from_slice(key))
            .or_insert((last, delete));
        *entry = (entry.0.max(last), delete);
        true
    }

    /// Takes the waiting trims for a round.
    pub fn start_round(&mut self) -> Vec<(Bytes, (StreamId, DeleteStrategy))> {
        self.in_round = std::mem::take(&mut self.waiting);
        self.in_round.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Keys with a trim deferred or in a round.
    pub fn len(&self) -> usize {
        self.waiting.len() + self.in_round.len()
    }

    /// The round's trims ran or were dropped.
    pub fn end_round(&mut self) {
        self.in_round.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trim_covered_by_a_deferred_one_of_the_same_strategy_is_not_deferred_again() {
        let id = |ms| StreamId { ms, seq: 0 };
        let mut trims = DeferredTrims::default();
        assert!(trims.defer(b"s", id(5), DeleteStrategy::KeepRef));
        assert!(!trims.defer(b"s", id(4), DeleteStrategy::KeepRef));
        assert!(trims.defer(b"s", id(4), DeleteStrategy::Acked));
        assert!(trims.defer(b"s", id(9), DeleteStrategy::Acked));
        let round = trims.start_round();
        assert_eq!(round.len(), 1);
        assert_eq!(round[0].1, (id(9), DeleteStrategy::Acked));
        // While the round runs, what it covers is not deferred; more is, for the next round.
        assert!(!trims.defer(b"s", id(8), DeleteStrategy::Acked));
        assert!(trims.defer(b"s", id(12), DeleteStrategy::Acked));
        trims.end_round();
        assert!(!trims.defer(b"s", id(8), DeleteStrategy::Acked));
        assert_eq!(trims.start_round()[0].1, (id(12), DeleteStrategy::Acked));
        trims.end_round();
        assert!(trims.defer(b"s", id(8), DeleteStrategy::Acked));
    }
}
