//! `INCRBYFLOAT key increment`: adds a float to the number the string holds (a missing key
//! counts as 0) and replies the result as a bulk string. Errors, in Redis's order: WRONGTYPE
//! for another type, then the current value, then the increment, not a float (`ERR value is
//! not a valid float`), then a result that is NaN or infinite (`ERR increment would produce
//! NaN or Infinity`); nothing changes on an error.
//!
//! The result is written as Redis's human-friendly form: plain decimal notation, no exponent,
//! no trailing zeros, no trailing point. Redis computes in `long double`; the engine in
//! `f64`, printed in the shortest form that reads back, which agrees with Redis for values
//! that `f64` holds to 17 significant digits.
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

/// The longest text Redis reads as a float (`MAX_LONG_DOUBLE_CHARS`).
const FLOAT_CHARS_MAX: usize = 5 * 1024;

/// A float as Redis's `string2ld` reads one: the whole text, no spaces, not NaN.
pub(crate) fn parse_float(s: &[u8]) -> Result<f64> {
    if s.is_empty() || s.len() >= FLOAT_CHARS_MAX || s[0].is_ascii_whitespace() {
        return Err(Error::NotAFloat);
    }
    let text = std::str::from_utf8(s).map_err(|_| Error::NotAFloat)?;
    let value: f64 = text.parse().map_err(|_| Error::NotAFloat)?;
    if value.is_nan() {
        return Err(Error::NotAFloat);
    }
    Ok(value)
}

/// `value` in Redis's human-friendly decimal form (`ld2string` with `LD_STR_HUMAN`).
pub(crate) fn format_float(value: f64) -> String {
    // Rust's `Display` for f64 never uses an exponent and prints the shortest digits that
    // read back, with no trailing zeros; an integral value prints without a point.
    format!("{value}")
}

/// INCRBYFLOAT.
#[derive(Debug)]
pub struct IncrByFloat;

impl IncrByFloat {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let current = match db.get(key) {
            None => 0.0,
            Some(Value::String(s)) => parse_float(s)?,
            Some(_) => return Err(Error::WrongType),
        };
        let by = parse_float(argv[2])?;
        let next = current + by;
        if !next.is_finite() {
            return Err(Error::FloatNotFinite);
        }
        let text = Bytes::from(format_float(next));
        db.replace_value(key, Value::String(text.clone()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_and_print_as_redis() {
        assert_eq!(format_float(10.5 + 0.1), "10.6");
        assert_eq!(format_float(5.0e3), "5000");
        assert_eq!(format_float(-0.5), "-0.5");
        assert!(parse_float(b" 1").is_err());
        assert!(parse_float(b"1 ").is_err());
        assert!(parse_float(b"nan").is_err());
        assert!(parse_float(b"").is_err());
        assert_eq!(parse_float(b"3.0e3").ok(), Some(3000.0));
    }
}
