//! The keyspace: binary-safe keys mapping to values, shared across threads.
//!
//! One lock guards the whole keyspace. Redis runs commands one at a time, and a command (or a
//! MULTI/EXEC) must see and change several keys atomically, so one short critical section per
//! command is both the simplest correct choice and fast: no command does I/O or waits while
//! holding it. [`Keyspace::run`] takes the lock and one clock snapshot, runs a closure over the
//! [`Db`], then serves blocked readers of the keys that closure signalled (see
//! [`crate::blocking`]), and wakes them once the lock is released. A [`crate::Batch`] runs
//! several such calls (a connection's pipelined requests) under one acquisition.
//!
//! Layering: the keyspace knows values, expiry, WATCH versions and the blocked-reader registry,
//! not the commands. A blocked command is re-run with the `Rerun` its caller registered it
//! with; the command entry points ([`Keyspace::execute`] and its blocking forms) live in
//! `execute.rs`, above both this module and [`crate::command`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::blocking::{BlockRequest, Outcome, Registry, Signal, Slot, Waiter, Wake};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, IdmpConfig, NodeLimits};
use crate::error::{Error, Result};
use crate::reply::Reply;
use crate::stream::Stream;

use crate::notify::{self as events, Notification, NotificationSink};
pub use crate::propagate::PropagationSink;
use crate::trim_hook::TrimHook;

/// A value stored under a key.
#[derive(Debug, Clone)]
pub enum Value {
    /// A stream.
    Stream(Stream),
    /// A plain string (so keys of another type exist, as WRONGTYPE tests need).
    String(Bytes),
}

impl Value {
    /// The type name TYPE replies.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Stream(_) => "stream",
            Value::String(_) => "string",
        }
    }
}

/// What one command sees: its time snapshot and the settings in force.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    /// Unix milliseconds, read once for the whole command.
    pub now_ms: u64,
    /// Node limits (`stream-node-max-entries`, `stream-node-max-bytes`).
    pub limits: NodeLimits,
    /// The IDMP bounds new streams start with (`stream-idmp-duration`, `stream-idmp-maxsize`).
    pub idmp: IdmpConfig,
}

/// How a blocked command is run again when one of its keys is signalled: the command
/// dispatcher, handed in with the command when it blocks.
pub(crate) type Rerun = fn(&mut Db, &Snapshot, &[Bytes]) -> Result<Outcome>;

/// Length classes of INFO keysizes: 0, then one per power of two of a `u64`.
pub const SIZE_CLASSES: usize = 65;

/// The keysizes class of a length: 0 for 0, else one more than its base-2 logarithm.
fn size_class(len: usize) -> usize {
    match len {
        0 => 0,
        n => (usize::BITS - n.leading_zeros()) as usize,
    }
}

/// The data behind the lock.
pub struct Db {
    values: HashMap<Bytes, Value>,
    /// Expiry times (Unix ms) of keys that have one, ordered by key so the active expiry
    /// cycle can resume its scan where it stopped (see `expire.rs`).
    pub(crate) expires: BTreeMap<Bytes, u64>,
    /// Where the active expiry cycle resumes: the last key it sampled.
    pub(crate) expire_cursor: Option<Bytes>,
    /// The active expiry cycle's running estimate of the average TTL left (ms).
    pub(crate) avg_ttl_ms: u64,
    /// Keys deleted because they expired: on access, and of those by the active cycle.
    pub(crate) expired_keys: u64,
    pub(crate) expired_keys_active: u64,
    /// How many strings have each length class (INFO keysizes): class 0 holds the empty
    /// string, class `n` lengths in `2^(n-1)..2^n`.
    string_sizes: [u64; SIZE_CLASSES],
    /// The running command's time snapshot, for expiry.
    pub(crate) now_ms: u64,
    /// The running command's IDMP bounds for new streams.
    idmp_defaults: IdmpConfig,
    /// Keys whose streams may hold IDMP state, for [`Db::sweep_idmp`] (a superset: a key is
    /// dropped from it when a sweep finds nothing there).
    idmp_keys: HashSet<Bytes>,
    /// The clock time of the last IDMP sweep.
    idmp_swept_ms: u64,
    /// Keys under WATCH: how many watchers, and a version bumped on every change.
    watched: HashMap<Bytes, (u32, u64)>,
    /// Keys signalled by the running command, in signal order, for blocked readers.
    signals: Vec<(Bytes, Signal)>,
    /// Blocked readers.
    blocked: Registry<Rerun>,
    /// What the commands run since the last drain propagate (AOF), in order: see
    /// [`crate::propagate`].
    propagated: Vec<Vec<Bytes>>,
    /// Changes made (Redis's `server.dirty`), for `rdb_changes_since_last_save`.
    dirty: u64,
    /// Whether a propagation sink is installed (else nothing is recorded).
    pub(crate) propagating: bool,
    /// The `notify-keyspace-events` classes for the running command (0 without a sink).
    pub(crate) notify_flags: u32,
    /// Events fired since the last hand-over, with their keyspace-wide sequence numbers.
    pub(crate) events: Vec<(u64, &'static str, Bytes)>,
    /// The sequence shared by every database of a keyspace (firing order across them).
    pub(crate) event_seq: Arc<std::sync::atomic::AtomicU64>,
    /// Read lookups that found their key, and that did not (INFO's `keyspace_hits`,
    /// `keyspace_misses`).
    pub(crate) keyspace_hits: u64,
    pub(crate) keyspace_misses: u64,
    /// This database's number in its keyspace (for [`TrimHook::covers`]).
    index: usize,
    /// The embedder's trim hook, if one is installed (see [`crate::trim_hook`]).
    trim_hook: Option<Arc<dyn TrimHook>>,
}

impl Default for Db {
    fn default() -> Self {
        Db {
            values: HashMap::new(),
            expires: BTreeMap::new(),
            expire_cursor: None,
            avg_ttl_ms: 0,
            expired_keys: 0,
            expired_keys_active: 0,
            string_sizes: [0; SIZE_CLASSES],
            now_ms: 0,
            idmp_defaults: IdmpConfig::default(),
            idmp_keys: HashSet::new(),
            idmp_swept_ms: 0,
            watched: HashMap::new(),
            signals: Vec::new(),
            blocked: Registry::default(),
            propagated: Vec::new(),
            dirty: 0,
            propagating: false,
            notify_flags: 0,
            events: Vec::new(),
            event_seq: Arc::default(),
            keyspace_hits: 0,
            keyspace_misses: 0,
            index: 0,
            trim_hook: None,
        }
    }
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("keys", &self.values.len())
            .field("blocked", &self.blocked.len())
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Records that `key` changed (for WATCH). Commands call this where Redis signals a
    /// modified key; creating, replacing, removing and expiring keys call it themselves.
    pub fn touch(&mut self, key: &[u8]) {
        if let Some((_, version)) = self.watched.get_mut(key) {
            *version += 1;
        }
    }

