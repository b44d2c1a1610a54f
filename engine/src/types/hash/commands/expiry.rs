//! Field expiry: lazy, when a command reads one field (Redis 8.8's `hashTypeGetValue` with
//! `HFE_LAZY_EXPIRE`), and active, from the engine's expiry cycle (`hashTypeExpire`).
//!
//! Effects of deleting an expired field, in Redis's order: `HDEL key field` propagated,
//! `hexpired` fired (unless the hash is left empty, or the caller fires one event for a
//! batch), the hash deleted if empty (`del` fired), WATCH touched.

use bytes::Bytes;

use crate::keyspace::Db;
use crate::notify::{GENERIC, HASH};
use crate::types::Value;
use crate::types::hash::expired;

/// Fields deleted per step of the active cycle at most, so one step holds the lock briefly
/// (Redis's `ACTIVE_EXPIRE_CYCLE_FIELDS_PER_LOOP` budget is of the same order).
pub(crate) const FIELDS_PER_STEP: usize = 1000;

/// What reading one field found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldRead {
    /// The field's value.
    Found(Bytes),
    /// No such field (or no such key).
    Missing,
    /// The field had expired and was deleted.
    Expired,
    /// The field had expired and its deletion emptied the hash, which was deleted too.
    ExpiredHash,
}

/// How a lazy deletion reports itself (Redis's `HFE_LAZY_*` flags).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lazy {
    /// Fire `hexpired` for the field (and `del` for an emptied hash).
    pub(crate) notify: bool,
    /// Delete a hash left empty.
    pub(crate) delete_hash: bool,
    /// Touch WATCH.
    pub(crate) touch: bool,
}

impl Lazy {
    /// HGET, HEXISTS, HSTRLEN, HINCRBY: everything reported at once.
    pub(crate) const FULL: Lazy = Lazy {
        notify: true,
        delete_hash: true,
        touch: true,
    };
    /// HMGET: the caller fires one `hexpired` for all the fields, and `del`.
    pub(crate) const QUIET: Lazy = Lazy {
        notify: false,
        delete_hash: true,
        touch: true,
    };
    /// HGETDEL, HGETEX: the caller reports and deletes the hash itself.
    pub(crate) const DEFERRED: Lazy = Lazy {
        notify: false,
        delete_hash: false,
        touch: false,
    };
}

/// Reads `field` of the hash under `key` (which the caller checked is a hash, or missing),
/// deleting it if it expired.
pub(crate) fn read_field(db: &mut Db, key: &[u8], field: &[u8], lazy: Lazy) -> FieldRead {
    let now = db.now_ms();
    let Some(Value::Hash(hash)) = db.value_mut(key) else {
        return FieldRead::Missing;
    };
    match hash.get(field) {
        None => return FieldRead::Missing,
        Some((value, at)) if !expired(at, now) => return FieldRead::Found(value),
        Some(_) => {}
    }
    hash.remove(field);
    let empty = hash.is_empty();
    propagate_deletion(db, key, field);
    db.stats.expired_subkeys += 1;
    let mut read = FieldRead::Expired;
    if !empty && lazy.notify {
        db.notify_subkeys(HASH, "hexpired", key, &[field]);
    }
    if empty && lazy.delete_hash {
        if lazy.notify {
            db.notify(GENERIC, "del", key);
        }
        db.remove(key);
        read = FieldRead::ExpiredHash;
    }
    if lazy.touch {
        db.touch(key);
    }
    read
}

/// Propagates the deletion of an expired field as Redis does: `HDEL key field`.
pub(crate) fn propagate_deletion(db: &mut Db, key: &[u8], field: &[u8]) {
    if db.propagating() {
        db.propagate(vec![
            Bytes::from_static(b"HDEL"),
            Bytes::copy_from_slice(key),
            Bytes::copy_from_slice(field),
        ]);
    }
}

/// Deletes every due field of the hash under `key` (at most `quota`), as Redis's
/// `hashTypeExpire`: each propagated as HDEL, one `hexpired` for the hash, `del` if it is
/// left empty. Returns how many fields went.
pub(crate) fn expire_fields(db: &mut Db, key: &[u8], quota: usize) -> usize {
    let now = db.now_ms();
    let Some(Value::Hash(hash)) = db.value_mut(key) else {
        return 0;
    };
    let mut due = hash.due_fields(now);
    due.truncate(quota);
    if due.is_empty() {
        return 0;
    }
    for field in &due {
        hash.remove(field);
    }
    let empty = hash.is_empty();
    for field in &due {
        propagate_deletion(db, key, field);
    }
    db.stats.expired_subkeys += due.len() as u64;
    let fields: Vec<&[u8]> = due.iter().map(|f| f.as_ref()).collect();
    db.notify_subkeys(HASH, "hexpired", key, &fields);
    if empty {
        db.notify(GENERIC, "del", key);
        db.remove(key);
    } else {
        db.touch(key);
    }
    due.len()
}

impl Db {
    /// Active field expiry: deletes due fields of the tracked hashes, at most `quota` of
    /// them; untracks keys that no longer hold a hash with field TTLs. Returns how many.
    pub(crate) fn expire_hash_fields(&mut self, quota: usize) -> usize {
        if self.values.hash_ttl_keys.is_empty() {
            return 0;
        }
        let keys: Vec<Bytes> = self.values.hash_ttl_keys.iter().cloned().collect();
        let mut expired = 0;
        for key in keys {
            if expired >= quota {
                break;
            }
            let n = expire_fields(self, &key, quota - expired);
            expired += n;
            self.stats.expired_subkeys_active += n as u64;
            let keep = matches!(self.values.get(&key), Some(Value::Hash(h)) if h.has_ttls());
            if !keep {
                self.values.hash_ttl_keys.remove(&key);
            }
        }
        expired
    }
}
