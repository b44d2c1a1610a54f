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

use bytes::Bytes;

use crate::command::args::is;
use crate::command::keys::scan::{
    DEFAULT_COUNT, parse_count, parse_cursor, pattern_of, scan_reply,
};
use crate::error::{Error, Result};
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::hash::expired;

use super::read_hash;

/// The live fields of the hash under `key` with their values.
fn live_pairs(db: &mut Db, key: &[u8]) -> Result<Vec<(Bytes, Bytes)>> {
    db.count_read(key, false);
    let now = db.now_ms();
    Ok(read_hash(db, key)?.map_or_else(Vec::new, |h| {
        h.entries()
            .filter(|e| !expired(e.2, now))
            .map(|(f, v, _)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
            .collect()
    }))
}

/// HGETALL, HKEYS and HVALS.
#[derive(Debug)]
pub struct HGetAll;

impl HGetAll {
    /// HGETALL.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let pairs = live_pairs(db, argv[1])?;
        Ok(Reply::Map(
            pairs
                .into_iter()
                .map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v)))
                .collect(),
        ))
    }

    /// HKEYS.
    pub fn run_keys(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let pairs = live_pairs(db, argv[1])?;
        Ok(Reply::Array(
            pairs.into_iter().map(|(f, _)| Reply::Bulk(f)).collect(),
        ))
    }

    /// HVALS.
    pub fn run_vals(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let pairs = live_pairs(db, argv[1])?;
        Ok(Reply::Array(
            pairs.into_iter().map(|(_, v)| Reply::Bulk(v)).collect(),
        ))
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
