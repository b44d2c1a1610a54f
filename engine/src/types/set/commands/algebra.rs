//! `SINTER key [key ...]`, `SINTERSTORE destination key [key ...]`, `SINTERCARD numkeys key
//! [key ...] [LIMIT limit]`, `SUNION`, `SUNIONSTORE`, `SDIFF` and `SDIFFSTORE`.
//!
//! Every source key is looked up for reading in order, WRONGTYPE at the first of another type
//! (after the earlier ones were counted); a missing key is an empty set. SINTER with a
//! missing key replies empty at once. SINTERCARD checks first: numkeys (`ERR numkeys should
//! be greater than 0`), `ERR Number of keys can't be greater than number of args`, then
//! `LIMIT` (`ERR LIMIT can't be negative`) or `ERR syntax error`.
//!
//! SINTER walks the smallest set (the first of the smallest, Redis sorting by size), so the
//! reply follows its order; SUNION and SDIFF of intsets reply ascending, of other encodings in
//! a table's order, as Redis builds a table for them.
//!
//! The STORE forms (as Redis 8.8's `sinterGenericCommand` and `sunionDiffGenericCommand`):
//! a non-empty result replaces the destination (`new` or `overwritten`, its expiry cleared),
//! fires `sinterstore` / `sunionstore` / `sdiffstore` and counts 1 change; an empty one
//! deletes an existing destination (WATCH touched, `del`, 1 change). Propagated verbatim
//! when something changed. The result's encoding is Redis's: an intset while every member is
//! an integer and they fit, else a listpack or table by size.

use std::ops::ControlFlow;

use bytes::Bytes;

use crate::command::args::is;
use crate::command::parse_i64;
use crate::config::Thresholds;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, SET};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::set::{Set, as_int};

use super::{read_set, set_reply};

/// Looks the source keys up for reading, in order: each counted, WRONGTYPE at the first of
/// another type.
fn look_up(db: &mut Db, keys: &[&[u8]]) -> Result<()> {
    for key in keys {
        db.count_read(key, false);
        read_set(db, key)?;
    }
    Ok(())
}

/// The source sets after [`look_up`] (`None` for a missing key), read where they are.
fn sources<'a>(db: &'a Db, keys: &[&[u8]]) -> Vec<Option<&'a Set>> {
    keys.iter()
        .map(|key| read_set(db, key).ok().flatten())
        .collect()
}

