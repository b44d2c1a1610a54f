//! The values part of a [`Db`](super::Db): keys to values, their expiry times and access
//! metadata (the [`Table`]), the INFO keysizes histogram of strings, and which streams hold
//! IDMP state for the periodic sweep.
//!
//! Invariants (checked by [`Values::check_invariants`]):
//! - the table's own (see `table.rs`);
//! - `string_sizes[c]` is the number of strings whose length is in class `c`;
//! - every stream that holds IIDs is in `idmp_keys` (a superset: a key leaves it when a sweep
//!   finds nothing there);
//! - every hash with a field
//!   that has an expiry time is in `hash_ttl_keys` (a superset, pruned by the expiry cycle);
//! - every stream's, hash's and set's own invariants hold.
//!
//! Nothing here fires an effect: the [`Db`](super::Db) methods that add, replace and remove
//! keys produce those around these raw operations.

use std::collections::HashSet;

use bytes::Bytes;

use super::access::Access;
use super::table::Table;
use crate::config::IdmpConfig;
use crate::types::Value;

/// Length classes of INFO keysizes: 0, then one per power of two of a `u64`.
pub const SIZE_CLASSES: usize = 65;

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
    /// The values by key with their expiry times (Unix ms) and access metadata (expired keys
    /// stay until an access or the expiry cycle deletes them).
    pub(crate) map: Table,
    /// Where the active expiry cycle resumes: a slot of the table's keys with a TTL.
    pub(crate) expire_cursor: usize,
    /// The active expiry cycle's running estimate of the average TTL left (ms).
    pub(crate) avg_ttl_ms: u64,
    /// How many strings have each length class (INFO keysizes): class 0 holds the empty
    /// string, class `n` lengths in `2^(n-1)..2^n`.
    pub(crate) string_sizes: [u64; SIZE_CLASSES],
    /// The running command's time snapshot, for expiry.
    pub(crate) now_ms: u64,
    /// The running command's IDMP bounds for new streams.
    pub(crate) idmp_defaults: IdmpConfig,
    /// What the access metadata tracks, from the running command's settings.
    pub(crate) access: Access,
    /// The running command leaves access metadata alone (CLIENT NO-TOUCH).
    pub(crate) no_touch: bool,
    /// Random state for sampling and LFU increments (xorshift64*).
    rng: u64,
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
            map: Table::default(),
            expire_cursor: 0,
            avg_ttl_ms: 0,
            string_sizes: [0; SIZE_CLASSES],
            now_ms: 0,
            idmp_defaults: IdmpConfig::default(),
            access: Access::default(),
            no_touch: false,
            rng: seed(),
            idmp_keys: HashSet::new(),
            idmp_swept_ms: 0,
            hash_ttl_keys: HashSet::new(),
        }
    }
}

/// A random seed for a table's sampling (no two databases sample alike).
fn seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1
}

