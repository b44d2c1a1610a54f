//! `INCR key`, `DECR key`, `INCRBY key increment`, `DECRBY key decrement`: adds to the
//! integer the string holds (a missing key counts as 0) and replies the result. Errors,
//! checked in Redis's order: the increment not an integer (`ERR value is not an integer or
//! out of range`), DECRBY of `i64::MIN` (`ERR decrement would overflow`), WRONGTYPE for
//! another type, a string that is not a 64-bit integer (`ERR value is not an integer or out
//! of range`), `ERR increment or decrement would overflow` past `i64`; nothing changes on an
//! error.
//!
//! Effects as Redis 8.8's `incrDecrCommand`: the value replaced in place (its expiry kept; a
//! new key fires `new`), WATCH touched, `incrby` fired (for all four), 1 change counted,
//! propagated verbatim.

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// INCR, DECR, INCRBY and DECRBY.
#[derive(Debug)]
pub struct Incr;

impl Incr {
    /// INCR: parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Incr::apply(db, argv, 1)
    }

    /// DECR: parses and applies.
    pub fn run_decr(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Incr::apply(db, argv, -1)
    }

    /// INCRBY: parses and applies.
    pub fn run_by(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let by = parse_i64(argv[2])?;
        Incr::apply(db, argv, by)
    }

    /// DECRBY: parses and applies.
    pub fn run_decr_by(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let by = parse_i64(argv[2])?;
        let by = by.checked_neg().ok_or(Error::DecrOverflow)?;
        Incr::apply(db, argv, by)
    }

    /// Adds `by` to the integer at `argv[1]`.
    fn apply(db: &mut Db, argv: &[&[u8]], by: i64) -> Result<Reply> {
        let key = argv[1];
        let current = match db.get(key) {
            None => 0,
            Some(Value::String(s)) => match s.as_int() {
                Some(n) => n,
                None => parse_i64(&s.bytes())?,
            },
            Some(_) => return Err(Error::WrongType),
        };
        let next = current.checked_add(by).ok_or(Error::IncrOverflow)?;
        db.replace_value(key, Value::String(StringValue::from_int(next)));
        db.wrote(key, STRING, "incrby", 1, argv);
        Ok(Reply::Int(next))
    }
}
