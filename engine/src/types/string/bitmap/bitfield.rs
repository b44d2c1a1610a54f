//! `BITFIELD key [GET type offset | SET type offset value | INCRBY type offset increment |
//! OVERFLOW WRAP|SAT|FAIL] ...` and `BITFIELD_RO key [GET type offset ...]`: integers of 1 to
//! 64 bits (`i1`..`i64`, `u1`..`u63`) at any bit offset (`#n` for the n-th field of that
//! width), big-endian as Redis lays them. Replies one entry per GET, SET (the old value) and
//! INCRBY (the new value); with OVERFLOW FAIL an overflowing write is skipped and replies nil.
//!
//! All the operations are parsed before any runs, each error in Redis's order:
//! an unknown or short subcommand `ERR syntax error`, a bad OVERFLOW kind `ERR Invalid
//! OVERFLOW type specified`, the type (`ERR Invalid bitfield type. Use something like i16
//! u8. Note that u64 is not supported but i64 is.`), the offset (as SETBIT's), the value
//! (`ERR value is not an integer or out of range`). Then BITFIELD_RO refuses writes
//! (`ERR BITFIELD_RO only supports the GET subcommand`), then the type is checked.
//!
//! With a write the string is created or grown (in place, turning `raw`) as far as the
//! farthest field written, even when no write ends up changing a bit. Effects as Redis 8.8's
//! `bitfieldGeneric`: if any write changed the string (or it grew), `setbit` fires once,
//! WATCH is touched, one change is counted per such write, and the command is propagated
//! verbatim; a created key fires `new` in any case. Reads only are a read lookup.

use std::borrow::Cow;

use super::{bit_offset, read_string, write_bits};
use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Get,
    Set,
    IncrBy,
}

#[derive(Debug, Clone, Copy)]
struct Field {
    kind: Kind,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

/// Reads `i<bits>` or `u<bits>`.
fn field_type(arg: &[u8]) -> Result<(bool, u32)> {
    let bad = || {
        Error::Text(
            "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.",
        )
    };
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(bad()),
    };
    let bits = parse_i64(&arg[1..]).map_err(|_| bad())?;
    let max = if signed { 64 } else { 63 };
    if (1..=max).contains(&bits) {
        Ok((signed, bits as u32))
    } else {
        Err(bad())
    }
}

fn parse(argv: &[&[u8]]) -> Result<Vec<Field>> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        let sub = argv[j];
        let kind = if is(sub, "get") && left >= 2 {
            Kind::Get
        } else if is(sub, "set") && left >= 3 {
            Kind::Set
        } else if is(sub, "incrby") && left >= 3 {
            Kind::IncrBy
        } else if is(sub, "overflow") && left >= 1 {
            let name = argv[j + 1];
            overflow = if is(name, "wrap") {
                Overflow::Wrap
            } else if is(name, "sat") {
                Overflow::Sat
            } else if is(name, "fail") {
                Overflow::Fail
            } else {
                return Err(Error::Text("Invalid OVERFLOW type specified"));
            };
            j += 2;
            continue;
        } else {
            return Err(Error::Syntax);
        };
        let (signed, bits) = field_type(argv[j + 1])?;
        let offset = bit_offset(argv[j + 2], Some(bits))?;
        let value = if kind == Kind::Get {
            0
        } else {
            parse_i64(argv[j + 3])?
        };
        fields.push(Field {
            kind,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if kind == Kind::Get { 3 } else { 4 };
    }
    Ok(fields)
}

/// The unsigned field of `bits` bits at `offset` (zeros past the end).
fn get_unsigned(data: &[u8], offset: u64, bits: u32) -> u64 {
    let mut value = 0u64;
    for i in 0..u64::from(bits) {
        value = (value << 1) | u64::from(super::get_bit(data, offset + i));
    }
    value
}

/// The signed field, its top bit the sign.
fn get_signed(data: &[u8], offset: u64, bits: u32) -> i64 {
    let value = get_unsigned(data, offset, bits);
    if bits < 64 && value & (1 << (bits - 1)) != 0 {
        (value | (u64::MAX << bits)) as i64
    } else {
        value as i64
    }
}

fn set_field(data: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..u64::from(bits) {
        let bit = value >> (u64::from(bits) - 1 - i) & 1 == 1;
        super::set_bit(data, offset + i, bit);
    }
}

/// Redis's `checkUnsignedBitfieldOverflow`: whether `value + incr` leaves the field, and the
/// value to write instead (wrapped or saturated).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, how: Overflow) -> Option<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX.checked_shl(bits).unwrap_or(0));
    if value > max || (incr > 0 && incr > max_incr) {
        Some(if how == Overflow::Wrap { wrap() } else { max })
    } else if incr < 0 && incr < min_incr {
        Some(if how == Overflow::Wrap { wrap() } else { 0 })
    } else {
        None
    }
}

/// Redis's `checkSignedBitfieldOverflow`.
fn signed_overflow(value: i64, incr: i64, bits: u32, how: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr)
    {
        Some(if how == Overflow::Wrap { wrap() } else { max })
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        Some(if how == Overflow::Wrap { wrap() } else { min })
    } else {
        None
    }
}

