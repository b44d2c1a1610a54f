//! The commit object, `{prefix}/commits/{version:020}`: small, written create-only, never
//! deleted. Its layout (big-endian, format 1):
//!
//! ```text
//! "EMQC" | format u8 = 1 | version u64 | prev_hash [32] | epoch u64 | writer [16]
//! | has_pages u8 (0|1) [ first u64 | last u64 ]
//! | n_folds u32 { stream_len u32 | stream | stream_no u64 | first_page u64 | last_page u64
//!                | first.ms u64 | first.seq u64 | W.ms u64 | W.seq u64 }*
//! | n_segments u32 { key_len u16 | key | first u64 | last u64 | pages u32 | len u64 | sha256 [32] }*
//! | hash [32] = SHA-256 of every byte before it
//! ```
//!
//! Invariants a decoded commit satisfies (checked by [`Commit::decode`]): the hash matches;
//! segment ranges lie inside the page range, in order, without overlap; the folds tile the
//! page range exactly, in order, each with `first_id <= W`; an epoch bump (no pages) names no
//! fold and no segment. Chain rules (prev hash, contiguity, epochs, increasing W, one number
//! per stream) need what came before: see [`ChainState`].

use sha2::{Digest, Sha256};

use super::codec::Reader;
use std::collections::BTreeMap;

use echomq_engine::StreamId;

use super::types::{CommitHash, Epoch, FoldRef, PageRange, Version, WriterId};

/// First bytes of every commit object.
pub const COMMIT_MAGIC: &[u8; 4] = b"EMQC";
/// The encoding written today. A reader refuses formats it does not know.
pub const COMMIT_FORMAT: u8 = 1;
/// A commit larger than this is not ours: commits name segments, they never carry pages.
pub const COMMIT_BYTES_MAX: usize = 4 << 20;
/// A stream key longer than this in a commit is corrupt (Redis keys are capped at 512 MiB but
/// the archive's stream keys are queue names).
pub const STREAM_KEY_BYTES_MAX: usize = 64 << 10;
/// A segment key longer than this is corrupt (S3 caps keys at 1024 bytes).
pub const SEGMENT_KEY_BYTES_MAX: usize = 1024;

/// The object key of `version` under `prefix` (empty prefix: no leading slash).
pub fn commit_key(prefix: &str, version: Version) -> String {
    if prefix.is_empty() {
        format!("commits/{:020}", version.0)
    } else {
        format!("{prefix}/commits/{:020}", version.0)
    }
}

/// One segment a commit names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentRef {
    /// Full object key.
    pub key: String,
    /// Pages it may hold (its first and last page).
    pub pages: PageRange,
    /// How many pages it holds.
    pub page_count: u32,
    /// Object length in bytes.
    pub len: u64,
    /// SHA-256 of the whole object.
    pub sha256: [u8; 32],
}

/// A decoded commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// Its position in the chain.
    pub version: Version,
    /// The hash of version - 1 ([`CommitHash::GENESIS`] for version 1).
    pub prev_hash: CommitHash,
    /// The writer's epoch.
    pub epoch: Epoch,
    /// The writer.
    pub writer: WriterId,
    /// Pages covered: `first` follows the previous commit's `last`. `None` for a commit that
    /// carries no pages (an epoch bump at takeover).
    pub pages: Option<PageRange>,
    /// The folds whose pages this commit carries, in page order.
    pub folds: Vec<FoldRef>,
    /// Where the pages are.
    pub segments: Vec<SegmentRef>,
}

/// A commit with its bytes and hash, ready to send or just received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedCommit {
    /// The decoded form.
    pub commit: Commit,
    /// The object's bytes.
    pub bytes: Vec<u8>,
    /// Its hash (the last 32 bytes).
    pub hash: CommitHash,
}

