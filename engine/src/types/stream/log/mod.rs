//! One stream: an ordered index of macro nodes plus Redis's bookkeeping fields.
//!
//! The index maps each node's master id to the node. Redis keys its radix tree with the id as
//! 16 big-endian bytes so that byte order is id order; a `BTreeMap<StreamId, _>` gives the same
//! order and the same "seek to the last node whose key is <= id" in O(log nodes). With 100
//! entries per node the index is about 1% of a stream's memory, and every range read touches
//! only the nodes that overlap its bounds (see `benches/engine.rs`).
//!
//! Bookkeeping follows Redis exactly (`docs/reference/streams.md` §2.4):
//! - `length`: live entries; `entries_added`: every XADD ever, trimmed or not;
//! - `last_id`: the last id ever added (or set by XSETID), never lowered by XDEL or trimming;
//! - `first_id`: the first live entry, `0-0` when empty;
//! - `max_deleted_entry_id`: the largest id removed by XDEL (trimming does not raise it).
//!
//! Invariants ([`Stream::check_invariants`]): nodes are ordered and disjoint, each node is
//! well formed, `length` is the sum of live entries, `first_id` is the first live id, every live
//! id is at most `last_id`, and only the head node may have no live entry: Redis frees a node when
//! XDEL empties it, but an exact MINID trim can leave the head node with tombstones only (when
//! its last element is a tombstone at or above the trim point), and so do we. With ACKED
//! trimming the nodes before such a node may survive (they hold referenced entries), so the
//! rule is: an empty node is the head, or every node before it ends below its master id... in
//! short, it is the last node such a trim reached, which `check_invariants` accepts when it
//! is the first empty node.

mod delete_ex;
pub mod idmp;
mod range;
pub(crate) mod restore;
mod trim;
mod trim_preview;

use std::collections::BTreeMap;

pub use delete_ex::DeleteResult;
pub(crate) use range::lookup;
pub use range::{Range, RevRange};
pub use trim::{DeleteStrategy, Trim, TrimStrategy};
pub use trim_preview::TrimPreview;

use bytes::Bytes;

use crate::config::NodeLimits;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::group::refs::GroupIndex;
use crate::id::{AddId, StreamId};
use crate::node::{EntryRef, Node};

/// Largest total size of one entry's fields and values (Redis's listpack limit).
const ENTRY_BYTES_MAX: u64 = 1 << 30;

/// A stream: its entries, in nodes, and its bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    /// Nodes by master id.
    pub(crate) nodes: BTreeMap<StreamId, Node>,
    /// Live entries.
    length: u64,
    /// Last id ever added or set.
    last_id: StreamId,
    /// First live entry, `0-0` when empty.
    first_id: StreamId,
    /// Largest id removed by XDEL (or set by XSETID MAXDELETEDID).
    max_deleted_entry_id: StreamId,
    /// Every entry ever added.
    entries_added: u64,
    /// Consumer groups by name, in byte order.
    pub(crate) groups: BTreeMap<Bytes, Group>,
    /// Idempotent-production state (IDMP); see [`idmp`].
    pub(crate) idmp: idmp::Idmp,
    /// The groups' reference index and cached minimum cursor (boxed: most streams have
    /// no group, and a stream is a keyspace value).
    pub(crate) index: Box<GroupIndex>,
}

impl Stream {
    /// An empty stream (what XGROUP CREATE MKSTREAM or XADD on a missing key creates).
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries (XLEN).
    pub fn len(&self) -> u64 {
        self.length
    }

    /// Whether the stream has no live entry. An empty stream still exists as a key.
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// The last id ever added or set (`last-generated-id`).
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// The first live id, `0-0` when empty (`recorded-first-entry-id`).
    pub fn first_id(&self) -> StreamId {
        self.first_id
    }

    /// The largest id ever removed by XDEL (`max-deleted-entry-id`).
    pub fn max_deleted_entry_id(&self) -> StreamId {
        self.max_deleted_entry_id
    }

    /// Every entry ever added (`entries-added`).
    pub fn entries_added(&self) -> u64 {
        self.entries_added
    }

    /// Number of macro nodes (`radix-tree-keys`).
    pub fn node_count(&self) -> u64 {
        self.nodes.len() as u64
    }

    /// What freeing it costs, as Redis estimates it (`lazyfreeGetFreeEffort`): its nodes, and
    /// each group with as many pending entries as the first.
    pub(crate) fn free_effort(&self) -> usize {
        let pending = self.groups.values().next().map_or(0, |g| g.pending_count());
        self.nodes.len() + self.groups.len() * (1 + pending)
    }

    /// Heap bytes held by node buffers plus a per-node estimate of the index, and the IDMP
    /// state's, for INFO and benchmarks.
    pub fn memory_bytes(&self) -> usize {
        const INDEX_BYTES_PER_NODE: usize =
            std::mem::size_of::<StreamId>() + std::mem::size_of::<Node>() + 8;
        self.nodes
            .values()
            .map(|n| n.heap_bytes() + INDEX_BYTES_PER_NODE)
            .sum::<usize>()
            + self.idmp.memory_bytes()
    }

