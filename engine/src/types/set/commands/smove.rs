//! `SMOVE source destination member`: moves a member between sets.
//!
//! A missing source replies 0 before any type check; then WRONGTYPE for either key. With
//! source and destination the same key, replies whether the member is there. Replies 1 when
//! the member was in the source.
//!
//! Effects as Redis 8.8's `smoveCommand`: `srem` on the source (then `del` if emptied), the
//! destination created if missing (`new`), WATCH touched on the source, 1 change; if the member
//! was new to the destination, 1 more change, WATCH touched and `sadd` fired there.
//! Propagated verbatim.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, SET};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::set::Set;

use super::{read_set, set_mut};

/// SMOVE.
#[derive(Debug)]
pub struct SMove;

impl SMove {
    /// Parses and applies.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (src, dst, member) = (argv[1], argv[2], argv[3]);
        if db.get(src).is_none() {
            return Ok(Reply::Int(0));
        }
        read_set(db, src)?;
        let dst_exists = read_set(db, dst)?.is_some();
        if src == dst {
            let is = read_set(db, src)?.is_some_and(|s| s.contains(member));
            return Ok(Reply::Int(i64::from(is)));
        }
        let source = set_mut(db, src)?.ok_or(Error::NoSuchKey)?;
        if !source.remove(member) {
            return Ok(Reply::Int(0));
        }
        let emptied = source.is_empty();
        db.notify(SET, "srem", src);
        if emptied {
            db.remove(src);
            db.notify(GENERIC, "del", src);
        }
        if !dst_exists {
            db.insert(dst, Value::Set(Set::for_members(member, 1, &snap.encoding)));
        }
        db.touch(src);
        let mut dirty = 1;
        let added = set_mut(db, dst)?.is_some_and(|s| s.add(member, &snap.encoding));
        if added {
            dirty += 1;
            db.touch(dst);
            db.notify(SET, "sadd", dst);
        }
        db.changed(dirty, argv);
        Ok(Reply::Int(1))
    }
}
