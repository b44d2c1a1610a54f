//! `SETBIT key offset value`, `GETBIT key offset`.
//!
//! SETBIT sets or clears one bit and replies its previous value. Checked in Redis's order:
//! the offset (`ERR bit offset is not an integer or out of range`: negative, or its byte past
//! 512 MiB), the value (`ERR bit is not an integer or out of range` unless 0 or 1), the type.
//! The string is created or grown with zero bytes as far as the bit, in place, and turns
//! `raw` (even when the bit keeps its value). Effects when it was created, grew or the bit
//! changed, as Redis 8.8's `setbitCommand`: a created key fires `new`, then `setbit`; WATCH
//! touched; 1 change; propagated verbatim.
//!
//! GETBIT replies the bit (0 past the end or for a missing key); the offset is checked first,
//! then the type. A read lookup.

use super::{bit_offset, get_bit, read_string, set_bit, write_bits};
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;

/// SETBIT.
#[derive(Debug)]
pub struct SetBit;

impl SetBit {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let offset = bit_offset(argv[2], None)?;
        let bad = || Error::Text("bit is not an integer or out of range");
        let on = match parse_i64(argv[3]).map_err(|_| bad())? {
            0 => false,
            1 => true,
            _ => return Err(bad()),
        };
        let bytes = (offset >> 3) as usize + 1;
        let (was, grew) = write_bits(db, key, bytes, |s| {
            let data = s.bytes_mut();
            let was = get_bit(data, offset);
            set_bit(data, offset, on);
            was
        })?;
        if grew || was != on {
            db.wrote(key, STRING, "setbit", 1, argv);
        }
        Ok(Reply::Int(i64::from(was)))
    }
}

/// GETBIT.
#[derive(Debug)]
pub struct GetBit;

impl GetBit {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let offset = bit_offset(argv[2], None)?;
        let bit = match read_string(db, argv[1])? {
            None => false,
            Some(s) => get_bit(&s.bytes(), offset),
        };
        Ok(Reply::Int(i64::from(bit)))
    }
}
