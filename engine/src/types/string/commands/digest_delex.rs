//! `DIGEST key` and `DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]`
//! (Redis 8.4+): a string's digest, and DEL under a condition on the string.
//!
//! A digest is the string's XXH3 64-bit hash as 16 lower-case hex digits; given as a
//! condition it must be exactly 16 characters (`ERR must be exactly 16 hexadecimal
//! characters`) and compares in any case.
//!
//! - DIGEST replies the digest, nil for a missing key, WRONGTYPE for another type; a read
//!   lookup.
//! - DELEX without a condition is DEL. With one: any other argument count is `ERR wrong
//!   number of arguments for 'delex' command`; a missing key replies 0; another type is
//!   `ERR Key should be of string type if conditions are specified`; an unknown condition
//!   `ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE`. When the condition holds the
//!   key is removed (WATCH touched, `del` fired, 1 change, propagated as `DEL key`) and the
//!   reply is 1, else 0.

use bytes::Bytes;

use crate::command::args::is;
use crate::command::keys::del::Del;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::GENERIC;
use crate::reply::Reply;
use crate::types::Value;

/// The length of a digest in hex digits (Redis's `DIGEST_HEX_LENGTH`).
pub const DIGEST_HEX_LEN: usize = 16;

/// The digest of a string: XXH3-64 as 16 lower-case hex digits.
pub fn digest(value: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(value))
}

/// The conditions SET and DELEX take on the current string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Condition {
    /// IFEQ: the string equals the value.
    Eq,
    /// IFNE: the string differs from the value.
    Ne,
    /// IFDEQ: the string's digest equals the digest.
    DigestEq,
    /// IFDNE: the string's digest differs from the digest.
    DigestNe,
}

impl Condition {
    /// The condition named `word`, if any.
    pub(crate) fn named(word: &[u8]) -> Option<Condition> {
        [
            ("ifeq", Condition::Eq),
            ("ifne", Condition::Ne),
            ("ifdeq", Condition::DigestEq),
            ("ifdne", Condition::DigestNe),
        ]
        .into_iter()
        .find(|(name, _)| is(word, name))
        .map(|(_, c)| c)
    }

    /// Whether the condition holds for `current` against `arg`; a digest of the wrong length
    /// is an error.
    pub(crate) fn holds(self, current: &[u8], arg: &[u8]) -> Result<bool> {
        Ok(match self {
            Condition::Eq => current == arg,
            Condition::Ne => current != arg,
            Condition::DigestEq | Condition::DigestNe => {
                if arg.len() != DIGEST_HEX_LEN {
                    return Err(Error::DigestLength);
                }
                let same = digest(current).as_bytes().eq_ignore_ascii_case(arg);
                same == (self == Condition::DigestEq)
            }
        })
    }
}

/// DIGEST.
#[derive(Debug)]
pub struct Digest;

impl Digest {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        match db.get(argv[1]) {
            None => Ok(Reply::Null),
            Some(Value::String(s)) => Ok(Reply::Bulk(Bytes::from(digest(&s.bytes())))),
            Some(_) => Err(Error::WrongType),
        }
    }
}

/// DELEX.
#[derive(Debug)]
pub struct DelEx;

impl DelEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        if argv.len() == 2 {
            return Del::run(db, snapshot, argv);
        }
        if argv.len() != 4 {
            return Err(Error::WrongArity("delex".to_owned()));
        }
        let key = argv[1];
        db.count_read(key, false);
        let current = match db.get(key) {
            None => return Ok(Reply::Int(0)),
            Some(Value::String(s)) => s.to_bytes(),
            Some(_) => return Err(Error::DelexNotString),
        };
        let condition = Condition::named(argv[2]).ok_or(Error::DelexCondition)?;
        if !condition.holds(&current, argv[3])? || db.remove(key).is_none() {
            return Ok(Reply::Int(0));
        }
        db.notify(GENERIC, "del", key);
        db.add_dirty(1);
        if db.propagating() {
            db.propagate(vec![
                Bytes::from_static(b"DEL"),
                Bytes::copy_from_slice(key),
            ]);
        }
        Ok(Reply::Int(1))
    }
}
