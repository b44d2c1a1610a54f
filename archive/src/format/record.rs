//! An archive record: one folded stream entry, the value of one archive page.
//!
//! ```text
//!   0        1             9        17        25          29
//!   +--------+-------------+--------+---------+-----------+---------------------------+----------+
//!   | ver=1  | stream_no   | id.ms  | id.seq  | pairs (n) | n x (len,field,len,value) | checksum |
//!   | u8     | u64         | u64    | u64     | u32       | u32 + bytes, u32 + bytes  | u64      |
//!   +--------+-------------+--------+---------+-----------+---------------------------+----------+
//!   little-endian; checksum = xxh3-64 of every byte before it, seeded with the page number
//! ```
//!
//! The page number seeds the checksum so that a record copied to the wrong page (a misdirected
//! write, a bad restore) fails as surely as a flipped bit. The stream number ties the record to
//! its stream. A record is immutable once committed. Decoding never panics: every length is
//! checked against the bytes that remain, and the version and checksum are checked first.

use bytes::Bytes;
use echomq_engine::{Entry, StreamId};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::page::PageNo;

/// The record version this code writes.
pub const RECORD_VERSION: u8 = 1;
/// Bytes before the pairs: version, stream number, id, pair count.
const HEADER_BYTES: usize = 1 + 8 + 8 + 8 + 4;
/// Bytes of the trailing checksum.
const CHECKSUM_BYTES: usize = 8;

/// Why a record does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordFault {
    /// Fewer bytes than the fixed header and checksum.
    Short(usize),
    /// A version this code does not read.
    Version(u8),
    /// The checksum does not match the bytes.
    Checksum,
    /// A length points past the end, or bytes are left over.
    Framing,
}

impl std::fmt::Display for RecordFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordFault::Short(n) => write!(f, "only {n} bytes, shorter than any record"),
            RecordFault::Version(v) => write!(f, "record version {v} is not supported"),
            RecordFault::Checksum => f.write_str("checksum mismatch"),
            RecordFault::Framing => f.write_str("field lengths do not frame the record"),
        }
    }
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The stream the record belongs to.
    pub stream_no: u64,
    /// The entry: id and field/value pairs (slices of the page's bytes, not copies).
    pub entry: Entry,
}

/// Writes the encoding of an entry to `out` (cleared first).
pub fn encode<'a>(
    out: &mut Vec<u8>,
    page: PageNo,
    stream_no: u64,
    id: StreamId,
    pairs: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) {
    out.clear();
    append_unsealed(out, id, pairs);
    seal(out, page, stream_no);
}

/// Appends an entry's record to `out` with its stream number and checksum left zero, to be
/// filled by [`seal`] once the page is known (a fold batch encodes entries before the fold
/// allocates their pages).
pub fn append_unsealed<'a>(
    out: &mut Vec<u8>,
    id: StreamId,
    pairs: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) {
    // The header in one go (stream number and count filled in later), and room for a small
    // entry's pairs and checksum, so the pairs below rarely grow the buffer.
    let mut header = [0u8; HEADER_BYTES];
    header[0] = RECORD_VERSION;
    header[9..17].copy_from_slice(&id.ms.to_le_bytes());
    header[17..25].copy_from_slice(&id.seq.to_le_bytes());
    out.reserve(HEADER_BYTES + 64 + CHECKSUM_BYTES);
    let count_at = out.len() + HEADER_BYTES - 4;
    out.extend_from_slice(&header);
    let mut count = 0u32;
    for (field, value) in pairs {
        // Engine entries are at most 1 GiB in total, so every length fits a u32.
        out.extend_from_slice(&(field.len() as u32).to_le_bytes());
        out.extend_from_slice(field);
        out.extend_from_slice(&(value.len() as u32).to_le_bytes());
        out.extend_from_slice(value);
        count += 1;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&[0; CHECKSUM_BYTES]);
}

/// Completes a record that [`append_unsealed`] wrote (it is the whole of `record`): sets its
/// stream number and its checksum for `page`.
pub fn seal(record: &mut [u8], page: PageNo, stream_no: u64) {
    debug_assert!(record.len() >= HEADER_BYTES + CHECKSUM_BYTES);
    record[1..9].copy_from_slice(&stream_no.to_le_bytes());
    let body_len = record.len() - CHECKSUM_BYTES;
    let checksum = xxh3_64_with_seed(&record[..body_len], page.0);
    record[body_len..].copy_from_slice(&checksum.to_le_bytes());
}

/// The field/value pairs of a record written by [`append_unsealed`] or [`encode`], read
/// without checks (for records this process encoded; stored records go through [`decode`]).
/// Stops early, never panics, if the bytes do not frame.
pub fn pairs(record: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let body = record
        .get(..record.len().saturating_sub(CHECKSUM_BYTES))
        .unwrap_or_default();
    let count = u32_at(body, HEADER_BYTES - 4).unwrap_or(0);
    let mut at = HEADER_BYTES;
    let mut take = move || -> Option<&[u8]> {
        let len = u32_at(body, at).ok()?;
        let item = body.get(at + 4..(at + 4).checked_add(len)?)?;
        at += 4 + len;
        Some(item)
    };
    (0..count).map_while(move |_| Some((take()?, take()?)))
}

fn u64_at(bytes: &[u8], at: usize) -> Result<u64, RecordFault> {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or(RecordFault::Framing)
}

fn u32_at(bytes: &[u8], at: usize) -> Result<usize, RecordFault> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(|b| u32::from_le_bytes(b) as usize)
        .ok_or(RecordFault::Framing)
}

