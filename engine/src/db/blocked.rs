//! Blocked readers of a [`Db`]: signalling keys, and serving the readers of the keys a call
//! signalled once it is done (see [`crate::blocking`]).

use std::sync::Arc;

use crate::blocking::{Outcome, Signal, Wake};
use crate::keyspace::Snapshot;

use super::Db;

impl Db {
    /// Marks `key` as having new data: its blocked readers are re-run after the command
    /// (Redis's `signalKeyAsReady`).
    pub fn signal_ready(&mut self, key: &[u8]) {
        self.watch.signal(key, Signal::Ready);
    }

    /// Marks `key` as deleted or retyped: blocked XREADGROUP readers are re-run (and fail).
    pub fn signal_deleted(&mut self, key: &[u8]) {
        self.watch.signal(key, Signal::Deleted);
    }

    /// Whether keys were signalled (written, deleted) since blocked readers were last served.
    pub(crate) fn has_signals(&self) -> bool {
        !self.watch.signals.is_empty()
    }

    /// Keys with at least one blocked reader, and of those the keys an XREADGROUP waits on
    /// (INFO's `total_blocking_keys` and `total_blocking_keys_on_nokey`).
    pub fn blocking_keys(&self) -> (usize, usize) {
        self.watch.blocked.key_counts()
    }

    /// Blocked commands that have a timeout (INFO's `clients_in_timeout_table`).
    pub fn blocked_with_timeout(&self) -> usize {
        self.watch.blocked.with_deadline()
    }

    /// Commands blocked on keys of this keyspace.
    pub fn blocked_count(&self) -> usize {
        self.watch.blocked.len()
    }

    /// Re-runs the blocked commands of every signalled key, in signal order and per key in
    /// FIFO order. Returns the wakers of those that now have a reply.
    pub(crate) fn serve_signalled(&mut self, snapshot: &Snapshot) -> Vec<Arc<dyn Wake>> {
        let mut wakers = Vec::new();
        if self.watch.signals.is_empty() {
            return wakers;
        }
        // A key leaves the signalled set before its waiters re-run, so a re-run that signals
        // it again (BLMOVE into a key it emptied) queues it once more, as Redis's
        // `handleClientsBlockedOnKeys` does.
        while !self.watch.signals.is_empty() {
            let (key, signal) = self.watch.signals.remove(0);
            for id in self.watch.blocked.queued(&key) {
                match self.watch.blocked.wakes_on_delete(id) {
                    None => continue,
                    Some(false) if signal == Signal::Deleted => continue,
                    Some(_) => {}
                }
                if let Some(wanted) = self.watch.blocked.key_type(id)
                    && self.values.get(&key).map(crate::types::Value::type_name) != Some(wanted)
                {
                    continue;
                }
                let Some(waiter) = self.watch.blocked.unregister(id) else {
                    continue;
                };
                let as_waiter = snapshot.speaking(waiter.request.protocol);
                match (waiter.rerun)(self, &as_waiter, &waiter.request.argv) {
                    Ok(Outcome::Block(again)) => {
                        let mut waiter = waiter;
                        // A claim wake-up is never in the past: the next check is at least
                        // one millisecond on, so a re-run that cannot claim does not spin.
                        waiter.request.claim_wake_ms = again
                            .claim_wake_ms
                            .map(|at| at.max(snapshot.now_ms.saturating_add(1)));
                        self.watch.blocked.requeue(id, waiter)
                    }
                    Ok(Outcome::Reply(reply)) => wakers.push(waiter.slot.complete(Ok(reply))),
                    Err(e) => wakers.push(waiter.slot.complete(Err(e))),
                }
            }
        }
        self.watch.signals.clear();
        wakers
    }
}
