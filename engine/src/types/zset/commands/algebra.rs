//! `ZUNION|ZINTER|ZDIFF numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX|COUNT]
//! [WITHSCORES]`, their STORE forms (`ZUNIONSTORE dst numkeys key...`) and `ZINTERCARD
//! numkeys key... [LIMIT limit]`.
//!
//! Checks as Redis's `zunionInterDiffGenericCommand`: numkeys (the integer error; below 1
//! `ERR at least 1 input key is needed for '<command>' command`; more than the arguments
//! left `ERR syntax error`), then each key (WRONGTYPE unless a sorted set or a set, whose
//! members score 1), then the options (`ERR weight value is not a float`, `ERR syntax
//! error`, `ERR LIMIT can't be negative`); ZDIFF and ZINTERCARD take no WEIGHTS or
//! AGGREGATE, the STORE forms and ZINTERCARD no WITHSCORES.
//!
//! A weighted score (the weight alone for COUNT) that is NaN counts as 0, and a SUM or
//! COUNT that becomes NaN (`inf + -inf`) is 0. ZDIFF keeps the first set's scores. The
//! STORE forms store the result (a listpack when it fits one, else a skiplist) with
//! `zunionstore|zinterstore|zdiffstore`, or delete the destination for an empty result
//! (`del`); one change, propagated verbatim.

use std::collections::HashMap;

use bytes::Bytes;

use crate::command::args::{is, parse_i64};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::zset::{Entry, ZSet, cmp, score};

use super::{entries_reply, resp3, store_result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
    Count,
}

/// One input: its members with scores (a set's score 1), and its weight.
struct Source {
    entries: Vec<(Bytes, f64)>,
    index: HashMap<Bytes, f64>,
    weight: f64,
}

fn weighted(s: f64, w: f64, agg: Aggregate) -> f64 {
    if agg == Aggregate::Count { w } else { w * s }
}

fn aggregate(target: &mut f64, val: f64, agg: Aggregate) {
    match agg {
        Aggregate::Sum | Aggregate::Count => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => {
            if val < *target {
                *target = val;
            }
        }
        Aggregate::Max => {
            if val > *target {
                *target = val;
            }
        }
    }
}

/// What the command computes and how it replies.
struct Request {
    sources: Vec<Source>,
    agg: Aggregate,
    withscores: bool,
    limit: usize,
}

