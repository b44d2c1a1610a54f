//! `LMOVE source destination LEFT|RIGHT LEFT|RIGHT` and `RPOPLPUSH source destination`: pop
//! an element from one end of `source` and push it at an end of `destination` (which may be
//! the same list), replying the element, or nil if `source` is missing.
//!
//! Both ends are checked first (syntax error), then `source`'s type, then `destination`'s.
//! Effects (Redis's `lmoveGenericCommand`): the destination is created if missing (`new`,
//! signalled ready), touched, and fires `lpush` or `rpush`; then the source fires `lpop` or
//! `rpop`, is deleted if emptied (`del`) and touched; 1 change; propagated verbatim.

use bytes::Bytes;

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::LIST;
use crate::reply::Reply;

use super::{elements_removed, parse_end, pop_elements};

/// LMOVE and RPOPLPUSH.
#[derive(Debug)]
pub struct LMove;

/// Moves one element from `src` to `dst`; `None` (nothing changed) if `src` is missing or
/// empty. Does not propagate: the caller does, in its own form.
pub(crate) fn serve_move(
    db: &mut Db,
    snapshot: &Snapshot,
    src: &[u8],
    dst: &[u8],
    from_front: bool,
    to_front: bool,
) -> Result<Option<Bytes>> {
    match db.list_mut(src)? {
        Some(list) if !list.is_empty() => {}
        _ => return Ok(None),
    }
    db.list_mut(dst)?;
    let Some(value) = pop_elements(db, src, from_front, 1).pop() else {
        return Ok(None);
    };
    let list = match db.list_mut(dst)? {
        Some(list) => list,
        None => db.list_create(dst)?,
    };
    list.push(&[&value], to_front, snapshot.list);
    db.touch(dst);
    db.notify(LIST, if to_front { "lpush" } else { "rpush" }, dst);
    elements_removed(db, src, from_front, 1, snapshot.list);
    Ok(Some(value))
}

impl LMove {
    /// LMOVE.
    pub fn run_lmove(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let from_front = parse_end(argv[3])?;
        let to_front = parse_end(argv[4])?;
        let moved = serve_move(db, snapshot, argv[1], argv[2], from_front, to_front)?;
        Ok(Self::reply(db, moved, argv))
    }

    /// RPOPLPUSH.
    pub fn run_rpoplpush(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let moved = serve_move(db, snapshot, argv[1], argv[2], false, true)?;
        Ok(Self::reply(db, moved, argv))
    }

    fn reply(db: &mut Db, moved: Option<Bytes>, argv: &[&[u8]]) -> Reply {
        match moved {
            Some(value) => {
                db.changed(0, argv);
                Reply::Bulk(value)
            }
            None => Reply::Null,
        }
    }
}
