//! The `replica_decode` fuzz target: bytes from the bucket (commit and segment objects) or from
//! the archive's redb file (the writer's local state) through the replica's decoders.
//!
//! Input: the first byte picks the decoder (`selector % 5`), the rest is its input:
//! - [`COMMIT`]: a commit object through [`Commit::decode`] (the function restore runs on
//!   every commit it fetches), then through the chain check restore runs on the first commit
//!   ([`ChainState::advance`]).
//! - [`COMMIT_BODY`]: a commit object without its hash: the target appends the SHA-256 of the
//!   body, so the fuzzer, which cannot forge a hash, reaches the field parser and the
//!   invariant checks behind the hash check.
//! - [`SEGMENT`]: `first u64 | last u64 | page_count u32` (big-endian) build the reference,
//!   the rest is the segment object. The reference's length and SHA-256 are computed from
//!   those bytes, so the fuzzer gets past the checksum into the page parser (a mismatching
//!   checksum or length is refused before any parsing; the tests cover that path).
//! - [`STATE`]: a [`LocalState`] value through [`LocalState::decode`].
//! - [`READER`]: `op_count u8 | ops | data`: a script of reads on the bounds-checked reader
//!   every decoder above is built on.
//!
//! Properties (each a panic when broken):
//! - No decoder panics, whatever the bytes.
//! - All three formats are canonical (fixed-width integers, flags that are exactly 0 or 1,
//!   lengths that must match, no trailing bytes), so whatever decodes re-encodes with the
//!   real encoder to exactly the input bytes.
//! - A commit that decodes carries a hash equal to its last 32 bytes and to the SHA-256 of
//!   every byte before them: decode verified it.
//! - A segment that decodes holds exactly `page_count` strictly increasing pages that start
//!   and end at the reference's range.
//! - The reader never moves past the end, a failed read moves nothing, and a successful read
//!   returns the bytes at its position.

use sha2::{Digest, Sha256};

use crate::replica::codec::Reader;
use crate::replica::commit::{ChainState, Commit, SegmentRef};
use crate::replica::segment;
use crate::replica::{LocalState, PageRange, ReplicaError};

/// How many decoders the first byte chooses from.
pub const DECODERS: u8 = 5;
/// Selector value (modulo [`DECODERS`]) for the commit decoder.
pub const COMMIT: u8 = 0;
/// Selector value for the commit decoder with the hash made to match.
pub const COMMIT_BODY: u8 = 1;
/// Selector value for the segment decoder.
pub const SEGMENT: u8 = 2;
/// Selector value for the local state decoder.
pub const STATE: u8 = 3;
/// Selector value for the reader script.
pub const READER: u8 = 4;

/// Length of the reference header in a segment input: first, last, page count.
pub const SEGMENT_HEADER_BYTES: usize = 8 + 8 + 4;

/// Runs one input; panics only if a property fails.
pub fn replica_decode(data: &[u8]) {
    run(data);
}

/// Runs one input and says whether it decoded (so tests can tell that seeds reach the
/// re-encoding checks instead of being refused early).
pub(super) fn run(data: &[u8]) -> bool {
    let Some((&selector, body)) = data.split_first() else {
        return false;
    };
    match selector % DECODERS {
        COMMIT => commit(body),
        COMMIT_BODY => {
            let mut bytes = body.to_vec();
            bytes.extend_from_slice(&Sha256::digest(body));
            commit(&bytes)
        }
        SEGMENT => segment(body),
        STATE => state(body),
        READER => reader(body),
        // `% DECODERS` leaves no other value.
        _ => false,
    }
}

fn commit(bytes: &[u8]) -> bool {
    let Ok(decoded) = Commit::decode(bytes) else {
        return false;
    };
    assert_eq!(decoded.bytes, bytes, "decode keeps the object's bytes");
    let (body, stored) = bytes.split_at(bytes.len() - 32);
    let computed: [u8; 32] = Sha256::digest(body).into();
    assert_eq!(
        stored, computed,
        "a commit whose hash does not match decoded"
    );
    assert_eq!(decoded.hash.0, computed, "decode reports another hash");
    let again = decoded.commit.clone().encode();
    assert_eq!(again, decoded, "a decoded commit re-encodes to other bytes");
    // Restore's next check: whatever it says, it must say it without panicking.
    let _ = ChainState::default().advance(&decoded.commit, decoded.hash);
    true
}

