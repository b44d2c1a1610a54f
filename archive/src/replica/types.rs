//! Identifiers of the replication layer: one distinct type each, with the text forms used in
//! object keys and messages.

use std::fmt;

use echomq_engine::StreamId;
use sha2::{Digest, Sha256};

/// A commit's position in the chain: 1, 2, 3, ... with no gaps. Its object key is
/// `commits/{version:020}` so lexicographic order is version order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Version(pub u64);

impl Version {
    /// The version after this one (saturating: 2^64 commits are out of reach).
    pub fn next(self) -> Version {
        Version(self.0.saturating_add(1))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A writer session's generation. A takeover commits `epoch + 1` at the head; commits of
/// older epochs can then no longer land (their version slot is taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Epoch(pub u64);

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Who wrote a commit: 128 random bits chosen when a node first replicates (or restores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WriterId(pub [u8; 16]);

impl WriterId {
    /// A fresh id, unique with overwhelming probability.
    pub fn generate() -> WriterId {
        let digest = unique_digest(b"writer");
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        WriterId(id)
    }
}

impl fmt::Display for WriterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

/// SHA-256 of a commit's encoding (everything before the hash itself). The chain links each
/// commit to the previous one by this hash; a writer recognises its own commit by it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CommitHash(pub [u8; 32]);

impl CommitHash {
    /// The `prev_hash` of version 1.
    pub const GENESIS: CommitHash = CommitHash([0; 32]);
}

impl fmt::Display for CommitHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0[..8])
    }
}

impl fmt::Debug for CommitHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

/// An inclusive range of archive page numbers, `first <= last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRange {
    /// The first page number covered.
    pub first: u64,
    /// The last page number covered (inclusive).
    pub last: u64,
}

impl PageRange {
    /// The range, or `None` when `first > last`.
    pub fn new(first: u64, last: u64) -> Option<PageRange> {
        (first <= last).then_some(PageRange { first, last })
    }

    /// Whether `page` lies inside.
    pub fn contains(&self, page: u64) -> bool {
        self.first <= page && page <= self.last
    }
}

impl fmt::Display for PageRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}..={:016x}", self.first, self.last)
    }
}

/// One archive page as replicated: its number and its bytes (opaque here: the archive's
/// record encoding carries its own checksum).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The page number in the archive's page space.
    pub number: u64,
    /// The record bytes.
    pub bytes: Vec<u8>,
}

/// One fold a commit carries (the archive's fold receipt): the stream, the pages it wrote
/// and the ids they hold. The stream's `W` after the fold is `watermark`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldRef {
    /// The stream's key.
    pub stream: Vec<u8>,
    /// The stream's number in the archive file (records carry it).
    pub stream_no: u64,
    /// The pages the fold wrote, one record each.
    pub pages: PageRange,
    /// The first id folded.
    pub first_id: StreamId,
    /// The last id folded: the stream's new `W`.
    pub watermark: StreamId,
}

/// 32 bytes that differ between any two calls in any two processes: the time, the process,
/// a per-process counter and std's per-process random hash keys, through SHA-256.
pub(crate) fn unique_digest(label: &[u8]) -> [u8; 32] {
    use std::collections::hash_map::RandomState;
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut hasher = Sha256::new();
    hasher.update(label);
    hasher.update(nanos.to_le_bytes());
    hasher.update(std::process::id().to_le_bytes());
    hasher.update(COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hasher.update(RandomState::new().hash_one(label).to_le_bytes());
    hasher.finalize().into()
}

pub(crate) fn write_hex(f: &mut impl fmt::Write, bytes: &[u8]) -> fmt::Result {
    for b in bytes {
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    let _ = write_hex(&mut s, bytes);
    s
}
