//! A table of byte records, each found by a key it contains: the big collections' encoding
//! (a hash's fields, a set's members, a sorted set's members) once they outgrow a listpack.
//!
//! Redis holds each element of a big collection in an allocation of its own behind a dict
//! bucket. Here small records are appended back to back into pages of at most [`PAGE`] bytes,
//! so a record costs its bytes and a header of one or two, not an allocation's header and
//! rounding; records longer than [`SMALL_MAX`] are allocated one by one. A [`Index`] finds a
//! record's position by the hash of its key (SipHash under a per-table random key, as Redis
//! seeds its dict hash), and what part of a record is its key is the [`Keyed`] layout's.
//!
//! Positions are `u32`: a small record's is its page (15 bits) and offset (16 bits); a large
//! one's has the top bit set over its index among the large ones. Once the pages' numbers run
//! out (2 GiB of small records in one collection), further records are held as large ones.
//!
//! A removed small record stays in its page, marked dead, until its page is more than half
//! dead; then the page's live records are appended again (to the page taking appends) and
//! the page is freed. So dead bytes are at most about as many as live ones, a page with no live
//! record is freed at once, and a write never copies more than one page.
//!
//! An owner may keep records' positions beside the table (a sorted set's order does): a
//! record stays where it is until a removal compacts its page, and the tracked removal
//! reports each such move (see [`Records::remove_tracked`]).
//!
//! Invariants (checked by [`Records::check_invariants`]):
//! - the index holds exactly one position per live record, found by that record's key, and
//!   no two live records have the same key;
//! - every page's counts of live records and dead bytes are exact, its records are well
//!   framed end to end, and a page with no live record is empty and on the free list, unless
//!   it takes appends;
//! - a free large slot is empty, and every large record is longer than [`SMALL_MAX`].

use std::marker::PhantomData;

use crate::hash_index::Index;
use crate::prefetch;
use crate::types::random;

/// The most bytes of records a page holds.
const PAGE: usize = 1 << 16;
/// The longest record held in a page.
pub(crate) const SMALL_MAX: usize = 4096;
/// A position's bit telling a large record.
const LARGE: u32 = 1 << 31;
/// Pages a table may number (15 bits of a position).
const PAGES_MAX: usize = 1 << 15;
/// The first capacity of a page: a collection just past a listpack's limits fills few bytes.
const PAGE_FIRST: usize = 256;
/// Index arrays this small are never shrunk.
const SHRINK_SLOTS_MIN: usize = 64;
/// [`Records::sample`] draws one record at a time while the records are at least this many
/// times the sample.
const SAMPLE_BY_DRAWS_MUL: usize = 3;

/// A key's hash and its record's position, if held: valid until the table is next written.
pub(crate) struct Lookup {
    hash: u64,
    pos: Option<u32>,
}

/// Where a record's key is: the layout of one kind of record.
pub(crate) trait Keyed {
    /// The key within `record`.
    fn key(record: &[u8]) -> &[u8];
}

/// Records that are their own key: a set's members.
pub(crate) struct WholeKey;

impl Keyed for WholeKey {
    fn key(record: &[u8]) -> &[u8] {
        record
    }
}

/// How far past a record's start its second line is hinted: records of a few dozen bytes may
/// cross into the next line, longer ones are read from their start first.
const NEXT_LINE: usize = 32;

/// Records found by key (see the module doc).
pub(crate) struct Records<K> {
    store: Store,
    index: Index,
    hasher: crate::sip::SipKey,
    layout: PhantomData<K>,
}

