//! A compact ordered map for pending-entry lists and their indexes: sorted chunks of up to
//! [`CHUNK_LEN_MAX`] pairs, indexed by a lower bound of each chunk's keys.
//!
//! Pending entries are created in increasing id order (XREADGROUP delivers ascending ids) and
//! mostly acknowledged in that order too; the delivery-time order and the reference index see
//! the same pattern. A `BTreeMap` splits its leaves in the middle, so such a workload leaves
//! them about two-thirds full and costs one allocation per eleven pairs. Here an append after
//! the last key fills the last chunk completely before a new chunk starts (found without a
//! search), so a million pending entries cost little more than the pairs themselves; an insert
//! into a full chunk elsewhere splits it in half, as a B-tree would. Chunks are ring buffers,
//! so removing the first pair of a chunk (the in-order ack) moves nothing, and a chunk keeps
//! its index key when its first pair goes, so that removal touches no index either.
//!
//! Invariants ([`ChunkMap::check`]): no chunk is empty or longer than `CHUNK_LEN_MAX`; keys are
//! strictly increasing within and across chunks; each chunk's index key is at most its first
//! key and above every key of the chunk before it (so the chunk holding a key, if any, is the
//! last one indexed at or below it); `len` is the total number of pairs.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Debug;
use std::ops::Bound;

/// Pairs per chunk: large enough that the index costs under a byte per pair, small enough that
/// an insert or removal inside a chunk moves little memory.
pub const CHUNK_LEN_MAX: usize = 64;

/// An ordered map from `K` to `V`.
#[derive(Debug, Clone)]
pub struct ChunkMap<K, V> {
    /// Chunks by a lower bound of their keys (see the module doc).
    chunks: BTreeMap<K, VecDeque<(K, V)>>,
    /// Pairs in all chunks.
    len: usize,
}

impl<K, V> Default for ChunkMap<K, V> {
    fn default() -> Self {
        ChunkMap {
            chunks: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<K: Ord + Copy + Debug, V> ChunkMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        ChunkMap::default()
    }

    /// A map of `pairs`, which must come in strictly increasing key order (a snapshot's
    /// indexes, rebuilt in bulk): chunks filled completely, as appends fill them, with no
    /// search. `None` if a key is not above the one before it.
    pub fn from_sorted(pairs: impl IntoIterator<Item = (K, V)>) -> Option<Self> {
        let mut chunks = BTreeMap::new();
        let mut len = 0;
        let mut chunk: VecDeque<(K, V)> = VecDeque::new();
        let mut prev: Option<K> = None;
        for (key, value) in pairs {
            if prev.is_some_and(|p| p >= key) {
                return None;
            }
            prev = Some(key);
            if chunk.len() == CHUNK_LEN_MAX {
                let full = std::mem::replace(&mut chunk, VecDeque::with_capacity(CHUNK_LEN_MAX));
                chunks.insert(full[0].0, full);
            } else if chunk.capacity() == 0 {
                chunk.reserve_exact(CHUNK_LEN_MAX);
            }
            chunk.push_back((key, value));
            len += 1;
        }
        if let Some(&(first, _)) = chunk.front() {
            chunks.insert(first, chunk);
        }
        Some(ChunkMap { chunks, len })
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk that holds `key` if anything does: the last one indexed at or before it.
    fn chunk_of(&self, key: &K) -> Option<(&K, &VecDeque<(K, V)>)> {
        self.chunks.range(..=*key).next_back()
    }

    /// The value under `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        let (_, chunk) = self.chunk_of(key)?;
        let at = chunk.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        Some(&chunk[at].1)
    }

    /// The value under `key`, mutably.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let (_, chunk) = self.chunks.range_mut(..=*key).next_back()?;
        let at = chunk.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        Some(&mut chunk[at].1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &K) -> bool {
        self.get(key).is_some()
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        // Appending after the last key (the common case): no search.
        if let Some(mut last) = self.chunks.last_entry() {
            let chunk = last.get_mut();
            if chunk.back().is_some_and(|(k, _)| *k < key) {
                self.len += 1;
                if chunk.len() < CHUNK_LEN_MAX {
                    chunk.push_back((key, value));
                } else {
                    // Appends fill chunks: this one will be full too.
                    let mut next = VecDeque::with_capacity(CHUNK_LEN_MAX);
                    next.push_back((key, value));
                    self.chunks.insert(key, next);
                }
                return None;
            }
        }
        let Some((_, chunk)) = self.chunks.range_mut(..=key).next_back() else {
            // Before every chunk: prepend to the first chunk if it has room, else a new chunk.
            self.len += 1;
            match self.chunks.first_entry() {
                Some(entry) if entry.get().len() < CHUNK_LEN_MAX => {
                    let mut chunk = entry.remove();
                    chunk.push_front((key, value));
                    self.chunks.insert(key, chunk);
                }
                _ => {
                    self.chunks.insert(key, VecDeque::from([(key, value)]));
                }
            }
            return None;
        };
        let at = match chunk.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(at) => return Some(std::mem::replace(&mut chunk[at].1, value)),
            Err(at) => at,
        };
        self.len += 1;
        if chunk.len() < CHUNK_LEN_MAX {
            chunk.insert(at, (key, value));
            return None;
        }
        if at == chunk.len() {
            // Past a full chunk: start the next one (indexed by `key`, below the next chunk's
            // index since this chunk was the one indexed at or below `key`).
            self.chunks.insert(key, VecDeque::from([(key, value)]));
            return None;
        }
        let mut upper = chunk.split_off(CHUNK_LEN_MAX / 2);
        if at <= CHUNK_LEN_MAX / 2 {
            chunk.insert(at, (key, value));
        } else {
            upper.insert(at - CHUNK_LEN_MAX / 2, (key, value));
        }
        let upper_first = upper[0].0;
        self.chunks.insert(upper_first, upper);
        None
    }

