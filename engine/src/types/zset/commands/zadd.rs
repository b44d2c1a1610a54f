//! `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`,
//! `ZINCRBY key increment member` and `ZREM key member [member ...]`.
//!
//! ZADD checks as Redis's `zaddGenericCommand`: the options, then an even, non-zero count
//! of score-member arguments (`ERR syntax error`), NX with XX, GT/LT with NX or each other,
//! INCR with more than one pair, every score (`ERR value is not a valid float`), then
//! WRONGTYPE. A missing key with XX changes nothing; else the key is created in the encoding
//! `zsetTypeCreate` picks from the pair count and the first member's length, and an existing
//! listpack converts if the pair count passes its limit. A NaN sum refuses the rest with
//! `ERR resulting score is not a number (NaN)` (pairs before it stay applied, as in Redis).
//! Replies: added (or added + changed with CH); INCR the new score, or nil when refused.
//! Effects when something was added or changed: WATCH touched, `zadd` (`zincr` with INCR)
//! fired, one change per member added or changed, propagated verbatim.
//!
//! ZREM: WRONGTYPE; removes until the set is empty; effects when one went: `zrem`, then an
//! emptied set deleted (`del`), one change per member, propagated verbatim.

use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, ZSET as ZSET_EVENTS};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::zset::{AddFlags, Added, ZSet, score};

use super::{read_zset, zset_mut};

/// ZADD and ZINCRBY.
#[derive(Debug)]
pub struct ZAdd;

impl ZAdd {
    /// ZADD.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let mut flags = AddFlags::default();
        let mut ch = false;
        let mut at = 2;
        while at < argv.len() {
            let a = argv[at];
            if is(a, "nx") {
                flags.nx = true;
            } else if is(a, "xx") {
                flags.xx = true;
            } else if is(a, "ch") {
                ch = true;
            } else if is(a, "incr") {
                flags.incr = true;
            } else if is(a, "gt") {
                flags.gt = true;
            } else if is(a, "lt") {
                flags.lt = true;
            } else {
                break;
            }
            at += 1;
        }
        ZAdd::apply(db, snap, argv, at, flags, ch)
    }

    /// ZINCRBY.
    pub fn run_incrby(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let flags = AddFlags {
            incr: true,
            ..AddFlags::default()
        };
        ZAdd::apply(db, snap, argv, 2, flags, false)
    }

    fn apply(
        db: &mut Db,
        snap: &Snapshot,
        argv: &[&[u8]],
        at: usize,
        flags: AddFlags,
        ch: bool,
    ) -> Result<Reply> {
        let rest = &argv[at..];
        if rest.is_empty() || rest.len() % 2 == 1 {
            return Err(Error::Syntax);
        }
        if flags.nx && flags.xx {
            return Err(Error::Text(
                "XX and NX options at the same time are not compatible",
            ));
        }
        if ((flags.gt || flags.lt) && flags.nx) || (flags.gt && flags.lt) {
            return Err(Error::Text(
                "GT, LT, and/or NX options at the same time are not compatible",
            ));
        }
        let pairs = rest.len() / 2;
        if flags.incr && pairs > 1 {
            return Err(Error::Text(
                "INCR option supports a single increment-element pair",
            ));
        }
        let scores: Vec<f64> = rest
            .chunks_exact(2)
            .map(|p| score::parse(p[0]).ok_or(Error::NotAFloat))
            .collect::<Result<_>>()?;
        let key = argv[1];
        let lim = &snap.encoding;
        let none = || {
            if flags.incr {
                Reply::Null
            } else {
                Reply::Int(0)
            }
        };
        match read_zset(db, key)? {
            None if flags.xx => return Ok(none()),
            None => db.insert(
                key,
                Value::ZSet(Box::new(ZSet::create(pairs, rest[1].len(), lim))),
            ),
            Some(_) => {}
        }
        let z = zset_mut(db, key)?.ok_or(Error::NoSuchKey)?;
        z.maybe_convert(pairs, lim);
        let (mut added, mut updated, mut processed) = (0u64, 0u64, 0u64);
        let mut last = None;
        let mut nan = false;
        for (pair, s) in rest.chunks_exact(2).zip(scores) {
            match z.add(s, pair[1], flags, lim) {
                Err(()) => {
                    nan = true;
                    break;
                }
                Ok((what, new)) => {
                    match what {
                        Added::Added => added += 1,
                        Added::Updated => updated += 1,
                        Added::Nop => {}
                    }
                    if new.is_some() {
                        processed += 1;
                        last = new;
                    }
                }
            }
        }
        let emptied = z.is_empty();
        if emptied {
            // Only a refused first insert into a key just created leaves it empty.
            db.remove(key);
        }
        if added + updated > 0 {
            let event = if flags.incr { "zincr" } else { "zadd" };
            db.wrote(key, ZSET_EVENTS, event, added + updated, argv);
        }
        if nan {
            return Err(Error::Text("resulting score is not a number (NaN)"));
        }
        Ok(if flags.incr {
            match (processed, last) {
                (1.., Some(s)) => score::reply(s),
                _ => Reply::Null,
            }
        } else {
            Reply::Int((if ch { added + updated } else { added }) as i64)
        })
    }
}

/// ZREM.
#[derive(Debug)]
pub struct ZRem;

impl ZRem {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let Some(z) = zset_mut(db, key)? else {
            return Ok(Reply::Int(0));
        };
        let mut removed = 0;
        for m in &argv[2..] {
            if z.remove(m) {
                removed += 1;
            }
            if z.is_empty() {
                break;
            }
        }
        if removed > 0 {
            let emptied = z.is_empty();
            if emptied {
                db.remove(key);
            }
            db.wrote(key, ZSET_EVENTS, "zrem", removed, argv);
            if emptied {
                db.notify(GENERIC, "del", key);
            }
        }
        Ok(Reply::Int(removed as i64))
    }
}
