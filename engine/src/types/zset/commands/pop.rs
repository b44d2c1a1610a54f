//! `ZPOPMIN|ZPOPMAX key [count]`, `ZMPOP numkeys key... MIN|MAX [COUNT count]`,
//! `BZPOPMIN|BZPOPMAX key... timeout` and `BZMPOP timeout numkeys key... MIN|MAX [COUNT
//! count]`.
//!
//! ZPOPMIN/ZPOPMAX: more than one count argument is `ERR syntax error`; the count must be a
//! non-negative integer (`ERR value is out of range, must be positive`). Without a count,
//! `[member, score]` (empty for a missing key); with one, up to that many pairs, flat in
//! RESP2 and nested in RESP3. ZMPOP checks numkeys (`ERR numkeys should be greater than
//! 0`), MIN|MAX, COUNT (`ERR count should be greater than 0`), then the keys: the first
//! non-empty set is popped, `[key, [[member, score], ...]]`, a null array when none.
//!
//! Effects as Redis's `genericZpopCommand`: `zpopmin|zpopmax` fired once, one change per
//! member, WATCH touched, an emptied set deleted (`del`). ZPOPMIN/ZPOPMAX propagate verbatim;
//! ZMPOP and the blocking forms as `ZPOPMIN|ZPOPMAX key [n]`.
//!
//! The blocking forms check their timeout (after BZMPOP's grammar), serve at once when a key
//! holds members, else block on the keys until the deadline (re-run when a sorted set is
//! created under one); where blocking is not allowed, or on timeout, a null array.

use bytes::Bytes;

use crate::blocking::{BlockRequest, Outcome};
use crate::command::args::{is, parse_i64};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, ZSET as ZSET_EVENTS};
use crate::reply::Reply;
use crate::types::list::commands::blocking::parse_timeout;
use crate::types::zset::{Entry, score};

use super::{read_zset, resp3, zset_mut};

/// Pops up to `count` entries of `key` (known to hold a non-empty set) from the low end
/// (`max` false) or the high end, with the effects of the module doc (no propagation).
fn pop_entries(db: &mut Db, key: &[u8], max: bool, count: usize) -> Vec<Entry> {
    let Ok(Some(z)) = zset_mut(db, key) else {
        return Vec::new();
    };
    let len = z.len();
    let n = count.min(len);
    let taken = if max {
        let mut v = z.remove_ranks(len - n, len - 1);
        v.reverse();
        v
    } else {
        z.remove_ranks(0, n.saturating_sub(1))
    };
    let emptied = z.is_empty();
    db.add_dirty(taken.len() as u64);
    db.notify(ZSET_EVENTS, if max { "zpopmax" } else { "zpopmin" }, key);
    if emptied {
        db.remove(key);
        db.notify(GENERIC, "del", key);
    }
    db.touch(key);
    taken
}

fn pairs(entries: Vec<Entry>, nested: bool) -> Vec<Reply> {
    let mut out = Vec::with_capacity(entries.len() * 2);
    for e in entries {
        if nested {
            out.push(Reply::Array(vec![
                Reply::Bulk(e.member),
                score::reply(e.score),
            ]));
        } else {
            out.push(Reply::Bulk(e.member));
            out.push(score::reply(e.score));
        }
    }
    out
}

fn propagate_pop(db: &mut Db, key: &[u8], max: bool, count: Option<usize>) {
    if db.propagating() {
        let name: &'static [u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
        let mut form = vec![Bytes::from_static(name), Bytes::copy_from_slice(key)];
        if let Some(n) = count {
            form.push(Bytes::from(n.to_string()));
        }
        db.propagate(form);
    }
}

