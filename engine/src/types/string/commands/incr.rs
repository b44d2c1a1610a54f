//! `INCR key`: adds 1 to the integer the string holds (a missing key counts as 0) and replies
//! the result. Errors, checked in Redis's order: WRONGTYPE for another type, `ERR value is not
//! an integer or out of range` for a string that is not a 64-bit integer, `ERR increment or
//! decrement would overflow` past `i64::MAX`; nothing changes on an error.
//!
//! Effects as Redis 8.8's `incrDecrCommand`: the value replaced in place (its expiry kept; a
//! new key fires `new`), WATCH touched, `incrby` fired, 1 change counted, propagated verbatim.

use bytes::Bytes;

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;

/// INCR.
#[derive(Debug)]
pub struct Incr;

impl Incr {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let current = match db.get(key) {
            None => 0,
            Some(Value::String(s)) => parse_i64(s)?,
            Some(_) => return Err(Error::WrongType),
        };
        let next = current.checked_add(1).ok_or(Error::IncrOverflow)?;
        db.replace_value(key, Value::String(Bytes::from(next.to_string())));
        db.wrote(key, STRING, "incrby", 1, argv);
        Ok(Reply::Int(next))
    }
}
