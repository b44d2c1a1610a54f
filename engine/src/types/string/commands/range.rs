//! `APPEND key value`, `SETRANGE key offset value`, `GETRANGE key start end` (and its old
//! name `SUBSTR`): a string read and written by byte ranges.
//!
//! - APPEND adds `value` at the end (a missing key is created holding it) and replies the
//!   new length. WRONGTYPE for another type; a result past [`STRING_BYTES_MAX`] is
//!   `ERR string exceeds maximum allowed size (proto-max-bulk-len)`.
//! - SETRANGE writes `value` at `offset`, padding with zero bytes, and replies the new
//!   length. Checked in Redis's order: the offset (`ERR value is not an integer or out of
//!   range`, then `ERR offset is out of range` when negative), the type, an empty `value`
//!   (which changes nothing and replies the current length, 0 for a missing key), the size.
//! - GETRANGE replies the bytes from `start` to `end` inclusive, negative indexes counting
//!   from the end, clamped to the string; an empty string for a missing key. The indexes
//!   are checked before the key.
//!
//! Effects of APPEND and SETRANGE that changed something, as Redis 8.8: a created key fires
//! `new`, then `append` or `setrange` fires, WATCH touched, 1 change, propagated verbatim.
//! GETRANGE is a read lookup.

use bytes::Bytes;

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// The longest string APPEND and SETRANGE build: Redis's default `proto-max-bulk-len`
/// (512 MiB), the limit the engine holds every client to since it does not see the server's
/// setting.
pub const STRING_BYTES_MAX: u64 = 512 * 1024 * 1024;

/// Fails with Redis's error when `len + extra` bytes pass [`STRING_BYTES_MAX`].
fn check_length(len: u64, extra: u64) -> Result<()> {
    match len.checked_add(extra) {
        Some(total) if total <= STRING_BYTES_MAX => Ok(()),
        _ => Err(Error::StringTooLong),
    }
}

/// The length of the string `key` holds (None when missing), WRONGTYPE for another type.
fn current_len(db: &Db, key: &[u8]) -> Result<Option<usize>> {
    match db.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.len())),
        Some(_) => Err(Error::WrongType),
    }
}

/// Changes the existing string under `key` in place with `f`, or stores `created` when the
/// key is missing; then produces the write's effects.
fn change(
    db: &mut Db,
    key: &[u8],
    created: impl FnOnce() -> StringValue,
    f: impl FnOnce(&mut StringValue),
    event: &'static str,
    argv: &[&[u8]],
) -> Result<usize> {
    let len = match db.string_mut(key, |s| {
        f(s);
        s.len()
    })? {
        Some(len) => len,
        None => {
            let value = created();
            let len = value.len();
            db.replace_value(key, Value::String(value));
            len
        }
    };
    db.wrote(key, STRING, event, 1, argv);
    Ok(len)
}

/// APPEND.
#[derive(Debug)]
pub struct Append;

impl Append {
    /// Parses and applies: a missing key stores the value as SET would, an existing one
    /// grows in place (turning `raw`).
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, value) = (argv[1], argv[2]);
        let old = current_len(db, key)?.unwrap_or(0);
        check_length(old as u64, value.len() as u64)?;
        let len = change(
            db,
            key,
            || StringValue::from_arg(value),
            |s| s.append(value),
            "append",
            argv,
        )?;
        Ok(Reply::Int(len as i64))
    }
}

/// SETRANGE.
#[derive(Debug)]
pub struct SetRange;

impl SetRange {
    /// Parses and applies, writing in place (the value turns `raw`).
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, value) = (argv[1], argv[3]);
        let offset = u64::try_from(parse_i64(argv[2])?).map_err(|_| Error::OffsetOutOfRange)?;
        let old = current_len(db, key)?;
        if value.is_empty() {
            return Ok(Reply::Int(old.map_or(0, |len| len as i64)));
        }
        check_length(offset, value.len() as u64)?;
        // The check above bounds the offset by 512 MiB.
        let offset = offset as usize;
        let write = |s: &mut StringValue| s.write_at(offset, value);
        let len = change(
            db,
            key,
            || {
                let mut s = StringValue::zeroed(0);
                write(&mut s);
                s
            },
            write,
            "setrange",
            argv,
        )?;
        Ok(Reply::Int(len as i64))
    }
}

/// GETRANGE and SUBSTR.
#[derive(Debug)]
pub struct GetRange;

impl GetRange {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let start = parse_i64(argv[2])?;
        let end = parse_i64(argv[3])?;
        db.count_read(argv[1], false);
        let s = match db.get(argv[1]) {
            None => return Ok(Reply::Bulk(Bytes::new())),
            Some(Value::String(s)) => s,
            Some(_) => return Err(Error::WrongType),
        };
        Ok(Reply::Bulk(range(&s.bytes(), start, end)))
    }
}

/// The bytes of `s` from `start` to `end` inclusive as Redis's `getrangeCommand` clamps them.
fn range(s: &[u8], start: i64, end: i64) -> Bytes {
    let len = s.len() as i64;
    if (start < 0 && end < 0 && start > end) || len == 0 {
        return Bytes::new();
    }
    let start = if start < 0 {
        len.saturating_add(start)
    } else {
        start
    }
    .max(0);
    let end = if end < 0 {
        len.saturating_add(end)
    } else {
        end
    }
    .max(0)
    .min(len - 1);
    if start > end {
        return Bytes::new();
    }
    Bytes::copy_from_slice(&s[start as usize..=end as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_clamps_as_redis() {
        let s = Bytes::from_static(b"Hello World");
        assert_eq!(range(&s, 0, 4), "Hello");
        assert_eq!(range(&s, -3, -1), "rld");
        assert_eq!(range(&s, 0, -100), "H");
        assert_eq!(range(&s, -1, -5), "");
        assert_eq!(range(&s, 5, 3), "");
        assert_eq!(range(&s, 0, i64::MAX), "Hello World");
        assert_eq!(range(&s, i64::MIN, i64::MAX), "Hello World");
        assert_eq!(range(&Bytes::new(), 0, -1), "");
    }
}
