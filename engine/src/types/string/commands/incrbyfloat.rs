//! `INCRBYFLOAT key increment`: adds a float to the number the string holds (a missing key
//! counts as 0) and replies the result as a bulk string. Errors, in Redis's order: WRONGTYPE
//! for another type, then the current value, then the increment, not a float (`ERR value is
//! not a valid float`), then a result that is NaN or infinite (`ERR increment would produce
//! NaN or Infinity`); nothing changes on an error.
//!
//! Redis computes in x86's 80-bit `long double` and writes the result as `%.17Lf` without
//! trailing zeros; the engine emulates both exactly ([`LongDouble`]), so the digits agree.
//!
//! Effects as Redis 8.8's `incrbyfloatCommand`: the value replaced in place (its expiry kept,
//! a new key fires `new`), `incrbyfloat` fired, 1 change, and propagated as
//! `SET key result KEEPTTL` so replicas and the AOF never recompute the float.

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;
use crate::types::string::long_double::{LongDouble, NotFinite};

/// The longest text Redis reads as a float (`MAX_LONG_DOUBLE_CHARS`).
const FLOAT_CHARS_MAX: usize = 5 * 1024;

/// A float as Redis's `string2ld` reads one: the whole text, no leading space, not NaN, not
/// out of range; an infinity reads as `Err`.
pub(crate) fn parse_float(s: &[u8]) -> Result<Result<LongDouble, NotFinite>> {
    if s.len() >= FLOAT_CHARS_MAX || s.first().is_some_and(u8::is_ascii_whitespace) {
        return Err(Error::NotAFloat);
    }
    LongDouble::parse(s).ok_or(Error::NotAFloat)
}

/// INCRBYFLOAT.
#[derive(Debug)]
pub struct IncrByFloat;

impl IncrByFloat {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let current = match db.get(key) {
            None => Ok(LongDouble::ZERO),
            Some(Value::String(s)) => parse_float(&s.bytes())?,
            Some(_) => return Err(Error::WrongType),
        };
        let by = parse_float(argv[2])?;
        let next = match (current, by) {
            (Ok(current), Ok(by)) => current.add(by),
            _ => Err(NotFinite::Infinite),
        };
        let next = match next {
            Ok(next) => next,
            // The hardware would go subnormal or to 0; the emulation does not hold subnormals.
            Err(NotFinite::Underflow) => LongDouble::ZERO,
            Err(NotFinite::Infinite) => return Err(Error::FloatNotFinite),
        };
        let text = Bytes::from(next.to_human());
        db.replace_value(key, Value::String(StringValue::created(&text)));
        db.touch(key);
        db.notify(STRING, "incrbyfloat", key);
        db.add_dirty(1);
        if db.propagating() {
            db.propagate(vec![
                Bytes::from_static(b"SET"),
                Bytes::copy_from_slice(key),
                text.clone(),
                Bytes::from_static(b"KEEPTTL"),
            ]);
        }
        Ok(Reply::Bulk(text))
    }
}
