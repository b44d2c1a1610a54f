//! `DBSIZE`: the keys of the database, those expired but not yet reaped excluded.
//!
//! Effects: none.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// DBSIZE.
#[derive(Debug)]
pub struct DbSize;

impl DbSize {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, _: &[&[u8]]) -> Result<Reply> {
        Ok(Reply::Int(db.len() as i64))
    }
}
