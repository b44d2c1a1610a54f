//! `FLUSHDB [ASYNC|SYNC]`: removes every key of the database (ASYNC frees nothing in the
//! background here: values are dropped when their last handle goes). Anything else after the
//! name is `ERR syntax error`.
//!
//! Effects: WATCH touched for every watched key when there were keys, blocked XREADGROUP
//! readers of a stream signalled (they fail with NOGROUP); propagated verbatim, counting 1
//! change. FLUSHALL, which needs every database, is the server's.

use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// FLUSHDB.
#[derive(Debug)]
pub struct FlushDb;

impl FlushDb {
    /// Whether `argv` (FLUSHDB's or FLUSHALL's) has a valid mode, or none.
    pub fn mode_ok(argv: &[&[u8]]) -> bool {
        match argv {
            [_] => true,
            [_, mode] => is(mode, "async") || is(mode, "sync"),
            _ => false,
        }
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        if !FlushDb::mode_ok(argv) {
            return Err(Error::Syntax);
        }
        db.clear();
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}
