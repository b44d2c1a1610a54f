//! The watch part of a [`Db`](super::Db): WATCH versions and the blocked-reader signals.
//!
//! WATCH: each watched key has a count of watchers and a version bumped whenever the key
//! changes (Redis's `signalModifiedKey`, [`Db::touch`](super::Db::touch)); EXEC compares
//! versions. Blocked readers: the keys the running command signalled (ready: new data;
//! deleted: gone or retyped) in signal order, served after the command by re-running the
//! readers registered on them ([`crate::blocking`]).
//!
//! Invariants (checked by [`Watches::check_invariants`]):
//! - a watched key has at least one watcher (the last unwatch removes it);
//! - a key is signalled at most once per kind per command;
//! - the blocked-reader registry's own invariants hold.

use std::collections::HashMap;

use bytes::Bytes;

use crate::blocking::{Outcome, Registry, Signal};
use crate::error::Result;
use crate::keyspace::Snapshot;

use super::Db;

/// How a blocked command is run again when one of its keys is signalled: the command
/// dispatcher, handed in with the command when it blocks.
pub(crate) type Rerun = fn(&mut Db, &Snapshot, &[Bytes]) -> Result<Outcome>;

/// WATCH versions and blocked-reader signals.
#[derive(Default)]
pub(crate) struct Watches {
    /// Keys under WATCH: how many watchers, and a version bumped on every change.
    watched: HashMap<Bytes, (u32, u64)>,
    /// Keys signalled by the running command, in signal order, for blocked readers.
    pub(crate) signals: Vec<(Bytes, Signal)>,
    /// Blocked readers.
    pub(crate) blocked: Registry<Rerun>,
    /// Whether changed keys are recorded for client-side caching (see
    /// [`crate::invalidate`]); set for each unit from the keyspace.
    pub(crate) tracking: bool,
    /// Keys changed in the running unit while `tracking`, in change order.
    pub(crate) invalidated: Vec<Bytes>,
    /// Whether the running unit flushed this database while `tracking`.
    pub(crate) flushed: bool,
}

impl Watches {
    /// Bumps the version of `key` if it is watched.
    pub(crate) fn touch(&mut self, key: &[u8]) {
        if let Some((_, version)) = self.watched.get_mut(key) {
            *version += 1;
        }
        if self.tracking {
            self.invalidated.push(Bytes::copy_from_slice(key));
        }
    }

    /// Records a flush for client-side caching (every key invalid), if tracking.
    pub(crate) fn flush_tracked(&mut self) {
        if self.tracking {
            self.flushed = true;
        }
    }

    /// Takes what the unit recorded for client-side caching.
    pub(crate) fn take_invalidated(&mut self) -> (Vec<Bytes>, bool) {
        (
            std::mem::take(&mut self.invalidated),
            std::mem::take(&mut self.flushed),
        )
    }

    /// Bumps the version of every watched key (FLUSHDB of a non-empty database).
    pub(crate) fn touch_all(&mut self) {
        for (_, version) in self.watched.values_mut() {
            *version += 1;
        }
    }

    /// Adds a watcher of `key`.
    pub(crate) fn watch(&mut self, key: &[u8]) {
        let entry = self
            .watched
            .entry(Bytes::copy_from_slice(key))
            .or_insert((0, 0));
        entry.0 += 1;
    }

    /// Removes a watcher of `key`.
    pub(crate) fn unwatch(&mut self, key: &[u8]) {
        if let Some((watchers, _)) = self.watched.get_mut(key) {
            *watchers -= 1;
            if *watchers == 0 {
                self.watched.remove(key);
            }
        }
    }

    /// The version of `key` (0 if unwatched).
    pub(crate) fn version(&self, key: &[u8]) -> u64 {
        self.watched.get(key).map_or(0, |(_, v)| *v)
    }

    /// The watched keys.
    pub(crate) fn watched_keys(&self) -> impl Iterator<Item = &Bytes> {
        self.watched.keys()
    }

    /// How many keys are watched.
    pub(crate) fn watched_count(&self) -> usize {
        self.watched.len()
    }

    /// Records `signal` for `key` if it has waiters and is not signalled so already.
    pub(crate) fn signal(&mut self, key: &[u8], signal: Signal) {
        if self.blocked.has_waiters(key)
            && !self.signals.iter().any(|(k, s)| k == key && *s == signal)
        {
            self.signals.push((Bytes::copy_from_slice(key), signal));
        }
    }

    /// Checks the invariants of the module doc.
    pub(crate) fn check_invariants(&self) -> std::result::Result<(), String> {
        if let Some(key) = self
            .watched
            .iter()
            .find(|(_, (n, _))| *n == 0)
            .map(|(k, _)| k)
        {
            return Err(format!(
                "watched key {:?} has no watcher",
                String::from_utf8_lossy(key)
            ));
        }
        for (i, (key, signal)) in self.signals.iter().enumerate() {
            if self.signals[..i]
                .iter()
                .any(|(k, s)| k == key && s == signal)
            {
                return Err(format!(
                    "key {:?} signalled twice",
                    String::from_utf8_lossy(key)
                ));
            }
        }
        self.blocked.check()
    }
}
