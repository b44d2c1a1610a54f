//! The list commands, one file per family: each a struct named after the command, its grammar
//! and its effects in its doc, registered in the one command table ([`crate::command`]).
//!
//! - `push`: LPUSH, RPUSH, LPUSHX, RPUSHX; `pop`: LPOP, RPOP, LMPOP;
//! - `read`: LLEN, LINDEX, LRANGE, LPOS; `edit`: LSET, LTRIM, LINSERT, LREM;
//! - `lmove`: LMOVE, RPOPLPUSH; `blocking`: BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH.
//!
//! Effects follow Redis 8.8's `t_list.c`: a write touches the key (WATCH), fires its event
//! (`lpush`, `rpush`, `lpop`, `rpop`, `lset`, `ltrim`, `linsert`, `lrem`), counts one change
//! per element added or removed (LSET, LINSERT: one), and propagates verbatim, except LMPOP
//! and the blocking pops (as `LPOP`/`RPOP key [count]`) and BLMOVE and BRPOPLPUSH (as LMOVE and
//! RPOPLPUSH). A list emptied is deleted, firing `del`. Creating a list signals its key ready
//! for blocked pops.

pub(crate) mod blocking;
pub(crate) mod edit;
pub(crate) mod lmove;
pub(crate) mod pop;
pub(crate) mod push;
pub(crate) mod read;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::Db;
use crate::notify::{GENERIC, LIST};
use crate::types::Value;
use crate::types::list::{List, ListConfig};

impl Db {
    /// The list under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds
    /// something else.
    pub fn list(&self, key: &[u8]) -> Result<Option<&List>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::List(l)) => Ok(Some(l)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The list under `key`, mutably, for the list commands (which produce their own effects).
    pub(crate) fn list_mut(&mut self, key: &[u8]) -> Result<Option<&mut List>> {
        self.expire_if_due(key);
        match self.values.map.get_mut(key) {
            None => Ok(None),
            Some(Value::List(l)) => Ok(Some(l)),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// Stores a new empty list under `key` (firing `new`, signalling the key ready), and
    /// returns it.
    pub(crate) fn list_create(&mut self, key: &[u8]) -> Result<&mut List> {
        self.insert(key, Value::List(List::default()));
        self.list_mut(key)?.ok_or(Error::NoSuchKey)
    }
}

/// Whether `arg` is `LEFT` (head) or `RIGHT` (tail), any case: true for the head.
pub(crate) fn parse_end(arg: &[u8]) -> Result<bool> {
    if arg.eq_ignore_ascii_case(b"left") {
        Ok(true)
    } else if arg.eq_ignore_ascii_case(b"right") {
        Ok(false)
    } else {
        Err(Error::Syntax)
    }
}

/// Removes up to `count` elements from the head (`front`) or tail of the list under `key`
/// (which exists), in the order they are popped.
pub(crate) fn pop_elements(db: &mut Db, key: &[u8], front: bool, count: usize) -> Vec<Bytes> {
    let Ok(Some(list)) = db.list_mut(key) else {
        return Vec::new();
    };
    let n = count.min(list.len());
    // One element, the common pop, takes the list's own pop (at the head of a long list it
    // moves the node's header, not its elements).
    if n == 1 {
        return list.pop(front).into_iter().collect();
    }
    let out = if front {
        list.range(0, n, false)
    } else {
        list.range(list.len() - 1, n, true)
    };
    let start = if front { 0 } else { list.len() - n };
    list.delete_range(start, n);
    out
}

/// The effects of removing `n` elements from an end of `key` (Redis's
/// `listElementsRemoved`): `lpop` or `rpop` fires, an emptied list is deleted (`del`), a
/// shrunk one may convert back to a listpack, the key is touched, `n` changes count.
pub(crate) fn elements_removed(db: &mut Db, key: &[u8], front: bool, n: usize, cfg: ListConfig) {
    db.notify(LIST, if front { "lpop" } else { "rpop" }, key);
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
    db.touch(key);
    db.add_dirty(n as u64);
}

/// The keys of LMPOP (`numkeys_at` 1) or BLMPOP (2): the numkeys arguments after the
/// count, none if the count is no positive integer or runs past the arguments.
pub fn numkeys_keys<'a>(argv: &[&'a [u8]], numkeys_at: usize) -> Vec<&'a [u8]> {
    let n = argv
        .get(numkeys_at)
        .and_then(|a| crate::command::parse_i64(a).ok())
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    match (numkeys_at + 1).checked_add(n) {
        Some(end) if n > 0 && end <= argv.len() => argv[numkeys_at + 1..end].to_vec(),
        _ => Vec::new(),
    }
}

/// A reply of elements.
pub(crate) fn array(elements: Vec<Bytes>) -> crate::reply::Reply {
    crate::reply::Reply::Array(
        elements
            .into_iter()
            .map(crate::reply::Reply::Bulk)
            .collect(),
    )
}

#[cfg(test)]
mod tests;
