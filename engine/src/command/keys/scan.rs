//! `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`: about COUNT keys a call (10 by
//! default), in the order of their hash, and the cursor to go on from (0 once the keyspace is
//! walked); every key held from a scan's first call to its last is returned at least once,
//! whatever is written, deleted or resized in between (`Index::scan` in
//! `engine/src/hash_index.rs`), so a scan of a big keyspace costs each call a little, as
//! Redis's does. A cursor is a point of the hash order: one from another server or database
//! resumes there.
//!
//! Each key visited is matched against MATCH, then deleted if its time has passed (as any
//! lookup would), then matched against TYPE, in Redis's order (`scanCallback` in `db.c`); an
//! unknown TYPE matches no key.
//!
//! Errors, in Redis's order: `ERR invalid cursor` for a cursor that is no unsigned integer;
//! then the options left to right: one without its value or an unknown one is `ERR syntax
//! error`, a COUNT that is no integer is `ERR value is not an integer or out of range`, one
//! below 1 `ERR syntax error`.
//!
//! Effects: the lazy expiry of the keys visited.

use bytes::Bytes;

use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::{Bulks, Reply};

/// COUNT when none is given.
pub(crate) const DEFAULT_COUNT: usize = 10;

/// A SCAN-family cursor: an unsigned integer.
pub(crate) fn parse_cursor(arg: &[u8]) -> Result<u64> {
    std::str::from_utf8(arg)
        .ok()
        .and_then(|c| c.parse::<u64>().ok())
        .ok_or(Error::InvalidCursor)
}

/// A SCAN-family COUNT: an integer, at least 1.
pub(crate) fn parse_count(arg: &[u8]) -> Result<usize> {
    match parse_i64(arg)? {
        n if n < 1 => Err(Error::Syntax),
        n => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A SCAN-family MATCH: none for `*`, which matches everything.
pub(crate) fn pattern_of(arg: &[u8]) -> Option<&[u8]> {
    Some(arg).filter(|p| *p != b"*")
}

/// A SCAN-family reply: the cursor to resume from (0 at the end) and the elements.
pub(crate) fn scan_reply(cursor: u64, items: Reply) -> Reply {
    let cursor = match cursor {
        0 => Reply::bulk_static("0"),
        n => Reply::Bulk(Bytes::from(n.to_string())),
    };
    Reply::Array(vec![cursor, items])
}

/// A parsed SCAN.
#[derive(Debug)]
pub struct Scan<'a> {
    /// Where to resume.
    cursor: u64,
    /// How many keys to visit.
    count: usize,
    /// MATCH's glob.
    pattern: Option<&'a [u8]>,
    /// TYPE's type name, any case.
    kind: Option<&'a [u8]>,
}

impl<'a> Scan<'a> {
    /// Parses `argv`.
    pub fn parse(argv: &[&'a [u8]]) -> Result<Scan<'a>> {
        let mut scan = Scan {
            cursor: parse_cursor(argv[1])?,
            count: DEFAULT_COUNT,
            pattern: None,
            kind: None,
        };
        let mut i = 2;
        while i < argv.len() {
            let Some(&value) = argv.get(i + 1) else {
                return Err(Error::Syntax);
            };
            if is(argv[i], "match") {
                scan.pattern = pattern_of(value);
            } else if is(argv[i], "count") {
                scan.count = parse_count(value)?;
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
    pub fn apply(&self, db: &mut Db) -> Reply {
        let now = db.now_ms();
        let (mut keys, mut expired) = (Bulks::with_capacity(self.count.min(1024) * 24), Vec::new());
        let next = db.values.map.scan(self.cursor, self.count, |entry, at| {
            let key = entry.key.as_bytes();
            if self.pattern.is_some_and(|p| !glob::matches(p, key, false)) {
                return;
            }
            if at.is_some_and(|at| at <= now) {
                expired.push(Bytes::copy_from_slice(key));
            } else if self
                .kind
                .is_none_or(|kind| kind.eq_ignore_ascii_case(entry.value.type_name().as_bytes()))
            {
                keys.push(key);
            }
        });
        // Deleting a key moves another entry in the table, never an index slot's hash bits:
        // the cursor stays good.
        for key in expired {
            db.expire_if_due(&key);
        }
        scan_reply(next, Reply::Bulks(keys))
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(Scan::parse(argv)?.apply(db))
    }
}
