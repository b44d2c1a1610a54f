//! `XLEN key`: live entries; 0 for a missing key.
//!
//! Effects: a read lookup of the key.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// XLEN.
#[derive(Debug)]
pub struct XLen;

impl XLen {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let len = db.stream(argv[1])?.map_or(0, |s| s.len());
        Ok(Reply::Int(len as i64))
    }
}
