//! `LPOP key [count]`, `RPOP key [count]`, `LMPOP numkeys key... LEFT|RIGHT [COUNT count]`.
//!
//! LPOP and RPOP: without a count, the popped element (nil for a missing key); with one, an
//! array of up to that many (a null array for a missing key, an empty array for count 0,
//! which changes nothing). The count must be a non-negative integer ("value is out of range,
//! must be positive"), checked before the key. LMPOP pops from the first non-empty list of its
//! keys and replies `[key, [elements]]`, or a null array if every key is missing; numkeys and
//! COUNT must be positive. Effects: those of [`super::elements_removed`]; LPOP and RPOP
//! propagate verbatim, LMPOP as `LPOP|RPOP key n` with n the elements taken.

use bytes::Bytes;

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::{array, elements_removed, parse_end, pop_elements};

/// LPOP, RPOP, LMPOP.
#[derive(Debug)]
pub struct Pop;

/// What an LMPOP or BLMPOP asks: its keys, the end, how many.
#[derive(Debug)]
pub(crate) struct MPop<'a> {
    pub keys: &'a [&'a [u8]],
    pub front: bool,
    pub count: usize,
}

/// LMPOP's grammar from `numkeys_at` on (BLMPOP's has the timeout before it).
pub(crate) fn parse_mpop<'a>(argv: &'a [&'a [u8]], numkeys_at: usize) -> Result<MPop<'a>> {
    let numkeys = parse_i64(argv[numkeys_at])
        .ok()
        .filter(|&n| n >= 1)
        .ok_or(Error::NumkeysNotPositive)?;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| (numkeys_at + 1).checked_add(n))
        .filter(|&at| at < argv.len())
        .ok_or(Error::Syntax)?;
    let front = parse_end(argv[where_at])?;
    let mut count = None;
    let mut at = where_at + 1;
    while at < argv.len() {
        let more = argv.len() - 1 - at;
        if count.is_none() && argv[at].eq_ignore_ascii_case(b"count") && more > 0 {
            let n = parse_i64(argv[at + 1])
                .ok()
                .filter(|&n| n >= 1)
                .ok_or(Error::CountShouldBePositive)?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            at += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(MPop {
        keys: &argv[numkeys_at + 1..where_at],
        front,
        count: count.unwrap_or(1),
    })
}

/// Pops for LMPOP or BLMPOP: the reply and the key served, or `None` if every key is
/// missing. Propagates `LPOP|RPOP key n`.
pub(crate) fn serve_mpop(
    db: &mut Db,
    snapshot: &Snapshot,
    req: &MPop<'_>,
) -> Result<Option<Reply>> {
    for &key in req.keys {
        let len = match db.list_mut(key)? {
            Some(list) if !list.is_empty() => list.len(),
            _ => continue,
        };
        let elements = pop_elements(db, key, req.front, req.count);
        let n = elements.len();
        elements_removed(db, key, req.front, n, snapshot.list);
        if db.propagating() {
            let name: &'static [u8] = if req.front { b"LPOP" } else { b"RPOP" };
            db.propagate(vec![
                Bytes::from_static(name),
                Bytes::copy_from_slice(key),
                Bytes::from(req.count.min(len).to_string()),
            ]);
        }
        return Ok(Some(Reply::Array(vec![Reply::bulk(key), array(elements)])));
    }
    Ok(None)
}

impl Pop {
    /// LPOP.
    pub fn run_lpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, true)
    }

    /// RPOP.
    pub fn run_rpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, snapshot, argv, false)
    }

    fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]], front: bool) -> Result<Reply> {
        if argv.len() > 3 {
            let name = if front { "lpop" } else { "rpop" };
            return Err(Error::WrongArity(name.to_string()));
        }
        let count = match argv.get(2) {
            Some(arg) => Some(
                parse_i64(arg)
                    .ok()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or(Error::MustBePositive)?,
            ),
            None => None,
        };
        let key = argv[1];
        if db.list_mut(key)?.is_none() {
            return Ok(if count.is_some() {
                Reply::NullArray
            } else {
                Reply::Null
            });
        }
        if count == Some(0) {
            return Ok(Reply::Array(Vec::new()));
        }
        let mut elements = pop_elements(db, key, front, count.unwrap_or(1));
        let n = elements.len();
        elements_removed(db, key, front, n, snapshot.list);
        db.changed(0, argv);
        Ok(match count {
            Some(_) => array(elements),
            None => elements.pop().map_or(Reply::Null, Reply::Bulk),
        })
    }

    /// LMPOP.
    pub fn run_lmpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let req = parse_mpop(argv, 1)?;
        Ok(serve_mpop(db, snapshot, &req)?.unwrap_or(Reply::NullArray))
    }
}
