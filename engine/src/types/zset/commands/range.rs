//! `ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]`, its
//! older forms (ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX),
//! `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]` and
//! `ZREMRANGEBYRANK|ZREMRANGEBYSCORE|ZREMRANGEBYLEX key min max`.
//!
//! The range commands check as Redis's `zrangeGenericCommand`: the options (`ERR syntax
//! error` for a word the form does not take; LIMIT's integers), LIMIT without BYSCORE/BYLEX,
//! WITHSCORES with BYLEX, then the range (`ERR min or max is not a float`, `ERR min or max
//! not valid string range item`, the integer error), then the key (WRONGTYPE). A negative
//! LIMIT offset selects nothing; a negative count everything after the offset. With REV the
//! score and lex bounds are given max first. WITHSCORES pairs are flat in RESP2 and
//! two-element arrays in RESP3.
//!
//! ZRANGESTORE builds the result as ZADD would (created for the rank count, converted as it
//! grows), stores it (`zrangestore`) or deletes the destination for an empty result (`del`),
//! one change, propagated verbatim. ZREMRANGEBY* parse the range, then the key; effects when
//! something went: `zremrangeby{rank,score,lex}`, an emptied set deleted (`del`), one change
//! per member removed, propagated verbatim.

use crate::command::args::{is, parse_i64};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, ZSET as ZSET_EVENTS};
use crate::reply::{Bulks, Reply};
#[cfg(test)]
use crate::types::zset::Entry;
use crate::types::zset::{AddFlags, EntryRef, ZSet};

use super::{LexRange, ScoreRange, entries_reply, read_zset, resp3, store_result, zset_mut};

/// How a range is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Auto,
    Rank,
    Score,
    Lex,
}

/// A parsed range, ready to select.
enum Spec {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// Clamps a rank range as Redis does: `None` when empty.
fn clamp(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let llen = len as i64;
    let mut start = if start < 0 { start + llen } else { start };
    let mut end = if end < 0 { end + llen } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        return None;
    }
    if end >= llen {
        end = llen - 1;
    }
    Some((start as usize, end as usize))
}

/// The ranks `spec` selects in `z`, ascending (`lo..=hi`): the reply runs them backwards for
/// REV.
fn select_ranks(
    z: &ZSet,
    spec: &Spec,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> Option<(usize, usize)> {
    let len = z.len();
    let (first, end) = match spec {
        Spec::Rank(s, e) => {
            let (s, e) = clamp(*s, *e, len)?;
            return Some(if reverse {
                (len - 1 - e, len - 1 - s)
            } else {
                (s, e)
            });
        }
        Spec::Score(r) => r.ranks(z),
        Spec::Lex(r) => r.ranks(z),
    };
    if offset < 0 || first >= end {
        return None;
    }
    let offset = offset as usize;
    let take = if limit < 0 {
        usize::MAX
    } else {
        limit as usize
    };
    let count = end - first;
    if offset >= count {
        return None;
    }
    let n = take.min(count - offset);
    if n == 0 {
        return None;
    }
    Some(if reverse {
        (end - offset - n, end - offset - 1)
    } else {
        (first + offset, first + offset + n - 1)
    })
}

/// The entries `spec` selects in `z`, in reply order.
fn select_refs<'a>(
    z: &'a ZSet,
    spec: &Spec,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> Vec<EntryRef<'a>> {
    let Some((lo, hi)) = select_ranks(z, spec, reverse, offset, limit) else {
        return Vec::new();
    };
    let mut v: Vec<EntryRef<'a>> = z.order().range_refs(lo, hi).collect();
    if reverse {
        v.reverse();
    }
    v
}

/// [`select_refs`], owned.
#[cfg(test)]
fn select(z: &ZSet, spec: &Spec, reverse: bool, offset: i64, limit: i64) -> Vec<Entry> {
    select_refs(z, spec, reverse, offset, limit)
        .into_iter()
        .map(EntryRef::to_entry)
        .collect()
}

/// ZRANGE and its forms.
#[derive(Debug)]
pub struct ZRange;

