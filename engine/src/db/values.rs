//! The values part of a [`Db`](super::Db): keys to values, their expiry times, the INFO
//! keysizes histogram of strings, and which streams hold IDMP state for the periodic sweep.
//!
//! Invariants (checked by [`Values::check_invariants`]):
//! - every key with an expiry time holds a value;
//! - `string_sizes[c]` is the number of strings whose length is in class `c`;
//! - every stream that holds IIDs is in `idmp_keys` (a superset: a key leaves it when a sweep
//!   finds nothing there);
//! - every hash with a field
//!   that has an expiry time is in `hash_ttl_keys` (a superset, pruned by the expiry cycle);
//! - every stream's, hash's and set's own invariants hold.
//!
//! Nothing here fires an effect: the [`Db`](super::Db) methods that add, replace and remove
//! keys produce those around these raw operations.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;

use crate::config::IdmpConfig;
use crate::types::Value;

/// Length classes of INFO keysizes: 0, then one per power of two of a `u64`.
pub const SIZE_CLASSES: usize = 65;

/// A table is shrunk once it holds fewer keys than its capacity divided by this (Redis shrinks
/// a dict below 1/8 full).
const SPARSE_FILL_RATIO: usize = 8;
/// Tables this small are never shrunk: the saving is not worth a rehash.
const SHRINK_CAPACITY_MIN: usize = 128;

/// The keysizes class of a length: 0 for 0, else one more than its base-2 logarithm.
pub(crate) fn size_class(len: usize) -> usize {
    match len {
        0 => 0,
        n => (usize::BITS - n.leading_zeros()) as usize,
    }
}

/// Keys, values and expiry.
#[derive(Debug)]
pub(crate) struct Values {
    /// The values by key (expired keys stay until an access or the expiry cycle deletes them).
    pub(crate) map: HashMap<Bytes, Value>,
    /// Expiry times (Unix ms) of keys that have one, ordered by key so the active expiry
    /// cycle can resume its scan where it stopped (see `expire.rs`).
    pub(crate) expires: BTreeMap<Bytes, u64>,
    /// Where the active expiry cycle resumes: the last key it sampled.
    pub(crate) expire_cursor: Option<Bytes>,
    /// The active expiry cycle's running estimate of the average TTL left (ms).
    pub(crate) avg_ttl_ms: u64,
    /// How many strings have each length class (INFO keysizes): class 0 holds the empty
    /// string, class `n` lengths in `2^(n-1)..2^n`.
    pub(crate) string_sizes: [u64; SIZE_CLASSES],
    /// The running command's time snapshot, for expiry.
    pub(crate) now_ms: u64,
    /// The running command's IDMP bounds for new streams.
    pub(crate) idmp_defaults: IdmpConfig,
    /// Keys whose streams may hold IDMP state, for [`Values::sweep_idmp`].
    idmp_keys: HashSet<Bytes>,
    /// The clock time of the last IDMP sweep.
    idmp_swept_ms: u64,
    /// Keys whose hashes may hold fields with an expiry time, for active field expiry (a
    /// superset: a key leaves when the cycle finds no such field there).
    pub(crate) hash_ttl_keys: HashSet<Bytes>,
}

impl Default for Values {
    fn default() -> Self {
        Values {
            map: HashMap::new(),
            expires: BTreeMap::new(),
            expire_cursor: None,
            avg_ttl_ms: 0,
            string_sizes: [0; SIZE_CLASSES],
            now_ms: 0,
            idmp_defaults: IdmpConfig::default(),
            idmp_keys: HashSet::new(),
            idmp_swept_ms: 0,
            hash_ttl_keys: HashSet::new(),
        }
    }
}

impl Values {
    /// Whether `key` has an expiry time that has passed.
    pub(crate) fn expired(&self, key: &[u8]) -> bool {
        !self.expires.is_empty() && self.expires.get(key).is_some_and(|&at| at <= self.now_ms)
    }

    /// The value under `key` (an expired key is missing).
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Value> {
        if self.expired(key) {
            return None;
        }
        self.map.get(key)
    }

    /// Stores `value` under `key` (its expiry untouched); returns what was there. Keysizes and
    /// IDMP tracking follow.
    pub(crate) fn put(&mut self, key: Bytes, value: Value) -> Option<Value> {
        if let Value::Stream(stream) = &value
            && stream.idmp().pids_tracked() > 0
        {
            self.track_idmp(&key);
        }
        if let Value::Hash(hash) = &value
            && hash.has_ttls()
        {
            self.hash_ttl_keys.insert(key.clone());
        }
        self.count_in(&value);
        let previous = self.map.insert(key, value);
        self.count_out(previous.as_ref());
        previous
    }

    /// Removes `key` and its expiry; returns the value it held. A table left mostly empty is
    /// shrunk (see [`Values::shrink_if_sparse`]).
    pub(crate) fn take(&mut self, key: &[u8]) -> Option<Value> {
        self.expires.remove(key);
        let previous = self.map.remove(key);
        self.count_out(previous.as_ref());
        if previous.is_some() {
            self.shrink_if_sparse();
        }
        previous
    }

