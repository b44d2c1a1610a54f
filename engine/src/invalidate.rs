//! Client-side caching's invalidations: the keys each execution unit changed, handed to the
//! embedder (the server's tracking table) so that clients caching them are told.
//!
//! Every change of a key already goes through one place, [`Db::touch`] (Redis's
//! `signalModifiedKey`, which calls both `touchWatchedKey` and `trackingInvalidateKey`):
//! commands, lazy and active expiry, key removal. While key tracking is on
//! ([`Keyspace::set_key_tracking`]) that place also records the key; a flush ([`Db::clear`])
//! records that every key is invalid (Redis's `trackingInvalidateKeysOnFlush`). The keyspace
//! hands both to the [`InvalidationSink`] when it closes the execution unit, still under the
//! lock, so the sink sees changes in execution order across clients.
//!
//! Invariants: with tracking off nothing is recorded (one boolean test per change); the
//! recorded keys are handed over and emptied at the end of every unit, so they never outlive
//! the unit that changed them.
//!
//! [`Db::touch`]: crate::Db::touch
//! [`Db::clear`]: crate::Db::clear
//! [`Keyspace::set_key_tracking`]: crate::Keyspace::set_key_tracking
//! [`Keyspace`]: crate::Keyspace

use bytes::Bytes;

/// Receives each execution unit's changed keys, under the keyspace lock: it must not block
/// nor take the keyspace lock.
pub trait InvalidationSink: Send + Sync + std::fmt::Debug {
    /// `keys` changed, in the order they changed (a key may repeat); `flushed`: a database
    /// was flushed, so every key is invalid.
    fn invalidate(&self, keys: Vec<Bytes>, flushed: bool);
}