impl ZRange {
    /// ZRANGE.
    pub fn run_zrange(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Auto, None)
    }

    /// ZREVRANGE.
    pub fn run_zrevrange(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Rank, Some(true))
    }

    /// ZRANGEBYSCORE.
    pub fn run_zrangebyscore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Score, Some(false))
    }

    /// ZREVRANGEBYSCORE.
    pub fn run_zrevrangebyscore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Score, Some(true))
    }

    /// ZRANGEBYLEX.
    pub fn run_zrangebylex(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Lex, Some(false))
    }

    /// ZREVRANGEBYLEX.
    pub fn run_zrevrangebylex(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, false, Kind::Lex, Some(true))
    }

    /// ZRANGESTORE.
    pub fn run_zrangestore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRange::generic(db, snap, argv, true, Kind::Auto, None)
    }

    fn generic(
        db: &mut Db,
        snap: &Snapshot,
        argv: &[&[u8]],
        store: bool,
        mut kind: Kind,
        mut reverse: Option<bool>,
    ) -> Result<Reply> {
        let base = if store { 2 } else { 1 };
        let key = argv[base];
        let (mut minidx, mut maxidx) = (base + 1, base + 2);
        let mut withscores = false;
        let (mut offset, mut limit) = (0i64, -1i64);
        let mut j = base + 3;
        while j < argv.len() {
            let left = argv.len() - j - 1;
            let a = argv[j];
            if !store && is(a, "withscores") {
                withscores = true;
            } else if is(a, "limit") && left >= 2 {
                offset = parse_i64(argv[j + 1])?;
                limit = parse_i64(argv[j + 2])?;
                j += 2;
            } else if reverse.is_none() && is(a, "rev") {
                reverse = Some(true);
            } else if kind == Kind::Auto && is(a, "bylex") {
                kind = Kind::Lex;
            } else if kind == Kind::Auto && is(a, "byscore") {
                kind = Kind::Score;
            } else {
                return Err(Error::Syntax);
            }
            j += 1;
        }
        let reverse = reverse.unwrap_or(false);
        if kind == Kind::Auto {
            kind = Kind::Rank;
        }
        // Redis tells LIMIT apart by its count (-1 when absent).
        if limit != -1 && kind == Kind::Rank {
            return Err(Error::Text(
                "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
            ));
        }
        if withscores && kind == Kind::Lex {
            return Err(Error::Text(
                "syntax error, WITHSCORES not supported in combination with BYLEX",
            ));
        }
        if reverse && kind != Kind::Rank {
            std::mem::swap(&mut minidx, &mut maxidx);
        }
        let spec = match kind {
            Kind::Score => Spec::Score(ScoreRange::parse(argv[minidx], argv[maxidx])?),
            Kind::Lex => Spec::Lex(LexRange::parse(argv[minidx], argv[maxidx])?),
            _ => Spec::Rank(parse_i64(argv[minidx])?, parse_i64(argv[maxidx])?),
        };
        db.count_read(key, false);
        let entries = match read_zset(db, key)? {
            None => Vec::new(),
            Some(z) => select_refs(z, &spec, reverse, offset, limit),
        };
        if !store && !withscores {
            // The members' bytes go straight into the reply's buffer.
            let bytes = entries.iter().map(|e| e.member.len() + 16).sum();
            let mut out = Bulks::with_capacity(bytes);
            for e in &entries {
                out.push(e.member);
            }
            return Ok(Reply::Bulks(out));
        }
        if !store {
            let entries = entries.into_iter().map(EntryRef::to_entry).collect();
            return Ok(entries_reply(entries, withscores, resp3(snap)));
        }
        let lim = &snap.encoding;
        let size_hint = if matches!(spec, Spec::Rank(..)) {
            entries.len()
        } else {
            0
        };
        let mut result = ZSet::create(size_hint, 0, lim);
        for e in entries {
            // Entries of one set: distinct, never NaN.
            let _ = result.add(e.score, e.member, AddFlags::default(), lim);
        }
        Ok(store_result(db, argv[1], result, "zrangestore", argv))
    }
}

/// ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX.
#[derive(Debug)]
pub struct ZRemRange;

