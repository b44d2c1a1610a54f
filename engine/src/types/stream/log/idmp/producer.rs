//! One producer's IIDs: a FIFO of records in one byte buffer plus a hash index of offsets.
//!
//! A record is `ms` (8 bytes LE) `seq` (8 bytes LE) `iid length` (LEB128 varint) `iid bytes`.
//! Records sit in insertion order from `head` to the end of `buf`; evicting the oldest moves
//! `head` past it. The index holds each live record's *logical* offset (`base` + position in
//! `buf`), hashed by the record's iid, so compacting the buffer (dropping the dead bytes before
//! `head` and adding their count to `base`) changes no index entry.
//!
//! Memory per IID (documented claim, see `Idmp`'s module doc for the comparison with Redis):
//! `17 + iid length` bytes of record (18 from 128 bytes of iid on), plus one 8-byte index slot
//! with its control byte at a load of 7/16..7/8 (about 10–21 bytes), plus buffer slack: dead
//! bytes are compacted away once they reach a quarter of the live bytes and the buffer grows by a
//! quarter at a time, so it holds at most about 1.6 times the live record bytes.
//!
//! Invariants ([`Producer::check`]): the records from `head` parse exactly to the end of
//! `buf`; there is one index entry per record, pointing at it; no two records share an iid.

use std::hash::{BuildHasher, Hasher, RandomState};

use hashbrown::HashTable;

use crate::id::StreamId;
use crate::varint;

/// Bytes of the stream id at the start of a record.
const ID_BYTES: usize = 16;
/// Dead bytes are compacted away once they are at least this fraction (1/n) of the live bytes.
const COMPACT_DIVISOR: usize = 4;
/// The buffer grows by at least 1/n of its length at a time.
const GROW_DIVISOR: usize = 4;

/// One record, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    /// The stream id the IID produced.
    pub id: StreamId,
    /// The IID.
    pub iid: &'a [u8],
}

/// One producer's IIDs, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Producer {
    buf: Vec<u8>,
    /// Position in `buf` of the oldest live record.
    head: usize,
    /// Logical offset of `buf[0]`.
    base: u64,
    /// Logical offsets of the live records, hashed by iid.
    index: HashTable<u64>,
}

/// The iid's bytes alone, without the length prefix `Hash for [u8]` adds (one key per hash,
/// so nothing to keep apart): one SipHash write instead of two.
pub(super) fn hash(hasher: &RandomState, iid: &[u8]) -> u64 {
    let mut state = hasher.build_hasher();
    state.write(iid);
    state.finish()
}

/// Decodes the record at `pos`: the record and the position after it. `None` only on a buffer
/// this module did not write (never, by the invariants).
fn decode(buf: &[u8], pos: usize) -> Option<(Record<'_>, usize)> {
    let id_bytes = buf.get(pos..pos + ID_BYTES)?;
    let (ms, seq) = id_bytes.split_at(8);
    let id = StreamId::new(
        u64::from_le_bytes(ms.try_into().ok()?),
        u64::from_le_bytes(seq.try_into().ok()?),
    );
    let mut at = pos + ID_BYTES;
    let len = usize::try_from(varint::get(buf, &mut at)?).ok()?;
    let iid = buf.get(at..at.checked_add(len)?)?;
    Some((Record { id, iid }, at + len))
}