impl Values {
    /// 64 random bits (xorshift64*: sampling needs speed and spread, not secrecy).
    pub(crate) fn random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A random value in `0.0..1.0`.
    fn random_unit(&mut self) -> f64 {
        (self.random() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether `key` has an expiry time that has passed.
    pub(crate) fn expired(&self, key: &[u8]) -> bool {
        self.map.volatile_len() != 0 && self.map.expiry(key).is_some_and(|at| at <= self.now_ms)
    }

    /// The value under `key` (an expired key is missing).
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Value> {
        let pos = self.map.find(key)?;
        if self.map.expiry_at(pos).is_some_and(|at| at <= self.now_ms) {
            return None;
        }
        Some(&self.map.entry(pos).value)
    }

    /// Records an access to the key at `pos` in its metadata (Redis's `lookupKey` update; the
    /// caller decides whether the command and client allow it).
    pub(crate) fn accessed_at(&mut self, pos: usize) {
        let random = match self.access.mode {
            super::access::AccessMode::Lrm => return,
            super::access::AccessMode::Lfu => self.random_unit(),
            super::access::AccessMode::Lru => 0.0,
        };
        let entry = self.map.entry_mut(pos);
        let meta = self.access.accessed(entry.meta(), self.now_ms, random);
        entry.set_meta(meta);
    }

    /// Records a modification of `key` (LRM policies only).
    pub(crate) fn modified(&mut self, key: &[u8]) {
        if self.access.mode == super::access::AccessMode::Lrm {
            let clock = super::access::lru_clock(self.now_ms);
            self.map.set_meta(key, clock);
        }
    }

    /// Stores `value` under `key` (its expiry untouched, its metadata too if it exists);
    /// returns what was there. Keysizes and IDMP tracking follow.
    pub(crate) fn put(&mut self, key: &[u8], mut value: Value) -> Option<Value> {
        if let Value::String(s) = &mut value {
            s.settle(key.len());
        }
        if let Value::Stream(stream) = &value
            && stream.idmp().pids_tracked() > 0
        {
            self.track_idmp(key);
        }
        if let Value::Hash(hash) = &value
            && hash.has_ttls()
        {
            self.hash_ttl_keys.insert(Bytes::copy_from_slice(key));
        }
        self.count_in(&value);
        let meta = self.access.new_meta(self.now_ms);
        let previous = self.map.insert(key, value, meta);
        self.count_out(previous.as_ref());
        previous
    }

    /// Removes `key` and its expiry; returns the value it held. The table gives memory back
    /// once mostly empty, as Redis shrinks a dict.
    pub(crate) fn take(&mut self, key: &[u8]) -> Option<Value> {
        let previous = self.map.remove(key);
        self.count_out(previous.as_ref());
        previous
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
    pub(crate) fn clear(&mut self) -> Table {
        let table = std::mem::take(&mut self.map);
        self.idmp_keys.clear();
        self.hash_ttl_keys.clear();
        self.expire_cursor = 0;
        self.avg_ttl_ms = 0;
        self.string_sizes = [0; SIZE_CLASSES];
        table
    }

    /// Swaps the data (values, expiry times, keysizes, IDMP tracking) with `other`'s, as
    /// SWAPDB does; the running command's snapshot stays.
    pub(crate) fn swap_data(&mut self, other: &mut Values) {
        std::mem::swap(&mut self.map, &mut other.map);
        std::mem::swap(&mut self.string_sizes, &mut other.string_sizes);
        std::mem::swap(&mut self.idmp_keys, &mut other.idmp_keys);
        std::mem::swap(&mut self.idmp_swept_ms, &mut other.idmp_swept_ms);
        std::mem::swap(&mut self.hash_ttl_keys, &mut other.hash_ttl_keys);
    }

    /// Number of keys (expired ones not counted).
    pub(crate) fn len(&self) -> usize {
        let expired = self
            .map
            .expiry_times()
            .filter(|&at| at <= self.now_ms)
            .count();
        self.map.len() - expired
    }

    /// How many live keys have an expiry.
    pub(crate) fn expires_count(&self) -> usize {
        self.map
            .expiry_times()
            .filter(|&at| at > self.now_ms)
            .count()
    }

    /// Checks the invariants of the module doc; the error names the key.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        self.map.check_invariants()?;
        let mut sizes = [0u64; SIZE_CLASSES];
        for entry in self.map.entries() {
            if let Value::String(s) = &entry.value {
                sizes[size_class(s.len())] += 1;
                s.check_invariants()?;
            }
        }
        if sizes != self.string_sizes {
            return Err("keysizes counts differ from the strings held".into());
        }
        for entry in self.map.entries() {
            let (key, value) = (&entry.key, &entry.value);
            let name = || String::from_utf8_lossy(key.as_bytes()).into_owned();
            match value {
                Value::Hash(hash) => {
                    hash.check_invariants()
                        .map_err(|e| format!("hash {:?}: {e}", name()))?;
                    if hash.has_ttls() && !self.hash_ttl_keys.contains(key.as_bytes()) {
                        return Err(format!(
                            "hash {:?} has field ttls but is not tracked",
                            name()
                        ));
                    }
                }
                Value::Set(set) => set
                    .check_invariants()
                    .map_err(|e| format!("set {:?}: {e}", name()))?,
                Value::ZSet(z) => {
                    z.check_invariants()
                        .map_err(|e| format!("zset {:?}: {e}", name()))?;
                    if z.is_empty() {
                        return Err(format!("zset {:?} is empty", name()));
                    }
                }
                Value::List(list) => {
                    list.check_invariants()
                        .map_err(|e| format!("list {:?}: {e}", name()))?;
                    if list.is_empty() {
                        return Err(format!("list {:?} is empty", name()));
                    }
                }
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
