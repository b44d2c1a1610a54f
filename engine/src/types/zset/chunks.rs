//! A sequence kept in order as a run of sorted chunks: a rank is a walk over the chunks'
//! lengths and a search within one chunk, an insert or removal moves at most one chunk's
//! items. What the order is belongs to the caller, who passes it as a predicate.
//!
//! A chunk holds at most [`CHUNK_MAX`] items and is never empty. A full chunk splits in two
//! halves, except when the item goes after the last chunk's last item (a new chunk starts) or
//! before a chunk's first (it ends the chunk before if that has room, or starts a new one), so
//! a set filled in ascending or descending order (a ZADD of growing scores, the load of an
//! RDB's entries, highest first) keeps its chunks full. A
//! chunk's allocation grows by doubling up to [`CHUNK_MAX`] items, so it holds at most twice
//! its items' bytes, and a full chunk none spare.

/// The most items in a chunk (few in tests, so small sets split and merge chunks).
#[cfg(not(test))]
pub(crate) const CHUNK_MAX: usize = 1024;
#[cfg(test)]
pub(crate) const CHUNK_MAX: usize = 16;

/// Items in order (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Chunks<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

/// The items from one index on, ascending.
pub(crate) type ChunkIter<'a, T> =
    std::iter::Chain<std::slice::Iter<'a, T>, std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>>;

impl<T> Chunks<T> {
    /// Items held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The chunk and offset of index `i`; past the end when `i >= len`.
    fn locate(&self, mut i: usize) -> (usize, usize) {
        for (c, chunk) in self.chunks.iter().enumerate() {
            if i < chunk.len() {
                return (c, i);
            }
            i -= chunk.len();
        }
        (self.chunks.len(), 0)
    }

    /// The item at index `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        let (c, o) = self.locate(i);
        self.chunks.get(c).and_then(|ch| ch.get(o))
    }

    /// The item at index `i`, mutably (the caller keeps the order).
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        let (c, o) = self.locate(i);
        self.chunks.get_mut(c).and_then(|ch| ch.get_mut(o))
    }

    /// The number of leading items for which `before` holds (true on a prefix).
    pub(crate) fn partition_point(&self, mut before: impl FnMut(&T) -> bool) -> usize {
        let c = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(&mut before));
        let skipped: usize = self.chunks[..c].iter().map(Vec::len).sum();
        skipped
            + self
                .chunks
                .get(c)
                .map_or(0, |ch| ch.partition_point(before))
    }

    /// Inserts `item` after the items for which `before` holds (true on a prefix).
    pub(crate) fn insert(&mut self, item: T, mut before: impl FnMut(&T) -> bool) {
        self.len += 1;
        if self.chunks.is_empty() {
            self.chunks.push(vec_for(1));
        }
        let c = self
            .chunks
            .partition_point(|ch| ch.last().is_some_and(&mut before))
            .min(self.chunks.len() - 1);
        let at = self.chunks[c].partition_point(&mut before);
        let last = c + 1 == self.chunks.len();
        let chunk = &mut self.chunks[c];
        if chunk.len() < CHUNK_MAX {
            grow(chunk);
            chunk.insert(at, item);
            return;
        }
        if last && at == CHUNK_MAX {
            let mut next = vec_for(1);
            next.push(item);
            self.chunks.push(next);
            return;
        }
        if at == 0 {
            match c.checked_sub(1) {
                Some(p) if self.chunks[p].len() < CHUNK_MAX => {
                    grow(&mut self.chunks[p]);
                    self.chunks[p].push(item);
                }
                _ => {
                    let mut fresh = vec_for(1);
                    fresh.push(item);
                    self.chunks.insert(c, fresh);
                }
            }
            return;
        }
        let mut tail = vec_for(CHUNK_MAX / 2 + 1);
        tail.extend(chunk.drain(CHUNK_MAX / 2..));
        if at <= CHUNK_MAX / 2 {
            chunk.insert(at, item);
        } else {
            tail.insert(at - CHUNK_MAX / 2, item);
        }
        self.chunks.insert(c + 1, tail);
    }

    /// Removes the item at index `i`.
    pub(crate) fn remove_at(&mut self, i: usize) -> Option<T> {
        let (c, o) = self.locate(i);
        let chunk = self.chunks.get_mut(c)?;
        if o >= chunk.len() {
            return None;
        }
        let item = chunk.remove(o);
        if chunk.is_empty() {
            self.chunks.remove(c);
        } else if chunk.len() * 4 <= chunk.capacity() {
            chunk.shrink_to(chunk.len() * 2);
        }
        self.len -= 1;
        Some(item)
    }

    /// Removes the items of indexes `start..end` (clamped); returns them.
    pub(crate) fn remove_range(&mut self, start: usize, end: usize) -> Vec<T> {
        let end = end.min(self.len);
        if start >= end {
            return Vec::new();
        }
        let mut all: Vec<T> = std::mem::take(&mut self.chunks)
            .into_iter()
            .flatten()
            .collect();
        let removed = all.drain(start..end).collect();
        *self = Chunks::from_sorted(all);
        removed
    }

    /// Items from index `start` on, ascending.
    pub(crate) fn iter_from(&self, start: usize) -> ChunkIter<'_, T> {
        let (c, o) = if start >= self.len {
            (self.chunks.len(), 0)
        } else {
            self.locate(start)
        };
        let first: &[T] = self.chunks.get(c).map_or(&[], |ch| &ch[o..]);
        let rest = self.chunks.get(c + 1..).unwrap_or(&[]);
        first.iter().chain(rest.iter().flatten())
    }

    /// Items from items already in order: full chunks.
    pub(crate) fn from_sorted(items: Vec<T>) -> Chunks<T> {
        let len = items.len();
        let mut chunks = Vec::with_capacity(len.div_ceil(CHUNK_MAX));
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            let mut chunk = vec_for(CHUNK_MAX.min(len - chunks.len() * CHUNK_MAX));
            chunk.extend(it.by_ref().take(CHUNK_MAX));
            chunks.push(chunk);
        }
        Chunks { chunks, len }
    }

    /// Bytes allocated.
    pub(crate) fn allocation_size(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Vec<T>>()
            + self
                .chunks
                .iter()
                .map(|ch| ch.capacity() * std::mem::size_of::<T>())
                .sum::<usize>()
    }

    /// Checks the module doc's shape (the order is the caller's to check).
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let mut n = 0;
        for ch in &self.chunks {
            if ch.is_empty() || ch.len() > CHUNK_MAX {
                return Err(format!("a chunk of {}", ch.len()));
            }
            n += ch.len();
        }
        if n != self.len {
            return Err(format!("{n} items held, {} counted", self.len));
        }
        Ok(())
    }
}

