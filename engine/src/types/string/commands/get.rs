//! `GET key`: the string, nil for a missing key, WRONGTYPE for another type.
//!
//! Effects: a read lookup of the key.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::Value;

/// GET.
#[derive(Debug)]
pub struct Get;

impl Get {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        match db.get(argv[1]) {
            None => Ok(Reply::Null),
            Some(Value::String(s)) => Ok(Reply::Bulk(s.to_bytes())),
            Some(_) => Err(Error::WrongType),
        }
    }
}
