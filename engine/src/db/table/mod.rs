//! The keyspace table of one database: keys, values, per-key access metadata and expiry
//! times, laid out for O(1) lookups, O(1) uniform random sampling (eviction, RANDOMKEY) over
//! all keys or over the keys with a TTL, and a small footprint per key.
//!
//! Layout:
//! - **entries**: one dense array of [`Entry`] (key, value, access metadata, expiry slot), kept
//!   in slabs of [`SLAB`] entries so that growing never copies the whole array (and never
//!   holds two copies of it, which a doubling `Vec` does while it moves): only the first slab
//!   grows by doubling, every later one is allocated at its full size. A key is removed by
//!   moving the last entry into its place, so the array has no holes and a uniform random
//!   position is a uniform random key.
//! - **index**: positions into the entries by key hash, each in an 8-byte slot with 32 bits of
//!   the hash (`engine/src/hash_index.rs`), so a lookup reads one slot and then the entry. Keys
//!   are hashed with SipHash-1-3 (`engine/src/sip.rs`) under a per-table random key (as Redis
//!   seeds its dict hash) and compared through the entry.
//! - **volatile**: a dense array of `(position, expiry time)` for the keys with a TTL; an
//!   entry with a TTL holds its slot there. Sampling it is O(1) too (volatile-* policies, the
//!   active expiry cycle), and a key without a TTL pays 4 bytes for the slot field only.
//! - **keys** are held in the entry up to [`INLINE_KEY`] bytes, else in one exact allocation;
//!   the key's 24 bytes also hold the entry's access metadata and expiry slot, so an entry is
//!   the key and the 24-byte `Value` alone: 48 bytes.
//!
//! A pipelined batch reads its keys' slots, entries and long keys ahead of running
//! ([`Table::prefetch`]), so their cache misses overlap.
//!
//! A command looks its key up several times (the expiry check, the read, the write): the last
//! key found is remembered with its position, and the hashes of the short keys looked up or
//! prefetched last with, for those not found, the fact until the next insert (`memo.rs`), so a
//! key is hashed once and a missing key searched for once.
//!
//! Invariants (checked by [`Table::check_invariants`]):
//! - the index holds exactly one position per entry, and looking up an entry's key finds its
//!   position; no two entries hold the same key; the index's own invariants hold (`engine/src/hash_index.rs`);
//! - every slab but the last is full, and no slab is empty;
//! - an entry's expiry slot is [`NO_EXPIRY`] or the index of a volatile record that points back
//!   at it, and every volatile record is so pointed at.
//!
//! Positions are `u32`: a database holds fewer than 2^32 - 1 keys (at 48 bytes a key, over 200
//! GB of table alone).

use std::cell::Cell;
use std::fmt;

use crate::hash_index::{HASH_BITS, Index};
use crate::prefetch::{self, prefetch};
use crate::sip::SipKey;
use crate::types::Value;

mod key;
mod memo;
mod short;

pub use key::Key;
use memo::{HashMemo, Recalled, ShortKey};
use short::same_bytes;

/// An entry's expiry slot when it has no TTL.
pub(crate) const NO_EXPIRY: u32 = u32::MAX;
/// Entries per slab (a slab of 56-byte entries is under 256 KiB).
pub(crate) const SLAB: usize = 1 << SLAB_BITS;
const SLAB_BITS: u32 = 12;
/// Keys up to this many bytes are held in the entry itself (`key:` and 12 digits, the keys of
/// `redis-benchmark -r`, fit).
pub(crate) const INLINE_KEY: usize = 16;
/// The index is shrunk once it holds fewer positions than its capacity divided by this (Redis
/// shrinks a dict below 1/8 full).
const SPARSE_FILL_RATIO: usize = 8;
/// Indexes this small are never shrunk: the saving is not worth a rehash.
const SHRINK_CAPACITY_MIN: usize = 128;

/// One key of the table: the key, which also holds Redis's `lru` field (a 24-bit LRU clock,
/// or an LFU decay time of 16 bits and counter of 8, depending on the policy: see
/// `access.rs`) and the index of its record in the volatile array (or [`NO_EXPIRY`]), and the
/// value.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The key, its metadata and its expiry slot.
    pub(crate) key: Key,
    /// Its value.
    pub(crate) value: Value,
}