/// An empty chunk with room for `n` items.
fn vec_for<T>(n: usize) -> Vec<T> {
    Vec::with_capacity(n.next_power_of_two().clamp(4, CHUNK_MAX))
}

/// Makes room for one more item in a chunk below [`CHUNK_MAX`]: doubling, never past it.
fn grow<T>(chunk: &mut Vec<T>) {
    if chunk.len() == chunk.capacity() {
        let want = (chunk.capacity() * 2).clamp(4, CHUNK_MAX);
        chunk.reserve_exact(want - chunk.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_inserts_fill_whole_chunks() {
        let mut c = Chunks::default();
        for i in 0..3000u32 {
            c.insert(i, |&x| x < i);
        }
        c.check_invariants().unwrap();
        assert_eq!(c.chunks.len(), 3000usize.div_ceil(CHUNK_MAX));
        assert_eq!(c.chunks[0].capacity(), CHUNK_MAX);
        assert_eq!(
            c.iter_from(0).copied().collect::<Vec<_>>(),
            (0..3000).collect::<Vec<_>>()
        );
        assert_eq!(c.get(2500), Some(&2500));
        assert_eq!(c.partition_point(|&x| x < 1777), 1777);
    }

    #[test]
    fn descending_inserts_fill_whole_chunks() {
        let mut c = Chunks::default();
        for i in (0..3000u32).rev() {
            c.insert(i, |&x| x < i);
        }
        c.check_invariants().unwrap();
        assert_eq!(c.chunks.len(), 3000usize.div_ceil(CHUNK_MAX));
        assert_eq!(
            c.iter_from(0).copied().collect::<Vec<_>>(),
            (0..3000).collect::<Vec<_>>()
        );
    }

    #[test]
    fn inserts_in_the_middle_split_and_removals_shrink() {
        let mut c = Chunks::default();
        for i in 0..5000u32 {
            let v = i.wrapping_mul(2_654_435_761) % 10_007;
            c.insert(v, |&x| x < v);
        }
        c.check_invariants().unwrap();
        let all: Vec<u32> = c.iter_from(0).copied().collect();
        assert!(all.windows(2).all(|w| w[0] <= w[1]));
        for _ in 0..4000 {
            c.remove_at(7);
        }
        c.check_invariants().unwrap();
        assert_eq!(c.len(), 1000);
        assert_eq!(c.remove_range(10, 990).len(), 980);
        c.check_invariants().unwrap();
        assert_eq!(c.iter_from(0).count(), 20);
    }
}
