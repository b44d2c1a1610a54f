//! The sorted set commands, one file per command family, each a struct named after the
//! command with its grammar, errors and effects in its doc. They are registered in the one
//! command table ([`crate::command`]).
//!
//! - `zadd`: ZADD, ZINCRBY, ZREM; `read`: ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT,
//!   ZLEXCOUNT, ZSCAN;
//! - `range`: ZRANGE and its older forms, ZRANGESTORE, ZREMRANGEBYRANK/SCORE/LEX;
//! - `pop`: ZPOPMIN, ZPOPMAX, ZMPOP, BZPOPMIN, BZPOPMAX, BZMPOP;
//! - `algebra`: ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD; `random`: ZRANDMEMBER;
//! - `geo`: GEOADD, GEOPOS, GEODIST, GEOHASH.
//!
//! Scores are replied as Redis's `addReplyDouble` does (a RESP3 double, a bulk string in
//! RESP2); member-score pairs are flat in RESP2 and two-element arrays in RESP3 where Redis
//! nests them.

pub(crate) mod algebra;
pub(crate) mod geo;
pub(crate) mod pop;
pub(crate) mod random;
pub(crate) mod range;
pub(crate) mod read;
pub(crate) mod zadd;

#[cfg(test)]
mod tests;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::reply_size::Protocol;
use crate::types::Value;
use crate::types::zset::{Entry, ZSet, score};

/// The sorted set under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds
/// another type.
pub(crate) fn read_zset<'a>(db: &'a Db, key: &[u8]) -> Result<Option<&'a ZSet>> {
    match db.get(key) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(Error::WrongType),
    }
}

/// The sorted set under `key`, mutably (raw: the caller produces the effects).
pub(crate) fn zset_mut<'a>(db: &'a mut Db, key: &[u8]) -> Result<Option<&'a mut ZSet>> {
    match db.value_mut(key) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(Error::WrongType),
    }
}

/// Whether the caller speaks RESP3.
pub(crate) fn resp3(snap: &Snapshot) -> bool {
    snap.protocol == Protocol::Resp3
}

/// Entries as a reply: members only, or with their scores (flat in RESP2, pairs when
/// `nested`).
pub(crate) fn entries_reply(entries: Vec<Entry>, withscores: bool, nested: bool) -> Reply {
    let mut out = Vec::with_capacity(entries.len() * if withscores { 2 } else { 1 });
    for e in entries {
        if !withscores {
            out.push(Reply::Bulk(e.member));
        } else if nested {
            out.push(Reply::Array(vec![
                Reply::Bulk(e.member),
                score::reply(e.score),
            ]));
        } else {
            out.push(Reply::Bulk(e.member));
            out.push(score::reply(e.score));
        }
    }
    Reply::Array(out)
}

/// A score range (`zslParseRange`): `(` makes a bound exclusive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScoreRange {
    pub min: f64,
    pub max: f64,
    pub minex: bool,
    pub maxex: bool,
}

fn parse_bound(arg: &[u8]) -> Option<(f64, bool)> {
    let (text, ex) = match arg.first() {
        Some(b'(') => (&arg[1..], true),
        _ => (arg, false),
    };
    // strtod skips leading white space, reads nothing from an empty string and stops at its
    // end (a zero), and takes a hexadecimal float; a range is not checked for ERANGE.
    let text = match text.iter().position(|b| !b" \t\n\x0b\x0c\r".contains(b)) {
        Some(at) => &text[at..],
        None => &[],
    };
    let v = if text.is_empty() {
        0.0
    } else if let Some(hex) = crate::types::zset::score::parse_hex(text) {
        hex.or_else(|| hex_out_of_range(text))?
    } else {
        std::str::from_utf8(text).ok()?.parse::<f64>().ok()?
    };
    (!v.is_nan()).then_some((v, ex))
}

/// A well-formed hexadecimal float [`score::parse_hex`](crate::types::zset::score::parse_hex)
/// refused for its range: strtod's infinity or zero, which a range takes.
fn hex_out_of_range(text: &[u8]) -> Option<f64> {
    let negative = text.first() == Some(&b'-');
    let body = text
        .strip_prefix(b"-")
        .or_else(|| text.strip_prefix(b"+"))
        .unwrap_or(text);
    let digits = &body[2..];
    let end = digits
        .iter()
        .position(|&b| !(b.is_ascii_hexdigit() || b == b'.'))
        .unwrap_or(digits.len());
    let (mantissa, exp) = digits.split_at(end);
    if !mantissa.iter().any(u8::is_ascii_hexdigit) {
        return None;
    }
    let exp = match exp {
        [] => 0,
        [b'p' | b'P', rest @ ..] => {
            let e = std::str::from_utf8(rest).ok()?;
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            if e.starts_with('-') { -1 } else { 1 }
        }
        _ => return None,
    };
    let v = if exp > 0 { f64::INFINITY } else { 0.0 };
    Some(if negative { -v } else { v })
}