    /// Removes `key`; returns its value. The chunk keeps its index key (still a lower bound).
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let (&index, chunk) = self.chunks.range_mut(..=*key).next_back()?;
        let at = chunk.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        let (_, value) = chunk.remove(at)?;
        self.len -= 1;
        if chunk.is_empty() {
            self.chunks.remove(&index);
        }
        Some(value)
    }

    /// Calls `f` on the value under `key`, if any, and removes the pair when `f` says so: one
    /// search where a `get_mut` and a `remove` would take two. Returns whether `key` was
    /// present.
    pub fn update_or_remove(&mut self, key: &K, f: impl FnOnce(&mut V) -> bool) -> bool {
        let Some((&index, chunk)) = self.chunks.range_mut(..=*key).next_back() else {
            return false;
        };
        let Ok(at) = chunk.binary_search_by(|(k, _)| k.cmp(key)) else {
            return false;
        };
        if f(&mut chunk[at].1) {
            chunk.remove(at);
            self.len -= 1;
            if chunk.is_empty() {
                self.chunks.remove(&index);
            }
        }
        true
    }

    /// Removes and returns the first pair.
    #[cfg(test)]
    pub fn pop_first(&mut self) -> Option<(K, V)> {
        let mut first = self.chunks.first_entry()?;
        let pair = first.get_mut().pop_front();
        if first.get().is_empty() {
            first.remove();
        }
        if pair.is_some() {
            self.len -= 1;
        }
        pair
    }

    /// Pairs with keys `>= start`, in order.
    pub fn range_from(&self, start: K) -> impl Iterator<Item = (&K, &V)> + '_ {
        let from = self.chunk_of(&start).map_or(start, |(&k, _)| k);
        self.chunks
            .range(from..)
            .flat_map(|(_, chunk)| chunk.iter())
            .skip_while(move |(k, _)| *k < start)
            .map(|(k, v)| (k, v))
    }

    /// The first pair with a key above `key`.
    pub fn next_after(&self, key: &K) -> Option<(&K, &V)> {
        let from = match self.chunk_of(key) {
            Some((&index, chunk)) => {
                let at = match chunk.binary_search_by(|(k, _)| k.cmp(key)) {
                    Ok(at) => at + 1,
                    Err(at) => at,
                };
                if let Some((k, v)) = chunk.get(at) {
                    return Some((k, v));
                }
                Bound::Excluded(index)
            }
            None => Bound::Unbounded,
        };
        self.chunks
            .range((from, Bound::Unbounded))
            .next()
            .and_then(|(_, chunk)| chunk.front())
            .map(|(k, v)| (k, v))
    }

    /// Every pair, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.chunks
            .values()
            .flat_map(|chunk| chunk.iter())
            .map(|(k, v)| (k, v))
    }

    /// Every value, in key order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// The first pair.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.chunks
            .values()
            .next()
            .and_then(|chunk| chunk.front())
            .map(|(k, v)| (k, v))
    }

    /// The last pair.
    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.chunks
            .values()
            .next_back()
            .and_then(|chunk| chunk.back())
            .map(|(k, v)| (k, v))
    }

    /// The smallest key.
    pub fn first_key(&self) -> Option<K> {
        self.first_key_value().map(|(k, _)| *k)
    }

    /// The largest key.
    pub fn last_key(&self) -> Option<K> {
        self.last_key_value().map(|(k, _)| *k)
    }

    /// Heap bytes held (pair storage plus index), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let index = self.chunks.len()
            * (std::mem::size_of::<K>() + std::mem::size_of::<VecDeque<(K, V)>>() + 8);
        let pairs: usize = self
            .chunks
            .values()
            .map(|c| c.capacity() * std::mem::size_of::<(K, V)>())
            .sum();
        index + pairs
    }

    /// Checks the invariants in the module doc.
    pub fn check(&self) -> Result<(), String> {
        let mut count = 0;
        let mut prev: Option<K> = None;
        for (index, chunk) in &self.chunks {
            let Some((first, _)) = chunk.front() else {
                return Err(format!("chunk at {index:?} is empty"));
            };
            if chunk.len() > CHUNK_LEN_MAX {
                return Err(format!("chunk at {index:?} has {} pairs", chunk.len()));
            }
            if index > first {
                return Err(format!("chunk indexed {index:?} starts at {first:?}"));
            }
            if prev.is_some_and(|p| p >= *index) {
                return Err(format!(
                    "chunk indexed {index:?} not above the keys before it"
                ));
            }
            for (k, _) in chunk {
                if prev.is_some_and(|p| p >= *k) {
                    return Err(format!("key {k:?} out of order"));
                }
                prev = Some(*k);
            }
            count += chunk.len();
        }
        if count != self.len {
            return Err(format!("len {} but chunks hold {count}", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, u32),
        Remove(u16),
        Halve(u16),
        PopFirst,
        /// Insert just past the largest key (the append fast path).
        Append(u8, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (any::<u16>(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k % 600, v)),
            1 => any::<u16>().prop_map(|k| Op::Remove(k % 600)),
            1 => Just(Op::PopFirst),
            1 => any::<u16>().prop_map(|k| Op::Halve(k % 600)),
            3 => (any::<u8>(), any::<u32>()).prop_map(|(d, v)| Op::Append(d % 3, v)),
        ]
    }

    proptest! {
        #[test]
        fn behaves_like_a_btreemap(ops in proptest::collection::vec(op(), 1..800), probe in any::<u16>()) {
            let mut map = ChunkMap::new();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(map.remove(&k), model.remove(&k)),
                    Op::Halve(k) => {
                        // Halves the value, removing the pair once it reaches 0.
                        let present = map.update_or_remove(&k, |v| { *v /= 2; *v == 0 });
                        prop_assert_eq!(present, model.contains_key(&k));
                        if let Some(v) = model.get_mut(&k) {
                            *v /= 2;
                            if *v == 0 {
                                model.remove(&k);
                            }
                        }
                    }
                    Op::PopFirst => prop_assert_eq!(map.pop_first(), model.pop_first()),
                    Op::Append(d, v) => {
                        let k = model.keys().next_back().map_or(0, |&k| k + 1) + u16::from(d);
                        prop_assert_eq!(map.insert(k, v), model.insert(k, v));
                    }
                }
                map.check().map_err(TestCaseError::fail)?;
            }
            prop_assert_eq!(map.len(), model.len());
            prop_assert!(map.iter().map(|(k, v)| (*k, *v)).eq(model.iter().map(|(k, v)| (*k, *v))));
            let probe = probe % 600;
            prop_assert!(map.range_from(probe).map(|(k, _)| *k).eq(model.range(probe..).map(|(k, _)| *k)));
            prop_assert_eq!(map.get(&probe), model.get(&probe));
            prop_assert_eq!(map.first_key(), model.keys().next().copied());
            prop_assert_eq!(
                map.next_after(&probe).map(|(k, v)| (*k, *v)),
                model.range(probe + 1..).next().map(|(k, v)| (*k, *v))
            );
            prop_assert_eq!(map.last_key(), model.keys().next_back().copied());
        }
    }

    proptest! {
        #[test]
        fn from_sorted_equals_inserting_one_by_one(keys in proptest::collection::btree_set(any::<u16>(), 0..400)) {
            let pairs: Vec<(u16, u32)> = keys.iter().map(|&k| (k, u32::from(k) * 3)).collect();
            let bulk = ChunkMap::from_sorted(pairs.iter().copied()).unwrap();
            bulk.check().map_err(TestCaseError::fail)?;
            prop_assert_eq!(bulk.len(), pairs.len());
            prop_assert!(bulk.iter().map(|(k, v)| (*k, *v)).eq(pairs.iter().copied()));
            let mut bulk = bulk;
            // Still a working map afterwards.
            prop_assert_eq!(bulk.insert(7, 1), keys.contains(&7).then_some(21));
            bulk.check().map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn from_sorted_refuses_unordered_keys() {
        assert!(ChunkMap::from_sorted([(1u8, ()), (1, ())]).is_none());
        assert!(ChunkMap::from_sorted([(2u8, ()), (1, ())]).is_none());
        assert!(ChunkMap::<u8, ()>::from_sorted([]).unwrap().is_empty());
    }

    #[test]
    fn sequential_inserts_fill_chunks() {
        let mut map = ChunkMap::new();
        for k in 0..(CHUNK_LEN_MAX * 10) as u32 {
            map.insert(k, ());
        }
        assert_eq!(map.chunks.len(), 10);
        map.check().unwrap();
    }
}
