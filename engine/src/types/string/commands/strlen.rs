//! `STRLEN key`: the string's length, 0 for a missing key, WRONGTYPE for another type
//! (`redis-cli --bigkeys` asks it).
//!
//! Effects: a read lookup of the key.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::Value;

/// STRLEN.
#[derive(Debug)]
pub struct StrLen;

impl StrLen {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        match db.get(argv[1]) {
            None => Ok(Reply::Int(0)),
            Some(Value::String(s)) => Ok(Reply::Int(s.len() as i64)),
            Some(_) => Err(Error::WrongType),
        }
    }
}