    /// Gives memory back once the table holds fewer than one key in [`SPARSE_FILL_RATIO`] of
    /// its capacity, as Redis shrinks a dict: `HashMap` never shrinks by itself, so without
    /// this a keyspace emptied by DEL would keep its largest table, and `used_memory` with it.
    /// Shrinking to twice the keys left means the next shrink needs the keys to fall four
    /// times more, so the rehash is paid once per halving at most (amortised O(1) per DEL).
    fn shrink_if_sparse(&mut self) {
        let capacity = self.map.capacity();
        if capacity > SHRINK_CAPACITY_MIN && self.map.len() * SPARSE_FILL_RATIO < capacity {
            self.map.shrink_to(self.map.len() * 2);
        }
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

    /// Notes that the stream under `key` holds IDMP state, so idle streams are swept too.
    pub(crate) fn track_idmp(&mut self, key: &[u8]) {
        if !self.idmp_keys.contains(key) {
            self.idmp_keys.insert(Bytes::copy_from_slice(key));
        }
    }

    /// Expires the IIDs of every tracked stream, at most once a second of the clock (Redis's
    /// cron rate). Every observable answer is already exact without it (see
    /// [`crate::stream::idmp`]): this is for memory.
    pub(crate) fn sweep_idmp(&mut self, now_ms: u64) {
        const SWEEP_INTERVAL_MS: u64 = 1000;
        if self.idmp_keys.is_empty()
            || now_ms.saturating_sub(self.idmp_swept_ms) < SWEEP_INTERVAL_MS
        {
            return;
        }
        self.idmp_swept_ms = now_ms;
        let map = &mut self.map;
        self.idmp_keys.retain(|key| match map.get_mut(key) {
            Some(Value::Stream(stream)) => {
                stream.idmp_mut().expire(now_ms);
                stream.idmp().pids_tracked() > 0
            }
            _ => false,
        });
    }

    /// Removes every key, giving the tables' memory back (`HashMap::clear` keeps it).
    pub(crate) fn clear(&mut self) {
        self.map = HashMap::new();
        self.expires.clear();
        self.idmp_keys.clear();
        self.hash_ttl_keys.clear();
        self.expire_cursor = None;
        self.avg_ttl_ms = 0;
        self.string_sizes = [0; SIZE_CLASSES];
    }

    /// Swaps the data (values, expiry times, keysizes, IDMP tracking) with `other`'s, as
    /// SWAPDB does; the running command's snapshot stays.
    pub(crate) fn swap_data(&mut self, other: &mut Values) {
        std::mem::swap(&mut self.map, &mut other.map);
        std::mem::swap(&mut self.expires, &mut other.expires);
        std::mem::swap(&mut self.string_sizes, &mut other.string_sizes);
        std::mem::swap(&mut self.idmp_keys, &mut other.idmp_keys);
        std::mem::swap(&mut self.idmp_swept_ms, &mut other.idmp_swept_ms);
        std::mem::swap(&mut self.hash_ttl_keys, &mut other.hash_ttl_keys);
    }

    /// Number of keys (expired ones not counted).
    pub(crate) fn len(&self) -> usize {
        let expired = self
            .expires
            .values()
            .filter(|&&at| at <= self.now_ms)
            .count();
        self.map.len() - expired
    }

    /// How many live keys have an expiry.
    pub(crate) fn expires_count(&self) -> usize {
        self.expires
            .values()
            .filter(|&&at| at > self.now_ms)
            .count()
    }

    /// Checks the invariants of the module doc; the error names the key.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        if let Some(key) = self.expires.keys().find(|k| !self.map.contains_key(*k)) {
            return Err(format!(
                "expiry kept for missing key {:?}",
                String::from_utf8_lossy(key)
            ));
        }
        let mut sizes = [0u64; SIZE_CLASSES];
        for value in self.map.values() {
            if let Value::String(s) = value {
                sizes[size_class(s.len())] += 1;
            }
        }
        if sizes != self.string_sizes {
            return Err("keysizes counts differ from the strings held".into());
        }
        for (key, value) in &self.map {
            let name = || String::from_utf8_lossy(key).into_owned();
            match value {
                Value::Hash(hash) => {
                    hash.check_invariants()
                        .map_err(|e| format!("hash {:?}: {e}", name()))?;
                    if hash.has_ttls() && !self.hash_ttl_keys.contains(key.as_ref()) {
                        return Err(format!(
                            "hash {:?} has field ttls but is not tracked",
                            name()
                        ));
                    }
                }
                Value::Set(set) => set
                    .check_invariants()
                    .map_err(|e| format!("set {:?}: {e}", name()))?,
                _ => {}
            }
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
        Ok(())
    }
}
