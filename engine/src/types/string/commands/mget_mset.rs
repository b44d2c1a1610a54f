//! `MGET key [key ...]`, `MSET key value [key value ...]`, `MSETNX key value [key value ...]`.
//!
//! - MGET replies each key's string, nil for a missing key or another type (never
//!   WRONGTYPE); a read lookup per key.
//! - MSET stores every pair left to right as SET does (`new` or `overwritten`, the expiry
//!   cleared, `set` fired per key), replies OK, counts one change per pair and propagates
//!   verbatim. An odd number of arguments is `ERR wrong number of arguments for 'mset'
//!   command`, nothing stored.
//! - MSETNX stores nothing and replies 0 when any key exists; otherwise as MSET, replying 1.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// MGET.
#[derive(Debug)]
pub struct MGet;

impl MGet {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let mut replies = Vec::with_capacity(argv.len() - 1);
        for key in &argv[1..] {
            db.count_read(key, false);
            replies.push(match db.get(key) {
                Some(Value::String(s)) => Reply::Bulk(s.to_bytes()),
                _ => Reply::Null,
            });
        }
        Ok(Reply::Array(replies))
    }
}

/// MSET and MSETNX.
#[derive(Debug)]
pub struct MSet;

impl MSet {
    /// MSET: parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        MSet::apply(db, argv, false)
    }

    /// MSETNX: parses and applies.
    pub fn run_nx(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        MSet::apply(db, argv, true)
    }

    fn apply(db: &mut Db, argv: &[&[u8]], nx: bool) -> Result<Reply> {
        if argv.len() % 2 == 0 {
            let name = if nx { "msetnx" } else { "mset" };
            return Err(Error::WrongArity(name.to_owned()));
        }
        let pairs = argv[1..].chunks_exact(2);
        if nx && pairs.clone().any(|pair| db.get(pair[0]).is_some()) {
            return Ok(Reply::Int(0));
        }
        for pair in pairs {
            db.insert(pair[0], Value::String(StringValue::from_arg(pair[1])));
            db.notify(STRING, "set", pair[0]);
        }
        db.changed((argv.len() as u64 - 1) / 2, argv);
        Ok(if nx { Reply::Int(1) } else { Reply::OK })
    }
}
