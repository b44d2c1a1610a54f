//! `GETSET key value` and `GETDEL key`: GET, then a change. WRONGTYPE for another type, with
//! nothing changed; the reply is the old string (nil for a missing key).
//!
//! Effects as Redis 8.8's `getsetCommand` and `getdelCommand`, after a read lookup:
//! - GETSET stores as SET does (`new` or `overwritten`, the expiry cleared), fires `set`,
//!   counts 1 change and propagates as `SET key value`;
//! - GETDEL removes an existing key, fires `del`, counts 1 change and propagates as
//!   `DEL key`; a missing key changes nothing.

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// GET's lookup: the string `key` holds, if any.
pub(crate) fn read_string(db: &mut Db, key: &[u8]) -> Result<Option<Bytes>> {
    db.count_read(key, false);
    match db.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_bytes())),
        Some(_) => Err(Error::WrongType),
    }
}

/// The bulk reply of an optional string.
pub(crate) fn bulk_or_null(s: Option<Bytes>) -> Reply {
    s.map_or(Reply::Null, Reply::Bulk)
}

/// GETSET.
#[derive(Debug)]
pub struct GetSet;

impl GetSet {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, value) = (argv[1], argv[2]);
        let old = read_string(db, key)?;
        db.insert(key, Value::String(StringValue::from_arg(value)));
        db.notify(STRING, "set", key);
        db.add_dirty(1);
        if db.propagating() {
            db.propagate(vec![
                Bytes::from_static(b"SET"),
                Bytes::copy_from_slice(key),
                Bytes::copy_from_slice(value),
            ]);
        }
        Ok(bulk_or_null(old))
    }
}

/// GETDEL.
#[derive(Debug)]
pub struct GetDel;

impl GetDel {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let old = read_string(db, key)?;
        if old.is_some() && db.remove(key).is_some() {
            db.notify(GENERIC, "del", key);
            db.add_dirty(1);
            if db.propagating() {
                db.propagate(vec![
                    Bytes::from_static(b"DEL"),
                    Bytes::copy_from_slice(key),
                ]);
            }
        }
        Ok(bulk_or_null(old))
    }
}