    /// Starts watching `key`; returns its version now.
    pub fn watch(&mut self, key: &[u8]) -> u64 {
        let entry = self
            .watched
            .entry(Bytes::copy_from_slice(key))
            .or_insert((0, 0));
        entry.0 += 1;
        self.version(key)
    }

    /// Stops one watch of `key`.
    pub fn unwatch(&mut self, key: &[u8]) {
        if let Some((watchers, _)) = self.watched.get_mut(key) {
            *watchers -= 1;
            if *watchers == 0 {
                self.watched.remove(key);
            }
        }
    }

    /// The version of a watched key (0 if unwatched). An expired key counts as changed.
    pub fn version(&self, key: &[u8]) -> u64 {
        let version = self.watched.get(key).map_or(0, |(_, v)| *v);
        if self.expired(key) {
            version + 1
        } else {
            version
        }
    }

    /// Whether `key` has an expiry time that has passed.
    fn expired(&self, key: &[u8]) -> bool {
        !self.expires.is_empty() && self.expires.get(key).is_some_and(|&at| at <= self.now_ms)
    }

    /// Deletes `key` if its expiry time has passed, as any access to it does in Redis: a
    /// watched key counts as changed, and blocked readers of a stream are signalled as after
    /// DEL. Returns whether it expired.
    pub fn expire_if_due(&mut self, key: &[u8]) -> bool {
        if !self.expired(key) {
            return false;
        }
        // An expiry propagates as a DEL, as Redis's does (lazy and active expiry alike).
        self.propagate(vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key),
        ]);
        self.dirty += 1;
        self.expires.remove(key);
        let previous = self.values.remove(key);
        self.count_out(previous.as_ref());
        self.touch(key);
        self.expired_keys += 1;
        if matches!(previous, Some(Value::Stream(_))) {
            self.signal_deleted(key);
        }
        self.notify(events::EXPIRED, "expired", key);
        true
    }

    fn reap(&mut self, key: &[u8]) {
        self.expire_if_due(key);
    }

    /// Keysizes bookkeeping: a value leaves the keyspace.
    fn count_out(&mut self, value: Option<&Value>) {
        if let Some(Value::String(s)) = value {
            let class = &mut self.string_sizes[size_class(s.len())];
            *class = class.saturating_sub(1);
        }
    }

    /// Keysizes bookkeeping: a value enters the keyspace.
    fn count_in(&mut self, value: &Value) {
        if let Value::String(s) = value {
            self.string_sizes[size_class(s.len())] += 1;
        }
    }

    /// How many strings fall in each length class (INFO keysizes), expired ones included
    /// until they are deleted, as Redis counts them.
    pub fn string_sizes(&self) -> &[u64; SIZE_CLASSES] {
        &self.string_sizes
    }

    /// Appends a command to what this database's running command propagates (Redis's
    /// `alsoPropagate`): a deterministic form that replays to the same state.
    pub fn propagate(&mut self, argv: Vec<Bytes>) {
        if self.propagating {
            self.propagated.push(argv);
        }
    }

    /// Whether what commands propagate is recorded (a sink is installed): commands may skip
    /// building their propagated form otherwise.
    pub fn propagating(&self) -> bool {
        self.propagating
    }

    /// The trim hook that covers `key` in this database, if any.
    pub(crate) fn trim_hook_for(&self, key: &[u8]) -> Option<Arc<dyn TrimHook>> {
        self.trim_hook
            .as_ref()
            .filter(|hook| hook.covers(self.index, key))
            .cloned()
    }

    /// The common effects of a command that changed `key`, in Redis's order: WATCH sees the
    /// key modified (`signalModifiedKey`), `event` of `class` fires, `dirty` changes are
    /// counted, and `argv` (built only when something records it) is propagated verbatim.
    pub fn wrote(
        &mut self,
        key: &[u8],
        class: u32,
        event: &'static str,
        dirty: u64,
        argv: &[&[u8]],
    ) {
        self.touch(key);
        self.notify(class, event, key);
        self.dirty += dirty;
        if self.propagating {
            self.propagated
                .push(argv.iter().map(|a| Bytes::copy_from_slice(a)).collect());
        }
    }

    /// Propagates `argv` verbatim (built only when something records it), counting `dirty`
    /// changes: a command that changed state but touches no WATCH and fires no event.
    pub fn changed(&mut self, dirty: u64, argv: &[&[u8]]) {
        self.dirty += dirty;
        if self.propagating {
            self.propagated
                .push(argv.iter().map(|a| Bytes::copy_from_slice(a)).collect());
        }
    }

    /// Counts `n` changes (Redis's `server.dirty += n`).
    pub fn add_dirty(&mut self, n: u64) {
        self.dirty += n;
    }

    /// Changes made to this database so far.
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Takes what was propagated since the last call.
    pub fn take_propagated(&mut self) -> Vec<Vec<Bytes>> {
        std::mem::take(&mut self.propagated)
    }

    /// Whether keys were signalled (written, deleted) since blocked readers were last served.
    pub(crate) fn has_signals(&self) -> bool {
        !self.signals.is_empty()
    }

    /// Whether a command run here propagated something not yet taken.
    pub(crate) fn has_propagated(&self) -> bool {
        !self.propagated.is_empty()
    }

    /// Readies this database for one call: its time snapshot, whether writes propagate, the
    /// notification classes, the IDMP defaults, and the periodic IDMP sweep.
    fn prepare(&mut self, snapshot: &Snapshot, propagating: bool, notify_flags: u32) {
        self.propagating = propagating;
        self.notify_flags = notify_flags;
        self.now_ms = snapshot.now_ms;
        self.idmp_defaults = snapshot.idmp;
        self.sweep_idmp(snapshot.now_ms);
    }

    /// The value under `key` (an expired key is missing).
    pub fn get(&self, key: &[u8]) -> Option<&Value> {
        if self.expired(key) {
            return None;
        }
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

    /// The stream under `key`, mutably, raw: a change made through it has none of a write's
    /// effects (nothing is propagated, no event fires, WATCH and blocked readers are not
    /// signalled, `dirty` is not counted) unless the caller produces them. For restoring
    /// state and for the engine's own commands; other writers go through the commands or the
    /// typed API ([`Db::xadd`]).
    pub fn stream_mut(&mut self, key: &[u8]) -> Result<Option<&mut Stream>> {
        self.reap(key);
        match self.values.get_mut(key) {
            None => Ok(None),
            Some(Value::Stream(s)) => Ok(Some(s)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The stream under `key`, created empty (signalled ready, firing `new`) if the key is
    /// missing; raw as [`Db::stream_mut`] otherwise.
    pub(crate) fn stream_or_create(&mut self, key: &[u8]) -> Result<&mut Stream> {
        self.reap(key);
        if !self.values.contains_key(key) {
            let stream = Stream::with_idmp_config(self.idmp_defaults);
            self.values
                .insert(Bytes::copy_from_slice(key), Value::Stream(stream));
            self.signal_ready(key);
            self.notify(events::NEW, "new", key);
        }
        self.stream_mut(key)?.ok_or(Error::NoSuchKey)
    }

    /// Notes that the stream under `key` holds IDMP state, so idle streams are swept too.
    pub fn track_idmp(&mut self, key: &[u8]) {
        if !self.idmp_keys.contains(key) {
            self.idmp_keys.insert(Bytes::copy_from_slice(key));
        }
    }

    /// Expires the IIDs of every tracked stream, at most once a second of the clock (Redis's
    /// cron rate), so streams no command touches free their expired IIDs too. Every observable
    /// answer is already exact without it (see [`crate::stream::idmp`]): this is for memory.
    pub fn sweep_idmp(&mut self, now_ms: u64) {
        const SWEEP_INTERVAL_MS: u64 = 1000;
        if self.idmp_keys.is_empty()
            || now_ms.saturating_sub(self.idmp_swept_ms) < SWEEP_INTERVAL_MS
        {
            return;
        }
        self.idmp_swept_ms = now_ms;
        let values = &mut self.values;
        self.idmp_keys.retain(|key| match values.get_mut(key) {
            Some(Value::Stream(stream)) => {
                stream.idmp_mut().expire(now_ms);
                stream.idmp().pids_tracked() > 0
            }
            _ => false,
        });
    }

    /// Stores `value` under `key`, replacing what was there and its expiry. Overwriting a
    /// stream with another type signals a deletion; storing a stream signals ready. Fires
    /// `new` for a new key, else `overwritten` (and `type_changed`), as Redis's `setKey`.
    pub fn insert(&mut self, key: Bytes, value: Value) {
        self.reap(&key);
        if self.notify_flags != 0 {
            match self.values.get(&key).map(Value::type_name) {
                None => self.notify(events::NEW, "new", &key),
                Some(was) => {
                    self.notify(events::OVERWRITTEN, "overwritten", &key);
                    if was != value.type_name() {
                        self.notify(events::TYPE_CHANGED, "type_changed", &key);
                    }
                }
            }
        }
        let is_stream = matches!(value, Value::Stream(_));
        if let Value::Stream(stream) = &value
            && stream.idmp().pids_tracked() > 0
        {
            self.track_idmp(&key);
        }
        self.expires.remove(&key);
        self.count_in(&value);
        let previous = self.values.insert(key.clone(), value);
        self.count_out(previous.as_ref());
        self.touch(&key);
        if matches!(previous, Some(Value::Stream(_))) && !is_stream {
            self.signal_deleted(&key);
        }
        if is_stream {
            self.signal_ready(&key);
        }
    }

    /// Replaces the value of an existing `key`, keeping its expiry and firing nothing (Redis's
    /// `dbReplaceValue`, as INCR does); a missing key is inserted as [`Db::insert`] does.
    pub fn replace_value(&mut self, key: &[u8], value: Value) {
        self.reap(key);
        if !self.values.contains_key(key) {
            self.insert(Bytes::copy_from_slice(key), value);
            return;
        }
        if let Value::Stream(stream) = &value
            && stream.idmp().pids_tracked() > 0
        {
            self.track_idmp(key);
        }
        self.count_in(&value);
        let previous = self.values.insert(Bytes::copy_from_slice(key), value);
        self.count_out(previous.as_ref());
        self.touch(key);
    }

    /// Counts one read lookup of `key` (Redis's `lookupKeyRead`): a hit, or a miss that fires
    /// `keymiss` unless `quiet` (OBJECT's lookup). An expired key is a miss.
    pub fn count_read(&mut self, key: &[u8], quiet: bool) {
        if self.get(key).is_some() {
            self.keyspace_hits += 1;
        } else {
            self.keyspace_misses += 1;
            if !quiet {
                self.notify(events::KEY_MISS, "keymiss", key);
            }
        }
    }

    /// Read lookups that found their key and that did not, since start.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.keyspace_hits, self.keyspace_misses)
    }

    /// Sets when an existing `key` expires (Unix ms), or clears it with `None`.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: Option<u64>) {
        self.touch(key);
        match at_ms {
            Some(at) if self.values.contains_key(key) => {
                self.expires.insert(Bytes::copy_from_slice(key), at);
            }
            _ => {
                self.expires.remove(key);
            }
        }
    }

    /// Removes `key`'s expiry (PERSIST); returns whether it had one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        self.reap(key);
        let had = self.expires.remove(key).is_some();
        if had {
            self.touch(key);
        }
        had
    }

    /// How many live keys have an expiry.
    pub fn expires_count(&self) -> usize {
        self.expires
            .values()
            .filter(|&&at| at > self.now_ms)
            .count()
    }

    /// The active expiry cycle's estimate of the average TTL left (ms), 0 before it ran.
    pub fn avg_ttl_ms(&self) -> u64 {
        self.avg_ttl_ms
    }

    /// Keys with at least one blocked reader, and of those the keys an XREADGROUP waits on
    /// (INFO's `total_blocking_keys` and `total_blocking_keys_on_nokey`).
    pub fn blocking_keys(&self) -> (usize, usize) {
        self.blocked.key_counts()
    }

    /// Blocked commands that have a timeout (INFO's `clients_in_timeout_table`).
    pub fn blocked_with_timeout(&self) -> usize {
        self.blocked.with_deadline()
    }

    /// Keys under WATCH (INFO's `total_watched_keys`).
    pub fn watched_count(&self) -> usize {
        self.watched.len()
    }

    /// When `key` expires, if it has an expiry.
    pub fn expiry(&self, key: &[u8]) -> Option<u64> {
        if self.expired(key) {
            return None;
        }
        self.expires.get(key).copied()
    }

    /// Removes `key`; returns the value it held. Removing a stream signals a deletion.
    pub fn remove(&mut self, key: &[u8]) -> Option<Value> {
        self.reap(key);
        self.expires.remove(key);
        let previous = self.values.remove(key);
        self.count_out(previous.as_ref());
        if previous.is_some() {
            self.touch(key);
        }
        if matches!(previous, Some(Value::Stream(_))) {
            self.signal_deleted(key);
        }
        previous
    }

    /// Removes every key (FLUSHDB), signalling deletions to blocked readers.
    pub fn clear(&mut self) {
        let streams: Vec<Bytes> = self
            .values
            .iter()
            .filter(|(k, v)| matches!(v, Value::Stream(_)) && self.blocked.has_waiters(k))
            .map(|(k, _)| k.clone())
            .collect();
        if !self.values.is_empty() {
            for (_, version) in self.watched.values_mut() {
                *version += 1;
            }
        }
        self.values.clear();
        self.expires.clear();
        self.idmp_keys.clear();
        self.expire_cursor = None;
        self.avg_ttl_ms = 0;
        self.string_sizes = [0; SIZE_CLASSES];
        for key in streams {
            self.signal_deleted(&key);
        }
    }

    /// Swaps this database's data (values, expiry times, IDMP tracking) with `other`'s, as
    /// SWAPDB does: WATCH registrations and blocked readers stay with their database. A watched
    /// key that exists on either side counts as changed; a blocked reader's key that held a
    /// stream and now is gone or of another type is signalled deleted, one that now holds a
    /// stream is signalled ready (Redis 8.8's `dbSwapDatabases`).
    pub fn swap_contents(&mut self, other: &mut Db) {
        self.before_swap(other);
        other.before_swap(self);
        std::mem::swap(&mut self.values, &mut other.values);
        std::mem::swap(&mut self.expires, &mut other.expires);
        std::mem::swap(&mut self.idmp_keys, &mut other.idmp_keys);
        std::mem::swap(&mut self.idmp_swept_ms, &mut other.idmp_swept_ms);
        self.after_swap();
        other.after_swap();
    }

    /// Touches and signals what [`Db::swap_contents`] changes in this database, before the
    /// swap puts `replaced_with`'s data here.
    fn before_swap(&mut self, replaced_with: &Db) {
        let kind = |db: &Db, key: &[u8]| db.values.get(key).map(Value::type_name);
        let touched: Vec<Bytes> = self
            .watched
            .keys()
            .filter(|k| self.values.contains_key(*k) || replaced_with.values.contains_key(*k))
            .cloned()
            .collect();
        for key in touched {
            self.touch(&key);
        }
        let deleted: Vec<Bytes> = self
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

    /// Signals ready the waited-on keys that hold a stream after a swap.
    fn after_swap(&mut self) {
        let ready: Vec<Bytes> = self
            .blocked
            .waited_keys()
            .filter(|k| matches!(self.values.get(*k), Some(Value::Stream(_))))
            .cloned()
            .collect();
        for key in ready {
            self.signal_ready(&key);
        }
    }

    /// Number of keys (expired ones not counted).
    pub fn len(&self) -> usize {
        let expired = self
            .expires
            .values()
            .filter(|&&at| at <= self.now_ms)
            .count();
        self.values.len() - expired
    }

    /// Whether there is no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live key (in no particular order).
    pub fn keys(&self) -> impl Iterator<Item = &Bytes> {
        self.values.keys().filter(|k| !self.expired(k))
    }

    /// Commands blocked on keys of this keyspace.
    pub fn blocked_count(&self) -> usize {
        self.blocked.len()
    }

    /// Checks every stream's invariants, the expiry and keysizes bookkeeping, and the
    /// blocked-reader registry; the error names the key.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        if let Some(key) = self.expires.keys().find(|k| !self.values.contains_key(*k)) {
            return Err(format!(
                "expiry kept for missing key {:?}",
                String::from_utf8_lossy(key)
            ));
        }
        let mut sizes = [0u64; SIZE_CLASSES];
        for value in self.values.values() {
            if let Value::String(s) = value {
                sizes[size_class(s.len())] += 1;
            }
        }
        if sizes != self.string_sizes {
            return Err("keysizes counts differ from the strings held".into());
        }
        for (key, value) in &self.values {
            if let Value::Stream(stream) = value {
                stream
                    .check_invariants()
                    .map_err(|e| format!("stream {:?}: {e}", String::from_utf8_lossy(key)))?;
                if stream.idmp().pids_tracked() > 0 && !self.idmp_keys.contains(key.as_ref()) {
                    return Err(format!(
                        "stream {:?} holds iids but is not tracked for the IDMP sweep",
                        String::from_utf8_lossy(key)
                    ));
                }
            }
        }
        self.blocked.check()
    }

    /// Marks `key` as having new data: its blocked readers are re-run after the command.
    pub fn signal_ready(&mut self, key: &[u8]) {
        self.signal(key, Signal::Ready);
    }

    /// Marks `key` as deleted or retyped: blocked XREADGROUP readers are re-run (and fail).
    pub fn signal_deleted(&mut self, key: &[u8]) {
        self.signal(key, Signal::Deleted);
    }

    fn signal(&mut self, key: &[u8], signal: Signal) {
        if self.blocked.has_waiters(key)
            && !self.signals.iter().any(|(k, s)| k == key && *s == signal)
        {
            self.signals.push((Bytes::copy_from_slice(key), signal));
        }
    }

    /// Re-runs the blocked commands of every signalled key, in signal order and per key in
    /// FIFO order. Returns the wakers of those that now have a reply.
    pub(crate) fn serve_signalled(&mut self, snapshot: &Snapshot) -> Vec<Arc<dyn Wake>> {
        let mut wakers = Vec::new();
        if self.signals.is_empty() {
            return wakers;
        }
        let mut next = 0;
        while next < self.signals.len() {
            let (key, signal) = self.signals[next].clone();
            next += 1;
            for id in self.blocked.queued(&key) {
                match self.blocked.wakes_on_delete(id) {
                    None => continue,
                    Some(false) if signal == Signal::Deleted => continue,
                    Some(_) => {}
                }
                let Some(waiter) = self.blocked.unregister(id) else {
                    continue;
                };
                match (waiter.rerun)(self, snapshot, &waiter.request.argv) {
                    Ok(Outcome::Block(again)) => {
                        let mut waiter = waiter;
                        // A claim wake-up is never in the past: the next check is at least
                        // one millisecond on, so a re-run that cannot claim does not spin.
                        waiter.request.claim_wake_ms = again
                            .claim_wake_ms
                            .map(|at| at.max(snapshot.now_ms.saturating_add(1)));
                        self.blocked.requeue(id, waiter)
                    }
                    Ok(Outcome::Reply(reply)) => wakers.push(waiter.slot.complete(Ok(reply))),
                    Err(e) => wakers.push(waiter.slot.complete(Err(e))),
                }
            }
        }
        self.signals.clear();
        wakers
    }
}

