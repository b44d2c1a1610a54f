//! `HSET key field value [field value ...]`, `HMSET` (the same, replying OK) and
//! `HSETNX key field value`.
//!
//! Errors, in Redis's order: an odd count of field-value arguments is the arity error; then
//! WRONGTYPE. HSET replies how many fields were new; a field that exists (even one past its
//! expiry time, not yet deleted) is updated and loses its expiry time, as Redis's
//! `hashTypeSet`. A compact hash converts to a table before the write when the fields
//! written would not fit a listpack.
//!
//! Effects as Redis 8.8: the key created if missing (`new`), WATCH touched, `hset` fired, one
//! change per pair, propagated verbatim. HSETNX reads the field first (an expired one is
//! deleted lazily) and does nothing if it is there.

use crate::config::Thresholds;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::HASH;
use crate::reply::Reply;

use super::expiry::{FieldRead, Lazy, read_field};
use super::{hash_or_create, read_hash};

/// HSET and HMSET.
#[derive(Debug)]
pub struct HSet;

impl HSet {
    fn apply(db: &mut Db, lim: &Thresholds, argv: &[&[u8]]) -> Result<i64> {
        if argv.len() % 2 == 1 {
            let name = String::from_utf8_lossy(argv[0]).to_ascii_lowercase();
            return Err(Error::WrongArity(name));
        }
        let key = argv[1];
        let pairs = &argv[2..];
        let hash = hash_or_create(db, key)?;
        hash.prepare_for(pairs.len() / 2, pairs.iter().map(|a| a.len()), lim);
        let mut created = 0;
        for pair in pairs.chunks_exact(2) {
            created += i64::from(!hash.set(pair[0], pair[1], false, lim));
        }
        let fields: Vec<&[u8]> = pairs.chunks_exact(2).map(|p| p[0]).collect();
        db.touch(key);
        db.notify_subkeys(HASH, "hset", key, &fields);
        db.changed(fields.len() as u64, argv);
        Ok(created)
    }

    /// HSET.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HSet::apply(db, &snap.encoding, argv).map(Reply::Int)
    }

    /// HMSET.
    pub fn run_hmset(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HSet::apply(db, &snap.encoding, argv).map(|_| Reply::OK)
    }
}

/// HSETNX.
#[derive(Debug)]
pub struct HSetNx;

impl HSetNx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let lim = &snap.encoding;
        let (key, field, value) = (argv[1], argv[2], argv[3]);
        if read_hash(db, key)?.is_some()
            && matches!(read_field(db, key, field, Lazy::FULL), FieldRead::Found(_))
        {
            return Ok(Reply::Int(0));
        }
        let hash = hash_or_create(db, key)?;
        hash.prepare_for(1, [field.len(), value.len()], lim);
        hash.set(field, value, false, lim);
        db.touch(key);
        db.notify_subkeys(HASH, "hset", key, &[field]);
        db.changed(1, argv);
        Ok(Reply::Int(1))
    }
}