impl ZRemRange {
    /// ZREMRANGEBYRANK.
    pub fn run_rank(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let spec = Spec::Rank(parse_i64(argv[2])?, parse_i64(argv[3])?);
        ZRemRange::apply(db, argv, spec, "zremrangebyrank")
    }

    /// ZREMRANGEBYSCORE.
    pub fn run_score(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let spec = Spec::Score(ScoreRange::parse(argv[2], argv[3])?);
        ZRemRange::apply(db, argv, spec, "zremrangebyscore")
    }

    /// ZREMRANGEBYLEX.
    pub fn run_lex(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let spec = Spec::Lex(LexRange::parse(argv[2], argv[3])?);
        ZRemRange::apply(db, argv, spec, "zremrangebylex")
    }

    fn apply(db: &mut Db, argv: &[&[u8]], spec: Spec, event: &'static str) -> Result<Reply> {
        let key = argv[1];
        let Some(z) = zset_mut(db, key)? else {
            return Ok(Reply::Int(0));
        };
        let (first, end) = match &spec {
            Spec::Rank(s, e) => match clamp(*s, *e, z.len()) {
                Some((s, e)) => (s, e + 1),
                None => return Ok(Reply::Int(0)),
            },
            Spec::Score(r) => r.ranks(z),
            Spec::Lex(r) => r.ranks(z),
        };
        if first >= end {
            return Ok(Reply::Int(0));
        }
        let removed = z.remove_ranks(first, end - 1).len() as u64;
        let emptied = z.is_empty();
        if emptied {
            db.remove(key);
        }
        db.wrote(key, ZSET_EVENTS, event, removed, argv);
        if emptied {
            db.notify(GENERIC, "del", key);
        }
        Ok(Reply::Int(removed as i64))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use bytes::Bytes;

    use super::super::LexBound;
    use super::*;
    use crate::config::Thresholds;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn score_and_lex_selections_agree_with_a_filter(
            scores in proptest::collection::vec(-6i32..6, 0..300),
            (lo, hi) in (-7i32..7, -7i32..7),
            (minex, maxex, reverse) in (any::<bool>(), any::<bool>(), any::<bool>()),
            (offset, limit) in (-1i64..5, -1i64..8),
        ) {
            let lim = Thresholds::default();
            let mut z = ZSet::create(scores.len(), 0, &lim);
            for (i, s) in scores.iter().enumerate() {
                let m = format!("m{:03}", i % 97);
                let _ = z.add(f64::from(*s), m.as_bytes(), AddFlags::default(), &lim);
            }
            let range = ScoreRange { min: f64::from(lo), max: f64::from(hi), minex, maxex };
            let mut want: Vec<Entry> = z
                .order()
                .iter()
                .filter(|e| range.gte_min(e.score) && range.lte_max(e.score))
                .map(|e| e.to_entry())
                .collect();
            if reverse {
                want.reverse();
            }
            let want: Vec<Entry> = if offset < 0 {
                Vec::new()
            } else {
                let take = if limit < 0 { usize::MAX } else { limit as usize };
                want.into_iter().skip(offset as usize).take(take).collect()
            };
            let got = select(&z, &Spec::Score(range), reverse, offset, limit);
            prop_assert_eq!(got, want);

            let bound = |n: i32, ex: bool| {
                let b = Bytes::from(format!("m{:03}", n.rem_euclid(97)));
                if ex { LexBound::Excl(b) } else { LexBound::Incl(b) }
            };
            let lex = LexRange { min: bound(lo * 7, minex), max: bound(hi * 7, maxex) };
            let mut flat = ZSet::create(0, 0, &lim);
            for e in z.order().iter() {
                let _ = flat.add(0.0, e.member, AddFlags::default(), &lim);
            }
            let want: Vec<Entry> = flat
                .order()
                .iter()
                .filter(|e| lex.gte_min(e.member) && lex.lte_max(e.member))
                .map(|e| e.to_entry())
                .collect();
            let got = select(&flat, &Spec::Lex(lex), false, 0, -1);
            prop_assert_eq!(got, want);
        }
    }
}