impl ScoreRange {
    /// Parses `min` and `max`; `ERR min or max is not a float` otherwise.
    pub fn parse(min: &[u8], max: &[u8]) -> Result<ScoreRange> {
        let bad = || Error::Text("min or max is not a float");
        let (min, minex) = parse_bound(min).ok_or_else(bad)?;
        let (max, maxex) = parse_bound(max).ok_or_else(bad)?;
        Ok(ScoreRange {
            min,
            max,
            minex,
            maxex,
        })
    }

    fn gte_min(&self, s: f64) -> bool {
        if self.minex {
            s > self.min
        } else {
            s >= self.min
        }
    }

    fn lte_max(&self, s: f64) -> bool {
        if self.maxex {
            s < self.max
        } else {
            s <= self.max
        }
    }

    /// The ranks `first..end` of the entries in range.
    pub fn ranks(&self, z: &ZSet) -> (usize, usize) {
        if self.min > self.max || (self.min == self.max && (self.minex || self.maxex)) {
            return (0, 0);
        }
        let first = z.order().partition_point(|e| !self.gte_min(e.score));
        let end = z.order().partition_point(|e| self.lte_max(e.score));
        (first, end.max(first))
    }
}

/// One end of a lex range.
#[derive(Debug, Clone)]
pub(crate) enum LexBound {
    Min,
    Max,
    Incl(Bytes),
    Excl(Bytes),
}

/// A lex range (`zslParseLexRange`).
#[derive(Debug, Clone)]
pub(crate) struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

fn parse_lex(arg: &[u8]) -> Option<LexBound> {
    match arg.first()? {
        b'+' if arg.len() == 1 => Some(LexBound::Max),
        b'-' if arg.len() == 1 => Some(LexBound::Min),
        b'(' => Some(LexBound::Excl(Bytes::copy_from_slice(&arg[1..]))),
        b'[' => Some(LexBound::Incl(Bytes::copy_from_slice(&arg[1..]))),
        _ => None,
    }
}

impl LexRange {
    /// Parses `min` and `max`; `ERR min or max not valid string range item` otherwise.
    pub fn parse(min: &[u8], max: &[u8]) -> Result<LexRange> {
        let bad = || Error::Text("min or max not valid string range item");
        Ok(LexRange {
            min: parse_lex(min).ok_or_else(bad)?,
            max: parse_lex(max).ok_or_else(bad)?,
        })
    }

    fn gte_min(&self, m: &[u8]) -> bool {
        match &self.min {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Incl(b) => m >= &b[..],
            LexBound::Excl(b) => m > &b[..],
        }
    }

    fn lte_max(&self, m: &[u8]) -> bool {
        match &self.max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Incl(b) => m <= &b[..],
            LexBound::Excl(b) => m < &b[..],
        }
    }

    fn empty(&self) -> bool {
        let key = |b: &LexBound| match b {
            LexBound::Min => (0, Bytes::new()),
            LexBound::Max => (2, Bytes::new()),
            LexBound::Incl(x) | LexBound::Excl(x) => (1, x.clone()),
        };
        let (a, b) = (key(&self.min), key(&self.max));
        a > b
            || (a == b
                && (matches!(self.min, LexBound::Excl(_)) || matches!(self.max, LexBound::Excl(_))))
    }

    /// The ranks `first..end` of the entries in range.
    pub fn ranks(&self, z: &ZSet) -> (usize, usize) {
        if self.empty() {
            return (0, 0);
        }
        let first = z.order().partition_point(|e| !self.gte_min(e.member));
        let end = z.order().partition_point(|e| self.lte_max(e.member));
        (first, end.max(first))
    }
}

/// Stores a result under `dst` as the STORE forms do; an empty one deletes `dst`.
pub(crate) fn store_result(
    db: &mut Db,
    dst: &[u8],
    result: ZSet,
    event: &'static str,
    argv: &[&[u8]],
) -> Reply {
    let len = result.len();
    if len > 0 {
        db.insert(dst, Value::ZSet(Box::new(result)));
        db.notify(crate::notify::ZSET, event, dst);
        db.changed(1, argv);
    } else if db.remove(dst).is_some() {
        db.notify(crate::notify::GENERIC, "del", dst);
        db.changed(1, argv);
    }
    Reply::Int(len as i64)
}
