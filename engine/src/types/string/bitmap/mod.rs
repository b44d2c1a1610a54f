//! Bitmaps: strings read and written bit by bit. Bit 0 is the most significant bit of the
//! first byte, as Redis numbers them; a string is padded with zero bytes as far as a write
//! reaches, and reads past its end see zeros.
//!
//! - `setbit_getbit`: SETBIT, GETBIT; `count_pos`: BITCOUNT, BITPOS; `bitop`: BITOP (AND, OR,
//!   XOR, NOT, DIFF, DIFF1, ANDOR, ONE); `bitfield`: BITFIELD, BITFIELD_RO.
//! - This file: what they share: the offset reader, the write lookup that creates or grows
//!   the string in place (turning it `raw`, as Redis's `lookupStringForBitCommand`), a
//!   popcount over 64-bit words and the first-bit search.

pub(crate) mod bitfield;
pub(crate) mod bitop;
pub(crate) mod count_pos;
pub(crate) mod setbit_getbit;

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::Db;
use crate::types::Value;
use crate::types::string::StringValue;
use crate::types::string::commands::range::STRING_BYTES_MAX;

/// Redis's error for a bad bit offset.
const BAD_OFFSET: &str = "bit offset is not an integer or out of range";

/// A bit offset as Redis's `getBitOffsetFromArgument`: an integer (with `#n` meaning
/// `n * bits` when `bits` is given), not negative, its byte within `proto-max-bulk-len`.
pub(crate) fn bit_offset(arg: &[u8], bits: Option<u32>) -> Result<u64> {
    let bad = || Error::Text(BAD_OFFSET);
    let (digits, times) = match (arg.first(), bits) {
        (Some(b'#'), Some(bits)) => (&arg[1..], i64::from(bits)),
        _ => (arg, 1),
    };
    let n = parse_i64(digits).map_err(|_| bad())?;
    let n = n.checked_mul(times).ok_or_else(bad)?;
    match u64::try_from(n) {
        Ok(n) if (n >> 3) < STRING_BYTES_MAX => Ok(n),
        _ => Err(bad()),
    }
}

/// The string under `key` made to hold at least `bytes` bytes, created (zeroed) if missing,
/// then changed by `f`; turns it `raw`. Returns what `f` returns and whether the string was
/// created or grew. WRONGTYPE for another type. Produces no effects but a created key's
/// `new`.
pub(crate) fn write_bits<R>(
    db: &mut Db,
    key: &[u8],
    bytes: usize,
    f: impl FnOnce(&mut StringValue) -> R,
) -> Result<(R, bool)> {
    let mut f = Some(f);
    let existing = db.string_mut(key, |s| {
        let old = s.len();
        s.make_raw();
        if old < bytes {
            s.resize(bytes);
        }
        let f = f.take().map(|f| f(s));
        (f, s.len() != old)
    })?;
    if let Some((Some(out), grew)) = existing {
        return Ok((out, grew));
    }
    let mut s = StringValue::zeroed(bytes);
    let out = match f.take() {
        Some(f) => f(&mut s),
        None => return Err(Error::WrongType),
    };
    db.replace_value(key, Value::String(s));
    Ok((out, true))
}

/// The string under `key` for a read (counted as a read lookup): None when missing,
/// WRONGTYPE for another type.
pub(crate) fn read_string<'a>(db: &'a mut Db, key: &[u8]) -> Result<Option<&'a StringValue>> {
    db.count_read(key, false);
    match db.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(Error::WrongType),
    }
}

/// The number of set bits in `bytes`, a 64-bit word at a time.
pub fn popcount(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(32);
    let mut sums = [0u64; 4];
    for chunk in &mut words {
        for (i, word) in chunk.chunks_exact(8).enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            sums[i] += u64::from(u64::from_ne_bytes(w).count_ones());
        }
    }
    let tail: u64 = words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    sums.iter().sum::<u64>() + tail
}

/// The position of the first bit equal to `bit` in `bytes`, as Redis's `redisBitpos`: -1
/// when looking for a 1 that is not there, the first bit past the end when looking for a 0
/// that is not there.
pub fn first_bit(bytes: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0u8 } else { 0xff };
    let mut words = bytes.chunks_exact(8);
    let mut at = 0usize;
    for word in &mut words {
        if word.iter().any(|&b| b != skip) {
            break;
        }
        at += 8;
    }
    for (i, &b) in bytes[at..].iter().enumerate() {
        if b != skip {
            let bits = if bit { b } else { !b };
            return ((at + i) * 8) as i64 + i64::from(bits.leading_zeros());
        }
    }
    if bit { -1 } else { (bytes.len() * 8) as i64 }
}

/// The bit at `offset` (0 past the end).
pub(crate) fn get_bit(bytes: &[u8], offset: u64) -> bool {
    let byte = (offset >> 3) as usize;
    bytes
        .get(byte)
        .is_some_and(|b| b & (0x80 >> (offset & 7)) != 0)
}

/// Sets the bit at `offset`, which must be within `bytes`.
pub(crate) fn set_bit(bytes: &mut [u8], offset: u64, on: bool) {
    let byte = (offset >> 3) as usize;
    let mask = 0x80 >> (offset & 7);
    if let Some(b) = bytes.get_mut(byte) {
        if on {
            *b |= mask;
        } else {
            *b &= !mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn offsets_as_redis() {
        assert_eq!(bit_offset(b"7", None), Ok(7));
        assert_eq!(bit_offset(b"#2", Some(8)), Ok(16));
        assert!(bit_offset(b"#2", None).is_err());
        assert!(bit_offset(b"-1", None).is_err());
        assert!(bit_offset(b"4294967296", None).is_err());
        assert_eq!(bit_offset(b"4294967295", None), Ok(4294967295));
    }

    proptest! {
        #[test]
        fn popcount_and_first_bit_match_a_bit_loop(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let slow: u64 = bytes.iter().map(|b| u64::from(b.count_ones())).sum();
            prop_assert_eq!(popcount(&bytes), slow);
            for bit in [false, true] {
                let found = (0..bytes.len() as u64 * 8).find(|&i| get_bit(&bytes, i) == bit);
                let expected = match found {
                    Some(i) => i as i64,
                    None if bit => -1,
                    None => bytes.len() as i64 * 8,
                };
                prop_assert_eq!(first_bit(&bytes, bit), expected);
            }
        }
    }
}
