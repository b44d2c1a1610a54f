//! A compact ordered map for pending-entry lists: sorted chunks of up to [`CHUNK_LEN_MAX`]
//! pairs, indexed by each chunk's first key.
//!
//! Pending entries are created in increasing id order (XREADGROUP delivers ascending ids) and
//! mostly acknowledged in that order too. A `BTreeMap` splits its leaves in the middle, so such
//! a workload leaves them about two-thirds full and costs one allocation per eleven pairs. Here an
//! append to the last chunk fills it completely before a new chunk starts, so a million pending
//! entries cost little more than the pairs themselves; an insert into a full chunk elsewhere
//! splits it in half, as a B-tree would.
//!
//! Invariants ([`ChunkMap::check`]): no chunk is empty or longer than `CHUNK_LEN_MAX`; keys are
//! strictly increasing within and across chunks; each chunk is indexed by its first key; `len`
//! is the total number of pairs.

use std::collections::BTreeMap;
use std::fmt::Debug;

/// Pairs per chunk: large enough that the index costs under a byte per pair, small enough that
/// an insert or removal inside a chunk moves little memory.
pub const CHUNK_LEN_MAX: usize = 64;

/// An ordered map from `K` to `V`.
#[derive(Debug, Clone)]
pub struct ChunkMap<K, V> {
    /// Chunks by their first key.
    chunks: BTreeMap<K, Vec<(K, V)>>,
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

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The chunk that holds `key` if anything does: the last one starting at or before it.
    fn chunk_of(&self, key: &K) -> Option<(&K, &Vec<(K, V)>)> {
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
        let Some((_, chunk)) = self.chunks.range_mut(..=key).next_back() else {
            // Before every chunk: prepend to the first chunk if it has room, else a new chunk.
            self.len += 1;
            match self.chunks.first_entry() {
                Some(entry) if entry.get().len() < CHUNK_LEN_MAX => {
                    let mut chunk = entry.remove();
                    chunk.insert(0, (key, value));
                    self.chunks.insert(key, chunk);
                }
                _ => {
                    self.chunks.insert(key, vec![(key, value)]);
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
            // Appending past a full chunk: start the next one (the sequential case).
            self.chunks.insert(key, vec![(key, value)]);
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

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let (&first, chunk) = self.chunks.range_mut(..=*key).next_back()?;
        let at = chunk.binary_search_by(|(k, _)| k.cmp(key)).ok()?;
        let (_, value) = chunk.remove(at);
        self.len -= 1;
        if chunk.is_empty() {
            self.chunks.remove(&first);
        } else if at == 0 {
            // The chunk's first key changed: re-index it.
            if let Some(chunk) = self.chunks.remove(&first) {
                self.chunks.insert(chunk[0].0, chunk);
            }
        }
        Some(value)
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

    /// Every pair, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> + '_ {
        self.chunks
            .values()
            .flat_map(|chunk| chunk.iter())
            .map(|(k, v)| (k, v))
    }

    /// The smallest key.
    pub fn first_key(&self) -> Option<K> {
        self.chunks.values().next().map(|chunk| chunk[0].0)
    }

    /// The largest key.
    pub fn last_key(&self) -> Option<K> {
        self.chunks
            .values()
            .next_back()
            .and_then(|chunk| chunk.last())
            .map(|(k, _)| *k)
    }

    /// Heap bytes held (pair storage plus index), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let index =
            self.chunks.len() * (std::mem::size_of::<K>() + std::mem::size_of::<Vec<(K, V)>>() + 8);
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
        for (first, chunk) in &self.chunks {
            if chunk.is_empty() || chunk.len() > CHUNK_LEN_MAX {
                return Err(format!("chunk at {first:?} has {} pairs", chunk.len()));
            }
            if chunk[0].0 != *first {
                return Err(format!(
                    "chunk indexed {first:?} starts at {:?}",
                    chunk[0].0
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
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (any::<u16>(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k % 600, v)),
            1 => any::<u16>().prop_map(|k| Op::Remove(k % 600)),
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
                }
                map.check().map_err(TestCaseError::fail)?;
            }
            prop_assert_eq!(map.len(), model.len());
            prop_assert!(map.iter().map(|(k, v)| (*k, *v)).eq(model.iter().map(|(k, v)| (*k, *v))));
            let probe = probe % 600;
            prop_assert!(map.range_from(probe).map(|(k, _)| *k).eq(model.range(probe..).map(|(k, _)| *k)));
            prop_assert_eq!(map.get(&probe), model.get(&probe));
            prop_assert_eq!(map.first_key(), model.keys().next().copied());
            prop_assert_eq!(map.last_key(), model.keys().next_back().copied());
        }
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