impl<K> Clone for Records<K> {
    fn clone(&self) -> Self {
        Records {
            store: self.store.clone(),
            index: self.index.clone(),
            hasher: self.hasher,
            layout: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Records<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("len", &self.index.len())
            .field("pages", &self.store.pages.len())
            .field("large", &self.store.large.len())
            .finish()
    }
}

impl<K: Keyed> Default for Records<K> {
    fn default() -> Self {
        Records::new()
    }
}

/// A record's frame in a page: a LEB128 header of `len << 1 | dead`, then `len` bytes. Setting
/// the dead bit never changes the header's length.
fn header(len: usize, out: &mut Vec<u8>) {
    let mut v = (len as u64) << 1;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn header_len(len: usize) -> usize {
    let bits = 64 - ((len as u64) << 1).leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// The frame at `at` in `bytes`: (header length, record length, dead).
fn frame(bytes: &[u8], at: usize) -> Option<(usize, usize, bool)> {
    let mut v = 0u64;
    for (i, &b) in bytes.get(at..)?.iter().take(4).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            let len = (v >> 1) as usize;
            return (at + i + 1 + len <= bytes.len()).then_some((i + 1, len, v & 1 == 1));
        }
    }
    None
}

/// One page of small records.
#[derive(Clone, Default)]
struct Page {
    bytes: Vec<u8>,
    live: u32,
    dead_bytes: u32,
}

/// The bytes of the records, without their index.
#[derive(Clone, Default)]
struct Store {
    pages: Vec<Page>,
    /// Page numbers with no record, to reuse.
    free_pages: Vec<u32>,
    /// The page taking appends, if any.
    tail: Option<u32>,
    large: Vec<Box<[u8]>>,
    free_large: Vec<u32>,
}

fn small_pos(page: u32, offset: usize) -> u32 {
    (page << 16) | offset as u32
}

fn split(pos: u32) -> (usize, usize) {
    ((pos >> 16) as usize, (pos & 0xffff) as usize)
}

impl Store {
    /// Hints the line holding the start of the record at `pos` into the cache
    /// (`crate::prefetch`), and for a small record the line [`NEXT_LINE`] bytes on.
    fn prefetch(&self, pos: u32) {
        if pos & LARGE != 0 {
            if let Some(record) = self.large.get((pos & !LARGE) as usize) {
                prefetch::line(record.as_ptr());
            }
            return;
        }
        let (page, at) = split(pos);
        if let Some(bytes) = self.pages.get(page).map(|p| &p.bytes)
            && let Some(start) = bytes.get(at..)
        {
            prefetch::line(start.as_ptr());
            let last = NEXT_LINE.min(start.len().saturating_sub(1));
            prefetch::line(start.as_ptr().wrapping_add(last));
        }
    }

    fn get(&self, pos: u32) -> &[u8] {
        if pos & LARGE != 0 {
            return self.large.get((pos & !LARGE) as usize).map_or(&[], |r| r);
        }
        let (page, at) = split(pos);
        let Some(bytes) = self.pages.get(page).map(|p| &p.bytes[..]) else {
            return &[];
        };
        match frame(bytes, at) {
            Some((h, len, _)) => &bytes[at + h..at + h + len],
            None => &[],
        }
    }

    fn get_mut(&mut self, pos: u32) -> &mut [u8] {
        if pos & LARGE != 0 {
            return self
                .large
                .get_mut((pos & !LARGE) as usize)
                .map_or(&mut [], |r| r);
        }
        let (page, at) = split(pos);
        let Some(bytes) = self.pages.get_mut(page).map(|p| &mut p.bytes[..]) else {
            return &mut [];
        };
        match frame(bytes, at) {
            Some((h, len, _)) => &mut bytes[at + h..at + h + len],
            None => &mut [],
        }
    }

    /// Appends a record made of `parts` (`len` bytes in all); returns its position.
    fn append(&mut self, parts: &[&[u8]], len: usize) -> u32 {
        if len > SMALL_MAX {
            return self.append_large(parts, len);
        }
        let framed = header_len(len) + len;
        let page = match self.tail {
            Some(t) if self.pages[t as usize].bytes.len() + framed <= PAGE => t,
            _ => match self.open_page() {
                Some(p) => p,
                None => return self.append_large(parts, len),
            },
        };
        let p = &mut self.pages[page as usize];
        let at = p.bytes.len();
        if at + framed > p.bytes.capacity() {
            let want = (p.bytes.capacity() * 2)
                .max(at + framed)
                .clamp(PAGE_FIRST, PAGE);
            p.bytes.reserve_exact(want - at);
        }
        header(len, &mut p.bytes);
        for part in parts {
            p.bytes.extend_from_slice(part);
        }
        p.live += 1;
        small_pos(page, at)
    }

    /// A fresh page taking appends (the old tail is compacted by its own removals); `None`
    /// when every page number is taken.
    fn open_page(&mut self) -> Option<u32> {
        let page = match self.free_pages.pop() {
            Some(p) => p,
            None if self.pages.len() < PAGES_MAX => {
                self.pages.push(Page::default());
                (self.pages.len() - 1) as u32
            }
            None => return None,
        };
        self.tail = Some(page);
        Some(page)
    }

