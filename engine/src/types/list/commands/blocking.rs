//! `BLPOP key... timeout`, `BRPOP key... timeout`, `BLMPOP timeout numkeys key...
//! LEFT|RIGHT [COUNT count]`, `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout`,
//! `BRPOPLPUSH source destination timeout`.
//!
//! Each first does what its non-blocking form does; when nothing can be served it asks to
//! block ([`Outcome::Block`]) on its keys until the deadline (timeout in seconds, a float; 0
//! waits forever), to be re-run by the keyspace's blocking service when a key it waits on is
//! signalled ready (a list created under it: LPUSH, RPUSH, LMOVE, RENAME, RESTORE) and holds a
//! list, in the order the clients blocked. Where blocking is not allowed (MULTI/EXEC) the
//! pops reply a null array and BLMOVE/BRPOPLPUSH nil; a timeout replies a null array.
//!
//! The timeout is checked first (after BLMOVE's ends and BLMPOP's grammar), with Redis's
//! errors: "timeout is not a float or out of range", "timeout is negative", "timeout is out
//! of range". A served pop propagates as `LPOP|RPOP key` (BLMPOP: `LPOP|RPOP key n`), a
//! served move as LMOVE or RPOPLPUSH, never as the blocking command.

use bytes::Bytes;

use crate::blocking::{BlockRequest, Outcome};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::lmove::serve_move;
use super::pop::{parse_mpop, serve_mpop};
use super::{elements_removed, parse_end, pop_elements};

/// BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH.
#[derive(Debug)]
pub struct BlockingPop;

/// A timeout in seconds (`getTimeoutFromObjectOrReply` with seconds): the deadline by the
/// clock, `None` for 0 (forever).
pub(crate) fn parse_timeout(arg: &[u8], now_ms: u64) -> Result<Option<u64>> {
    let text = std::str::from_utf8(arg).map_err(|_| Error::TimeoutNotFloat)?;
    let first_ok = text
        .bytes()
        .next()
        .is_some_and(|b| !b.is_ascii_whitespace());
    let seconds: f64 = text
        .parse()
        .ok()
        .filter(|v: &f64| first_ok && !v.is_nan())
        .ok_or(Error::TimeoutNotFloat)?;
    let ms = seconds * 1000.0;
    if ms > i64::MAX as f64 {
        return Err(Error::TimeoutOutOfRange);
    }
    let ms = ms.ceil() as i64;
    if ms < 0 {
        return Err(Error::TimeoutNegative);
    }
    if ms == 0 {
        return Ok(None);
    }
    let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
    if ms > i64::MAX - now {
        return Err(Error::TimeoutOutOfRange);
    }
    Ok(Some(now_ms.saturating_add(ms as u64)))
}

/// The request to block on `keys` (each once) until `deadline_ms`.
fn block(
    snapshot: &Snapshot,
    argv: &[&[u8]],
    keys: &[&[u8]],
    deadline_ms: Option<u64>,
    denied: Option<Reply>,
) -> Outcome {
    let mut block_keys: Vec<Bytes> = Vec::with_capacity(keys.len());
    for &key in keys {
        if !block_keys.iter().any(|k| k == key) {
            block_keys.push(Bytes::copy_from_slice(key));
        }
    }
    Outcome::Block(BlockRequest {
        argv: argv.iter().map(|a| Bytes::copy_from_slice(a)).collect(),
        keys: block_keys,
        deadline_ms,
        wake_on_delete: false,
        claim_wake_ms: None,
        protocol: snapshot.protocol,
        key_type: Some("list"),
        denied_reply: denied,
    })
}

impl BlockingPop {
    /// BLPOP.
    pub fn run_blpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        Self::run_pop(db, snapshot, argv, true)
    }

    /// BRPOP.
    pub fn run_brpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        Self::run_pop(db, snapshot, argv, false)
    }

    fn run_pop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]], front: bool) -> Result<Outcome> {
        let deadline = parse_timeout(argv[argv.len() - 1], snapshot.now_ms)?;
        let keys = &argv[1..argv.len() - 1];
        for &key in keys {
            match db.list_mut(key)? {
                Some(list) if !list.is_empty() => {}
                _ => continue,
            }
            let Some(value) = pop_elements(db, key, front, 1).pop() else {
                continue;
            };
            elements_removed(db, key, front, 1, snapshot.list);
            if db.propagating() {
                let name: &'static [u8] = if front { b"LPOP" } else { b"RPOP" };
                db.propagate(vec![Bytes::from_static(name), Bytes::copy_from_slice(key)]);
            }
            return Ok(Outcome::Reply(Reply::Array(vec![
                Reply::bulk(key),
                Reply::Bulk(value),
            ])));
        }
        Ok(block(snapshot, argv, keys, deadline, None))
    }

    /// BLMPOP.
    pub fn run_blmpop(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        let req = parse_mpop(argv, 2)?;
        let deadline = parse_timeout(argv[1], snapshot.now_ms)?;
        if let Some(reply) = serve_mpop(db, snapshot, &req)? {
            return Ok(Outcome::Reply(reply));
        }
        Ok(block(snapshot, argv, req.keys, deadline, None))
    }

    /// BLMOVE.
    pub fn run_blmove(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        let from_front = parse_end(argv[3])?;
        let to_front = parse_end(argv[4])?;
        let deadline = parse_timeout(argv[5], snapshot.now_ms)?;
        Self::run_move(
            db,
            snapshot,
            argv,
            from_front,
            to_front,
            deadline,
            &argv[..5],
        )
    }

    /// BRPOPLPUSH.
    pub fn run_brpoplpush(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        let deadline = parse_timeout(argv[3], snapshot.now_ms)?;
        Self::run_move(db, snapshot, argv, false, true, deadline, &argv[..3])
    }

    fn run_move(
        db: &mut Db,
        snapshot: &Snapshot,
        argv: &[&[u8]],
        from_front: bool,
        to_front: bool,
        deadline: Option<u64>,
        propagated: &[&[u8]],
    ) -> Result<Outcome> {
        let (src, dst) = (argv[1], argv[2]);
        if db.list_mut(src)?.is_none() {
            return Ok(block(snapshot, argv, &[src], deadline, Some(Reply::Null)));
        }
        let Some(value) = serve_move(db, snapshot, src, dst, from_front, to_front)? else {
            return Ok(Outcome::Reply(Reply::Null));
        };
        if db.propagating() {
            let name: &'static [u8] = if propagated.len() == 5 {
                b"LMOVE"
            } else {
                b"RPOPLPUSH"
            };
            let mut form = vec![Bytes::from_static(name)];
            form.extend(propagated[1..].iter().map(|a| Bytes::copy_from_slice(a)));
            db.propagate(form);
        }
        Ok(Outcome::Reply(Reply::Bulk(value)))
    }
}
