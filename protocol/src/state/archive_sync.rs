//! The archive's syncer: the thread that makes deferred folds durable and applies their trims.
//!
//! An XADD with an approximate trim on an archived stream folds without an fsync and leaves
//! its trim pending ([`super::ServerArchive::defer_trim`]). Its connection does not wait for
//! that fsync: the reply (the new id) does not depend on the trim, which `~` allows to come
//! late. It only asks the syncer ([`ArchiveSync::request`]); the syncer thread then runs one
//! round of [`super::ServerArchive::commit`] — one fsync covering every fold since the last
//! round, then the trims, each propagated as an exact XTRIM — so no runtime thread ever waits
//! on the archive's fsync, and a fold's fsync never holds back other clients' replies.
//!
//! Invariants: a request made after a fold is followed by at least one round that starts after
//! it (`wanted` is set under its lock and only cleared by the round it starts); the thread
//! holds the server only for a round (a [`Weak`] otherwise), and ends when the archive is
//! dropped ([`ArchiveSync::close`]), so a stopped server's archive file closes with it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::ServerState;

/// Longest the syncer sleeps without a request; a round then runs anyway if folds wait (the
/// cron also requests one every tick).
const IDLE_CHECK: Duration = Duration::from_secs(1);

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
                loop {
                    {
                        let mut wanted = signal.wanted.lock();
                        if !wanted.round && !wanted.closed {
                            signal.wake.wait_for(&mut wanted, IDLE_CHECK);
                        }
                        if wanted.closed {
                            return;
                        }
                        wanted.round = false;
                    }
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