/// The intersection, in the order of the smallest set, and that set; `limit` stops early
/// (0: none).
fn intersection<'a>(sets: &[Option<&'a Set>], limit: usize) -> Option<(Vec<Bytes>, &'a Set)> {
    let mut present: Vec<&Set> = sets.iter().copied().collect::<Option<_>>()?;
    present.sort_by_key(|s| s.len());
    let first = present[0];
    let mut out = Vec::new();
    first.try_for_each(|m| {
        if present[1..].iter().all(|s| s.contains(m)) {
            out.push(Bytes::copy_from_slice(m));
            if limit != 0 && out.len() >= limit {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    Some((out, first))
}

/// Stores `result` under `dst` as the STORE forms do; returns the reply.
fn store(db: &mut Db, dst: &[u8], result: Set, event: &'static str, argv: &[&[u8]]) -> Reply {
    let len = result.len();
    if len > 0 {
        db.insert(dst, Value::Set(result));
        db.notify(SET, event, dst);
        db.changed(1, argv);
    } else if db.remove(dst).is_some() {
        db.notify(GENERIC, "del", dst);
        db.changed(1, argv);
    }
    Reply::Int(len as i64)
}

/// Builds a set from `members` starting from `start`, made an intset if every member is an
/// integer (Redis's `maybeConvertToIntset` after SINTERSTORE).
fn build(mut start: Set, members: &[Bytes], lim: &Thresholds) -> Set {
    let integers = members.iter().all(|m| as_int(m).is_some());
    for m in members {
        start.add(m, lim);
    }
    if integers {
        start.maybe_to_intset(lim);
    }
    start
}

/// The union or difference of `sets`.
fn union_or_diff(
    sets: &[Option<&Set>],
    keys: &[&[u8]],
    diff: bool,
    start: Set,
    lim: &Thresholds,
) -> Set {
    let mut out = start;
    if !diff {
        for s in sets.iter().flatten() {
            s.for_each(|m| {
                out.add(m, lim);
            });
        }
        return out;
    }
    let Some(first) = sets[0] else {
        return out;
    };
    if keys[1..].contains(&keys[0]) {
        return out;
    }
    first.for_each(|m| {
        if !sets[1..].iter().flatten().any(|s| s.contains(m)) {
            out.add(m, lim);
        }
    });
    out
}

/// The set algebra commands.
#[derive(Debug)]
pub struct SAlgebra;

impl SAlgebra {
    /// SINTER.
    pub fn run_inter(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        look_up(db, &argv[1..])?;
        let sets = sources(db, &argv[1..]);
        Ok(set_reply(
            intersection(&sets, 0).map_or_else(Vec::new, |r| r.0),
        ))
    }

    /// SINTERSTORE.
    pub fn run_interstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        look_up(db, &argv[2..])?;
        let sets = sources(db, &argv[2..]);
        let result = match intersection(&sets, 0) {
            None => Set::new_intset(),
            Some((members, first)) => {
                let start = if first.is_intset() {
                    Set::new_intset()
                } else {
                    Set::new_listpack()
                };
                build(start, &members, &snap.encoding)
            }
        };
        Ok(store(db, argv[1], result, "sinterstore", argv))
    }

    /// SINTERCARD.
    pub fn run_intercard(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let bad = Error::Text("numkeys should be greater than 0");
        let n = parse_i64(argv[1]).map_err(|_| bad.clone())?;
        if n < 1 {
            return Err(bad);
        }
        if n > (argv.len() - 2) as i64 {
            return Err(Error::Text(
                "Number of keys can't be greater than number of args",
            ));
        }
        let n = n as usize;
        let mut limit = 0;
        let mut i = 2 + n;
        while i < argv.len() {
            if is(argv[i], "limit") && i + 1 < argv.len() {
                let bad = Error::Text("LIMIT can't be negative");
                limit = usize::try_from(parse_i64(argv[i + 1]).map_err(|_| bad.clone())?)
                    .map_err(|_| bad)?;
                i += 2;
            } else {
                return Err(Error::Syntax);
            }
        }
        look_up(db, &argv[2..2 + n])?;
        let sets = sources(db, &argv[2..2 + n]);
        Ok(Reply::Int(
            intersection(&sets, limit).map_or(0, |r| r.0.len()) as i64,
        ))
    }

    fn read(db: &mut Db, lim: &Thresholds, argv: &[&[u8]], diff: bool) -> Result<Reply> {
        let keys = &argv[1..];
        look_up(db, keys)?;
        let sets = sources(db, keys);
        let all_intsets = sets.iter().flatten().all(|s| s.is_intset());
        let start = if all_intsets {
            Set::new_intset()
        } else {
            Set::new_table()
        };
        Ok(set_reply(
            union_or_diff(&sets, keys, diff, start, lim).members(),
        ))
    }

    fn write(db: &mut Db, lim: &Thresholds, argv: &[&[u8]], diff: bool) -> Result<Reply> {
        let keys = &argv[2..];
        look_up(db, keys)?;
        let sets = sources(db, keys);
        let result = union_or_diff(&sets, keys, diff, Set::new_intset(), lim);
        let event = if diff { "sdiffstore" } else { "sunionstore" };
        Ok(store(db, argv[1], result, event, argv))
    }

    /// SUNION.
    pub fn run_union(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        SAlgebra::read(db, &snap.encoding, argv, false)
    }

    /// SUNIONSTORE.
    pub fn run_unionstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        SAlgebra::write(db, &snap.encoding, argv, false)
    }

    /// SDIFF.
    pub fn run_diff(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        SAlgebra::read(db, &snap.encoding, argv, true)
    }

    /// SDIFFSTORE.
    pub fn run_diffstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        SAlgebra::write(db, &snap.encoding, argv, true)
    }
}