impl Producer {
    /// Live IIDs.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no IID is held.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    fn position(&self, logical: u64) -> usize {
        (logical - self.base) as usize
    }

    fn iid_at(buf: &[u8], base: u64, logical: u64) -> &[u8] {
        decode(buf, (logical - base) as usize).map_or(&[][..], |(r, _)| r.iid)
    }

    /// The stream id `iid` produced, if it is held; `iid_hash` is its [`hash`].
    pub fn get_hashed(&self, iid_hash: u64, iid: &[u8]) -> Option<StreamId> {
        let (buf, base) = (&self.buf, self.base);
        let &logical = self
            .index
            .find(iid_hash, |&o| Self::iid_at(buf, base, o) == iid)?;
        decode(buf, self.position(logical)).map(|(r, _)| r.id)
    }

    /// Appends `iid` → `id` as the newest record; `iid_hash` is its [`hash`]. The caller has
    /// checked `iid` is not held.
    pub fn push(&mut self, hasher: &RandomState, iid_hash: u64, iid: &[u8], id: StreamId) {
        let record_bytes = ID_BYTES + 10 + iid.len();
        if self.buf.len() + record_bytes > self.buf.capacity() {
            self.make_room(record_bytes);
        }
        let logical = self.base + self.buf.len() as u64;
        self.buf.extend_from_slice(&id.ms.to_le_bytes());
        self.buf.extend_from_slice(&id.seq.to_le_bytes());
        varint::put(&mut self.buf, iid.len() as u64);
        self.buf.extend_from_slice(iid);
        let (buf, base) = (&self.buf, self.base);
        self.index.insert_unique(iid_hash, logical, |&o| {
            hash(hasher, Self::iid_at(buf, base, o))
        });
    }

    /// Before a push that would outgrow the buffer: compacts if enough bytes are dead, else grows
    /// by a quarter (or the record).
    fn make_room(&mut self, record_bytes: usize) {
        let live = self.buf.len() - self.head;
        if self.head > 0 && self.head * COMPACT_DIVISOR >= live {
            self.buf.drain(..self.head);
            self.base += self.head as u64;
            self.head = 0;
        }
        let needed = self.buf.len() + record_bytes;
        if needed > self.buf.capacity() {
            let grow = record_bytes.max(self.buf.len() / GROW_DIVISOR);
            self.buf.reserve_exact(grow);
        }
    }

    /// The oldest record.
    pub fn oldest(&self) -> Option<Record<'_>> {
        if self.head >= self.buf.len() {
            return None;
        }
        decode(&self.buf, self.head).map(|(r, _)| r)
    }

    /// Drops the oldest record; returns its stream id.
    pub fn pop_oldest(&mut self, hasher: &RandomState) -> Option<StreamId> {
        let (record, end) = decode(&self.buf, self.head)?;
        let id = record.id;
        let logical = self.base + self.head as u64;
        if let Ok(entry) = self
            .index
            .find_entry(hash(hasher, record.iid), |&o| o == logical)
        {
            entry.remove();
        }
        self.head = end;
        if self.head == self.buf.len() {
            // Empty: restart at the front without moving anything.
            self.base += self.buf.len() as u64;
            self.buf.clear();
            self.head = 0;
        }
        Some(id)
    }

    /// Drops the oldest records while their stream id's milliseconds are at most `threshold_ms`
    /// (Redis's expiry walk: it stops at the first younger one). Returns how many.
    pub fn expire(&mut self, hasher: &RandomState, threshold_ms: u64) -> usize {
        let mut dropped = 0;
        while self.oldest().is_some_and(|r| r.id.ms <= threshold_ms) {
            self.pop_oldest(hasher);
            dropped += 1;
        }
        dropped
    }

    /// How many records [`Producer::expire`] would drop, without dropping them.
    pub fn expirable(&self, threshold_ms: u64) -> usize {
        self.records()
            .take_while(|r| r.id.ms <= threshold_ms)
            .count()
    }

    /// The records, oldest first.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> {
        let mut pos = self.head;
        std::iter::from_fn(move || {
            let (record, end) = decode(&self.buf, pos)?;
            pos = end;
            Some(record)
        })
    }

    /// Heap bytes: the buffer's capacity and the index's slots and control bytes.
    pub fn heap_bytes(&self) -> usize {
        self.buf.capacity() + self.index.capacity() * (std::mem::size_of::<u64>() + 1)
    }

    /// Checks the invariants in the module doc.
    pub fn check(&self, hasher: &RandomState) -> Result<(), String> {
        let mut pos = self.head;
        let mut count = 0usize;
        while pos < self.buf.len() {
            let Some((record, end)) = decode(&self.buf, pos) else {
                return Err(format!("record at {pos} does not parse"));
            };
            let logical = self.base + pos as u64;
            let (buf, base) = (&self.buf, self.base);
            let found = self.index.find(hash(hasher, record.iid), |&o| {
                Self::iid_at(buf, base, o) == record.iid
            });
            if found != Some(&logical) {
                return Err(format!(
                    "iid {:?} indexed at {found:?}, stored at {logical}",
                    String::from_utf8_lossy(record.iid)
                ));
            }
            count += 1;
            pos = end;
        }
        if pos != self.buf.len() {
            return Err(format!(
                "records overrun the buffer ({pos} > {})",
                self.buf.len()
            ));
        }
        if count != self.index.len() {
            return Err(format!(
                "{count} records but {} index entries",
                self.index.len()
            ));
        }
        Ok(())
    }
}
