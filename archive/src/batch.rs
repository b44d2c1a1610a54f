//! A fold batch: live entries copied out of a stream as archive records, ready to fold.
//!
//! The server copies what a deferred trim removes while it holds the keyspace lock, and folds
//! it later without the lock. [`FoldBatch`] makes that copy the record encoding itself, every
//! record back to back in one buffer, instead of an owned [`echomq_engine::Entry`] per entry
//! (a vector and a buffer per field and value, allocated under the lock and freed after the
//! fold); the fold then only stamps each record with its stream number and page checksum
//! ([`record::seal`]) and inserts it.
//!
//! Invariants: `bytes` is exactly the records of `index`, in order, each as
//! [`record::append_unsealed`] wrote it; `index[i].1` is where record `i` ends.

use echomq_engine::StreamId;

use crate::fold::FoldEntry;
use crate::format::record;

/// Entries encoded as unsealed archive records (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct FoldBatch {
    /// The records, back to back.
    bytes: Vec<u8>,
    /// Per record: its entry's id and the offset in `bytes` where it ends.
    index: Vec<(StreamId, usize)>,
}

/// One entry of a [`FoldBatch`]: its id and its unsealed record.
#[derive(Debug, Clone, Copy)]
pub struct BatchEntry<'a> {
    id: StreamId,
    record: &'a [u8],
}

impl FoldEntry for BatchEntry<'_> {
    fn id(&self) -> StreamId {
        self.id
    }

    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        record::pairs(self.record)
    }
}

impl BatchEntry<'_> {
    /// The unsealed record.
    pub(crate) fn record(&self) -> &[u8] {
        self.record
    }
}

impl FoldBatch {
    /// An empty batch.
    pub fn new() -> FoldBatch {
        FoldBatch::default()
    }

    /// A batch holding copies of `entries` (in the order given: a fold wants mint order).
    pub fn of<E: FoldEntry>(entries: impl IntoIterator<Item = E>) -> FoldBatch {
        let mut batch = FoldBatch::new();
        for entry in entries {
            batch.push(entry.id(), entry.pairs());
        }
        batch
    }

    /// Appends an entry.
    pub fn push<'a>(&mut self, id: StreamId, pairs: impl Iterator<Item = (&'a [u8], &'a [u8])>) {
        record::append_unsealed(&mut self.bytes, id, pairs);
        self.index.push((id, self.bytes.len()));
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the batch holds no entry.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The id of entry `i`.
    pub fn id(&self, i: usize) -> StreamId {
        self.index[i].0
    }

    /// Entry `i`.
    pub fn get(&self, i: usize) -> BatchEntry<'_> {
        let start = i.checked_sub(1).map_or(0, |prev| self.index[prev].1);
        let (id, end) = self.index[i];
        BatchEntry {
            id,
            record: &self.bytes[start..end],
        }
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = BatchEntry<'_>> {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_gives_back_its_entries() {
        let mut batch = FoldBatch::new();
        batch.push(
            StreamId::new(1, 1),
            [(b"a".as_slice(), b"1".as_slice())].into_iter(),
        );
        batch.push(StreamId::new(1, 2), std::iter::empty());
        batch.push(
            StreamId::new(2, 0),
            [(b"b".as_slice(), b"".as_slice()), (b"c", b"33")].into_iter(),
        );
        type Owned = Vec<(Vec<u8>, Vec<u8>)>;
        let got: Vec<(StreamId, Owned)> = batch
            .iter()
            .map(|e| {
                let pairs = e.pairs().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
                (e.id(), pairs)
            })
            .collect();
        let owned = |pairs: &[(&[u8], &[u8])]| -> Owned {
            pairs
                .iter()
                .map(|(f, v)| (f.to_vec(), v.to_vec()))
                .collect()
        };
        assert_eq!(
            got,
            vec![
                (StreamId::new(1, 1), owned(&[(b"a", b"1")])),
                (StreamId::new(1, 2), owned(&[])),
                (StreamId::new(2, 0), owned(&[(b"b", b""), (b"c", b"33")])),
            ]
        );
        assert_eq!(batch.len(), 3);
        assert_eq!(batch.id(2), StreamId::new(2, 0));
    }
}
