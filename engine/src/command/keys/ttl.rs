//! `TTL key`, `PTTL key` (time left, in rounded seconds or ms), `EXPIRETIME key`,
//! `PEXPIRETIME key` (the Unix time it expires, in seconds or ms): -2 for a missing key, -1
//! for one without expiry. Times are the command's clock snapshot.
//!
//! Effects: a read lookup of the key.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// The TTL family.
#[derive(Debug)]
pub struct Ttl {
    /// In ms (PTTL, PEXPIRETIME), else seconds.
    ms: bool,
    /// The time it expires (EXPIRETIME, PEXPIRETIME), else the time left.
    absolute: bool,
}

impl Ttl {
    /// TTL.
    pub fn run_ttl(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ttl {
            ms: false,
            absolute: false,
        }
        .apply(db, snapshot.now_ms, argv)
    }

    /// PTTL.
    pub fn run_pttl(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ttl {
            ms: true,
            absolute: false,
        }
        .apply(db, snapshot.now_ms, argv)
    }

    /// EXPIRETIME.
    pub fn run_expiretime(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ttl {
            ms: false,
            absolute: true,
        }
        .apply(db, snapshot.now_ms, argv)
    }

    /// PEXPIRETIME.
    pub fn run_pexpiretime(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ttl {
            ms: true,
            absolute: true,
        }
        .apply(db, snapshot.now_ms, argv)
    }

    /// Applies at time `now_ms`.
    pub fn apply(&self, db: &mut Db, now_ms: u64, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        if db.get(argv[1]).is_none() {
            return Ok(Reply::Int(-2));
        }
        let Some(at) = db.expiry(argv[1]) else {
            return Ok(Reply::Int(-1));
        };
        let value = if self.absolute {
            at
        } else {
            at.saturating_sub(now_ms)
        };
        let value = i64::try_from(value).unwrap_or(i64::MAX);
        Ok(Reply::Int(if self.ms {
            value
        } else {
            value.saturating_add(500) / 1000
        }))
    }
}