    fn append_large(&mut self, parts: &[&[u8]], len: usize) -> u32 {
        let mut record = Vec::with_capacity(len);
        for part in parts {
            record.extend_from_slice(part);
        }
        let record = record.into_boxed_slice();
        match self.free_large.pop() {
            Some(i) => {
                self.large[i as usize] = record;
                LARGE | i
            }
            None => {
                self.large.push(record);
                LARGE | (self.large.len() - 1) as u32
            }
        }
    }

    /// Marks the record at `pos` removed; returns a page now worth compacting.
    fn kill(&mut self, pos: u32) -> Option<u32> {
        if pos & LARGE != 0 {
            let i = pos & !LARGE;
            if let Some(r) = self.large.get_mut(i as usize) {
                *r = Box::default();
                self.free_large.push(i);
            }
            return None;
        }
        let (page, at) = split(pos);
        let p = self.pages.get_mut(page)?;
        let (h, len, dead) = frame(&p.bytes, at)?;
        if dead {
            return None;
        }
        p.bytes[at] |= 1;
        p.live -= 1;
        p.dead_bytes += (h + len) as u32;
        let page = page as u32;
        if p.live == 0 {
            if self.tail == Some(page) {
                p.bytes.clear();
                p.dead_bytes = 0;
            } else {
                *p = Page::default();
                self.free_pages.push(page);
            }
            return None;
        }
        (self.tail != Some(page) && p.dead_bytes as usize * 2 > p.bytes.len()).then_some(page)
    }

    fn allocation_size(&self) -> usize {
        self.pages.capacity() * std::mem::size_of::<Page>()
            + self.pages.iter().map(|p| p.bytes.capacity()).sum::<usize>()
            + self.free_pages.capacity() * 4
            + self.large.capacity() * std::mem::size_of::<Box<[u8]>>()
            + self.large.iter().map(|r| r.len()).sum::<usize>()
            + self.free_large.capacity() * 4
    }
}

/// The live records of one page's bytes, with their offsets.
fn live_records(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        loop {
            let (h, len, dead) = frame(bytes, at)?;
            let here = at;
            at += h + len;
            if !dead {
                return Some((here, &bytes[here + h..here + h + len]));
            }
        }
    })
}

