//! `LSET key index element`, `LTRIM key start stop`, `LINSERT key BEFORE|AFTER pivot
//! element`, `LREM key count element`.
//!
//! Effects (Redis 8.8's `t_list.c`), each propagated verbatim when it changed something:
//! - LSET: ERR no such key for a missing key, then the index ("index out of range"); fires
//!   `lset`, 1 change. A too-large element converts the list first even when out of range.
//! - LTRIM: bounds checked first; a missing key is OK. Fires `ltrim` whenever the key exists,
//!   `del` when emptied; the elements removed count as changes.
//! - LINSERT: BEFORE/AFTER checked first; 0 for a missing key, -1 when the pivot is absent;
//!   fires `linsert`, 1 change.
//! - LREM: count checked first; fires `lrem` (and `del` when emptied) when it removed some;
//!   one change per element removed.

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, LIST};
use crate::reply::Reply;

/// LSET, LTRIM, LINSERT, LREM.
#[derive(Debug)]
pub struct Edit;

/// Deletes `key` if its list is empty (firing `del`), else lets it shrink back to a
/// listpack; returns whether it was deleted.
fn settle(db: &mut Db, key: &[u8], cfg: crate::types::list::ListConfig) -> bool {
    let empty = match db.list_mut(key) {
        Ok(Some(list)) if list.is_empty() => true,
        Ok(Some(list)) => {
            list.shrink_check(cfg);
            false
        }
        _ => false,
    };
    if empty {
        db.remove(key);
        db.notify(GENERIC, "del", key);
    }
    empty
}

impl Edit {
    /// LSET.
    pub fn run_lset(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        if db.list_mut(key)?.is_none() {
            return Err(Error::NoSuchKey);
        }
        let index = parse_i64(argv[2])?;
        let Some(list) = db.list_mut(key)? else {
            return Err(Error::NoSuchKey);
        };
        if !list.set(index, argv[3], snapshot.list) {
            return Err(Error::IndexOutOfRange);
        }
        db.wrote(key, LIST, "lset", 1, argv);
        Ok(Reply::OK)
    }

    /// LTRIM.
    pub fn run_ltrim(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let start = parse_i64(argv[2])?;
        let end = parse_i64(argv[3])?;
        let Some(list) = db.list_mut(key)? else {
            return Ok(Reply::OK);
        };
        let len = list.len();
        let (ltrim, rtrim) = match super::read::clamp_range(len, start, end) {
            Some((from, n)) => (from, len - from - n),
            None => (len, 0),
        };
        list.delete_range(len - rtrim, rtrim);
        list.delete_range(0, ltrim);
        db.notify(LIST, "ltrim", key);
        settle(db, key, snapshot.list);
        db.touch(key);
        let removed = (ltrim + rtrim) as u64;
        if removed > 0 {
            db.changed(removed, argv);
        }
        Ok(Reply::OK)
    }

    /// LINSERT.
    pub fn run_linsert(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let after = if argv[2].eq_ignore_ascii_case(b"after") {
            true
        } else if argv[2].eq_ignore_ascii_case(b"before") {
            false
        } else {
            return Err(Error::Syntax);
        };
        let key = argv[1];
        let Some(list) = db.list_mut(key)? else {
            return Ok(Reply::Int(0));
        };
        if !list.insert(argv[3], argv[4], after, snapshot.list) {
            return Ok(Reply::Int(-1));
        }
        let len = list.len();
        db.wrote(key, LIST, "linsert", 1, argv);
        Ok(Reply::Int(len as i64))
    }

    /// LREM.
    pub fn run_lrem(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let count = parse_i64(argv[2])?;
        if count == i64::MIN {
            return Err(Error::OutOfLongRange);
        }
        let Some(list) = db.list_mut(key)? else {
            return Ok(Reply::Int(0));
        };
        let removed = list.remove(argv[3], count);
        if removed > 0 {
            db.notify(LIST, "lrem", key);
            settle(db, key, snapshot.list);
            db.touch(key);
            db.changed(removed as u64, argv);
        }
        Ok(Reply::Int(removed as i64))
    }
}
