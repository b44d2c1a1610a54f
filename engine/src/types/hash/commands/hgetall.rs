//! `HGETALL key`, `HKEYS key`, `HVALS key` and `HSCAN key cursor [MATCH pattern] [COUNT
//! count] [NOVALUES]`.
//!
//! Fields past their expiry time are skipped (not deleted). HGETALL replies a map (a flat
//! array in RESP2), HKEYS and HVALS an array; a missing key replies empty. Order is the
//! encoding's: insertion order for a listpack, expiry order for a listpackex, the table's for a
//! hashtable.
//!
//! HSCAN: `ERR invalid cursor` first, then a missing key replies `0` and nothing (its options
//! unread, as Redis), then WRONGTYPE, then the options left to right (`ERR syntax error` for
//! an unknown one or COUNT below 1, the integer error for a COUNT that is none). A listpack
//! is returned whole with cursor 0, as Redis does; a table about COUNT fields a call, with the
//! cursor to go on from (`Hash::scan`). Expired fields are left out.
//!
//! Effects: a read lookup of the key.

use crate::command::args::is;
use crate::command::keys::scan::{
    DEFAULT_COUNT, parse_count, parse_cursor, pattern_of, scan_reply,
};
use crate::error::{Error, Result};
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::{Bulks, BulksShape, Reply};
use crate::types::hash::expired;

use super::read_hash;

/// Which parts of each live field a reply holds.
#[derive(Clone, Copy)]
enum Parts {
    Both,
    Fields,
    Values,
}

/// The live fields of the hash under `key`, their values or both, encoded in one buffer.
fn live_bulks(db: &mut Db, key: &[u8], parts: Parts) -> Result<Bulks> {
    db.count_read(key, false);
    let now = db.now_ms();
    let shape = match parts {
        Parts::Both => BulksShape::Map,
        Parts::Fields | Parts::Values => BulksShape::Array,
    };
    let Some(hash) = read_hash(db, key)? else {
        return Ok(Bulks::shaped(shape, 0));
    };
    let mut out = Bulks::shaped(shape, hash.len() * 32);
    for (field, value, ttl) in hash.entries() {
        if expired(ttl, now) {
            continue;
        }
        match parts {
            Parts::Both => {
                out.push(field);
                out.push(value);
            }
            Parts::Fields => out.push(field),
            Parts::Values => out.push(value),
        }
    }
    Ok(out)
}

/// HGETALL, HKEYS and HVALS.
#[derive(Debug)]
pub struct HGetAll;

impl HGetAll {
    /// HGETALL.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        live_bulks(db, argv[1], Parts::Both).map(Reply::Bulks)
    }

    /// HKEYS.
    pub fn run_keys(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        live_bulks(db, argv[1], Parts::Fields).map(Reply::Bulks)
    }

    /// HVALS.
    pub fn run_vals(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        live_bulks(db, argv[1], Parts::Values).map(Reply::Bulks)
    }
}

/// HSCAN, SSCAN and ZSCAN's options.
#[derive(Debug)]
pub(crate) struct ScanOptions<'a> {
    /// MATCH's glob (none for `*`).
    pub(crate) pattern: Option<&'a [u8]>,
    /// NOVALUES was given.
    pub(crate) no_values: bool,
    /// COUNT: how many elements of a big collection a call visits (10 unless given).
    pub(crate) count: usize,
}

/// Parses HSCAN, SSCAN and ZSCAN's options (`hash` says whether NOVALUES is allowed).
pub(crate) fn scan_options<'a>(argv: &[&'a [u8]], hash: bool) -> Result<ScanOptions<'a>> {
    let (mut pattern, mut no_values, mut count) = (None, false, DEFAULT_COUNT);
    let mut i = 3;
    while i < argv.len() {
        let more = argv.len() - i >= 2;
        if is(argv[i], "count") && more {
            count = parse_count(argv[i + 1])?;
            i += 2;
        } else if is(argv[i], "match") && more {
            pattern = pattern_of(argv[i + 1]);
            i += 2;
        } else if is(argv[i], "novalues") {
            if !hash {
                return Err(Error::Text("NOVALUES option can only be used in HSCAN"));
            }
            no_values = true;
            i += 1;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(ScanOptions {
        pattern,
        no_values,
        count,
    })
}

/// HSCAN.
#[derive(Debug)]
pub struct HScan;

impl HScan {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let cursor = parse_cursor(argv[2])?;
        let key = argv[1];
        db.count_read(key, false);
        if read_hash(db, key)?.is_none() {
            return Ok(scan_reply(0, Reply::Array(Vec::new())));
        }
        let options = scan_options(argv, true)?;
        let now = db.now_ms();
        let mut items = Vec::new();
        let mut next = 0;
        if let Some(hash) = read_hash(db, key)? {
            next = hash.scan(cursor, options.count, |(f, v, at)| {
                if expired(at, now) || options.pattern.is_some_and(|p| !glob::matches(p, f, false))
                {
                    return;
                }
                items.push(Reply::bulk(f));
                if !options.no_values {
                    items.push(Reply::bulk(v));
                }
            });
        }
        Ok(scan_reply(next, Reply::Array(items)))
    }
}
