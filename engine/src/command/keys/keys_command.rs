//! `KEYS pattern`: every live key matching the glob `pattern` ([`crate::glob`]), in the map's
//! order.
//!
//! Effects: none.

use crate::error::Result;
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// KEYS.
#[derive(Debug)]
pub struct Keys;

impl Keys {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let pattern = argv[1];
        let all = pattern == b"*";
        Ok(Reply::Array(
            db.keys()
                .filter(|k| all || glob::matches(pattern, k, false))
                .map(|k| Reply::Bulk(bytes::Bytes::copy_from_slice(k)))
                .collect(),
        ))
    }
}
