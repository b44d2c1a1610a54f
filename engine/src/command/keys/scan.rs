//! `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`: one pass returns every match with
//! cursor 0, which SCAN's guarantees allow (every key present for the whole scan is returned
//! at least once).
//!
//! Errors, in Redis's order: `ERR invalid cursor` for a cursor that is no unsigned integer;
//! then the options left to right: one without its value or an unknown one is `ERR syntax
//! error`, a COUNT that is no integer is `ERR value is not an integer or out of range`, one
//! below 1 `ERR syntax error`.
//!
//! Effects: none.

use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// A parsed SCAN.
#[derive(Debug, Default)]
pub struct Scan<'a> {
    /// MATCH's glob.
    pattern: Option<&'a [u8]>,
    /// TYPE's type name, any case.
    kind: Option<&'a [u8]>,
}

impl<'a> Scan<'a> {
    /// Parses `argv`.
    pub fn parse(argv: &[&'a [u8]]) -> Result<Scan<'a>> {
        if std::str::from_utf8(argv[1])
            .ok()
            .and_then(|c| c.parse::<u64>().ok())
            .is_none()
        {
            return Err(Error::InvalidCursor);
        }
        let mut scan = Scan::default();
        let mut i = 2;
        while i < argv.len() {
            let Some(&value) = argv.get(i + 1) else {
                return Err(Error::Syntax);
            };
            if is(argv[i], "match") {
                scan.pattern = Some(value);
            } else if is(argv[i], "count") {
                if parse_i64(value)? < 1 {
                    return Err(Error::Syntax);
                }
            } else if is(argv[i], "type") {
                scan.kind = Some(value);
            } else {
                return Err(Error::Syntax);
            }
            i += 2;
        }
        Ok(scan)
    }

    /// Applies to `db`.
    pub fn apply(&self, db: &Db) -> Reply {
        let keys = db
            .keys()
            .filter(|k| self.pattern.is_none_or(|p| glob::matches(p, k, false)))
            .filter(|k| {
                self.kind.is_none_or(|t| {
                    db.get(k)
                        .is_some_and(|v| t.eq_ignore_ascii_case(v.type_name().as_bytes()))
                })
            })
            .map(|k| Reply::Bulk(bytes::Bytes::copy_from_slice(k)))
            .collect();
        Reply::Array(vec![Reply::bulk_static("0"), Reply::Array(keys)])
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(Scan::parse(argv)?.apply(db))
    }
}
