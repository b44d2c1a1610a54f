//! `HTTL key FIELDS numfields field [field ...]`, HPTTL, HEXPIRETIME and HPEXPIRETIME: each
//! field's time to live (seconds, rounded up, or ms) or expiry time (Unix seconds, rounded
//! up, or ms).
//!
//! Errors, in Redis's order: WRONGTYPE, then the FIELDS block (`ERR Mandatory argument FIELDS
//! is missing or not at the right position`, `ERR Number of fields must be a positive
//! integer`, `ERR The `numfields` parameter must match the number of arguments`).
//!
//! Each field replies -2 (missing, or expired: for a listpackex at or before now, for a
//! table strictly before, as Redis's two encodings differ), -1 (no expiry) or the time; a
//! missing key -2 per field.
//!
//! Effects: a read lookup.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::{fields_block, read_hash};

/// HTTL and its family.
#[derive(Debug)]
pub struct HTtl;

impl HTtl {
    fn apply(db: &mut Db, argv: &[&[u8]], unit_ms: u64, relative: bool) -> Result<Reply> {
        let key = argv[1];
        db.count_read(key, false);
        let now = db.now_ms();
        let hash = read_hash(db, key)?;
        let fields = fields_block(argv, 2)?;
        let Some(hash) = hash else {
            return Ok(Reply::Array(vec![Reply::Int(-2); fields.len()]));
        };
        let base = if relative { now } else { 0 };
        let table = hash.is_table();
        let out = fields
            .iter()
            .map(|field| {
                Reply::Int(match hash.get(field) {
                    None => -2,
                    Some((_, None)) => -1,
                    Some((_, Some(at))) if at < now || (at == now && !table) => -2,
                    Some((_, Some(at))) => ((at - base).div_ceil(unit_ms)) as i64,
                })
            })
            .collect();
        Ok(Reply::Array(out))
    }

    /// HTTL.
    pub fn run_httl(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HTtl::apply(db, argv, 1000, true)
    }

    /// HPTTL.
    pub fn run_hpttl(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HTtl::apply(db, argv, 1, true)
    }

    /// HEXPIRETIME.
    pub fn run_hexpiretime(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HTtl::apply(db, argv, 1000, false)
    }

    /// HPEXPIRETIME.
    pub fn run_hpexpiretime(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HTtl::apply(db, argv, 1, false)
    }
}