impl Entry {
    /// Whether the key has a TTL.
    pub(crate) fn has_ttl(&self) -> bool {
        self.key.exp() != NO_EXPIRY
    }

    /// The access metadata.
    pub(crate) fn meta(&self) -> u32 {
        self.key.meta()
    }

    /// Sets the access metadata.
    pub(crate) fn set_meta(&mut self, meta: u32) {
        self.key.set_meta(meta);
    }

    /// The expiry slot.
    fn exp(&self) -> u32 {
        self.key.exp()
    }
}

/// A key with a TTL.
#[derive(Debug, Clone, Copy)]
struct Volatile {
    /// Unix ms at which the key expires.
    at: u64,
    /// The key's entry position.
    pos: u32,
}

/// The table (see the module doc).
pub(crate) struct Table {
    index: Index,
    slabs: Vec<Vec<Entry>>,
    len: usize,
    volatile: Vec<Volatile>,
    hasher: SipKey,
    /// The index slot (hash bits and position) of the last key found, or [`NO_MEMO`]: a
    /// command looks its key up several times (its read, the expiry check, the write), and
    /// only the first hashes it. See [`Table::find`] for why a match proves the hash bits.
    last_found: Cell<u64>,
    /// The hashes of the keys looked up or prefetched last, and which are known absent
    /// (`memo.rs`).
    hashes: HashMemo,
}

/// The memo of no key.
const NO_MEMO: u64 = u64::MAX;

impl Default for Table {
    fn default() -> Self {
        Table {
            index: Index::default(),
            slabs: Vec::new(),
            len: 0,
            volatile: Vec::new(),
            hasher: SipKey::random(),
            last_found: Cell::new(NO_MEMO),
            hashes: HashMemo::default(),
        }
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("len", &self.len)
            .field("volatile", &self.volatile.len())
            .finish_non_exhaustive()
    }
}

impl Clone for Table {
    fn clone(&self) -> Self {
        Table {
            index: self.index.clone(),
            slabs: self.slabs.clone(),
            len: self.len,
            volatile: self.volatile.clone(),
            hasher: self.hasher,
            last_found: Cell::new(self.last_found.get()),
            hashes: self.hashes.clone(),
        }
    }
}

/// A position as stored (see the module doc for the bound).
fn pos32(pos: usize) -> u32 {
    debug_assert!(pos < NO_EXPIRY as usize);
    pos as u32
}

impl Table {
    /// Number of keys (expired ones included).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the table holds no key.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of keys with a TTL (expired ones included).
    pub(crate) fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// The entry at `pos` (< `len`).
    pub(crate) fn entry(&self, pos: usize) -> &Entry {
        &self.slabs[pos >> SLAB_BITS][pos & (SLAB - 1)]
    }

    /// The entry at `pos` (< `len`), mutably.
    pub(crate) fn entry_mut(&mut self, pos: usize) -> &mut Entry {
        &mut self.slabs[pos >> SLAB_BITS][pos & (SLAB - 1)]
    }

