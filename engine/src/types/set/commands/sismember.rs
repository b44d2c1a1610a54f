//! `SCARD key`, `SISMEMBER key member`, `SMISMEMBER key member [member ...]`, `SMEMBERS key`
//! and `SSCAN key cursor [MATCH pattern] [COUNT count]`.
//!
//! WRONGTYPE for another type; a missing key reads as an empty set. SMEMBERS replies a set in
//! the encoding's order (ascending for an intset, insertion order for a listpack). SSCAN
//! checks as HSCAN does (see [`crate::types::hash::commands::hgetall`]; NOVALUES is `ERR
//! NOVALUES option can only be used in HSCAN`) and pages as HSCAN does (`Set::scan`).
//!
//! Effects: a read lookup of the key.

use bytes::Bytes;

use crate::command::keys::scan::{parse_cursor, scan_reply};
use crate::error::Result;
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::{Bulks, BulksShape, Reply};
use crate::types::hash::commands::hgetall::scan_options;

use super::read_set;

/// SCARD.
#[derive(Debug)]
pub struct SCard;

impl SCard {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        Ok(Reply::Int(
            read_set(db, argv[1])?.map_or(0, |s| s.len()) as i64
        ))
    }
}

/// SISMEMBER.
#[derive(Debug)]
pub struct SIsMember;

impl SIsMember {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let is = read_set(db, argv[1])?.is_some_and(|s| s.contains(argv[2]));
        Ok(Reply::Int(i64::from(is)))
    }
}

/// SMISMEMBER.
#[derive(Debug)]
pub struct SMIsMember;

impl SMIsMember {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let set = read_set(db, argv[1])?;
        Ok(Reply::Array(
            argv[2..]
                .iter()
                .map(|m| Reply::Int(i64::from(set.is_some_and(|s| s.contains(m)))))
                .collect(),
        ))
    }
}

/// SMEMBERS.
#[derive(Debug)]
pub struct SMembers;

impl SMembers {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let Some(set) = read_set(db, argv[1])? else {
            return Ok(Reply::Bulks(Bulks::shaped(BulksShape::Set, 0)));
        };
        let mut members = Bulks::shaped(BulksShape::Set, set.len() * 24);
        set.for_each(|m| members.push(m));
        Ok(Reply::Bulks(members))
    }
}

/// SSCAN.
#[derive(Debug)]
pub struct SScan;

impl SScan {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let cursor = parse_cursor(argv[2])?;
        db.count_read(argv[1], false);
        let Some(set) = read_set(db, argv[1])? else {
            return Ok(scan_reply(0, Reply::Array(Vec::new())));
        };
        let options = scan_options(argv, false)?;
        let mut items = Vec::new();
        let next = set.scan(cursor, options.count, |m| {
            if options.pattern.is_none_or(|p| glob::matches(p, m, false)) {
                items.push(Reply::Bulk(Bytes::copy_from_slice(m)));
            }
        });
        Ok(scan_reply(next, Reply::Array(items)))
    }
}