/// Runs one write on `data`: its reply, and whether it changed the field.
fn write(data: &mut [u8], f: &Field) -> (Reply, bool) {
    if f.signed {
        let old = get_signed(data, f.offset, f.bits);
        let (new, overflow, reply) = if f.kind == Kind::IncrBy {
            let o = signed_overflow(old, f.value, f.bits, f.overflow);
            let new = o.unwrap_or_else(|| old.wrapping_add(f.value));
            (new, o.is_some(), new)
        } else {
            let o = signed_overflow(f.value, 0, f.bits, f.overflow);
            (o.unwrap_or(f.value), o.is_some(), old)
        };
        if overflow && f.overflow == Overflow::Fail {
            return (Reply::Null, false);
        }
        set_field(data, f.offset, f.bits, new as u64);
        (Reply::Int(reply), old != new)
    } else {
        let old = get_unsigned(data, f.offset, f.bits);
        let (new, overflow, reply) = if f.kind == Kind::IncrBy {
            let o = unsigned_overflow(old, f.value, f.bits, f.overflow);
            let new = o.unwrap_or_else(|| old.wrapping_add(f.value as u64));
            (new, o.is_some(), new)
        } else {
            let value = f.value as u64;
            let o = unsigned_overflow(value, 0, f.bits, f.overflow);
            (o.unwrap_or(value), o.is_some(), old)
        };
        if overflow && f.overflow == Overflow::Fail {
            return (Reply::Null, false);
        }
        set_field(data, f.offset, f.bits, new);
        (Reply::Int(reply as i64), old != new)
    }
}

/// A GET's reply.
fn read(data: &[u8], f: &Field) -> Reply {
    if f.signed {
        Reply::Int(get_signed(data, f.offset, f.bits))
    } else {
        Reply::Int(get_unsigned(data, f.offset, f.bits) as i64)
    }
}

/// BITFIELD and BITFIELD_RO.
#[derive(Debug)]
pub struct BitField;

impl BitField {
    /// BITFIELD: parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        BitField::apply(db, argv, false)
    }

    /// BITFIELD_RO: parses and applies.
    pub fn run_ro(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        BitField::apply(db, argv, true)
    }

    fn apply(db: &mut Db, argv: &[&[u8]], read_only: bool) -> Result<Reply> {
        let key = argv[1];
        let fields = parse(argv)?;
        let highest = fields
            .iter()
            .filter(|f| f.kind != Kind::Get)
            .map(|f| f.offset + u64::from(f.bits) - 1)
            .max();
        let Some(highest) = highest else {
            let s = read_string(db, key)?;
            let data = s.map_or(Cow::Borrowed(&[][..]), |s| s.bytes());
            return Ok(Reply::Array(
                fields.iter().map(|f| read(&data, f)).collect(),
            ));
        };
        if read_only {
            return Err(Error::Text("BITFIELD_RO only supports the GET subcommand"));
        }
        let bytes = (highest >> 3) as usize + 1;
        let ((replies, changes), grew) = write_bits(db, key, bytes, |s| {
            let data = s.bytes_mut();
            let mut changes = 0u64;
            let replies: Vec<Reply> = fields
                .iter()
                .map(|f| {
                    if f.kind == Kind::Get {
                        return read(data, f);
                    }
                    let (reply, changed) = write(data, f);
                    if !matches!(reply, Reply::Null) && changed {
                        changes += 1;
                    }
                    reply
                })
                .collect();
            (replies, changes)
        })?;
        let changes = if grew {
            // A grown string counts every write that was not refused.
            fields
                .iter()
                .zip(&replies)
                .filter(|(f, r)| f.kind != Kind::Get && !matches!(r, Reply::Null))
                .count() as u64
        } else {
            changes
        };
        if changes > 0 {
            db.wrote(key, STRING, "setbit", changes, argv);
        }
        Ok(Reply::Array(replies))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_follows_redis() {
        assert_eq!(unsigned_overflow(255, 1, 8, Overflow::Wrap), Some(0));
        assert_eq!(unsigned_overflow(255, 1, 8, Overflow::Sat), Some(255));
        assert_eq!(unsigned_overflow(0, -1, 8, Overflow::Sat), Some(0));
        assert_eq!(unsigned_overflow(0, -1, 8, Overflow::Wrap), Some(255));
        assert_eq!(unsigned_overflow(3, 4, 8, Overflow::Wrap), None);
        assert_eq!(signed_overflow(127, 1, 8, Overflow::Wrap), Some(-128));
        assert_eq!(signed_overflow(127, 1, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_overflow(-128, -1, 8, Overflow::Sat), Some(-128));
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(signed_overflow(5, -3, 64, Overflow::Wrap), None);
    }

    #[test]
    fn fields_are_big_endian() {
        let mut data = vec![0u8; 2];
        set_field(&mut data, 4, 8, 0xab);
        assert_eq!(data, [0x0a, 0xb0]);
        assert_eq!(get_unsigned(&data, 4, 8), 0xab);
        assert_eq!(get_signed(&data, 4, 8), 0xab_u8 as i8 as i64);
    }
}
