//! `LPUSH key element...`, `RPUSH key element...`, `LPUSHX key element...`, `RPUSHX key
//! element...`: push each element in turn at the head or the tail; the X forms only onto an
//! existing list (else 0, nothing changes). Reply: the length after.
//!
//! Effects (Redis's `pushGenericCommand`): a new list is created (`new`, signalled ready),
//! the key is touched, `lpush` or `rpush` fires, one change per element, propagated verbatim.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::LIST;
use crate::reply::Reply;

/// LPUSH, RPUSH, LPUSHX, RPUSHX.
#[derive(Debug)]
pub struct Push;

impl Push {
    /// LPUSH.
    pub fn run_lpush(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, true, false)
    }

    /// RPUSH.
    pub fn run_rpush(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, false, false)
    }

    /// LPUSHX.
    pub fn run_lpushx(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, true, true)
    }

    /// RPUSHX.
    pub fn run_rpushx(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, false, true)
    }

    fn run(
        db: &mut Db,
        snapshot: &Snapshot,
        argv: &[&[u8]],
        front: bool,
        existing: bool,
    ) -> Result<Reply> {
        let key = argv[1];
        let values = &argv[2..];
        let list = match db.list_mut(key)? {
            Some(list) => list,
            None if existing => return Ok(Reply::Int(0)),
            None => db.list_create(key)?,
        };
        list.push(values, front, snapshot.list);
        let len = list.len();
        let event = if front { "lpush" } else { "rpush" };
        db.wrote(key, LIST, event, values.len() as u64, argv);
        Ok(Reply::Int(len as i64))
    }
}