impl<K: Keyed> Records<K> {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Records {
            store: Store::default(),
            index: Index::default(),
            hasher: crate::sip::SipKey::random(),
            layout: PhantomData,
        }
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether none is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.index.len() == 0
    }

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash(key)
    }

    fn find(&self, hash: u64, key: &[u8]) -> Option<u32> {
        let store = &self.store;
        self.index.find(hash, |pos| K::key(store.get(pos)) == key)
    }

    /// The record with key `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.find(self.hash(key), key)
            .map(|pos| self.store.get(pos))
    }

    /// Whether a record has key `key`.
    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        self.find(self.hash(key), key).is_some()
    }

    /// Brings into the cache what looking up `keys` will read: their index slots, then their
    /// records (as the keyspace's `Table::prefetch` does for keys), when the table is big
    /// enough to miss the cache; returns whether it was. Reads only; `hashes` is scratch
    /// space.
    pub(crate) fn prefetch(&self, keys: &[&[u8]], hashes: &mut Vec<u64>) -> bool {
        if self.len() < crate::db::PREFETCH_KEYS_MIN {
            return false;
        }
        hashes.clear();
        hashes.extend(keys.iter().map(|key| {
            let hash = self.hash(key);
            self.index.prefetch_home(hash);
            hash
        }));
        for &hash in hashes.iter() {
            if let Some(pos) = self.index.candidate(hash) {
                self.store.prefetch(pos);
            }
        }
        true
    }

    /// Looks `key` up, for [`Records::found`] and [`Records::insert_at`] to read and then
    /// write its record without hashing it again.
    pub(crate) fn lookup(&self, key: &[u8]) -> Lookup {
        let hash = self.hash(key);
        Lookup {
            hash,
            pos: self.find(hash, key),
        }
    }

    /// The record a lookup found.
    pub(crate) fn found(&self, lookup: &Lookup) -> Option<&[u8]> {
        lookup.pos.map(|pos| self.store.get(pos))
    }

    /// Stores the record made of `parts`, whose key is `key`, in place of the record with that
    /// key if there is one; returns whether there was none.
    pub(crate) fn insert(&mut self, key: &[u8], parts: &[&[u8]]) -> bool {
        let lookup = self.lookup(key);
        self.insert_at(lookup, key, parts)
    }

    /// [`Records::insert`] with `key` already looked up (and nothing written since).
    pub(crate) fn insert_at(&mut self, lookup: Lookup, key: &[u8], parts: &[&[u8]]) -> bool {
        let len = parts.iter().map(|p| p.len()).sum();
        let Lookup { hash, pos } = lookup;
        match pos {
            Some(old) => {
                let slot = self.store.get_mut(old);
                if slot.len() == len {
                    let mut at = 0;
                    for part in parts {
                        slot[at..at + part.len()].copy_from_slice(part);
                        at += part.len();
                    }
                } else {
                    let new = self.store.append(parts, len);
                    self.index.repoint(hash, old, new);
                    self.release(old, None);
                }
                false
            }
            None => {
                let pos = self.store.append(parts, len);
                debug_assert_eq!(K::key(self.store.get(pos)), key);
                self.index.insert(hash, pos);
                true
            }
        }
    }

    /// Removes the record with key `key`; returns whether there was one.
    pub(crate) fn remove(&mut self, key: &[u8]) -> bool {
        self.remove_record(key, None)
    }

    /// [`Records::remove`], pushing on `moves` the records it moved.
    fn remove_record(&mut self, key: &[u8], moves: Option<&mut Vec<(u32, u32)>>) -> bool {
        let hash = self.hash(key);
        let Some(pos) = self.find(hash, key) else {
            return false;
        };
        self.index.remove(hash, pos);
        self.release(pos, moves);
        if self.index.len() * 8 < self.index.capacity() && self.index.capacity() > SHRINK_SLOTS_MIN
        {
            self.index.shrink_to(self.index.len() * 2);
        }
        true
    }

    /// Frees the bytes of a record no longer indexed, compacting its page if that is due.
    fn release(&mut self, pos: u32, moves: Option<&mut Vec<(u32, u32)>>) {
        if let Some(page) = self.store.kill(pos) {
            self.compact(page, moves);
        }
    }

    /// Appends a page's live records again and frees the page.
    fn compact(&mut self, page: u32, mut moves: Option<&mut Vec<(u32, u32)>>) {
        let old = std::mem::take(&mut self.store.pages[page as usize]);
        for (at, record) in live_records(&old.bytes) {
            let hash = self.hash(K::key(record));
            let new = self.store.append(&[record], record.len());
            self.index.repoint(hash, small_pos(page, at), new);
            if let Some(m) = moves.as_deref_mut() {
                m.push((small_pos(page, at), new));
            }
        }
        self.store.free_pages.push(page);
    }

    /// Visits about `count` records from `cursor`, in the order of their hash, and returns
    /// the cursor to resume from, 0 at the end: a scan visits every record held from its
    /// start to its end at least once, however the records moved meanwhile (a compaction
    /// moves a record, never its hash: `Index::scan` in `engine/src/hash_index.rs`).
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8])) -> u64 {
        self.index
            .scan(cursor, count, |pos| visit(self.store.get(pos)))
    }

    /// Every record, in storage order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let small = self
            .store
            .pages
            .iter()
            .flat_map(|p| live_records(&p.bytes).map(|(_, r)| r));
        let large = self
            .store
            .large
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| &r[..]);
        small.chain(large)
    }

    /// A uniformly random record.
    pub(crate) fn random(&self) -> Option<&[u8]> {
        self.random_position().map(|pos| self.store.get(pos))
    }

    /// The position of a uniformly random record: each held slot is as likely as another.
    fn random_position(&self) -> Option<u32> {
        if self.is_empty() {
            return None;
        }
        // At least one slot in eight is held (removals shrink the index), so a draw rarely
        // misses more than a few times; the scan after is a bound, not the common path.
        let slots = self.index.capacity();
        for _ in 0..64 {
            if let Some(pos) = self.index.position_at(random::below(slots)) {
                return Some(pos);
            }
        }
        let start = random::below(slots);
        (0..slots).find_map(|i| self.index.position_at((start + i) % slots))
    }

    /// `count` distinct records (all of them if `count` is at least their number), each
    /// subset as likely as another, in random order.
    ///
    /// A small sample is drawn record by record, a draw already taken drawn again: while
    /// `count` is at most a third of the records ([`SAMPLE_BY_DRAWS_MUL`], Redis's
    /// `SRANDMEMBER_SUB_STRATEGY_MUL`) a draw repeats with chance below a third, so this is
    /// O(count). A bigger one shuffles the first `count` of every position: O(len).
    pub(crate) fn sample(&self, count: usize) -> Vec<&[u8]> {
        let count = count.min(self.len());
        let positions: Vec<u32> = if count.saturating_mul(SAMPLE_BY_DRAWS_MUL) <= self.len() {
            let mut taken = std::collections::HashSet::with_capacity(count);
            let mut out = Vec::with_capacity(count);
            while out.len() < count {
                match self.random_position() {
                    Some(pos) if taken.insert(pos) => out.push(pos),
                    Some(_) => {}
                    None => break,
                }
            }
            out
        } else {
            let mut all: Vec<u32> = (0..self.index.capacity())
                .filter_map(|i| self.index.position_at(i))
                .collect();
            for i in 0..count {
                let j = i + random::below(all.len() - i);
                all.swap(i, j);
            }
            all.truncate(count);
            all
        };
        positions
            .into_iter()
            .map(|pos| self.store.get(pos))
            .collect()
    }

    /// Bytes allocated: pages, large records and the index.
    pub(crate) fn allocation_size(&self) -> usize {
        self.store.allocation_size() + self.index.allocation_size()
    }

    /// Checks the module doc's invariants.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        self.index.check_invariants()?;
        let mut held = 0;
        for (n, page) in self.store.pages.iter().enumerate() {
            let (mut at, mut live, mut dead) = (0, 0, 0);
            while at < page.bytes.len() {
                let (h, len, is_dead) =
                    frame(&page.bytes, at).ok_or(format!("page {n}: bad frame at {at}"))?;
                if is_dead {
                    dead += h + len;
                } else {
                    live += 1;
                    let record = &page.bytes[at + h..at + h + len];
                    let found = self.find(self.hash(K::key(record)), K::key(record));
                    if found != Some(small_pos(n as u32, at)) {
                        return Err(format!("page {n}: record at {at} indexed as {found:?}"));
                    }
                }
                at += h + len;
            }
            if live != page.live as usize || dead != page.dead_bytes as usize {
                return Err(format!(
                    "page {n}: {live} live, {dead} dead bytes, counts differ"
                ));
            }
            let free = self.store.free_pages.contains(&(n as u32));
            if live == 0 && self.store.tail != Some(n as u32) && (!free || !page.bytes.is_empty()) {
                return Err(format!("page {n} holds nothing and is not free"));
            }
            held += live;
        }
        for (i, record) in self.store.large.iter().enumerate() {
            let free = self.store.free_large.contains(&(i as u32));
            if free != record.is_empty() {
                return Err(format!(
                    "large slot {i}: free {free}, {} bytes",
                    record.len()
                ));
            }
            if !free {
                if record.len() <= SMALL_MAX && self.store.pages.len() < PAGES_MAX {
                    return Err(format!("large slot {i} holds {} bytes", record.len()));
                }
                let found = self.find(self.hash(K::key(record)), K::key(record));
                if found != Some(LARGE | i as u32) {
                    return Err(format!("large slot {i} indexed as {found:?}"));
                }
                held += 1;
            }
        }
        if held != self.index.len() {
            return Err(format!("{held} records, {} indexed", self.index.len()));
        }
        Ok(())
    }
}

