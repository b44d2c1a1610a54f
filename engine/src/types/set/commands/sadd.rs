//! `SADD key member [member ...]` and `SREM key member [member ...]`.
//!
//! SADD: WRONGTYPE for another type; creates the set in the encoding Redis's `setTypeCreate`
//! picks from the first member and the count, converts an existing one that the count would
//! overflow, and replies how many members were new. Effects when one was: WATCH touched,
//! `sadd` fired, one change per member added, propagated verbatim (the key created fires
//! `new` first).
//!
//! SREM: WRONGTYPE; replies how many it removed, stopping once the set is empty. Effects when
//! one went: WATCH touched, `srem` fired, then the emptied set deleted (`del`), one change per
//! member removed, propagated verbatim.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, SET};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::set::Set;

use super::{read_set, set_mut};

/// SADD.
#[derive(Debug)]
pub struct SAdd;

impl SAdd {
    /// Parses and applies.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let members = &argv[2..];
        let lim = &snap.encoding;
        if read_set(db, key)?.is_none() {
            db.insert(
                key,
                Value::Set(Set::for_members(members[0], members.len(), lim)),
            );
        }
        let set = set_mut(db, key)?.ok_or(Error::NoSuchKey)?;
        set.reserve(members.len(), lim);
        let added = members.iter().filter(|m| set.add(m, lim)).count() as u64;
        if added > 0 {
            db.wrote(key, SET, "sadd", added, argv);
        }
        Ok(Reply::Int(added as i64))
    }
}

/// SREM.
#[derive(Debug)]
pub struct SRem;

impl SRem {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let Some(set) = set_mut(db, key)? else {
            return Ok(Reply::Int(0));
        };
        let mut removed = 0;
        for m in &argv[2..] {
            if set.remove(m) {
                removed += 1;
                if set.is_empty() {
                    break;
                }
            }
        }
        if removed > 0 {
            let emptied = set.is_empty();
            if emptied {
                db.remove(key);
            }
            db.wrote(key, SET, "srem", removed, argv);
            if emptied {
                db.notify(GENERIC, "del", key);
            }
        }
        Ok(Reply::Int(removed as i64))
    }
}
