//! `BITOP AND|OR|XOR|NOT|DIFF|DIFF1|ANDOR|ONE destkey key [key ...]`: stores the bitwise
//! operation of the source strings (missing keys are empty, shorter strings padded with
//! zero bytes) and replies its length, the longest source's.
//!
//! - AND, OR, XOR fold every source; NOT inverts its single source;
//! - DIFF: the bits of the first source in none of the others; DIFF1: the bits in some
//!   other source but not the first; ANDOR: the bits of the first source in at least one
//!   other; ONE: the bits set in exactly one source (Redis 8.2+).
//!
//! Checked in Redis's order: the operation (`ERR syntax error`), NOT with other than one
//! source (`ERR BITOP NOT must be called with a single source key.`), DIFF, DIFF1 and ANDOR
//! with one (`ERR BITOP <OP> must be called with at least two source keys.`), then each
//! source read in turn (WRONGTYPE at the first of another type).
//!
//! Effects as Redis 8.8's `bitopCommand`: a non-empty result is stored `raw` (`new` or
//! `overwritten` as any key stored, then `set`), an empty one deletes the destination if it
//! existed (`del`); either counts 1 change and is propagated verbatim; an empty result and
//! no destination change nothing.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Xor,
    Not,
    Diff,
    Diff1,
    AndOr,
    One,
}

impl Op {
    fn named(name: &[u8]) -> Option<Op> {
        let name = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
        Some(match name.as_str() {
            "and" => Op::And,
            "or" => Op::Or,
            "xor" => Op::Xor,
            "not" => Op::Not,
            "diff" => Op::Diff,
            "diff1" => Op::Diff1,
            "andor" => Op::AndOr,
            "one" => Op::One,
            _ => return None,
        })
    }
}

/// The word at `i` of `src` (zero past its end), 8 bytes big or little endian alike.
fn word(src: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    let from = i.min(src.len());
    let to = (i + 8).min(src.len());
    w[..to - from].copy_from_slice(&src[from..to]);
    u64::from_ne_bytes(w)
}

/// The result of `op` over `sources`, `len` bytes long.
fn compute(op: Op, sources: &[Cow<'_, [u8]>], len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let at = i * 8;
        let first = word(&sources[0], at);
        let rest = sources[1..].iter().map(|s| word(s, at));
        let w = match op {
            Op::Not => !first,
            Op::And => rest.fold(first, |a, b| a & b),
            Op::Or => rest.fold(first, |a, b| a | b),
            Op::Xor => rest.fold(first, |a, b| a ^ b),
            Op::Diff => first & !rest.fold(0, |a, b| a | b),
            Op::Diff1 => !first & rest.fold(0, |a, b| a | b),
            Op::AndOr => first & rest.fold(0, |a, b| a | b),
            Op::One => {
                let (mut once, mut more) = (first, 0u64);
                for b in rest {
                    more |= once & b;
                    once ^= b;
                }
                once & !more
            }
        };
        chunk.copy_from_slice(&w.to_ne_bytes()[..chunk.len()]);
    }
    out
}

/// BITOP.
#[derive(Debug)]
pub struct BitOp;

impl BitOp {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let op = Op::named(argv[1]).ok_or(Error::Syntax)?;
        if op == Op::Not && argv.len() != 4 {
            return Err(Error::Text(
                "BITOP NOT must be called with a single source key.",
            ));
        }
        if matches!(op, Op::Diff | Op::Diff1 | Op::AndOr) && argv.len() < 5 {
            let name = String::from_utf8_lossy(argv[1]).to_ascii_uppercase();
            return Err(Error::BitopTwoKeys(name));
        }
        let dest = argv[2];
        // Each source is looked up and type-checked in turn (the lookups counted up to the
        // first of another type), then all are read in place.
        for key in &argv[3..] {
            db.count_read(key, false);
            if matches!(db.get(key), Some(v) if !matches!(v, Value::String(_))) {
                return Err(Error::WrongType);
            }
        }
        let result = {
            let sources: Vec<Cow<'_, [u8]>> = argv[3..]
                .iter()
                .map(|key| match db.get(key) {
                    Some(Value::String(s)) => s.bytes(),
                    _ => Cow::Borrowed(&[][..]),
                })
                .collect();
            let len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
            compute(op, &sources, len)
        };
        let len = result.len();
        if len > 0 {
            db.insert(dest, Value::String(StringValue::raw_from_vec(result)));
            db.notify(STRING, "set", dest);
            db.changed(1, argv);
        } else if db.remove(dest).is_some() {
            db.touch(dest);
            db.notify(GENERIC, "del", dest);
            db.changed(1, argv);
        }
        Ok(Reply::Int(len as i64))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The operation a byte at a time, as Redis's loop.
    fn model(op: Op, sources: &[Vec<u8>]) -> Vec<u8> {
        let len = sources.iter().map(Vec::len).max().unwrap_or(0);
        (0..len)
            .map(|j| {
                let byte = |s: &Vec<u8>| s.get(j).copied().unwrap_or(0);
                let first = byte(&sources[0]);
                let others: Vec<u8> = sources[1..].iter().map(byte).collect();
                let any = others.iter().fold(0, |a, b| a | b);
                match op {
                    Op::Not => !first,
                    Op::And => others.iter().fold(first, |a, b| a & b),
                    Op::Or => first | any,
                    Op::Xor => others.iter().fold(first, |a, b| a ^ b),
                    Op::Diff => first & !any,
                    Op::Diff1 => !first & any,
                    Op::AndOr => first & any,
                    Op::One => (0..8)
                        .map(|bit| {
                            let n = sources.iter().filter(|s| byte(s) & (1 << bit) != 0).count();
                            if n == 1 { 1 << bit } else { 0 }
                        })
                        .fold(0, |a, b| a | b),
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn operations_match_a_byte_loop(
            sources in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 1..5),
        ) {
            let ops = [Op::And, Op::Or, Op::Xor, Op::Diff, Op::Diff1, Op::AndOr, Op::One, Op::Not];
            let bytes: Vec<Cow<'_, [u8]>> = sources.iter().map(|s| Cow::Borrowed(&s[..])).collect();
            let len = sources.iter().map(Vec::len).max().unwrap_or(0);
            for op in ops {
                let sources = if op == Op::Not { &sources[..1] } else { &sources[..] };
                let len = if op == Op::Not { sources[0].len() } else { len };
                prop_assert_eq!(compute(op, &bytes[..sources.len()], len), model(op, sources));
            }
        }
    }
}
