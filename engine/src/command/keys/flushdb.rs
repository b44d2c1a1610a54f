//! `FLUSHDB [ASYNC|SYNC]`: removes every key of the database; ASYNC (or no mode under
//! `lazyfree-lazy-user-flush`) frees them in the background (`engine/src/lazyfree.rs`).
//! Anything else after the name is `ERR syntax error`.
//!
//! Effects: WATCH touched for every watched key when there were keys, blocked XREADGROUP
//! readers of a stream signalled (they fail with NOGROUP); propagated verbatim, counting 1
//! change. FLUSHALL, which needs every database, is the server's.

use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::lazyfree::LazyFree;
use crate::reply::Reply;

/// FLUSHDB.
#[derive(Debug)]
pub struct FlushDb;

impl FlushDb {
    /// Whether FLUSHDB's or FLUSHALL's `argv` frees lazily: ASYNC yes, SYNC no, no mode as
    /// `lazyfree-lazy-user-flush` says; `ERR syntax error` for anything else.
    pub fn lazily(argv: &[&[u8]], lazyfree: &LazyFree) -> Result<bool> {
        match argv {
            [_] => Ok(lazyfree.user_flush()),
            [_, mode] if is(mode, "async") => Ok(true),
            [_, mode] if is(mode, "sync") => Ok(false),
            _ => Err(Error::Syntax),
        }
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let lazily = FlushDb::lazily(argv, db.lazyfree())?;
        db.flush(lazily);
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}
