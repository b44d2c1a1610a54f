//! The hash commands, one file per command or close family, each a struct named after the
//! command with its grammar, errors and effects in its doc. They are registered in the one
//! command table ([`crate::command`]).
//!
//! - `hset`: HSET, HMSET, HSETNX; `hget`: HGET, HMGET, HEXISTS, HSTRLEN, HLEN;
//! - `hgetall`: HGETALL, HKEYS, HVALS, HSCAN; `hdel`: HDEL, HGETDEL;
//! - `hincr`: HINCRBY, HINCRBYFLOAT; `hrandfield`: HRANDFIELD;
//! - `hexpire`: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HPERSIST; `httl`: HTTL, HPTTL,
//!   HEXPIRETIME, HPEXPIRETIME; `hgetex`: HGETEX; `hsetex`: HSETEX;
//! - `expiry`: lazy expiry of one field and active expiry of due fields.
//!
//! A field past its expiry time reads as missing. A command that reads one field (HGET,
//! HEXISTS, HSTRLEN, HINCRBY...) deletes it as Redis 8.8's `hashTypeGetValue` does: the
//! deletion is propagated as `HDEL key field`, `hexpired` fires, and a hash left empty is
//! deleted (`del` fires). Whole-hash reads (HGETALL, HSCAN) skip such fields; HLEN counts them,
//! as Redis does.

pub(crate) mod expiry;
pub(crate) mod hdel;
pub(crate) mod hexpire;
pub(crate) mod hget;
pub(crate) mod hgetall;
pub(crate) mod hgetex;
pub(crate) mod hincr;
pub(crate) mod hrandfield;
pub(crate) mod hset;
pub(crate) mod hsetex;
pub(crate) mod httl;

#[cfg(test)]
mod propagate_tests;
#[cfg(test)]
mod tests;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::Db;
use crate::notify::GENERIC;
use crate::types::Value;
use crate::types::hash::Hash;

/// The hash under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds another type.
pub(crate) fn read_hash<'a>(db: &'a Db, key: &[u8]) -> Result<Option<&'a Hash>> {
    match db.get(key) {
        None => Ok(None),
        Some(Value::Hash(h)) => Ok(Some(h)),
        Some(_) => Err(Error::WrongType),
    }
}

/// The hash under `key`, mutably (raw: the caller produces the effects).
pub(crate) fn hash_mut<'a>(db: &'a mut Db, key: &[u8]) -> Result<Option<&'a mut Hash>> {
    match db.value_mut(key) {
        None => Ok(None),
        Some(Value::Hash(h)) => Ok(Some(h)),
        Some(_) => Err(Error::WrongType),
    }
}

/// The hash under `key`, created empty (firing `new`) if the key is missing.
pub(crate) fn hash_or_create<'a>(db: &'a mut Db, key: &[u8]) -> Result<&'a mut Hash> {
    if read_hash(db, key)?.is_none() {
        db.insert(key, Value::Hash(Hash::default()));
    }
    hash_mut(db, key)?.ok_or(Error::NoSuchKey)
}

/// Deletes the hash under `key` if it holds no field (firing `del`); returns whether it did.
pub(crate) fn remove_if_empty(db: &mut Db, key: &[u8]) -> bool {
    let empty = matches!(db.get(key), Some(Value::Hash(h)) if h.is_empty());
    if empty {
        db.remove(key);
        db.notify(GENERIC, "del", key);
    }
    empty
}

/// Notes for the expiry cycle that the hash under `key` may now hold fields with a TTL.
pub(crate) fn track_ttls(db: &mut Db, key: &[u8]) {
    if matches!(db.get(key), Some(Value::Hash(h)) if h.has_ttls()) {
        db.track_hash_ttls(key);
    }
}

/// `FIELDS numfields field...` at `argv[at..]`, as HTTL, HPERSIST and HGETDEL read it:
/// the keyword exactly there, a count from 1 to `i64::MAX`, and exactly that many fields.
pub(crate) fn fields_block<'a, 'b>(argv: &'b [&'a [u8]], at: usize) -> Result<&'b [&'a [u8]]> {
    let missing = Error::Text("Mandatory argument FIELDS is missing or not at the right position");
    if !argv
        .get(at)
        .is_some_and(|a| a.eq_ignore_ascii_case(b"fields"))
    {
        return Err(missing);
    }
    let positive = Error::Text("Number of fields must be a positive integer");
    let n = crate::command::parse_i64(argv.get(at + 1).copied().unwrap_or_default())
        .map_err(|_| positive.clone())?;
    if n < 1 {
        return Err(positive);
    }
    if usize::try_from(n).ok() != Some(argv.len() - at - 2) {
        return Err(Error::Text(
            "The `numfields` parameter must match the number of arguments",
        ));
    }
    Ok(&argv[at + 2..])
}

/// `argv` as an owned vector, for a propagated form.
pub(crate) fn owned(argv: &[&[u8]]) -> Vec<Bytes> {
    argv.iter().map(|a| Bytes::copy_from_slice(a)).collect()
}
