//! `EXISTS key [key ...]`: how many of the keys exist, repeats counted (TOUCH, in `touch.rs`,
//! counts the same way).
//! `TYPE key`: the key's type name, `none` for a missing key.
//!
//! Effects: a read lookup per key (INFO's `keyspace_hits`/`keyspace_misses`, `keymiss`).

use crate::error::Result;
use crate::keyspace::{Db, Snapshot, Value};
use crate::reply::Reply;

/// EXISTS.
#[derive(Debug)]
pub struct Exists;

impl Exists {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let mut found = 0;
        for key in &argv[1..] {
            db.count_read(key, false);
            if db.get(key).is_some() {
                found += 1;
            }
        }
        Ok(Reply::Int(found))
    }
}

/// TYPE.
#[derive(Debug)]
pub struct Type;

impl Type {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        Ok(Reply::Status(
            db.get(argv[1]).map_or("none", Value::type_name),
        ))
    }
}
