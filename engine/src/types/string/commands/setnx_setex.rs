//! `SETNX key value`, `SETEX key seconds value`, `PSETEX key milliseconds value`: SET's
//! older forms, run through [`Set`] as Redis's `setGenericCommand` runs them.
//!
//! - SETNX stores only when the key is missing, replying 1, else 0; propagated verbatim.
//! - SETEX and PSETEX store with a relative time, replying OK. The time is checked first:
//!   not an integer is `ERR value is not an integer or out of range`, at or below 0 (or
//!   overflowing) `ERR invalid expire time in 'setex' command` (`'psetex'`). Effects as SET
//!   with EX or PX: `set` then `expire` fire, 1 change, propagated as `SET key value PXAT ms`.

use super::set::Set;
use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// SETNX.
#[derive(Debug)]
pub struct SetNx;

impl SetNx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Set::setnx().apply(db, argv, snapshot.now_ms)
    }
}

/// SETEX.
#[derive(Debug)]
pub struct SetEx;

impl SetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Set::setex(argv, false, snapshot.now_ms)?.apply(db, argv, snapshot.now_ms)
    }
}

/// PSETEX.
#[derive(Debug)]
pub struct PSetEx;

impl PSetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Set::setex(argv, true, snapshot.now_ms)?.apply(db, argv, snapshot.now_ms)
    }
}