/// Positions, for an owner that keeps them beside the table (a sorted set's order, see
/// `types/zset`). Such an owner adds records with [`Records::insert_absent`], changes them in
/// place with [`Records::get_at_mut`] and removes them with [`Records::remove_tracked`], which
/// reports each record a compaction moved as `(old, new)`, so the owner can repoint what it
/// keeps ([`Records::insert`] of another length moves a record without telling). Within one
/// call no position moved to is one moved from, and a position moved from reads as nothing
/// that call placed: its page is freed.
impl<K: Keyed> Records<K> {
    /// The position of the record with key `key`.
    pub(crate) fn position(&self, key: &[u8]) -> Option<u32> {
        self.find(self.hash(key), key)
    }

    /// The record at `pos` (a position this table gave and has not moved; any other reads as
    /// empty or as another record).
    pub(crate) fn get_at(&self, pos: u32) -> &[u8] {
        self.store.get(pos)
    }

    /// The record at `pos`, mutably: the caller leaves its key's bytes as they are.
    pub(crate) fn get_at_mut(&mut self, pos: u32) -> &mut [u8] {
        self.store.get_mut(pos)
    }

    /// Stores a record with a key no record has (the caller has looked): one lookup fewer than
    /// [`Records::insert`]. Returns its position; nothing moves.
    pub(crate) fn insert_absent(&mut self, key: &[u8], parts: &[&[u8]]) -> u32 {
        debug_assert!(!self.contains(key));
        let len = parts.iter().map(|p| p.len()).sum();
        let pos = self.store.append(parts, len);
        debug_assert_eq!(K::key(self.store.get(pos)), key);
        let hash = self.hash(key);
        self.index.insert(hash, pos);
        pos
    }

