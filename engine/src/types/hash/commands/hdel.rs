//! `HDEL key field [field ...]` and `HGETDEL key FIELDS numfields field [field ...]`.
//!
//! HDEL: WRONGTYPE for another type; replies how many fields it removed (a missing key, 0).
//! Effects as Redis 8.8's `hdelCommand`, when a field went: WATCH touched, `hdel` fired, the
//! hash deleted if empty (`del` fired after `hdel`), one change per field, propagated
//! verbatim.
//!
//! HGETDEL: WRONGTYPE, then the FIELDS block (`ERR Mandatory argument FIELDS is missing or
//! not at the right position`, `ERR Number of fields must be a positive integer`, `ERR The
//! `numfields` parameter must match the number of arguments`). Replies each field's value
//! (nil for a missing or expired one) and removes those it found. Effects as Redis's
//! `hgetdelCommand`: expired fields propagated as HDEL as they are met, then WATCH touched,
//! `hexpired` for them, `hdel` for the removed ones (one change each, propagated as `HDEL key
//! field...` with every field named), and the hash deleted if empty (`del`).

use bytes::Bytes;

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, HASH};
use crate::reply::Reply;

use super::expiry::{FieldRead, Lazy, read_field};
use super::{fields_block, hash_mut, read_hash, remove_if_empty};

/// HDEL.
#[derive(Debug)]
pub struct HDel;

impl HDel {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let Some(hash) = hash_mut(db, key)? else {
            return Ok(Reply::Int(0));
        };
        let mut deleted: Vec<&[u8]> = Vec::new();
        for field in &argv[2..] {
            if hash.remove(field) {
                deleted.push(field);
                if hash.is_empty() {
                    break;
                }
            }
        }
        if !deleted.is_empty() {
            let emptied = hash.is_empty();
            if emptied {
                db.remove(key);
            }
            db.touch(key);
            db.notify_subkeys(HASH, "hdel", key, &deleted);
            if emptied {
                db.notify(GENERIC, "del", key);
            }
            db.changed(deleted.len() as u64, argv);
        }
        Ok(Reply::Int(deleted.len() as i64))
    }
}

/// HGETDEL.
#[derive(Debug)]
pub struct HGetDel;

impl HGetDel {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let exists = read_hash(db, key)?.is_some();
        let fields = fields_block(argv, 2)?;
        let mut out = Vec::with_capacity(fields.len());
        let (mut expired, mut deleted): (Vec<&[u8]>, Vec<&[u8]>) = (Vec::new(), Vec::new());
        for field in fields {
            if !exists {
                out.push(Reply::Null);
                continue;
            }
            match read_field(db, key, field, Lazy::DEFERRED) {
                FieldRead::Found(v) => {
                    out.push(Reply::Bulk(v));
                    if let Some(hash) = hash_mut(db, key)? {
                        hash.remove(field);
                    }
                    deleted.push(field);
                }
                FieldRead::Expired | FieldRead::ExpiredHash => {
                    expired.push(field);
                    out.push(Reply::Null);
                }
                FieldRead::Missing => out.push(Reply::Null),
            }
        }
        if expired.is_empty() && deleted.is_empty() {
            return Ok(Reply::Array(out));
        }
        db.touch(key);
        if !expired.is_empty() {
            db.notify_subkeys(HASH, "hexpired", key, &expired);
        }
        if !deleted.is_empty() {
            db.notify_subkeys(HASH, "hdel", key, &deleted);
            db.add_dirty(deleted.len() as u64);
            if db.propagating() {
                let mut form = vec![Bytes::from_static(b"HDEL"), Bytes::copy_from_slice(key)];
                form.extend(fields.iter().map(|f| Bytes::copy_from_slice(f)));
                db.propagate(form);
            }
        }
        remove_if_empty(db, key);
        Ok(Reply::Array(out))
    }
}