    /// Heap bytes of every group's pending entries with their indexes: each group's PELs and
    /// delivery-time order ([`crate::group::Group::pel_heap_bytes`]) and the stream's index
    /// from pending id to groups, for memory reports and benchmarks.
    pub fn pel_heap_bytes(&self) -> usize {
        self.groups()
            .map(|(_, g)| g.pel_heap_bytes())
            .sum::<usize>()
            + self.index.heap_bytes()
    }

    /// The bytes each node would take as a Redis listpack, node by node (MEMORY USAGE
    /// sizes a stream by Redis's rules from these).
    pub fn listpack_bytes(&self) -> impl Iterator<Item = u64> + '_ {
        self.nodes.values().map(|n| n.listpack_bytes())
    }

    /// Appends an entry (XADD without trimming). `fields` is `field, value, field, value, ...`.
    ///
    /// `now_ms` is the command's time snapshot, used by `*`. Errors leave the stream unchanged.
    pub fn add<T: AsRef<[u8]>>(
        &mut self,
        id: AddId,
        fields: &[T],
        now_ms: u64,
        limits: NodeLimits,
    ) -> Result<StreamId> {
        if fields.is_empty() || fields.len() % 2 != 0 {
            return Err(Error::WrongArity("xadd".into()));
        }
        if id == AddId::Explicit(StreamId::MIN) {
            return Err(Error::XaddIdZero);
        }
        if self.last_id == StreamId::MAX {
            return Err(Error::StreamExhausted);
        }
        let new_id = self.next_id(id, now_ms)?;
        let total_bytes: u64 = fields.iter().map(|f| f.as_ref().len() as u64).sum();
        if total_bytes > ENTRY_BYTES_MAX {
            return Err(Error::ElementsTooLarge);
        }
        self.append(new_id, fields, total_bytes, limits);
        Ok(new_id)
    }

    /// The id XADD would give `id` now, or the error it would reply.
    fn next_id(&self, id: AddId, now_ms: u64) -> Result<StreamId> {
        let last = self.last_id;
        let new_id = match id {
            AddId::Auto if now_ms > last.ms => StreamId::new(now_ms, 0),
            AddId::Auto => last.next().ok_or(Error::StreamExhausted)?,
            AddId::AutoSeq(ms) if ms == last.ms => {
                if last.seq == u64::MAX {
                    return Err(Error::XaddIdTooSmall);
                }
                StreamId::new(ms, last.seq + 1)
            }
            AddId::AutoSeq(ms) => StreamId::new(ms, 0),
            AddId::Explicit(id) => id,
        };
        if new_id <= last {
            return Err(Error::XaddIdTooSmall);
        }
        Ok(new_id)
    }

    /// Appends with Redis's node split rule (`docs/reference/streams.md` §1.3).
    fn append<T: AsRef<[u8]>>(
        &mut self,
        id: StreamId,
        fields: &[T],
        total_bytes: u64,
        limits: NodeLimits,
    ) {
        let bytes_max = limits.effective_bytes_max();
        // XSETID may set last_id below tombstones at the end of the tail node (its checks look
        // at live entries only). Readers cannot see tombstones, so dropping them keeps ids
        // ordered and changes nothing a reader can see (Redis would append out of order).
        if let Some(mut tail) = self.nodes.last_entry()
            && tail.get().last() >= id
        {
            let master = *tail.key();
            if tail.get_mut().drop_tombstones_from(master, id) {
                tail.remove();
            }
        }
        match self.nodes.last_entry() {
            Some(mut tail)
                if tail.get().listpack_bytes() + total_bytes < bytes_max
                    && (limits.entries_max == 0
                        || tail.get().live() + tail.get().deleted() < limits.entries_max) =>
            {
                let master = *tail.key();
                tail.get_mut().push(master, id, fields);
            }
            tail => {
                if let Some(mut tail) = tail {
                    tail.get_mut().seal();
                }
                self.nodes.insert(id, Node::new(id, fields));
            }
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
    }

    /// Deletes entries by id (XDEL); returns how many live entries were deleted.
    pub fn delete(&mut self, ids: &[StreamId]) -> u64 {
        let mut batch = DeleteBatch::default();
        for &id in ids {
            self.delete_in(&mut batch, id);
        }
        self.finish_delete(batch)
    }

    /// Deletes one entry as part of `batch` (XDEL, XDELEX, XACKDEL): returns whether it was
    /// live. The stream's first id is brought up to date by [`Stream::finish_delete`], once
    /// per batch, since finding it walks the head node's tombstones.
    pub(super) fn delete_in(&mut self, batch: &mut DeleteBatch, id: StreamId) -> bool {
        if !self.delete_one(id) {
            return false;
        }
        batch.first_deleted |= id == self.first_id;
        self.max_deleted_entry_id = self.max_deleted_entry_id.max(id);
        batch.deleted += 1;
        true
    }

    /// Ends a batch of [`Stream::delete_in`]: the first id follows the deletions. Returns how
    /// many live entries the batch deleted.
    pub(super) fn finish_delete(&mut self, batch: DeleteBatch) -> u64 {
        if batch.deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
            } else if batch.first_deleted {
                self.first_id = self.first_live_id();
            }
        }
        batch.deleted
    }

    fn delete_one(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let Some(raw) = node.find(master, id) else {
            return false;
        };
        if raw.deleted {
            return false;
        }
        node.mark_deleted(&raw);
        if node.live() == 0 {
            self.nodes.remove(&master);
        }
        self.length -= 1;
        true
    }

    /// The live entry with this id.
    pub fn get(&self, id: StreamId) -> Option<EntryRef<'_>> {
        lookup(&self.nodes, id)
    }

    /// The first live entry.
    pub fn first_entry(&self) -> Option<EntryRef<'_>> {
        self.range(StreamId::MIN, StreamId::MAX).next()
    }

    /// The last live entry.
    pub fn last_entry(&self) -> Option<EntryRef<'_>> {
        self.rev_range(StreamId::MIN, StreamId::MAX).next()
    }

    fn first_live_id(&self) -> StreamId {
        self.first_entry().map_or(StreamId::MIN, |e| e.id)
    }

    /// XSETID: sets `last_id`, and optionally `entries_added` and `max_deleted_entry_id`.
    ///
    /// Checks in Redis's order; on error nothing changes.
    pub fn set_id(
        &mut self,
        id: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
    ) -> Result<()> {
        if max_deleted.is_some_and(|m| id < m) {
            return Err(Error::XsetidBelowGivenMaxDeleted);
        }
        if id < self.max_deleted_entry_id {
            return Err(Error::XsetidBelowMaxDeleted);
        }
        if self.length > 0 {
            let top = self.last_entry().map_or(StreamId::MIN, |e| e.id);
            if id < top {
                return Err(Error::XsetidBelowTop);
            }
            if entries_added.is_some_and(|n| n < self.length) {
                return Err(Error::XsetidEntriesAddedBelowLength);
            }
        }
        self.last_id = id;
        if let Some(n) = entries_added {
            self.entries_added = n;
        }
        if let Some(m) = max_deleted.filter(|m| !m.is_zero()) {
            self.max_deleted_entry_id = m;
        }
        Ok(())
    }

    /// Whether `master` is the first node without a live entry (what an ACKED trim can leave
    /// behind nodes it had to keep).
    fn head_nodes_all_kept(&self, master: StreamId) -> bool {
        self.nodes.range(..master).all(|(_, node)| node.live() > 0)
    }

    /// Walks the whole stream and checks every invariant in the module doc.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_invariants_with(true)
    }

    /// [`Stream::check_invariants`] without decoding each node's buffer again
    /// ([`Node::check`]) nor looking each pending entry up in the group's other indexes
    /// ([`crate::Group::check`]): for a stream whose every node was just built by the RDB
    /// loader's checked decoder, which checks as it builds a node what that walk would, and
    /// whose groups were built whole from checked, sorted input (`restore_group`). Debug
    /// builds walk everything anyway.
    pub(crate) fn check_loaded_invariants(&self) -> Result<(), String> {
        self.check_invariants_with(false)
    }

    fn check_invariants_with(&self, walk: bool) -> Result<(), String> {
        let mut length = 0u64;
        let mut prev_last: Option<StreamId> = None;
        let mut first_live: Option<StreamId> = None;
        for (index, (&master, node)) in self.nodes.iter().enumerate() {
            if walk || cfg!(debug_assertions) {
                node.check(master)
                    .map_err(|e| format!("node {master}: {e}"))?;
            }
            if prev_last.is_some_and(|p| p >= master) {
                return Err(format!("node {master} overlaps the previous node"));
            }
            prev_last = Some(node.last());
            if node.live() == 0 && index > 0 && !self.head_nodes_all_kept(master) {
                return Err(format!(
                    "node {master} has no live entry and is not the head"
                ));
            }
            length += node.live();
            if first_live.is_none() {
                first_live = node.scan(master).find(|r| !r.deleted).map(|r| r.id);
            }
        }
        if length != self.length {
            return Err(format!(
                "length {} but nodes hold {length} live entries",
                self.length
            ));
        }
        if self.first_id != first_live.unwrap_or(StreamId::MIN) {
            return Err(format!(
                "first_id {} but first live entry is {first_live:?}",
                self.first_id
            ));
        }
        if self.last_entry().is_some_and(|e| e.id > self.last_id) {
            return Err(format!("a live entry is above last_id {}", self.last_id));
        }
        if self.entries_added < self.length {
            return Err(format!(
                "entries_added {} below length {}",
                self.entries_added, self.length
            ));
        }
        self.check_groups(walk || cfg!(debug_assertions))?;
        self.idmp
            .check_invariants()
            .map_err(|e| format!("idmp: {e}"))
    }
}

#[cfg(test)]
mod model_tests;
/// Deletions in progress ([`Stream::delete_in`]): how many, and whether the first entry went.
#[derive(Debug, Default)]
pub(super) struct DeleteBatch {
    deleted: u64,
    first_deleted: bool,
}

#[cfg(test)]
mod tests;
