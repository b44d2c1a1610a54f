//! `BITCOUNT key [start end [BYTE|BIT]]`, `BITPOS key bit [start [end [BYTE|BIT]]]`.
//!
//! BITCOUNT replies the number of set bits in the range (bytes by default, bits with BIT),
//! negative indexes counting from the end, clamped to the string; 0 for a missing key.
//! Checked in Redis's order: the argument count (`ERR syntax error` for a lone start), start,
//! end (`ERR value is not an integer or out of range`), the unit (`ERR syntax error`), then
//! the type.
//!
//! BITPOS replies the position of the first bit equal to `bit` in the range, -1 if none;
//! a missing key is all zeros (0 for a clear bit, -1 for a set one). Without an end, a
//! search for a clear bit in an all-ones string replies the first bit past it; with an end it
//! replies -1. Checked in Redis's order: the bit (an integer, then `ERR The bit argument must
//! be 1 or 0.`), start, the unit, end, then the type.
//!
//! Both are read lookups, computed as Redis's `bitcountCommand` and `bitposCommand`, a 64-bit
//! word at a time.

use super::{first_bit, popcount, read_string};
use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// Reads BYTE or BIT: whether BIT.
fn unit(arg: &[u8]) -> Result<bool> {
    if is(arg, "bit") {
        Ok(true)
    } else if is(arg, "byte") {
        Ok(false)
    } else {
        Err(Error::Syntax)
    }
}

/// A range resolved against a string of `len` bytes: the first and last byte, and the masks
/// of the bits outside a BIT range in those bytes. None when empty.
struct Range {
    start: usize,
    end: usize,
    first_mask: u8,
    last_mask: u8,
}

fn resolve(len: usize, mut start: i64, mut end: i64, bits: bool) -> Option<Range> {
    let mut total = len as i64;
    if bits {
        total <<= 3;
    }
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    if start > end {
        return None;
    }
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    if bits {
        first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
        last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    Some(Range {
        start: start as usize,
        end: end as usize,
        first_mask,
        last_mask,
    })
}

/// BITCOUNT.
#[derive(Debug)]
pub struct BitCount;

impl BitCount {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let range = match argv.len() {
            2 => None,
            4 | 5 => {
                let start = parse_i64(argv[2])?;
                let end = parse_i64(argv[3])?;
                let bits = match argv.get(4) {
                    Some(u) => unit(u)?,
                    None => false,
                };
                Some((start, end, bits))
            }
            _ => return Err(Error::Syntax),
        };
        let Some(s) = read_string(db, argv[1])? else {
            return Ok(Reply::Int(0));
        };
        let data = s.bytes();
        let resolved = match range {
            None if data.is_empty() => None,
            None => Some(Range {
                start: 0,
                end: data.len() - 1,
                first_mask: 0,
                last_mask: 0,
            }),
            Some((start, end, _)) if start < 0 && end < 0 && start > end => None,
            Some((start, end, bits)) => resolve(data.len(), start, end, bits),
        };
        let Some(r) = resolved else {
            return Ok(Reply::Int(0));
        };
        let mut count = popcount(&data[r.start..=r.end]);
        count -= u64::from((data[r.start] & r.first_mask).count_ones());
        count -= u64::from((data[r.end] & r.last_mask).count_ones());
        Ok(Reply::Int(count as i64))
    }
}

/// BITPOS.
#[derive(Debug)]
pub struct BitPos;

impl BitPos {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let bit = match parse_i64(argv[2])? {
            0 => false,
            1 => true,
            _ => return Err(Error::Text("The bit argument must be 1 or 0.")),
        };
        let range = match argv.len() {
            3 => None,
            4..=6 => {
                let start = parse_i64(argv[3])?;
                let bits = match argv.get(5) {
                    Some(u) => unit(u)?,
                    None => false,
                };
                let end = match argv.get(4) {
                    Some(e) => Some(parse_i64(e)?),
                    None => None,
                };
                Some((start, end, bits))
            }
            _ => return Err(Error::Syntax),
        };
        let Some(s) = read_string(db, argv[1])? else {
            return Ok(Reply::Int(if bit { -1 } else { 0 }));
        };
        let data = s.bytes();
        let len = data.len() as i64;
        let end_given = matches!(range, Some((_, Some(_), _)));
        let resolved = match range {
            None if data.is_empty() => None,
            None => Some(Range {
                start: 0,
                end: data.len() - 1,
                first_mask: 0,
                last_mask: 0,
            }),
            Some((start, end, bits)) => {
                let end = end.unwrap_or(if bits { (len << 3) + 7 } else { len - 1 });
                resolve(data.len(), start, end, bits)
            }
        };
        let Some(r) = resolved else {
            return Ok(Reply::Int(-1));
        };
        Ok(Reply::Int(search(&data, r, bit, end_given)))
    }
}

/// The search of `bitposCommand` within a resolved range.
fn search(data: &[u8], r: Range, bit: bool, end_given: bool) -> i64 {
    let mask_out = |b: u8, mask: u8| if bit { b & !mask } else { b | mask };
    let mut start = r.start;
    let mut bytes = r.end - r.start + 1;
    let pos = 'found: {
        if r.first_mask != 0 {
            let mut b = mask_out(data[start], r.first_mask);
            if r.last_mask != 0 && bytes == 1 {
                b = mask_out(b, r.last_mask);
            }
            let pos = first_bit(&[b], bit);
            if bytes == 1 || (pos != -1 && pos != 8) {
                break 'found pos;
            }
            start += 1;
            bytes -= 1;
        }
        let middle = bytes - usize::from(r.last_mask != 0);
        if middle > 0 {
            let pos = first_bit(&data[start..start + middle], bit);
            if bytes == middle || (pos != -1 && pos != (middle as i64) << 3) {
                break 'found pos;
            }
            start += middle;
            bytes -= middle;
        }
        first_bit(&[mask_out(data[r.end], r.last_mask)], bit)
    };
    if end_given && !bit && pos == (bytes as i64) << 3 {
        return -1;
    }
    if pos == -1 {
        -1
    } else {
        pos + ((start as i64) << 3)
    }
}
