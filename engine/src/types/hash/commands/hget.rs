//! `HGET key field`, `HMGET key field [field ...]`, `HEXISTS key field`, `HSTRLEN key field`
//! and `HLEN key`.
//!
//! WRONGTYPE for another type; a missing key reads as an empty hash. A field past its expiry
//! time is deleted on the read (see [`super::expiry`]); HMGET fires one `hexpired` for the
//! fields it deleted, then `del` if the hash went, and reads no further field of a deleted
//! hash. HLEN counts the fields stored, expired ones not yet deleted included, as Redis's
//! `hashTypeLength(o, 0)`.
//!
//! Effects: a read lookup of the key, and the lazy deletions.

use bytes::Bytes;

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, HASH};
use crate::reply::Reply;

use super::expiry::{FieldRead, Lazy, read_field};
use super::read_hash;

/// Reads one field as HGET does: the value, if the key holds it and it has not expired.
pub(crate) fn get_field(db: &mut Db, key: &[u8], field: &[u8]) -> Result<Option<Bytes>> {
    db.count_read(key, false);
    if read_hash(db, key)?.is_none() {
        return Ok(None);
    }
    Ok(match read_field(db, key, field, Lazy::FULL) {
        FieldRead::Found(v) => Some(v),
        _ => None,
    })
}

/// HGET.
#[derive(Debug)]
pub struct HGet;

impl HGet {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(get_field(db, argv[1], argv[2])?.map_or(Reply::Null, Reply::Bulk))
    }
}

/// HMGET.
#[derive(Debug)]
pub struct HMGet;

impl HMGet {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        db.count_read(key, false);
        let exists = read_hash(db, key)?.is_some();
        let mut out = Vec::with_capacity(argv.len() - 2);
        let mut expired: Vec<&[u8]> = Vec::new();
        let mut deleted = false;
        for field in &argv[2..] {
            if !exists || deleted {
                out.push(Reply::Null);
                continue;
            }
            match read_field(db, key, field, Lazy::QUIET) {
                FieldRead::Found(v) => out.push(Reply::Bulk(v)),
                FieldRead::Missing => out.push(Reply::Null),
                FieldRead::Expired => {
                    expired.push(field);
                    out.push(Reply::Null);
                }
                FieldRead::ExpiredHash => {
                    deleted = true;
                    out.push(Reply::Null);
                }
            }
        }
        if !expired.is_empty() {
            db.notify_subkeys(HASH, "hexpired", key, &expired);
        }
        if deleted {
            db.notify(GENERIC, "del", key);
        }
        Ok(Reply::Array(out))
    }
}

/// HEXISTS.
#[derive(Debug)]
pub struct HExists;

impl HExists {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(Reply::Int(i64::from(
            get_field(db, argv[1], argv[2])?.is_some(),
        )))
    }
}

/// HSTRLEN.
#[derive(Debug)]
pub struct HStrLen;

impl HStrLen {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let len = get_field(db, argv[1], argv[2])?.map_or(0, |v| v.len());
        Ok(Reply::Int(len as i64))
    }
}

/// HLEN.
#[derive(Debug)]
pub struct HLen;

impl HLen {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        Ok(Reply::Int(
            read_hash(db, argv[1])?.map_or(0, |h| h.len()) as i64
        ))
    }
}