impl Commit {
    /// Encodes and hashes.
    pub fn encode(self) -> EncodedCommit {
        let mut out = Vec::with_capacity(128 + self.segments.len() * 128);
        out.extend_from_slice(COMMIT_MAGIC);
        out.push(COMMIT_FORMAT);
        out.extend_from_slice(&self.version.0.to_be_bytes());
        out.extend_from_slice(&self.prev_hash.0);
        out.extend_from_slice(&self.epoch.0.to_be_bytes());
        out.extend_from_slice(&self.writer.0);
        match self.pages {
            Some(range) => {
                out.push(1);
                out.extend_from_slice(&range.first.to_be_bytes());
                out.extend_from_slice(&range.last.to_be_bytes());
            }
            None => out.push(0),
        }
        out.extend_from_slice(&(self.folds.len() as u32).to_be_bytes());
        for f in &self.folds {
            out.extend_from_slice(&(f.stream.len() as u32).to_be_bytes());
            out.extend_from_slice(&f.stream);
            for n in [
                f.stream_no,
                f.pages.first,
                f.pages.last,
                f.first_id.ms,
                f.first_id.seq,
                f.watermark.ms,
                f.watermark.seq,
            ] {
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        out.extend_from_slice(&(self.segments.len() as u32).to_be_bytes());
        for s in &self.segments {
            out.extend_from_slice(&(s.key.len() as u16).to_be_bytes());
            out.extend_from_slice(s.key.as_bytes());
            out.extend_from_slice(&s.pages.first.to_be_bytes());
            out.extend_from_slice(&s.pages.last.to_be_bytes());
            out.extend_from_slice(&s.page_count.to_be_bytes());
            out.extend_from_slice(&s.len.to_be_bytes());
            out.extend_from_slice(&s.sha256);
        }
        let hash = CommitHash(Sha256::digest(&out).into());
        out.extend_from_slice(&hash.0);
        EncodedCommit {
            commit: self,
            bytes: out,
            hash,
        }
    }

    /// Decodes and checks the hash and the commit's own invariants. The error says what is
    /// wrong; the caller names the object.
    pub fn decode(bytes: &[u8]) -> Result<EncodedCommit, String> {
        if bytes.len() > COMMIT_BYTES_MAX {
            return Err(format!(
                "{} bytes, more than a commit can be ({COMMIT_BYTES_MAX})",
                bytes.len()
            ));
        }
        let body_len = bytes
            .len()
            .checked_sub(32)
            .ok_or("shorter than a hash: not an echomq commit")?;
        let (body, stored) = bytes.split_at(body_len);
        let mut r = Reader::new(body);
        if r.take(4, "magic")? != COMMIT_MAGIC {
            return Err("wrong magic: not an echomq commit object".into());
        }
        let format = r.u8("format")?;
        if format != COMMIT_FORMAT {
            return Err(format!(
                "format {format}, this build reads format {COMMIT_FORMAT}: upgrade echomq"
            ));
        }
        let computed: [u8; 32] = Sha256::digest(body).into();
        if computed != stored {
            return Err("hash does not match the content (corrupted or edited)".into());
        }
        let version = Version(r.u64("version")?);
        let prev_hash = CommitHash(r.array("prev hash")?);
        let epoch = Epoch(r.u64("epoch")?);
        let writer = WriterId(r.array("writer")?);
        let pages = match r.u8("page flag")? {
            0 => None,
            1 => {
                let first = r.u64("first page")?;
                let last = r.u64("last page")?;
                Some(PageRange::new(first, last).ok_or("page range first > last")?)
            }
            other => return Err(format!("page flag {other}")),
        };
        let n = r.u32("fold count")? as usize;
        let mut folds: Vec<FoldRef> = Vec::with_capacity(n.min(r.remaining() / 60));
        for _ in 0..n {
            let len = r.u32("stream length")? as usize;
            if len > STREAM_KEY_BYTES_MAX {
                return Err(format!("stream key of {len} bytes"));
            }
            let stream = r.take(len, "stream key")?.to_vec();
            let stream_no = r.u64("stream number")?;
            let first = r.u64("fold first page")?;
            let last = r.u64("fold last page")?;
            let fold = FoldRef {
                stream,
                stream_no,
                pages: PageRange::new(first, last).ok_or("fold pages first > last")?,
                first_id: StreamId {
                    ms: r.u64("first id ms")?,
                    seq: r.u64("first id seq")?,
                },
                watermark: StreamId {
                    ms: r.u64("W ms")?,
                    seq: r.u64("W seq")?,
                },
            };
            if fold.first_id > fold.watermark {
                return Err("a fold's first id is above its W".into());
            }
            let expect_first = match folds.last() {
                Some(prev) => prev.pages.last.checked_add(1),
                None => pages.map(|p| p.first),
            };
            if expect_first != Some(first) {
                return Err("folds do not tile the commit's pages".into());
            }
            folds.push(fold);
        }
        if folds.last().map(|f| f.pages.last) != pages.map(|p| p.last) {
            return Err("folds do not cover the commit's pages".into());
        }
        let n = r.u32("segment count")? as usize;
        let mut segments: Vec<SegmentRef> = Vec::with_capacity(n.min(r.remaining() / 60));
        for _ in 0..n {
            let len = r.u16("segment key length")? as usize;
            if len > SEGMENT_KEY_BYTES_MAX {
                return Err(format!("segment key of {len} bytes"));
            }
            let key = String::from_utf8(r.take(len, "segment key")?.to_vec())
                .map_err(|_| "segment key is not UTF-8")?;
            let first = r.u64("segment first")?;
            let last = r.u64("segment last")?;
            let seg = SegmentRef {
                key,
                pages: PageRange::new(first, last).ok_or("segment range first > last")?,
                page_count: r.u32("segment page count")?,
                len: r.u64("segment length")?,
                sha256: r.array("segment sha256")?,
            };
            let inside = pages.is_some_and(|p| p.contains(first) && p.contains(last));
            if !inside {
                return Err(format!("segment {} outside the commit's pages", seg.key));
            }
            if segments.last().is_some_and(|prev| prev.pages.last >= first) {
                return Err("segments overlap or are out of order".into());
            }
            segments.push(seg);
        }
        r.end("the segment list")?;
        let hash = CommitHash(computed);
        Ok(EncodedCommit {
            commit: Commit {
                version,
                prev_hash,
                epoch,
                writer,
                pages,
                folds,
                segments,
            },
            bytes: bytes.to_vec(),
            hash,
        })
    }
}

/// What the chain up to some commit established, for checking the next one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainState {
    /// The last commit's version, hash and epoch.
    pub last: Option<(Version, CommitHash, Epoch)>,
    /// The last page any commit covered.
    pub last_page: Option<u64>,
    /// Each stream's number and `W`.
    pub streams: BTreeMap<Vec<u8>, (u64, StreamId)>,
    /// Which stream each number belongs to.
    numbers: BTreeMap<u64, Vec<u8>>,
}

impl ChainState {
    /// Checks that `next` (with hash `hash`) follows, then records it; returns why not.
    pub fn advance(&mut self, next: &Commit, hash: CommitHash) -> Result<(), String> {
        let (want_version, want_hash, min_epoch) = match self.last {
            None => (Version(1), CommitHash::GENESIS, Epoch(0)),
            Some((v, h, e)) => (v.next(), h, e),
        };
        if next.version != want_version {
            return Err(format!(
                "holds version {}, expected {want_version}",
                next.version
            ));
        }
        if next.prev_hash != want_hash {
            return Err(format!(
                "prev hash {} is not the previous commit's hash {want_hash}",
                next.prev_hash
            ));
        }
        if next.epoch < min_epoch {
            return Err(format!(
                "epoch {} is older than the previous commit's {min_epoch}",
                next.epoch
            ));
        }
        if let (Some(range), Some(last)) = (next.pages, self.last_page)
            && Some(range.first) != last.checked_add(1)
        {
            return Err(format!(
                "pages start at {:016x}, expected {:016x} right after the previous commit's",
                range.first,
                last.wrapping_add(1)
            ));
        }
        let mut streams = self.streams.clone();
        let mut numbers = self.numbers.clone();
        for f in &next.folds {
            if let Some(&(no, w)) = streams.get(&f.stream) {
                if no != f.stream_no {
                    return Err(format!(
                        "stream {:?} changes number from {no} to {}",
                        String::from_utf8_lossy(&f.stream),
                        f.stream_no
                    ));
                }
                if f.first_id <= w {
                    return Err(format!(
                        "stream {:?} folds from {} but its W is already {w}: W must increase",
                        String::from_utf8_lossy(&f.stream),
                        f.first_id
                    ));
                }
            } else if let Some(other) = numbers.get(&f.stream_no) {
                return Err(format!(
                    "stream number {} already belongs to {:?}",
                    f.stream_no,
                    String::from_utf8_lossy(other)
                ));
            }
            numbers.insert(f.stream_no, f.stream.clone());
            streams.insert(f.stream.clone(), (f.stream_no, f.watermark));
        }
        self.streams = streams;
        self.numbers = numbers;
        self.last = Some((next.version, hash, next.epoch));
        if let Some(range) = next.pages {
            self.last_page = Some(range.last);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(ms: u64) -> StreamId {
        StreamId { ms, seq: 0 }
    }

    fn fold(stream: &[u8], no: u64, first: u64, last: u64, ids: (u64, u64)) -> FoldRef {
        FoldRef {
            stream: stream.to_vec(),
            stream_no: no,
            pages: PageRange { first, last },
            first_id: id(ids.0),
            watermark: id(ids.1),
        }
    }

    fn sample() -> Commit {
        Commit {
            version: Version(1),
            prev_hash: CommitHash::GENESIS,
            epoch: Epoch(2),
            writer: WriterId([9; 16]),
            pages: PageRange::new(10, 20),
            folds: vec![fold(b"a", 0, 10, 14, (1, 5)), fold(b"b", 1, 15, 20, (1, 6))],
            segments: vec![SegmentRef {
                key: "p/segments/x".into(),
                pages: PageRange {
                    first: 10,
                    last: 20,
                },
                page_count: 11,
                len: 999,
                sha256: [1; 32],
            }],
        }
    }

    #[test]
    fn round_trips_and_every_flipped_byte_is_detected() {
        let enc = sample().encode();
        let dec = Commit::decode(&enc.bytes).unwrap();
        assert_eq!(dec, enc);
        for i in 0..enc.bytes.len() {
            let mut bad = enc.bytes.clone();
            bad[i] ^= 0x40;
            assert!(Commit::decode(&bad).is_err(), "flip at {i} went unnoticed");
        }
        for cut in 0..enc.bytes.len() {
            assert!(Commit::decode(&enc.bytes[..cut]).is_err());
        }
    }

    #[test]
    fn folds_must_tile_the_pages() {
        let mut gap = sample();
        gap.folds[1].pages.first = 16;
        assert!(Commit::decode(&gap.encode().bytes).is_err());
        let mut short = sample();
        short.folds.pop();
        assert!(Commit::decode(&short.encode().bytes).is_err());
    }

    #[test]
    fn foreign_bytes_are_refused_with_a_reason() {
        let err =
            Commit::decode(b"{\"json\": \"from another tool, long enough to hash\"}").unwrap_err();
        assert!(err.contains("magic"), "{err}");
    }

    #[test]
    fn chain_rules() {
        let first = sample().encode();
        let mut chain = ChainState::default();
        chain.advance(&first.commit, first.hash).unwrap();
        let next = Commit {
            version: Version(2),
            prev_hash: first.hash,
            pages: PageRange::new(21, 30),
            folds: vec![fold(b"a", 0, 21, 30, (6, 9))],
            segments: Vec::new(),
            ..sample()
        };
        assert_eq!(chain.clone().advance(&next, CommitHash([1; 32])), Ok(()));
        let mut gap = next.clone();
        gap.pages = PageRange::new(22, 30);
        assert!(chain.clone().advance(&gap, CommitHash::GENESIS).is_err());
        let mut stale = next.clone();
        stale.folds[0].first_id = id(5);
        assert!(chain.clone().advance(&stale, CommitHash::GENESIS).is_err());
        let mut renumbered = next.clone();
        renumbered.folds[0].stream_no = 1;
        assert!(
            chain
                .clone()
                .advance(&renumbered, CommitHash::GENESIS)
                .is_err()
        );
        let mut older = next.clone();
        older.epoch = Epoch(1);
        assert!(chain.clone().advance(&older, CommitHash::GENESIS).is_err());
        let mut unlinked = next.clone();
        unlinked.prev_hash = CommitHash([0; 32]);
        assert!(
            chain
                .clone()
                .advance(&unlinked, CommitHash::GENESIS)
                .is_err()
        );
    }

    proptest! {
        #[test]
        fn any_commit_round_trips(
            version in 1u64..u64::MAX,
            epoch in any::<u64>(),
            first in 0u64..1 << 62,
            lens in proptest::collection::vec((0u64..100, proptest::collection::vec(any::<u8>(), 0..20)), 1..5),
        ) {
            let mut folds = Vec::new();
            let mut at = first;
            for (i, (len, stream)) in lens.into_iter().enumerate() {
                folds.push(fold(&stream, i as u64, at, at + len, (at, at + len)));
                at += len + 1;
            }
            let commit = Commit {
                version: Version(version),
                prev_hash: CommitHash([7; 32]),
                epoch: Epoch(epoch),
                writer: WriterId([1; 16]),
                pages: PageRange::new(first, at - 1),
                folds,
                segments: vec![SegmentRef { key: "k".into(), pages: PageRange { first, last: at - 1 }, page_count: 1, len: 3, sha256: [0; 32] }],
            };
            let enc = commit.encode();
            prop_assert_eq!(Commit::decode(&enc.bytes).unwrap(), enc);
        }
    }
}