fn parse(
    db: &mut Db,
    argv: &[&[u8]],
    numkeys_at: usize,
    op: Op,
    store: bool,
    card: bool,
) -> Result<Request> {
    let setnum = parse_i64(argv[numkeys_at])?;
    if setnum < 1 {
        let name = String::from_utf8_lossy(argv[0]).to_ascii_lowercase();
        return Err(Error::AtLeastOneKey(name));
    }
    let left = argv.len() - numkeys_at - 1;
    if setnum as u64 > left as u64 {
        return Err(Error::Syntax);
    }
    let setnum = setnum as usize;
    let mut sources = Vec::with_capacity(setnum);
    for &key in &argv[numkeys_at + 1..numkeys_at + 1 + setnum] {
        db.count_read(key, false);
        let entries: Vec<(Bytes, f64)> = match db.get(key) {
            None => Vec::new(),
            Some(Value::ZSet(z)) => z
                .order()
                .iter()
                .map(|e| (Bytes::copy_from_slice(e.member), e.score))
                .collect(),
            Some(Value::Set(s)) => s.members().into_iter().map(|m| (m, 1.0)).collect(),
            Some(_) => return Err(Error::WrongType),
        };
        let index = entries.iter().cloned().collect();
        sources.push(Source {
            entries,
            index,
            weight: 1.0,
        });
    }
    let mut agg = Aggregate::Sum;
    let mut withscores = false;
    let mut limit = 0usize;
    let mut j = numkeys_at + 1 + setnum;
    while j < argv.len() {
        let remaining = argv.len() - j;
        let a = argv[j];
        if op != Op::Diff && !card && remaining > setnum && is(a, "weights") {
            for (i, src) in sources.iter_mut().enumerate() {
                src.weight = score::parse(argv[j + 1 + i])
                    .ok_or(Error::Text("weight value is not a float"))?;
            }
            j += 1 + setnum;
        } else if op != Op::Diff && !card && remaining >= 2 && is(a, "aggregate") {
            let w = argv[j + 1];
            agg = if is(w, "sum") {
                Aggregate::Sum
            } else if is(w, "min") {
                Aggregate::Min
            } else if is(w, "max") {
                Aggregate::Max
            } else if is(w, "count") {
                Aggregate::Count
            } else {
                return Err(Error::Syntax);
            };
            j += 2;
        } else if !store && !card && is(a, "withscores") {
            withscores = true;
            j += 1;
        } else if card && remaining >= 2 && is(a, "limit") {
            limit = parse_i64(argv[j + 1])
                .ok()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(Error::Text("LIMIT can't be negative"))?;
            j += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    if op != Op::Diff {
        sources.sort_by_key(|s| s.entries.len());
    }
    Ok(Request {
        sources,
        agg,
        withscores,
        limit,
    })
}

/// The result as (member, score) pairs, unordered; for a count only, stops at `limit`.
fn compute(req: &Request, op: Op, card: bool) -> Vec<(Bytes, f64)> {
    let agg = req.agg;
    let mut out = Vec::new();
    match op {
        Op::Inter => {
            let Some((first, rest)) = req.sources.split_first() else {
                return out;
            };
            for (m, s) in &first.entries {
                let mut total = weighted(*s, first.weight, agg);
                if total.is_nan() {
                    total = 0.0;
                }
                let mut all = true;
                for src in rest {
                    match src.index.get(m) {
                        Some(v) => aggregate(&mut total, weighted(*v, src.weight, agg), agg),
                        None => {
                            all = false;
                            break;
                        }
                    }
                }
                if all {
                    out.push((m.clone(), total));
                    if card && req.limit > 0 && out.len() >= req.limit {
                        break;
                    }
                }
            }
        }
        Op::Union => {
            let mut acc: HashMap<Bytes, f64> = HashMap::new();
            let mut order = Vec::new();
            for src in &req.sources {
                for (m, s) in &src.entries {
                    let mut v = weighted(*s, src.weight, agg);
                    if v.is_nan() {
                        v = 0.0;
                    }
                    match acc.get_mut(m) {
                        Some(t) => aggregate(t, v, agg),
                        None => {
                            acc.insert(m.clone(), v);
                            order.push(m.clone());
                        }
                    }
                }
            }
            out = order
                .into_iter()
                .map(|m| {
                    let s = acc[&m];
                    (m, s)
                })
                .collect();
        }
        Op::Diff => {
            let Some((first, rest)) = req.sources.split_first() else {
                return out;
            };
            for (m, s) in &first.entries {
                if !rest.iter().any(|src| src.index.contains_key(m)) {
                    out.push((m.clone(), *s));
                }
            }
        }
    }
    out
}

fn sorted(result: Vec<(Bytes, f64)>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = result
        .into_iter()
        .map(|(member, score)| Entry { score, member })
        .collect();
    entries.sort_by(|a, b| cmp(a.score, &a.member, b.score, &b.member));
    entries
}

/// ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD.
#[derive(Debug)]
pub struct ZAlgebra;

impl ZAlgebra {
    fn read(db: &mut Db, snap: &Snapshot, argv: &[&[u8]], op: Op) -> Result<Reply> {
        let req = parse(db, argv, 1, op, false, false)?;
        let result = sorted(compute(&req, op, false));
        Ok(entries_reply(result, req.withscores, resp3(snap)))
    }

    fn store(db: &mut Db, snap: &Snapshot, argv: &[&[u8]], op: Op) -> Result<Reply> {
        let req = parse(db, argv, 2, op, true, false)?;
        let result = sorted(compute(&req, op, false));
        let lim = &snap.encoding;
        let mut z = ZSet::new_skiplist();
        for e in result {
            z.insert_unchecked(e.score, e.member);
        }
        z.maybe_to_listpack(lim);
        let event = match op {
            Op::Union => "zunionstore",
            Op::Inter => "zinterstore",
            Op::Diff => "zdiffstore",
        };
        Ok(store_result(db, argv[1], z, event, argv))
    }

    /// ZUNION.
    pub fn run_zunion(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::read(db, snap, argv, Op::Union)
    }

    /// ZINTER.
    pub fn run_zinter(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::read(db, snap, argv, Op::Inter)
    }

    /// ZDIFF.
    pub fn run_zdiff(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::read(db, snap, argv, Op::Diff)
    }

    /// ZUNIONSTORE.
    pub fn run_zunionstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::store(db, snap, argv, Op::Union)
    }

    /// ZINTERSTORE.
    pub fn run_zinterstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::store(db, snap, argv, Op::Inter)
    }

    /// ZDIFFSTORE.
    pub fn run_zdiffstore(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZAlgebra::store(db, snap, argv, Op::Diff)
    }

    /// ZINTERCARD.
    pub fn run_zintercard(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let req = parse(db, argv, 1, Op::Inter, false, true)?;
        Ok(Reply::Int(compute(&req, Op::Inter, true).len() as i64))
    }
}
