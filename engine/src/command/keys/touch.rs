//! `TOUCH key [key ...]`: how many of the keys exist, repeats counted; each found key's access
//! metadata moves as on any read (the key lookup before the command does it, even for a
//! CLIENT NO-TOUCH caller). `RANDOMKEY`: a uniformly random key, nil when there is none.
//!
//! Effects: TOUCH counts a read lookup per key (`keyspace_hits`/`keyspace_misses`,
//! `keymiss`). RANDOMKEY deletes (as lazy expiry, `expired` and a propagated DEL) every
//! expired key it draws before drawing again, as Redis's `dbRandomKey`; it never moves access
//! metadata.

use bytes::Bytes;

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// TOUCH.
#[derive(Debug)]
pub struct Touch;

impl Touch {
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

/// RANDOMKEY.
#[derive(Debug)]
pub struct RandomKey;

impl RandomKey {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, _: &[&[u8]]) -> Result<Reply> {
        Ok(db.random_key().map_or(Reply::Null, Reply::Bulk))
    }
}

impl Db {
    /// A uniformly random live key; expired keys drawn on the way are deleted (each an
    /// expiry with its effects), so this ends: every draw either returns or removes a key.
    pub fn random_key(&mut self) -> Option<Bytes> {
        loop {
            let random = self.values.random();
            let pos = self.values.map.random_pos(random)?;
            let key = Bytes::copy_from_slice(&self.values.map.entry(pos).key);
            if !self.expire_if_due(&key) {
                return Some(key);
            }
        }
    }
}
