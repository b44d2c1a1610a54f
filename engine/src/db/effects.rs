//! The effects log of a [`Db`](super::Db): what the running commands propagate (the AOF's
//! commands, [`crate::propagate`]), the keyspace events they fire ([`crate::notify`]) and the
//! changes they count (Redis's `server.dirty`).
//!
//! Commands record into it as they run; the [`Keyspace`](crate::Keyspace) takes what was
//! recorded after each execution unit and hands it to its sinks under the lock.
//!
//! Invariants (checked by [`Effects::check_invariants`]):
//! - nothing is propagated while no propagation sink is installed (`propagating` is false);
//! - no event is recorded while no class is enabled (`notify_flags` is 0);
//! - recorded events' sequence numbers increase (they are taken in firing order).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::notify::{CHANNELS, Notification};

/// What the running commands propagate, fire and count.
#[derive(Default)]
pub(crate) struct Effects {
    /// What the commands run since the last drain propagate, in order, each with its
    /// keyspace-wide sequence number (from `event_seq`): a unit that wrote to several
    /// databases (a script or a transaction that SELECTs) is fed in the order it wrote.
    propagated: Vec<(u64, Vec<Bytes>)>,
    /// Changes made (Redis's `server.dirty`), for `rdb_changes_since_last_save`.
    dirty: u64,
    /// Whether a propagation sink is installed (else nothing is recorded).
    pub(crate) propagating: bool,
    /// The `notify-keyspace-events` classes for the running command (0 without a sink).
    pub(crate) notify_flags: u32,
    /// Events fired since the last hand-over, with their keyspace-wide sequence numbers.
    events: Vec<(u64, &'static str, Bytes, Vec<Bytes>)>,
    /// The sequence shared by every database of a keyspace (firing order across them).
    pub(crate) event_seq: Arc<AtomicU64>,
}

impl Effects {
    /// Records `argv` as propagated, if a sink is installed.
    pub(crate) fn propagate(&mut self, argv: Vec<Bytes>) {
        if self.propagating {
            let seq = self.event_seq.fetch_add(1, Ordering::Relaxed);
            self.propagated.push((seq, argv));
        }
    }

    /// Records `argv` (borrowed: copied only when a sink is installed) as propagated.
    pub(crate) fn propagate_args(&mut self, argv: &[&[u8]]) {
        if self.propagating {
            let seq = self.event_seq.fetch_add(1, Ordering::Relaxed);
            self.propagated.push((
                seq,
                argv.iter().map(|a| Bytes::copy_from_slice(a)).collect(),
            ));
        }
    }

    /// Counts `n` changes.
    pub(crate) fn add_dirty(&mut self, n: u64) {
        self.dirty += n;
    }

    /// Changes counted since start.
    pub(crate) fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Takes what was propagated since the last call.
    pub(crate) fn take_propagated(&mut self) -> Vec<Vec<Bytes>> {
        std::mem::take(&mut self.propagated)
            .into_iter()
            .map(|(_, argv)| argv)
            .collect()
    }

    /// [`Effects::take_propagated`] with each command's sequence number.
    pub(crate) fn take_propagated_sequenced(&mut self) -> Vec<(u64, Vec<Bytes>)> {
        std::mem::take(&mut self.propagated)
    }

    /// Whether something propagated is not yet taken.
    pub(crate) fn has_propagated(&self) -> bool {
        !self.propagated.is_empty()
    }

    /// Records `event` (of `class`) on `key` if that class is enabled and a channel class is
    /// (Redis publishes nothing otherwise).
    pub(crate) fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        if !self.notifying(class) {
            return;
        }
        let seq = self.event_seq.fetch_add(1, Ordering::Relaxed);
        self.events
            .push((seq, event, Bytes::copy_from_slice(key), Vec::new()));
    }

    /// Records `event` (of `class`) on `key` about `subkeys` (a hash's fields).
    pub(crate) fn notify_subkeys(
        &mut self,
        class: u32,
        event: &'static str,
        key: &[u8],
        subkeys: &[&[u8]],
    ) {
        if !self.notifying(class) {
            return;
        }
        let seq = self.event_seq.fetch_add(1, Ordering::Relaxed);
        let subkeys = subkeys.iter().map(|s| Bytes::copy_from_slice(s)).collect();
        self.events
            .push((seq, event, Bytes::copy_from_slice(key), subkeys));
    }

    /// Whether an event of `class` would be recorded.
    pub(crate) fn notifying(&self, class: u32) -> bool {
        self.notify_flags & class != 0 && self.notify_flags & CHANNELS != 0
    }

    /// Whether events wait to be handed over.
    pub(crate) fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Takes the events recorded since the last call, tagged with database `index`.
    pub(crate) fn take_events(&mut self, index: usize, into: &mut Vec<(u64, Notification)>) {
        into.extend(self.events.drain(..).map(|(seq, event, key, subkeys)| {
            (
                seq,
                Notification {
                    db: index,
                    event,
                    key,
                    subkeys,
                },
            )
        }));
    }

    /// Checks the invariants of the module doc.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        if !self.propagating && !self.propagated.is_empty() {
            return Err("commands propagated without a propagation sink".into());
        }
        if self.notify_flags == 0 && !self.events.is_empty() {
            return Err("events recorded with no class enabled".into());
        }
        if self.events.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err("events out of firing order".into());
        }
        Ok(())
    }
}
