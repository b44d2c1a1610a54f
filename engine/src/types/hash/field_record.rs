//! One field of a table-encoded hash as a record of `types/records.rs`: a header, the expiry
//! time if the field has one, the field, then the value.
//!
//! The header is one byte while the field is shorter than 64 bytes: the field's length shifted
//! left by one, with the low bit set when an expiry time (8 bytes, little-endian Unix ms)
//! follows, as a LEB128 varint. A field of `field:123456` with a value of 12 bytes is a record
//! of 25 bytes.

use crate::types::records::{Keyed, Lookup, Records};

/// The layout (see the module doc).
pub(super) struct FieldRecord;

/// A header's most bytes (a field shorter than 2^62 bytes).
const HEADER_MAX: usize = 10;

/// The header of a field of `field_len` bytes, and how many of its bytes are used.
pub(super) fn header(field_len: usize, has_ttl: bool) -> ([u8; HEADER_MAX], usize) {
    let mut out = [0; HEADER_MAX];
    let mut v = ((field_len as u64) << 1) | u64::from(has_ttl);
    let mut n = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out[n] = byte;
            return (out, n + 1);
        }
        out[n] = byte | 0x80;
        n += 1;
    }
}

/// The field, value and expiry time of a record; an ill-formed record (never written) reads
/// as an empty field and value.
pub(super) fn parts(record: &[u8]) -> (&[u8], &[u8], Option<u64>) {
    let mut v = 0u64;
    for (i, &b) in record.iter().take(HEADER_MAX).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 != 0 {
            continue;
        }
        let mut at = i + 1;
        let ttl = if v & 1 == 1 {
            let bytes = record.get(at..at + 8).and_then(|b| b.try_into().ok());
            at += 8;
            bytes.map(u64::from_le_bytes)
        } else {
            None
        };
        let field_end = at.saturating_add((v >> 1) as usize);
        return match (record.get(at..field_end), record.get(field_end..)) {
            (Some(field), Some(value)) => (field, value, ttl),
            _ => (&[], &[], None),
        };
    }
    (&[], &[], None)
}

impl Keyed for FieldRecord {
    fn key(record: &[u8]) -> &[u8] {
        parts(record).0
    }
}

/// Stores `field` with `value` and expiry `at` in `records`; returns whether it is new.
pub(super) fn store(
    records: &mut Records<FieldRecord>,
    field: &[u8],
    value: &[u8],
    at: Option<u64>,
) -> bool {
    let lookup = records.lookup(field);
    store_at(records, lookup, field, value, at)
}

/// [`store`] with `field` already looked up.
pub(super) fn store_at(
    records: &mut Records<FieldRecord>,
    lookup: Lookup,
    field: &[u8],
    value: &[u8],
    at: Option<u64>,
) -> bool {
    let (head, n) = header(field.len(), at.is_some());
    let ttl = at.unwrap_or(0).to_le_bytes();
    let ttl: &[u8] = if at.is_some() { &ttl } else { &[] };
    records.insert_at(lookup, field, &[&head[..n], ttl, field, value])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(field: &[u8], value: &[u8], at: Option<u64>) -> Vec<u8> {
        let (head, n) = header(field.len(), at.is_some());
        let mut r = head[..n].to_vec();
        if let Some(at) = at {
            r.extend_from_slice(&at.to_le_bytes());
        }
        r.extend_from_slice(field);
        r.extend_from_slice(value);
        r
    }

    #[test]
    fn parts_read_back_what_was_written() {
        let long = vec![b'f'; 300];
        for (field, value, at) in [
            (&b"field:1"[..], &b"value:1"[..], None),
            (b"", b"", Some(1)),
            (&long, b"v", Some(u64::from(u32::MAX) + 7)),
        ] {
            assert_eq!(parts(&record(field, value, at)), (field, value, at));
        }
        assert_eq!(record(b"field:123456", b"value:123456", None).len(), 25);
    }

    #[test]
    fn ill_formed_records_read_as_empty() {
        for bad in [&[][..], &[0x80], &[0x08, b'a'], &[0x03, 1, 2]] {
            assert_eq!(parts(bad), (&b""[..], &b""[..], None));
        }
    }
}
