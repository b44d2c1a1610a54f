//! Key lookups and changes of a [`Db`]: each keeps the parts consistent and produces the
//! keyspace's own effects (WATCH touched, blocked readers signalled, `new`, `overwritten`,
//! `type_changed` and `expired` fired, an expiry propagated as DEL), as Redis's `db.c` does.

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::notify as events;
use crate::stream::Stream;
use crate::types::Value;
use crate::types::string::StringValue;

use super::{Db, SIZE_CLASSES};

impl Db {
    /// Deletes `key` if its expiry time has passed, as any access to it does in Redis: a
    /// watched key counts as changed, and blocked readers of a stream are signalled as after
    /// DEL. Returns whether it expired.
    pub fn expire_if_due(&mut self, key: &[u8]) -> bool {
        if !self.values.expired(key) {
            return false;
        }
        // An expiry propagates as a DEL, as Redis's does (lazy and active expiry alike).
        self.propagate(vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key),
        ]);
        self.add_dirty(1);
        let previous = self.values.take(key);
        self.touch(key);
        self.stats.expired_keys += 1;
        if matches!(previous, Some(Value::Stream(_))) {
            self.signal_deleted(key);
        }
        if let Some(value) = previous.filter(|_| self.lazyfree.expire()) {
            self.free_lazily(value);
        }
        self.notify(events::EXPIRED, "expired", key);
        true
    }

    fn reap(&mut self, key: &[u8]) {
        self.expire_if_due(key);
    }

    /// How many strings fall in each length class (INFO keysizes), expired ones included
    /// until they are deleted, as Redis counts them.
    pub fn string_sizes(&self) -> &[u64; SIZE_CLASSES] {
        &self.values.string_sizes
    }

    /// The value under `key` (an expired key is missing).
    pub fn get(&self, key: &[u8]) -> Option<&Value> {
        self.values.get(key)
    }

    /// The stream under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds
    /// something else.
    pub fn stream(&self, key: &[u8]) -> Result<Option<&Stream>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Stream(s)) => Ok(Some(s)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The stream under `key`, mutably, for the engine's commands (which produce their own
    /// effects).
    pub(crate) fn stream_mut(&mut self, key: &[u8]) -> Result<Option<&mut Stream>> {
        self.reap(key);
        match self.values.map.get_mut(key) {
            None => Ok(None),
            Some(Value::Stream(s)) => Ok(Some(s)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The stream under `key`, mutably, raw: a change made through it has none of a write's
    /// effects (nothing is propagated, no event fires, WATCH and blocked readers are not
    /// signalled, `dirty` is not counted) unless the caller produces them (as
    /// [`Db::stream_trimmed`] does for a trim). For restoring state; writers go through the
    /// commands or the typed API ([`Db::xadd`], [`Db::xtrim`], [`Db::xack`],
    /// [`Db::xreadgroup`], [`Db::xautoclaim`]).
    pub fn stream_mut_raw(&mut self, key: &[u8]) -> Result<Option<&mut Stream>> {
        self.stream_mut(key)
    }

    /// The stream under `key`, created empty (signalled ready, firing `new`) if the key is
    /// missing; raw as [`Db::stream_mut`] otherwise.
    pub(crate) fn stream_or_create(&mut self, key: &[u8]) -> Result<&mut Stream> {
        self.reap(key);
        if !self.values.map.contains_key(key) {
            let stream = Stream::with_idmp_config(self.values.idmp_defaults);
            self.values.put(key, Value::Stream(Box::new(stream)));
            self.signal_ready(key);
            self.notify(events::NEW, "new", key);
        }
        self.stream_mut(key)?.ok_or(Error::NoSuchKey)
    }

    /// The value under `key`, mutably, after lazy expiry: for the hash and set commands, which
    /// produce their own effects.
    pub(crate) fn value_mut(&mut self, key: &[u8]) -> Option<&mut Value> {
        self.reap(key);
        self.values.map.get_mut(key)
    }

    /// Notes that the hash under `key` may hold fields with an expiry time, so the expiry
    /// cycle visits it.
    pub(crate) fn track_hash_ttls(&mut self, key: &[u8]) {
        if !self.values.hash_ttl_keys.contains(key) {
            self.values
                .hash_ttl_keys
                .insert(Bytes::copy_from_slice(key));
        }
    }

    /// The running command's time snapshot (Unix ms).
    pub fn now_ms(&self) -> u64 {
        self.values.now_ms
    }

    /// The string under `key` changed in place by `f` (`Ok(None)` if the key is missing,
    /// WRONGTYPE if it holds something else), its INFO keysizes class kept. Produces no
    /// effects: the caller does (APPEND, SETRANGE, SETBIT, the HyperLogLog commands).
    pub(crate) fn string_mut<R>(
        &mut self,
        key: &[u8],
        f: impl FnOnce(&mut StringValue) -> R,
    ) -> Result<Option<R>> {
        self.reap(key);
        let s = match self.values.map.get_mut(key) {
            None => return Ok(None),
            Some(Value::String(s)) => s,
            Some(_) => return Err(Error::WrongType),
        };
        let before = super::values::size_class(s.len());
        let out = f(s);
        let after = super::values::size_class(s.len());
        if before != after {
            let sizes = &mut self.values.string_sizes;
            sizes[before] = sizes[before].saturating_sub(1);
            sizes[after] += 1;
        }
        Ok(Some(out))
    }

    /// Notes that the stream under `key` holds IDMP state, so idle streams are swept too.
    pub fn track_idmp(&mut self, key: &[u8]) {
        self.values.track_idmp(key);
    }

    /// Expires the IIDs of every tracked stream, at most once a second of the clock (Redis's
    /// cron rate), so streams no command touches free their expired IIDs too.
    pub fn sweep_idmp(&mut self, now_ms: u64) {
        self.values.sweep_idmp(now_ms);
    }

    /// Stores `value` under `key`, replacing what was there and its expiry. Overwriting a
    /// stream with another type signals a deletion; storing a stream, a list or a sorted set
    /// under a new key signals ready. Overwriting an existing key signals nothing ready, as
    /// Redis's `setKey` (its `dbSetValue` signals only the old value's deletion): a STORE over
    /// a key of another type leaves its blocked readers waiting. Commands that replace a key by
    /// deleting it first (RENAME, COPY, RESTORE, MOVE) therefore signal as for a new key. Fires
    /// `new` for a new key, else `overwritten` (and `type_changed`), as Redis's `setKey`.
    pub fn insert(&mut self, key: &[u8], value: Value) {
        self.reap(key);
        if self.effects.notify_flags != 0 {
            match self.values.map.get(key).map(Value::type_name) {
                None => self.notify(events::NEW, "new", key),
                Some(was) => {
                    self.notify(events::OVERWRITTEN, "overwritten", key);
                    if was != value.type_name() {
                        self.notify(events::TYPE_CHANGED, "type_changed", key);
                    }
                }
            }
        }
        let is_stream = matches!(value, Value::Stream(_));
        let is_list = matches!(value, Value::List(_) | Value::ZSet(_));
        self.values.map.clear_expiry(key);
        let previous = self.values.put(key, value);
        self.touch(key);
        if matches!(previous, Some(Value::Stream(_))) && !is_stream {
            self.signal_deleted(key);
        }
        if (is_stream || is_list) && previous.is_none() {
            self.signal_ready(key);
        }
        self.free_replaced(previous);
    }

    /// Replaces the value of an existing `key`, keeping its expiry and firing nothing (Redis's
    /// `dbReplaceValue`, as INCR does); a missing key is inserted as [`Db::insert`] does.
    pub fn replace_value(&mut self, key: &[u8], value: Value) {
        self.reap(key);
        if !self.values.map.contains_key(key) {
            self.insert(key, value);
            return;
        }
        let previous = self.values.put(key, value);
        self.touch(key);
        self.free_replaced(previous);
    }

    /// Frees a value a write replaced: as UNLINK does under `lazyfree-lazy-server-del`.
    fn free_replaced(&self, previous: Option<Value>) {
        if let Some(value) = previous.filter(|_| self.lazyfree.server_del()) {
            self.free_lazily(value);
        }
    }

    /// Sets when an existing `key` expires (Unix ms), or clears it with `None`.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: Option<u64>) {
        self.touch(key);
        self.values.map.set_expiry(key, at_ms);
    }

    /// Removes `key`'s expiry (PERSIST); returns whether it had one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        self.reap(key);
        let had = self.values.map.expiry(key).is_some();
        if had {
            self.values.map.set_expiry(key, None);
            self.touch(key);
        }
        had
    }

    /// How many live keys have an expiry.
    pub fn expires_count(&self) -> usize {
        self.values.expires_count()
    }

    /// The active expiry cycle's estimate of the average TTL left (ms), 0 before it ran.
    pub fn avg_ttl_ms(&self) -> u64 {
        self.values.avg_ttl_ms
    }

    /// When `key` expires, if it has an expiry.
    pub fn expiry(&self, key: &[u8]) -> Option<u64> {
        if self.values.expired(key) {
            return None;
        }
        self.values.map.expiry(key)
    }

    /// Removes `key`; returns the value it held. Removing a stream signals a deletion.
    pub fn remove(&mut self, key: &[u8]) -> Option<Value> {
        self.reap(key);
        let previous = self.values.take(key);
        if previous.is_some() {
            self.touch(key);
        }
        if matches!(previous, Some(Value::Stream(_))) {
            self.signal_deleted(key);
        }
        previous
    }

    /// Removes every key, signalling deletions to blocked readers, and frees them here
    /// (FLUSHDB and FLUSHALL use [`Db::flush`]).
    pub fn clear(&mut self) {
        drop(self.clear_taking());
    }

    /// [`Db::clear`] for FLUSHDB and FLUSHALL: the old table goes to the lazy-free thread,
    /// counted as its keys; unless `lazily` (ASYNC), the call returns once it is freed.
    pub fn flush(&mut self, lazily: bool) {
        let table = self.clear_taking();
        let keys = table.len() as u64;
        self.lazyfree.hand_over_database(table, keys, !lazily);
    }

    /// Empties the database and returns its table, unfreed.
    fn clear_taking(&mut self) -> super::table::Table {
        // Walking every key is for the blocked readers: none, no walk (a flush stays O(1)).
        let streams: Vec<Bytes> = if self.watch.blocked.len() == 0 {
            Vec::new()
        } else {
            self.values
                .map
                .entries()
                .filter(|e| {
                    matches!(e.value, Value::Stream(_)) && self.watch.blocked.has_waiters(&e.key)
                })
                .map(|e| Bytes::copy_from_slice(&e.key))
                .collect()
        };
        if !self.values.map.is_empty() {
            self.watch.touch_all();
        }
        self.watch.flush_tracked();
        let table = self.values.clear();
        for key in streams {
            self.signal_deleted(&key);
        }
        table
    }

    /// Swaps this database's data (values, expiry times, keysizes, IDMP tracking) with
    /// `other`'s, as SWAPDB does: WATCH registrations and blocked readers stay with their
    /// database. A watched key that exists on either side counts as changed; a blocked
    /// reader's key that held a stream and now is gone or of another type is signalled
    /// deleted, one that now holds a stream is signalled ready (Redis 8.8's
    /// `dbSwapDatabases`).
    pub fn swap_contents(&mut self, other: &mut Db) {
        self.before_swap(other);
        other.before_swap(self);
        self.values.swap_data(&mut other.values);
        self.after_swap();
        other.after_swap();
    }

    /// Touches and signals what [`Db::swap_contents`] changes in this database, before the
    /// swap puts `replaced_with`'s data here.
    fn before_swap(&mut self, replaced_with: &Db) {
        let kind = |db: &Db, key: &[u8]| db.values.map.get(key).map(Value::type_name);
        let touched: Vec<Bytes> = self
            .watch
            .watched_keys()
            .filter(|k| self.values.map.contains_key(k) || replaced_with.values.map.contains_key(k))
            .cloned()
            .collect();
        for key in touched {
            self.touch(&key);
        }
        let deleted: Vec<Bytes> = self
            .watch
            .blocked
            .waited_keys()
            .filter(|k| {
                let was = kind(self, k);
                was == Some("stream") && kind(replaced_with, k) != was
            })
            .cloned()
            .collect();
        for key in deleted {
            self.signal_deleted(&key);
        }
    }

    /// Signals ready the waited-on keys that hold a stream or a list after a swap.
    fn after_swap(&mut self) {
        let ready: Vec<Bytes> = self
            .watch
            .blocked
            .waited_keys()
            .filter(|k| {
                matches!(
                    self.values.map.get(k),
                    Some(Value::Stream(_) | Value::List(_))
                )
            })
            .cloned()
            .collect();
        for key in ready {
            self.signal_ready(&key);
        }
    }

    /// Number of keys (expired ones not counted).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live key (in no particular order).
    pub fn keys(&self) -> impl Iterator<Item = &super::Key> {
        self.values
            .map
            .entries()
            .filter(|e| !e.has_ttl() || !self.values.expired(&e.key))
            .map(|e| &e.key)
    }
}