/// ZMPOP's grammar from `numkeys_at` on: the keys, MAX, the count.
fn parse_mpop<'a>(
    argv: &'a [&'a [u8]],
    numkeys_at: usize,
) -> Result<(&'a [&'a [u8]], bool, usize)> {
    let numkeys = parse_i64(argv[numkeys_at])
        .ok()
        .filter(|&n| n >= 1)
        .ok_or(Error::NumkeysNotPositive)?;
    let where_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| (numkeys_at + 1).checked_add(n))
        .filter(|&at| at < argv.len())
        .ok_or(Error::Syntax)?;
    let max = if is(argv[where_at], "min") {
        false
    } else if is(argv[where_at], "max") {
        true
    } else {
        return Err(Error::Syntax);
    };
    let mut count = None;
    let mut at = where_at + 1;
    while at < argv.len() {
        let more = argv.len() - 1 - at;
        if count.is_none() && is(argv[at], "count") && more > 0 {
            let n = parse_i64(argv[at + 1])
                .ok()
                .filter(|&n| n >= 1)
                .ok_or(Error::Text("count should be greater than 0"))?;
            count = Some(usize::try_from(n).unwrap_or(usize::MAX));
            at += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok((&argv[numkeys_at + 1..where_at], max, count.unwrap_or(1)))
}

/// The first key of `keys` holding a non-empty set; WRONGTYPE stops the walk.
fn first_ready<'a>(db: &Db, keys: &[&'a [u8]]) -> Result<Option<&'a [u8]>> {
    for &key in keys {
        if read_zset(db, key)?.is_some_and(|z| !z.is_empty()) {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

/// Serves ZMPOP/BZMPOP from the first ready key: `[key, [[member, score], ...]]`.
fn serve_mpop(db: &mut Db, keys: &[&[u8]], max: bool, count: usize) -> Result<Option<Reply>> {
    let Some(key) = first_ready(db, keys)? else {
        return Ok(None);
    };
    let taken = pop_entries(db, key, max, count);
    propagate_pop(db, key, max, Some(taken.len()));
    Ok(Some(Reply::Array(vec![
        Reply::bulk(key),
        Reply::Array(pairs(taken, true)),
    ])))
}

/// ZPOPMIN, ZPOPMAX, ZMPOP and the blocking forms.
#[derive(Debug)]
pub struct ZPop;

impl ZPop {
    /// ZPOPMIN.
    pub fn run_zpopmin(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZPop::pop(db, snap, argv, false)
    }

    /// ZPOPMAX.
    pub fn run_zpopmax(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZPop::pop(db, snap, argv, true)
    }

    fn pop(db: &mut Db, snap: &Snapshot, argv: &[&[u8]], max: bool) -> Result<Reply> {
        if argv.len() > 3 {
            return Err(Error::Syntax);
        }
        let count = match argv.get(2) {
            Some(a) => Some(
                parse_i64(a)
                    .ok()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or(Error::MustBePositive)?,
            ),
            None => None,
        };
        let key = argv[1];
        match read_zset(db, key)? {
            None => return Ok(Reply::Array(Vec::new())),
            Some(_) if count == Some(0) => return Ok(Reply::Array(Vec::new())),
            Some(_) => {}
        }
        let taken = pop_entries(db, key, max, count.unwrap_or(1));
        db.changed(0, argv);
        Ok(Reply::Array(pairs(taken, count.is_some() && resp3(snap))))
    }

    /// ZMPOP.
    pub fn run_zmpop(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (keys, max, count) = parse_mpop(argv, 1)?;
        Ok(serve_mpop(db, keys, max, count)?.unwrap_or(Reply::NullArray))
    }

    /// BZPOPMIN.
    pub fn run_bzpopmin(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        ZPop::bpop(db, snap, argv, false)
    }

    /// BZPOPMAX.
    pub fn run_bzpopmax(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        ZPop::bpop(db, snap, argv, true)
    }

    fn bpop(db: &mut Db, snap: &Snapshot, argv: &[&[u8]], max: bool) -> Result<Outcome> {
        let deadline = parse_timeout(argv[argv.len() - 1], snap.now_ms)?;
        let keys = &argv[1..argv.len() - 1];
        if let Some(key) = first_ready(db, keys)? {
            let taken = pop_entries(db, key, max, 1);
            propagate_pop(db, key, max, None);
            let mut out = vec![Reply::bulk(key)];
            out.extend(pairs(taken, false));
            return Ok(Outcome::Reply(Reply::Array(out)));
        }
        Ok(block(snap, argv, keys, deadline))
    }

    /// BZMPOP.
    pub fn run_bzmpop(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        let (keys, max, count) = parse_mpop(argv, 2)?;
        let deadline = parse_timeout(argv[1], snap.now_ms)?;
        if let Some(reply) = serve_mpop(db, keys, max, count)? {
            return Ok(Outcome::Reply(reply));
        }
        Ok(block(snap, argv, keys, deadline))
    }
}

/// The request to block on `keys` (each once) until `deadline_ms`.
fn block(snap: &Snapshot, argv: &[&[u8]], keys: &[&[u8]], deadline_ms: Option<u64>) -> Outcome {
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
        protocol: snap.protocol,
        key_type: Some("zset"),
        denied_reply: None,
    })
}