    /// [`Records::remove`], pushing on `moves` every record moved.
    pub(crate) fn remove_tracked(&mut self, key: &[u8], moves: &mut Vec<(u32, u32)>) -> bool {
        self.remove_record(key, Some(moves))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    /// Records of a key byte and a value: the key is the first byte.
    struct FirstByte;

    impl Keyed for FirstByte {
        fn key(record: &[u8]) -> &[u8] {
            &record[..1]
        }
    }

    fn value(len: usize, fill: u8) -> Vec<u8> {
        vec![fill; len]
    }

    #[test]
    fn only_a_table_big_enough_to_miss_the_cache_is_prefetched() {
        let mut table: Records<WholeKey> = Records::new();
        let members: Vec<Vec<u8>> = (0..crate::db::PREFETCH_KEYS_MIN)
            .map(|i| format!("member:{i}").into_bytes())
            .collect();
        let mut hashes = Vec::new();
        for (i, member) in members.iter().enumerate() {
            assert!(
                !table.prefetch(&[member], &mut hashes),
                "prefetched at {i} records"
            );
            table.insert(member, &[member]);
        }
        let asked: Vec<&[u8]> = vec![&members[7], b"absent", &members[99]];
        assert!(table.prefetch(&asked, &mut hashes));
        assert_eq!(table.len(), members.len());
        assert!(table.contains(&members[7]) && !table.contains(b"absent"));
        table.check_invariants().unwrap();
    }

    proptest! {
        #[test]
        fn records_match_a_map(ops in proptest::collection::vec(
            (0u8..3, any::<u8>(), prop_oneof![0usize..40, 3000usize..5000]), 1..400))
        {
            let mut table: Records<FirstByte> = Records::new();
            let mut model: HashMap<u8, Vec<u8>> = HashMap::new();
            for (op, key, len) in ops {
                match op {
                    0 | 1 => {
                        let v = value(len, key);
                        let new = table.insert(&[key], &[&[key], &v]);
                        prop_assert_eq!(new, model.insert(key, v).is_none());
                    }
                    _ => prop_assert_eq!(table.remove(&[key]), model.remove(&key).is_some()),
                }
                table.check_invariants().map_err(TestCaseError::fail)?;
                prop_assert_eq!(table.len(), model.len());
                for (k, v) in &model {
                    let got = table.get(&[*k]).map(|r| r[1..].to_vec());
                    prop_assert_eq!(got.as_ref(), Some(v));
                }
                let mut seen: Vec<u8> = table.iter().map(|r| r[0]).collect();
                seen.sort_unstable();
                let mut want: Vec<u8> = model.keys().copied().collect();
                want.sort_unstable();
                prop_assert_eq!(seen, want);
                let count = usize::from(key) % (model.len() + 2);
                let mut sample: Vec<u8> = table.sample(count).iter().map(|r| r[0]).collect();
                prop_assert_eq!(sample.len(), count.min(model.len()));
                sample.sort_unstable();
                sample.dedup();
                prop_assert_eq!(sample.len(), count.min(model.len()));
                prop_assert!(sample.iter().all(|k| model.contains_key(k)));
            }
        }
    }

    proptest! {
        #[test]
        fn tracked_positions_follow_every_move(ops in proptest::collection::vec(
            (0u8..3, any::<u8>(), prop_oneof![0usize..40, 3000usize..5000]), 1..400))
        {
            // The owner's side: each key's position, repointed by the reported moves.
            let mut table: Records<FirstByte> = Records::new();
            let mut kept: HashMap<u8, u32> = HashMap::new();
            let mut moves = Vec::new();
            for (op, key, len) in ops {
                let v = value(len, key);
                match op {
                    0 | 1 => match kept.get(&key) {
                        None => {
                            kept.insert(key, table.insert_absent(&[key], &[&[key], &v]));
                        }
                        Some(&pos) => {
                            // Same length, another value: in place.
                            let record = table.get_at_mut(pos);
                            record[1..].fill(op);
                        }
                    },
                    _ => {
                        let had = table.remove_tracked(&[key], &mut moves);
                        prop_assert_eq!(had, kept.remove(&key).is_some());
                    }
                }
                for (old, new) in moves.drain(..) {
                    prop_assert_ne!(old, new);
                    if let Some(p) = kept.values_mut().find(|p| **p == old) {
                        *p = new;
                    }
                }
                table.check_invariants().map_err(TestCaseError::fail)?;
                for (&k, &pos) in &kept {
                    prop_assert_eq!(table.position(&[k]), Some(pos));
                    prop_assert_eq!(table.get_at(pos).first(), Some(&k));
                }
            }
        }
    }

    #[test]
    fn removals_compact_pages_and_reclaim_them() {
        let mut table: Records<WholeKey> = Records::new();
        let keys: Vec<Vec<u8>> = (0..20_000u32)
            .map(|i| format!("member:{i}").into_bytes())
            .collect();
        for k in &keys {
            assert!(table.insert(k, &[k]));
        }
        let full = table.store.pages.len();
        assert!(full > 2, "{full} pages");
        for k in keys.iter().filter(|k| k.last() != Some(&b'7')) {
            assert!(table.remove(k));
        }
        table.check_invariants().unwrap();
        assert_eq!(table.len(), 2000);
        let live_pages = table.store.pages.iter().filter(|p| p.live > 0).count();
        assert!(live_pages <= 2, "{live_pages} pages hold records");
        assert!(table.contains(b"member:17") && !table.contains(b"member:18"));
    }

    #[test]
    fn random_draws_every_record() {
        let mut table: Records<WholeKey> = Records::new();
        for i in 0..50u8 {
            table.insert(&[i], &[&[i]]);
        }
        let mut seen = [false; 50];
        for _ in 0..5000 {
            seen[table.random().unwrap()[0] as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// Both of `sample`'s ways (draws for a small sample, a shuffle for a big one) pick every
    /// record about as often as another.
    #[test]
    fn samples_are_distinct_and_even() {
        let mut table: Records<WholeKey> = Records::new();
        for i in 0..30u8 {
            table.insert(&[i], &[&[i]]);
        }
        for count in [3, 20] {
            let mut seen = [0u32; 30];
            let rounds = 3000;
            for _ in 0..rounds {
                let sample = table.sample(count);
                assert_eq!(sample.len(), count);
                for r in sample {
                    seen[r[0] as usize] += 1;
                }
            }
            let mean = rounds * count as u32 / 30;
            assert!(
                seen.iter().all(|&n| n > mean * 3 / 4 && n < mean * 5 / 4),
                "count {count}: {seen:?}"
            );
            let mut all: Vec<u8> = table.sample(count).iter().map(|r| r[0]).collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), count);
        }
        assert_eq!(table.sample(100).len(), 30);
        assert!(Records::<WholeKey>::new().sample(3).is_empty());
    }

    #[test]
    fn a_frame_past_the_bytes_reads_as_none() {
        assert_eq!(frame(&[0x84], 0), None);
        assert_eq!(frame(&[0x04, 1, 2], 0), Some((1, 2, false)));
        assert_eq!(frame(&[0x05, 1, 2], 0), Some((1, 2, true)));
        assert_eq!(header_len(63), 1);
        assert_eq!(header_len(64), 2);
    }
}