/// The stream number and id of a record, without checking the checksum (for seeking; every
/// record returned to a caller goes through [`decode`]).
pub fn peek(bytes: &[u8]) -> Result<(u64, StreamId), RecordFault> {
    if bytes.len() < HEADER_BYTES + CHECKSUM_BYTES {
        return Err(RecordFault::Short(bytes.len()));
    }
    if bytes[0] != RECORD_VERSION {
        return Err(RecordFault::Version(bytes[0]));
    }
    Ok((
        u64_at(bytes, 1)?,
        StreamId::new(u64_at(bytes, 9)?, u64_at(bytes, 17)?),
    ))
}

/// Checks and decodes the record stored at `page`.
pub fn decode(page: PageNo, bytes: Bytes) -> Result<Record, RecordFault> {
    let (stream_no, id) = peek(&bytes)?;
    let body_len = bytes.len() - CHECKSUM_BYTES;
    let stored = u64_at(&bytes, body_len)?;
    if xxh3_64_with_seed(&bytes[..body_len], page.0) != stored {
        return Err(RecordFault::Checksum);
    }
    let count = u32_at(&bytes, HEADER_BYTES - 4)?;
    // Each pair takes at least 8 bytes: a count larger than that is corrupt, whatever the
    // checksum says, and must not size an allocation.
    if count > (body_len - HEADER_BYTES) / 8 {
        return Err(RecordFault::Framing);
    }
    let mut fields = Vec::with_capacity(count);
    let mut at = HEADER_BYTES;
    let take = |at: &mut usize| -> Result<Bytes, RecordFault> {
        let len = u32_at(&bytes[..body_len], *at)?;
        let start = *at + 4;
        let end = start.checked_add(len).ok_or(RecordFault::Framing)?;
        if end > body_len {
            return Err(RecordFault::Framing);
        }
        *at = end;
        Ok(bytes.slice(start..end))
    };
    for _ in 0..count {
        let field = take(&mut at)?;
        let value = take(&mut at)?;
        fields.push((field, value));
    }
    if at != body_len {
        return Err(RecordFault::Framing);
    }
    Ok(Record {
        stream_no,
        entry: Entry { id, fields },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encoded(page: u64, stream_no: u64, id: StreamId, pairs: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(
            &mut out,
            PageNo(page),
            stream_no,
            id,
            pairs.iter().map(|(f, v)| (f.as_slice(), v.as_slice())),
        );
        out
    }

    proptest! {
        #[test]
        fn records_round_trip(
            page in any::<u64>(),
            stream_no in any::<u64>(),
            ms in any::<u64>(),
            seq in any::<u64>(),
            pairs in prop::collection::vec(
                (prop::collection::vec(any::<u8>(), 0..20), prop::collection::vec(any::<u8>(), 0..40)),
                0..6,
            ),
        ) {
            let id = StreamId::new(ms, seq);
            let bytes = encoded(page, stream_no, id, &pairs);
            let record = decode(PageNo(page), Bytes::from(bytes.clone())).unwrap();
            prop_assert_eq!(record.stream_no, stream_no);
            prop_assert_eq!(record.entry.id, id);
            let back: Vec<(Vec<u8>, Vec<u8>)> = record
                .entry
                .fields
                .iter()
                .map(|(f, v)| (f.to_vec(), v.to_vec()))
                .collect();
            prop_assert_eq!(back, pairs);
            prop_assert_eq!(peek(&bytes).unwrap(), (stream_no, id));
        }

        #[test]
        fn any_flipped_bit_or_cut_is_an_error_never_a_panic(
            pairs in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..8), prop::collection::vec(any::<u8>(), 0..8)), 1..4),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
            cut in any::<prop::sample::Index>(),
        ) {
            let bytes = encoded(7, 1, StreamId::new(5, 6), &pairs);
            let mut flipped = bytes.clone();
            let at = flip.index(flipped.len());
            flipped[at] ^= 1 << bit;
            prop_assert!(decode(PageNo(7), Bytes::from(flipped)).is_err());
            let cut = cut.index(bytes.len());
            prop_assert!(decode(PageNo(7), Bytes::copy_from_slice(&bytes[..cut])).is_err());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(PageNo(1), Bytes::from(bytes));
        }
    }

    #[test]
    fn an_unsealed_record_sealed_is_the_encoded_one() {
        let pairs = [(b"f1".as_slice(), b"v1".as_slice()), (b"f2", b"")];
        let id = StreamId::new(9, 3);
        let mut out = Vec::new();
        encode(&mut out, PageNo(77), 5, id, pairs.iter().copied());
        let mut batch = b"prefix".to_vec();
        append_unsealed(&mut batch, id, pairs.iter().copied());
        let record = &mut batch[6..];
        assert_eq!(self::pairs(record).collect::<Vec<_>>(), pairs);
        seal(record, PageNo(77), 5);
        assert_eq!(record, out.as_slice());
        assert_eq!(self::pairs(&out).collect::<Vec<_>>(), pairs);
    }

    #[test]
    fn a_record_on_another_page_fails_its_checksum() {
        let bytes = encoded(
            100,
            1,
            StreamId::new(1, 1),
            &[(b"f".to_vec(), b"v".to_vec())],
        );
        assert!(decode(PageNo(100), Bytes::from(bytes.clone())).is_ok());
        assert_eq!(
            decode(PageNo(101), Bytes::from(bytes)),
            Err(RecordFault::Checksum)
        );
    }

    #[test]
    fn an_unknown_version_is_named() {
        let mut bytes = encoded(1, 1, StreamId::new(1, 1), &[]);
        bytes[0] = 9;
        assert_eq!(
            decode(PageNo(1), Bytes::from(bytes)),
            Err(RecordFault::Version(9))
        );
    }
}