/// The result of [`Keyspace::execute_blocking`].
#[derive(Debug)]
pub enum Execution {
    /// The command replied at once.
    Done(Result<Reply>),
    /// The command is blocked; its reply will be left in the handle.
    Blocked(BlockedHandle),
}

/// A blocked command. Dropping it unblocks the command (a client that went away).
#[derive(Debug)]
pub struct BlockedHandle {
    db: usize,
    id: u64,
    slot: Arc<Slot>,
    deadline_ms: Option<u64>,
    keyspace: Weak<Keyspace>,
}

impl BlockedHandle {
    /// The reply, once there is one (taken: later calls return `None`).
    pub fn try_take(&self) -> Option<Result<Reply>> {
        self.slot.take()
    }

    /// When to call [`Keyspace::expire_blocked`] next for this command, by the keyspace's
    /// clock: its timeout, or sooner when a CLAIM read's pending entry becomes claimable;
    /// `None` = never.
    pub fn deadline_ms(&self) -> Option<u64> {
        match (self.deadline_ms, self.slot.claim_wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl Drop for BlockedHandle {
    fn drop(&mut self) {
        if let Some(keyspace) = self.keyspace.upgrade()
            && let Some(db) = keyspace.dbs.lock().get_mut(self.db)
        {
            db.blocked.unregister(self.id);
        }
    }
}

/// A thread-safe keyspace with an injected clock: one or more numbered databases (SELECT)
/// behind one lock.
#[derive(Debug)]
pub struct Keyspace {
    pub(crate) dbs: Mutex<Vec<Db>>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    /// The active expiry cycle's own figures (see `expire.rs`).
    pub(crate) cycle: Mutex<crate::expire::CycleStats>,
    /// Where propagated commands go, fed under the lock (so in execution order).
    sink: parking_lot::RwLock<Option<Arc<dyn PropagationSink>>>,
    /// Whether `sink` is set, read once per command without a lock.
    propagating: std::sync::atomic::AtomicBool,
    /// Where keyspace notifications go, fed under the lock (so in execution order).
    notification_sink: parking_lot::RwLock<Option<Arc<dyn NotificationSink>>>,
    /// Whether `notification_sink` is set.
    notifying: std::sync::atomic::AtomicBool,
}

/// Wakes the blocked clients a call served (after the keyspace lock is released).
pub(crate) fn wake_all(wakers: Vec<Arc<dyn Wake>>) {
    for waker in wakers {
        waker.wake();
    }
}

impl Default for Keyspace {
    fn default() -> Self {
        Keyspace::new(Arc::new(SystemClock))
    }
}

impl Keyspace {
    /// An empty keyspace with one database, reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Keyspace {
        Keyspace::with_databases(clock, Arc::new(Config::default()), 1)
    }

    /// An empty keyspace with `databases` databases (at least one) sharing `config`.
    pub fn with_databases(
        clock: Arc<dyn Clock>,
        config: Arc<Config>,
        databases: usize,
    ) -> Keyspace {
        let seq: Arc<std::sync::atomic::AtomicU64> = Arc::default();
        let dbs = (0..databases.max(1))
            .map(|index| Db {
                event_seq: Arc::clone(&seq),
                index,
                ..Db::default()
            })
            .collect();
        Keyspace {
            dbs: Mutex::new(dbs),
            clock,
            config,
            cycle: Mutex::new(crate::expire::CycleStats::default()),
            sink: parking_lot::RwLock::new(None),
            propagating: std::sync::atomic::AtomicBool::new(false),
            notification_sink: parking_lot::RwLock::new(None),
            notifying: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The settings (changeable at run time).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The clock this keyspace reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Number of databases.
    pub fn databases(&self) -> usize {
        self.dbs.lock().len()
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            now_ms: self.clock.now_ms(),
            limits: self.config.node_limits(),
            idmp: self.config.idmp_defaults(),
        }
    }

    /// Runs `f` on database 0 atomically with one time snapshot, then serves blocked readers
    /// of the keys it signalled.
    pub fn run<R>(&self, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        self.run_db(0, f)
    }

    /// Runs `f` on database `index` (which must exist; out of range means database 0).
    pub fn run_db<R>(&self, index: usize, f: impl FnOnce(&mut Db, &Snapshot) -> R) -> R {
        let mut wakers = Vec::new();
        let result = self.run_db_locked(&mut self.dbs.lock(), index, f, &mut wakers);
        wake_all(wakers);
        result
    }

    /// Runs `f` over every database atomically (MULTI/EXEC, FLUSHALL) with one time snapshot.
    pub fn run_all<R>(&self, f: impl FnOnce(&mut [Db], &Snapshot) -> R) -> R {
        let mut wakers = Vec::new();
        let result = self.run_all_locked(&mut self.dbs.lock(), f, &mut wakers);
        wake_all(wakers);
        result
    }

    /// [`Keyspace::run_db`] on databases already locked: the blocked readers it serves are
    /// added to `wakers`, to be woken once the lock is released.
    pub(crate) fn run_db_locked<R>(
        &self,
        dbs: &mut [Db],
        index: usize,
        f: impl FnOnce(&mut Db, &Snapshot) -> R,
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> R {
        let snapshot = self.snapshot();
        let index = if index < dbs.len() { index } else { 0 };
        let db = &mut dbs[index];
        db.prepare(
            &snapshot,
            self.propagating.load(Ordering::Acquire),
            self.notify_flags(),
        );
        let result = f(db, &snapshot);
        if db.has_signals() {
            wakers.extend(db.serve_signalled(&snapshot));
        }
        if db.has_propagated() {
            let propagated = db.take_propagated();
            self.feed(propagated.into_iter().map(|argv| (index, argv)).collect());
        }
        self.hand_over_events(std::iter::once((index, db)));
        result
    }

    /// [`Keyspace::run_all`] on databases already locked (see [`Keyspace::run_db_locked`]).
    pub(crate) fn run_all_locked<R>(
        &self,
        dbs: &mut [Db],
        f: impl FnOnce(&mut [Db], &Snapshot) -> R,
        wakers: &mut Vec<Arc<dyn Wake>>,
    ) -> R {
        let snapshot = self.snapshot();
        let propagating = self.propagating.load(Ordering::Acquire);
        let notify_flags = self.notify_flags();
        for db in dbs.iter_mut() {
            db.prepare(&snapshot, propagating, notify_flags);
        }
        let result = f(dbs, &snapshot);
        let mut propagated = Vec::new();
        for (index, db) in dbs.iter_mut().enumerate() {
            if db.has_signals() {
                wakers.extend(db.serve_signalled(&snapshot));
            }
            if db.has_propagated() {
                propagated.extend(db.take_propagated().into_iter().map(|argv| (index, argv)));
            }
        }
        if !propagated.is_empty() {
            self.feed(propagated);
        }
        self.hand_over_events(dbs.iter_mut().enumerate());
        result
    }

    /// Sets (or, with `None`, removes) where propagated commands go. Without a sink they are
    /// dropped. Set it after loading a file, so replayed commands are not logged again.
    pub fn set_propagation_sink(&self, sink: Option<Arc<dyn PropagationSink>>) {
        let on = sink.is_some();
        *self.sink.write() = sink;
        self.propagating
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// Installs (or, with `None`, removes) the hook that takes over the trims of the streams
    /// it covers (see [`crate::trim_hook`]).
    pub fn set_trim_hook(&self, hook: Option<Arc<dyn TrimHook>>) {
        for db in self.dbs.lock().iter_mut() {
            db.trim_hook = hook.clone();
        }
    }

    /// Sets (or, with `None`, removes) where keyspace notifications go. Without a sink no
    /// event is recorded, whatever `notify-keyspace-events` says.
    pub fn set_notification_sink(&self, sink: Option<Arc<dyn NotificationSink>>) {
        let on = sink.is_some();
        *self.notification_sink.write() = sink;
        self.notifying
            .store(on, std::sync::atomic::Ordering::Release);
    }

    /// The notification classes commands record now: the configured ones with a sink, else 0.
    pub(crate) fn notify_flags(&self) -> u32 {
        if self.notifying.load(std::sync::atomic::Ordering::Acquire) {
            self.config.notify_flags()
        } else {
            0
        }
    }

    /// Hands the events the given databases recorded to the sink, in firing order (under the
    /// keyspace lock).
    pub(crate) fn hand_over_events<'d>(&self, dbs: impl Iterator<Item = (usize, &'d mut Db)>) {
        let mut batch = Vec::new();
        for (index, db) in dbs {
            if !db.events.is_empty() {
                db.take_events(index, &mut batch);
            }
        }
        if batch.is_empty() {
            return;
        }
        batch.sort_by_key(|(seq, _)| *seq);
        let events: Vec<Notification> = batch.into_iter().map(|(_, event)| event).collect();
        if let Some(sink) = self.notification_sink.read().as_ref() {
            sink.notify(self.config.notify_flags(), events);
        }
    }

    /// Whether a propagation sink is installed.
    pub(crate) fn propagation_on(&self) -> bool {
        self.propagating.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Hands one execution unit's propagated commands to the sink (under the keyspace lock).
    pub(crate) fn feed(&self, commands: Vec<(usize, Vec<Bytes>)>) {
        if let Some(sink) = self.sink.read().as_ref() {
            sink.feed(commands);
        }
    }

    /// Changes made to every database since start (Redis's dirty counter).
    pub fn dirty(&self) -> u64 {
        self.dirty_with(|_| {})
    }

    /// Runs `f` over every database under the lock (nothing is served or propagated: for a
    /// consistent read of everything, as a rewrite takes), and returns the dirty counter then.
    pub fn dirty_with(&self, f: impl FnOnce(&[Db])) -> u64 {
        let dbs = self.dbs.lock();
        f(&dbs);
        dbs.iter().map(Db::dirty).sum()
    }

    /// Registers a blocked command in database `index` (the one `db` is): it waits for its
    /// keys and is re-run with `rerun`; `waker` is called once it has a reply.
    pub(crate) fn block(
        self: &Arc<Self>,
        db: &mut Db,
        index: usize,
        request: BlockRequest,
        rerun: Rerun,
        waker: Arc<dyn Wake>,
    ) -> BlockedHandle {
        let deadline_ms = request.deadline_ms;
        let slot = Arc::new(Slot::new(waker));
        slot.set_claim_wake(request.claim_wake_ms);
        let id = db.blocked.register(Waiter {
            request,
            slot: Arc::clone(&slot),
            rerun,
        });
        BlockedHandle {
            db: index,
            id,
            slot,
            deadline_ms,
            keyspace: Arc::downgrade(self),
        }
    }

    /// Times out every blocked command whose deadline has passed by the clock (its reply is a
    /// null array); returns how many. A server calls this on a timer; a test calls it after
    /// moving a manual clock.
    ///
    /// First, the keys of XREADGROUP CLAIM readers whose pending entry became claimable are
    /// signalled and their waiters re-run (as Redis signals such keys before it sleeps).
    pub fn expire_blocked(&self) -> usize {
        let snapshot = self.snapshot();
        let now = snapshot.now_ms;
        let mut wakers: Vec<Arc<dyn Wake>> = Vec::new();
        let mut served = 0;
        let mut dbs = self.dbs.lock();
        for db in dbs.iter_mut() {
            let due = db.blocked.claim_due(now);
            if !due.is_empty() {
                db.now_ms = now;
                db.notify_flags = self.notify_flags();
                for id in due {
                    for key in db.blocked.keys_of(id) {
                        db.signal_ready(&key);
                    }
                }
                let woken = db.serve_signalled(&snapshot);
                served += woken.len();
                wakers.extend(woken);
            }
            for id in db.blocked.expired(now) {
                if let Some(waiter) = db.blocked.unregister(id) {
                    wakers.push(waiter.slot.complete(Ok(Reply::NullArray)));
                }
            }
        }
        self.hand_over_events(dbs.iter_mut().enumerate());
        drop(dbs);
        let expired = wakers.len() - served;
        for waker in wakers {
            waker.wake();
        }
        expired
    }

    /// The earliest deadline of any blocked command, by the clock.
    pub fn next_block_deadline(&self) -> Option<u64> {
        self.dbs
            .lock()
            .iter()
            .filter_map(|db| db.blocked.next_deadline())
            .min()
    }

    /// Commands blocked now.
    pub fn blocked_count(&self) -> usize {
        self.dbs.lock().iter().map(Db::blocked_count).sum()
    }

    /// Checks the invariants of every stream and of the blocked readers (for tests and
    /// fuzzing; walks everything).
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        for (index, db) in self.dbs.lock().iter().enumerate() {
            db.check_invariants()
                .map_err(|e| format!("db {index}: {e}"))?;
        }
        Ok(())
    }
}