    /// The position of `key`.
    ///
    /// The last key found is remembered with its position and the hash bits the index keeps
    /// (all it reads of a hash). If the entry at that position holds `key`, that is the answer
    /// and those are `key`'s bits: an entry changes position or key only when one is removed
    /// ([`Table::remove_at`] forgets the memo), so the entry still holds the key it was found
    /// with.
    pub(crate) fn find(&self, key: &[u8]) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.locate(key).1
    }

    /// [`Table::find`], with the hash of `key` (at least the bits the index reads), which a
    /// miss computes too.
    fn locate(&self, key: &[u8]) -> (u64, Option<usize>) {
        let memo = self.last_found.get();
        if memo != NO_MEMO {
            let p = memo as u32 as usize;
            if p < self.len && same_bytes(self.entry(p).key.as_bytes(), key) {
                return (memo & HASH_BITS, Some(p));
            }
        }
        let short = ShortKey::of(key);
        let recalled = self.hash_of(key, short, false);
        let h = recalled.hash;
        if recalled.absent {
            return (h, None);
        }
        let slabs = &self.slabs;
        let found = self.index.find(h, |p| {
            let p = p as usize;
            same_bytes(slabs[p >> SLAB_BITS][p & (SLAB - 1)].key.as_bytes(), key)
        });
        match (found, short) {
            (Some(p), _) => self.last_found.set((h & HASH_BITS) | u64::from(p)),
            (None, Some(short)) => self.hashes.remember(short, h, true),
            (None, None) => {}
        }
        (h, found.map(|p| p as usize))
    }

    /// The hash of `key` (`short` when it is short enough for the memo), and whether it is
    /// known absent: from the memo when it holds the key, else computed, and with `remember`
    /// remembered. A lookup does not remember the keys it finds (the last one found is
    /// remembered apart): that would push out keys prefetched for the requests after it.
    #[inline(always)]
    fn hash_of(&self, key: &[u8], short: Option<ShortKey>, remember: bool) -> Recalled {
        if let Some(recalled) = short.and_then(|short| self.hashes.recall(short)) {
            return recalled;
        }
        let hash = self.hasher.hash(key);
        if let Some(short) = short.filter(|_| remember) {
            self.hashes.remember(short, hash, false);
        }
        Recalled {
            hash,
            absent: false,
        }
    }

    /// Brings into the cache what looking up `keys` will read: their index slots, then their
    /// entries, then the bytes of keys held out of line. Each stage hints every key's line
    /// (`crate::prefetch`) before anything waits on one, so the cache misses of a pipelined
    /// batch's lookups overlap instead of following one another, and the last stage's
    /// arrive while the batch runs (Redis prefetches a batch's keys for the same reason:
    /// `memory_prefetch.c`). Reads only; `hashes` is scratch space.
    pub(crate) fn prefetch(&self, keys: &[&[u8]], hashes: &mut Vec<u64>) {
        if self.len == 0 {
            return;
        }
        hashes.clear();
        // Each slot is hinted as soon as its key is hashed: the hashing of the keys after it
        // hides its latency.
        hashes.extend(keys.iter().map(|key| {
            let hash = self.hash_of(key, ShortKey::of(key), true).hash;
            self.index.prefetch_home(hash);
            hash
        }));
        // Reading a slot waits for it (the hints gave every slot a head start).
        for &h in hashes.iter() {
            if let Some(p) = self.index.candidate(h) {
                prefetch(self.entry(p as usize));
            }
        }
        for (key, &h) in keys.iter().zip(hashes.iter()) {
            if key.len() > INLINE_KEY
                && let Some(p) = self.index.candidate(h)
            {
                prefetch::line(self.entry(p as usize).key.as_bytes().as_ptr());
            }
        }
    }

    /// The value under `key`.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&Value> {
        self.find(key).map(|p| &self.entry(p).value)
    }

    /// The value under `key`, mutably.
    pub(crate) fn get_mut(&mut self, key: &[u8]) -> Option<&mut Value> {
        let p = self.find(key)?;
        Some(&mut self.entry_mut(p).value)
    }

    /// Whether `key` is held.
    pub(crate) fn contains_key(&self, key: &[u8]) -> bool {
        self.find(key).is_some()
    }

    /// The expiry time of the entry at `pos`.
    pub(crate) fn expiry_at(&self, pos: usize) -> Option<u64> {
        match self.entry(pos).exp() {
            NO_EXPIRY => None,
            slot => Some(self.volatile[slot as usize].at),
        }
    }

    /// The expiry time of `key`.
    pub(crate) fn expiry(&self, key: &[u8]) -> Option<u64> {
        self.find(key).and_then(|p| self.expiry_at(p))
    }

    /// Stores `value` under `key`: an existing key keeps its expiry and metadata (Redis keeps
    /// the old object's `lru` on overwrite); a new one gets `meta` and no expiry. Returns
    /// what was there.
    pub(crate) fn insert(&mut self, key: &[u8], value: Value, meta: u32) -> Option<Value> {
        let (h, found) = self.locate(key);
        if let Some(p) = found {
            return Some(std::mem::replace(&mut self.entry_mut(p).value, value));
        }
        let pos = self.len;
        let mut entry = Entry {
            key: Key::new(key),
            value,
        };
        entry.set_meta(meta);
        match self.slabs.last_mut() {
            Some(slab) if slab.len() < SLAB => slab.push(entry),
            _ => {
                // The first slab grows as a Vec does, so a small database stays small; later
                // ones are allocated whole, so growing never copies earlier entries.
                let mut slab = if self.slabs.is_empty() {
                    Vec::new()
                } else {
                    Vec::with_capacity(SLAB)
                };
                slab.push(entry);
                self.slabs.push(slab);
            }
        }
        self.len += 1;
        self.index.insert(h, pos32(pos));
        self.hashes.inserted();
        // The command goes on with its key (its expiry, its notification).
        *self.last_found.get_mut() = (h & HASH_BITS) | u64::from(pos32(pos));
        None
    }

    /// Sets (or with `None` clears) the expiry of an existing `key`; returns whether the key
    /// is held.
    pub(crate) fn set_expiry(&mut self, key: &[u8], at: Option<u64>) -> bool {
        let Some(pos) = self.find(key) else {
            return false;
        };
        let slot = self.entry(pos).exp();
        match (at, slot) {
            (Some(at), NO_EXPIRY) => {
                let slot = pos32(self.volatile.len());
                self.volatile.push(Volatile {
                    at,
                    pos: pos32(pos),
                });
                self.entry_mut(pos).key.set_exp(slot);
            }
            (Some(at), slot) => self.volatile[slot as usize].at = at,
            (None, NO_EXPIRY) => {}
            (None, slot) => {
                self.drop_volatile(slot as usize);
                self.entry_mut(pos).key.set_exp(NO_EXPIRY);
            }
        }
        true
    }

    /// Removes `key`'s expiry, if it has one: [`Table::set_expiry`] with `None`, without the
    /// lookup when no key of the table has an expiry.
    pub(crate) fn clear_expiry(&mut self, key: &[u8]) {
        if !self.volatile.is_empty() {
            self.set_expiry(key, None);
        }
    }

    /// Removes volatile record `slot`, moving the last one into its place.
    fn drop_volatile(&mut self, slot: usize) {
        self.volatile.swap_remove(slot);
        if let Some(moved) = self.volatile.get(slot) {
            let pos = moved.pos as usize;
            self.entry_mut(pos).key.set_exp(pos32(slot));
        }
        if self.volatile.capacity() > SHRINK_CAPACITY_MIN
            && self.volatile.len() * SPARSE_FILL_RATIO < self.volatile.capacity()
        {
            self.volatile.shrink_to(self.volatile.len() * 2);
        }
    }

    /// Removes `key` with its expiry; returns its value.
    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<Value> {
        let (h, pos) = self.locate(key);
        self.remove_at(pos?, h)
    }

    /// Removes the entry at `pos`, whose key hashes to `h`, moving the last entry into its
    /// place.
    fn remove_at(&mut self, pos: usize, h: u64) -> Option<Value> {
        *self.last_found.get_mut() = NO_MEMO;
        self.index.remove(h, pos32(pos));
        let slot = self.entry(pos).exp();
        if slot != NO_EXPIRY {
            self.drop_volatile(slot as usize);
        }
        let last = self.len - 1;
        let tail = self.slabs.len() - 1;
        // The last slab is never empty, so this finds the last entry.
        let popped = self.slabs[tail].pop()?;
        if self.slabs[tail].is_empty() {
            self.slabs.pop();
        } else if tail == 0
            && self.slabs[0].capacity() > SHRINK_CAPACITY_MIN
            && self.slabs[0].len() * SPARSE_FILL_RATIO < self.slabs[0].capacity()
        {
            let keep = self.slabs[0].len() * 2;
            self.slabs[0].shrink_to(keep);
        }
        self.len -= 1;
        let removed = if pos == last {
            popped
        } else {
            // The last entry takes the removed one's place.
            let moved_hash = self.hasher.hash(&popped.key);
            self.index.repoint(moved_hash, pos32(last), pos32(pos));
            if popped.exp() != NO_EXPIRY {
                self.volatile[popped.exp() as usize].pos = pos32(pos);
            }
            std::mem::replace(self.entry_mut(pos), popped)
        };
        self.shrink_if_sparse();
        Some(removed.value)
    }

    /// Gives the index's memory back once it holds fewer than one position in
    /// [`SPARSE_FILL_RATIO`] of its capacity, as Redis shrinks a dict: a hash table never
    /// shrinks by itself, so a keyspace emptied by DEL would keep its largest index. Shrinking
    /// to twice the keys left means the next shrink needs the keys to fall four times more,
    /// so the rehash is paid once per halving at most (amortised O(1) per removal).
    fn shrink_if_sparse(&mut self) {
        let capacity = self.index.capacity();
        if capacity > SHRINK_CAPACITY_MIN && self.len * SPARSE_FILL_RATIO < capacity {
            self.index.shrink_to(self.len * 2);
        }
    }

    /// A uniformly random position, from `random` (any 64 random bits).
    pub(crate) fn random_pos(&self, random: u64) -> Option<usize> {
        (self.len > 0).then(|| (random % self.len as u64) as usize)
    }

    /// The position of a uniformly random key with a TTL, from `random`.
    pub(crate) fn random_volatile_pos(&self, random: u64) -> Option<usize> {
        let n = self.volatile.len() as u64;
        (n > 0).then(|| self.volatile[(random % n) as usize].pos as usize)
    }

    /// The key with a TTL in volatile slot `slot` (< `volatile_len`), and its expiry time.
    pub(crate) fn volatile_at(&self, slot: usize) -> (&Key, u64) {
        let record = self.volatile[slot];
        (&self.entry(record.pos as usize).key, record.at)
    }

    /// Expiry times of the keys with a TTL, in no particular order.
    pub(crate) fn expiry_times(&self) -> impl Iterator<Item = u64> + '_ {
        self.volatile.iter().map(|v| v.at)
    }

    /// Visits about `count` entries, each with its expiry time, from `cursor` and returns the
    /// cursor to resume from, 0 at the end: a scan visits every key held from its start to
    /// its end at least once (`Index::scan` in `engine/src/hash_index.rs`).
    pub(crate) fn scan(
        &self,
        cursor: u64,
        count: usize,
        mut visit: impl FnMut(&Entry, Option<u64>),
    ) -> u64 {
        self.index.scan(cursor, count, |pos| {
            let pos = pos as usize;
            visit(self.entry(pos), self.expiry_at(pos))
        })
    }

    /// Every entry, in position order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.slabs.iter().flatten()
    }

    /// The access metadata of `key`, if held.
    pub(crate) fn meta(&self, key: &[u8]) -> Option<u32> {
        self.find(key).map(|p| self.entry(p).meta())
    }

    /// Sets the access metadata of `key`; returns whether it is held.
    pub(crate) fn set_meta(&mut self, key: &[u8], meta: u32) -> bool {
        match self.find(key) {
            Some(p) => {
                self.entry_mut(p).set_meta(meta);
                true
            }
            None => false,
        }
    }

    /// Bytes the table holds on the heap, by structure (the index's buckets, the slabs'
    /// capacity, the volatile array, long keys), for the per-key figure in the tests and docs;
    /// values' own heap memory is not counted.
    pub(crate) fn structure_bytes(&self) -> usize {
        let index = self.index.allocation_size();
        let slabs: usize = self
            .slabs
            .iter()
            .map(|s| s.capacity() * std::mem::size_of::<Entry>())
            .sum::<usize>()
            + self.slabs.capacity() * std::mem::size_of::<Vec<Entry>>();
        let volatile = self.volatile.capacity() * std::mem::size_of::<Volatile>();
        let keys: usize = self.entries().map(|e| e.key.heap_bytes()).sum();
        index + slabs + volatile + keys
    }

    /// Checks the invariants of the module doc.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let held: usize = self.slabs.iter().map(Vec::len).sum();
        if held != self.len {
            return Err(format!("{held} entries held, {} counted", self.len));
        }
        self.index.check_invariants()?;
        if self.index.len() != self.len {
            return Err(format!(
                "{} positions indexed for {} entries",
                self.index.len(),
                self.len
            ));
        }
        if let Some(n) = self.slabs.iter().position(Vec::is_empty) {
            return Err(format!("slab {n} is empty"));
        }
        if let Some(n) = self
            .slabs
            .iter()
            .rev()
            .skip(1)
            .position(|s| s.len() != SLAB)
        {
            return Err(format!("slab {} is not full", self.slabs.len() - 2 - n));
        }
        for (pos, entry) in self.entries().enumerate() {
            if self.find(&entry.key) != Some(pos) {
                return Err(format!(
                    "key {:?} does not find its position {pos}",
                    entry.key
                ));
            }
            if entry.exp() != NO_EXPIRY
                && self
                    .volatile
                    .get(entry.exp() as usize)
                    .map(|v| v.pos as usize)
                    != Some(pos)
            {
                return Err(format!(
                    "key {:?}: its expiry record points elsewhere",
                    entry.key
                ));
            }
        }
        for (slot, record) in self.volatile.iter().enumerate() {
            if record.pos as usize >= self.len
                || self.entry(record.pos as usize).exp() as usize != slot
            {
                return Err(format!("expiry record {slot} is not its key's"));
            }
        }
        self.hashes.check()?;
        for (key, recalled) in self.hashes.remembered() {
            if recalled.hash != self.hasher.hash(&key) {
                return Err(format!("the hash remembered for {key:?} is not its hash"));
            }
            // The index alone, not `find`, which would trust the memo being checked.
            let held = self
                .index
                .find(recalled.hash, |p| {
                    self.entry(p as usize).key.as_bytes() == key
                })
                .is_some();
            if recalled.absent && held {
                return Err(format!("{key:?} is held but remembered as absent"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use crate::types::string::StringValue;
    use proptest::prelude::*;

    use super::*;

    fn string(n: u64) -> Value {
        Value::String(StringValue::from_arg(n.to_string().as_bytes()))
    }

    fn text(value: Option<&Value>) -> Option<String> {
        match value {
            Some(Value::String(s)) => Some(String::from_utf8_lossy(&s.bytes()).into_owned()),
            Some(other) => Some(other.type_name().to_string()),
            None => None,
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, u64),
        Remove(u16),
        Expire(u16, Option<u64>),
        ClearExpiry(u16),
        Meta(u16, u32),
        /// Prefetch then read: a key hashed ahead, or found absent, is read again.
        Get(u16),
    }

    fn op() -> impl Strategy<Value = Op> {
        // A small key space so operations meet; long keys (over the inline size) too.
        let key = 0u16..64;
        prop_oneof![
            4 => (key.clone(), any::<u64>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => key.clone().prop_map(Op::Remove),
            2 => (key.clone(), proptest::option::of(any::<u64>())).prop_map(|(k, t)| Op::Expire(k, t)),
            1 => key.clone().prop_map(Op::ClearExpiry),
            1 => (key.clone(), 0u32..1 << 24).prop_map(|(k, m)| Op::Meta(k, m)),
            2 => key.prop_map(Op::Get),
        ]
    }

    /// Keys of the four shapes: longer than inline and than the hash memo's short keys
    /// (`short.rs`), longer than inline only, exactly inline, shorter.
    fn key_of(k: u16) -> Vec<u8> {
        match k % 4 {
            0 => format!("a-long-key-that-does-not-fit-inline:{k}").into_bytes(),
            1 => format!("counter:{k:012}").into_bytes(),
            2 => format!("key:{k:012}").into_bytes(),
            _ => format!("k:{k}").into_bytes(),
        }
    }

    /// The model: key to (value, expiry, metadata).
    type Model = HashMap<Vec<u8>, (u64, Option<u64>, u32)>;

    fn apply(table: &mut Table, model: &mut Model, op: &Op) {
        match *op {
            Op::Insert(k, v) => {
                let key = key_of(k);
                let was = table.insert(&key, string(v), 7);
                let expected = model.get(&key).map(|e| e.0.to_string());
                assert_eq!(text(was.as_ref()), expected);
                model
                    .entry(key)
                    .and_modify(|e| e.0 = v)
                    .or_insert((v, None, 7));
            }
            Op::Remove(k) => {
                let key = key_of(k);
                let was = table.remove(&key);
                let expected = model.remove(&key).map(|e| e.0.to_string());
                assert_eq!(text(was.as_ref()), expected);
            }
            Op::Expire(k, at) => {
                let key = key_of(k);
                let held = table.set_expiry(&key, at);
                assert_eq!(held, model.contains_key(&key));
                if let Some(e) = model.get_mut(&key) {
                    e.1 = at;
                }
            }
            Op::Get(k) => {
                let key = key_of(k);
                table.prefetch(&[&key], &mut Vec::new());
                let expected = model.get(&key).map(|e| e.0.to_string());
                assert_eq!(text(table.get(&key)), expected);
                assert_eq!(table.contains_key(&key), model.contains_key(&key));
            }
            Op::ClearExpiry(k) => {
                let key = key_of(k);
                table.clear_expiry(&key);
                if let Some(e) = model.get_mut(&key) {
                    e.1 = None;
                }
            }
            Op::Meta(k, m) => {
                let key = key_of(k);
                assert_eq!(table.set_meta(&key, m), model.contains_key(&key));
                if let Some(e) = model.get_mut(&key) {
                    e.2 = m;
                }
            }
        }
    }

    fn same(table: &Table, model: &Model) {
        assert_eq!(table.len(), model.len());
        let volatile = model.values().filter(|e| e.1.is_some()).count();
        assert_eq!(table.volatile_len(), volatile);
        for (key, (v, at, meta)) in model {
            assert_eq!(text(table.get(key)), Some(v.to_string()));
            assert_eq!(table.expiry(key), *at);
            assert_eq!(table.meta(key), Some(*meta));
        }
    }

    proptest! {
        #[test]
        fn the_table_matches_a_map(ops in proptest::collection::vec(op(), 1..300)) {
            let mut table = Table::default();
            let mut model = Model::new();
            for op in &ops {
                apply(&mut table, &mut model, op);
                table.check_invariants().map_err(TestCaseError::fail)?;
            }
            same(&table, &model);
            // Sampling only ever draws held keys, and (volatile) keys with a TTL.
            for random in 0..64u64 {
                let r = random.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                if let Some(pos) = table.random_pos(r) {
                    prop_assert!(model.contains_key(table.entry(pos).key.as_bytes()));
                }
                if let Some(pos) = table.random_volatile_pos(r) {
                    prop_assert!(table.expiry_at(pos).is_some());
                }
            }
        }
    }

    #[test]
    fn growing_past_several_slabs_and_shrinking_back_keeps_every_key() {
        let mut table = Table::default();
        let n = 3 * SLAB + 17;
        for i in 0..n {
            table.insert(format!("key:{i}").as_bytes(), string(i as u64), 0);
            if i % 5 == 0 {
                table.set_expiry(format!("key:{i}").as_bytes(), Some(i as u64));
            }
        }
        table.check_invariants().unwrap();
        assert_eq!(table.slabs.len(), 4);
        for i in (0..n).filter(|i| i % 2 == 0) {
            assert!(table.remove(format!("key:{i}").as_bytes()).is_some());
        }
        table.check_invariants().unwrap();
        for i in 0..n {
            let held = table.get(format!("key:{i}").as_bytes()).is_some();
            assert_eq!(held, i % 2 == 1, "key:{i}");
        }
        for i in (0..n).filter(|i| i % 2 == 1) {
            table.remove(format!("key:{i}").as_bytes());
        }
        table.check_invariants().unwrap();
        assert!(table.is_empty() && table.slabs.is_empty());
        assert!(table.index.capacity() <= SHRINK_CAPACITY_MIN);
    }

    #[test]
    fn a_remembered_lookup_never_outlives_a_move() {
        let mut table = Table::default();
        for k in [b"a", b"b", b"c"] {
            table.insert(k, string(1), 0);
        }
        assert_eq!(table.find(b"a"), Some(0));
        // "c", the last entry, moves into "a"'s place.
        assert!(table.remove(b"a").is_some());
        assert_eq!(table.find(b"a"), None);
        assert_eq!(table.find(b"c"), Some(0));
        assert!(table.remove(b"c").is_some());
        assert_eq!(table.find(b"c"), None);
        assert_eq!(table.find(b"b"), Some(0));
        table.check_invariants().unwrap();
    }

    #[test]
    fn random_positions_cover_the_keys_uniformly() {
        let mut table = Table::default();
        for i in 0..10u64 {
            table.insert(format!("k{i}").as_bytes(), string(i), 0);
        }
        let mut seen = [0u32; 10];
        let mut x = 1u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seen[table.random_pos(x >> 11).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }

    /// The table's own bytes per key for Redis's benchmark keys (`key:` and 12 digits, a
    /// 16-byte value held by the `Value`): the entry, the index's share, and nothing else
    /// (the keys fit inline). Run with `--nocapture` for the figure.
    #[test]
    fn per_key_table_memory_for_short_keys() {
        let mut table = Table::default();
        let n = 200_000;
        for i in 0..n {
            let key = format!("key:{i:012}");
            table.insert(key.as_bytes(), string(i as u64), 0);
        }
        let per_key = table.structure_bytes() as f64 / n as f64;
        println!(
            "entry {} bytes, Value {} bytes, table {per_key:.1} bytes per key",
            std::mem::size_of::<Entry>(),
            std::mem::size_of::<Value>()
        );
        assert_eq!(std::mem::size_of::<Key>(), 24);
        assert!(per_key < 80.0, "{per_key} bytes per key");
    }
}