fn segment(input: &[u8]) -> bool {
    let Some((header, bytes)) = input.split_first_chunk::<SEGMENT_HEADER_BYTES>() else {
        return false;
    };
    let (first, rest) = header.split_at(8);
    let (last, count) = rest.split_at(8);
    let be_u64 = |b: &[u8]| u64::from_be_bytes(b.try_into().unwrap_or_default());
    let Some(pages) = PageRange::new(be_u64(first), be_u64(last)) else {
        return false;
    };
    let reference = SegmentRef {
        key: "fuzz/segment".into(),
        pages,
        page_count: u32::from_be_bytes(count.try_into().unwrap_or_default()),
        len: bytes.len() as u64,
        sha256: Sha256::digest(bytes).into(),
    };
    let Ok(decoded) = segment::decode(&reference, bytes) else {
        return false;
    };
    assert_eq!(decoded.len(), reference.page_count as usize, "page count");
    assert!(
        decoded.windows(2).all(|w| w[0].number < w[1].number),
        "pages out of order"
    );
    assert_eq!(decoded.first().map(|p| p.number), Some(pages.first));
    assert_eq!(decoded.last().map(|p| p.number), Some(pages.last));
    let Some((again, encoded)) = segment::encode("fuzz", &decoded) else {
        panic!("a decoded segment has no pages");
    };
    assert_eq!(
        encoded, bytes,
        "a decoded segment re-encodes to other bytes"
    );
    assert_eq!(again.pages, reference.pages);
    assert_eq!(again.page_count, reference.page_count);
    assert_eq!(again.len, reference.len);
    assert_eq!(again.sha256, reference.sha256);
    true
}

fn state(bytes: &[u8]) -> bool {
    match LocalState::decode(bytes) {
        Ok(decoded) => {
            let again = decoded.encode();
            assert_eq!(
                again, bytes,
                "a decoded local state re-encodes to other bytes"
            );
            true
        }
        Err(ReplicaError::LocalState(_)) => false,
        Err(other) => panic!("local state decode failed with another error kind: {other}"),
    }
}

/// Op codes of the reader script (`op % READER_OPS`); the high bits give `take`'s length.
const READER_OPS: u8 = 8;

/// Returns true when the script ran (the reader has no "refused" outcome).
fn reader(input: &[u8]) -> bool {
    let Some((&op_count, rest)) = input.split_first() else {
        return false;
    };
    let ops_len = (op_count as usize).min(rest.len());
    let (ops, data) = rest.split_at(ops_len);
    let mut r = Reader::new(data);
    for &op in ops {
        let before = r.position();
        let read: Result<Vec<u8>, String> = match op % READER_OPS {
            0 => r.u8("u8").map(|v| vec![v]),
            1 => r.u16("u16").map(|v| v.to_be_bytes().to_vec()),
            2 => r.u32("u32").map(|v| v.to_be_bytes().to_vec()),
            3 => r.u64("u64").map(|v| v.to_be_bytes().to_vec()),
            4 => r.array::<3>("array").map(|v| v.to_vec()),
            5 => r.take(usize::from(op >> 3), "take").map(<[u8]>::to_vec),
            6 => r
                .take(usize::MAX - usize::from(op >> 3), "huge")
                .map(<[u8]>::to_vec),
            _ => {
                let end = r.end("end");
                assert_eq!(end.is_ok(), before == data.len(), "end disagrees");
                Ok(Vec::new())
            }
        };
        let after = r.position();
        assert!(after <= data.len(), "the reader moved past the end");
        assert_eq!(after + r.remaining(), data.len(), "position + remaining");
        match read {
            Ok(got) => {
                assert_eq!(after, before + got.len(), "a read moved by another length");
                assert_eq!(data.get(before..after), Some(&got[..]), "wrong bytes");
            }
            Err(_) => assert_eq!(after, before, "a failed read moved the reader"),
        }
    }
    true
}
