//! The stream's index from an entry id to the groups whose PEL holds it (Redis 8.2's
//! `cgroups_ref`), so the deletion strategies can tell whether an entry is still referenced,
//! and DELREF can drop an entry from every PEL, without scanning any PEL.
//!
//! Each group has a small numeric tag; the index keeps, per pending id, the tags of the groups
//! holding it, in link order. Invariant (checked by [`crate::Stream::check_invariants`]): a
//! group's tag is listed under an id exactly when that id is in the group's PEL, once.
//!
//! The index is a [`ChunkMap`], not a hash map: ids are linked in delivery order and mostly
//! unlinked in ack order, so its chunks stay full (about 40 bytes per id, where a hash map at
//! its usual load takes about 100) and neither operation hashes.

use std::collections::HashMap;

use bytes::Bytes;

use crate::chunk_map::ChunkMap;
use crate::id::StreamId;

/// The tags of the groups holding one id. One group is the common case and needs no heap.
#[derive(Debug, Clone)]
enum Tags {
    One(u32),
    Many(Vec<u32>),
}

/// Pending id to the groups holding it.
#[derive(Debug, Clone, Default)]
pub(crate) struct PelRefs {
    map: ChunkMap<StreamId, Tags>,
}

impl PelRefs {
    /// Records that group `tag` holds `id`.
    pub(crate) fn link(&mut self, id: StreamId, tag: u32) {
        // An id past every linked one (a delivery of a new entry) needs no lookup.
        if self.map.last_key().is_none_or(|last| last < id) {
            self.map.insert(id, Tags::One(tag));
            return;
        }
        match self.map.get_mut(&id) {
            None => {
                self.map.insert(id, Tags::One(tag));
            }
            Some(tags) => match tags {
                Tags::One(first) => *tags = Tags::Many(vec![*first, tag]),
                Tags::Many(list) => list.push(tag),
            },
        }
    }

    /// Records that group `tag` holds each of `ids` (strictly increasing): built in one go
    /// when no group is indexed yet (a snapshot's first group), else linked one by one.
    pub(crate) fn link_all(&mut self, ids: impl Iterator<Item = StreamId> + Clone, tag: u32) {
        if self.map.is_empty()
            && let Some(map) = ChunkMap::from_sorted(ids.clone().map(|id| (id, Tags::One(tag))))
        {
            self.map = map;
            return;
        }
        for id in ids {
            self.link(id, tag);
        }
    }

    /// Records that group `tag` no longer holds `id` (nothing if it was not recorded).
    pub(crate) fn unlink(&mut self, id: StreamId, tag: u32) {
        self.map.update_or_remove(&id, |tags| match tags {
            Tags::One(t) => *t == tag,
            Tags::Many(list) => {
                if let Some(at) = list.iter().position(|&t| t == tag) {
                    list.remove(at);
                }
                match list.len() {
                    0 => true,
                    1 => {
                        *tags = Tags::One(list[0]);
                        false
                    }
                    _ => false,
                }
            }
        });
    }

    /// Whether any group holds `id`.
    pub(crate) fn contains(&self, id: StreamId) -> bool {
        self.map.contains_key(&id)
    }

    /// Removes `id` from the index; returns the tags of the groups that held it.
    pub(crate) fn take(&mut self, id: StreamId) -> Vec<u32> {
        match self.map.remove(&id) {
            None => Vec::new(),
            Some(Tags::One(t)) => vec![t],
            Some(Tags::Many(list)) => list,
        }
    }

    /// How many times group `tag` is listed under `id`.
    pub(crate) fn count(&self, id: StreamId, tag: u32) -> usize {
        match self.map.get(&id) {
            None => 0,
            Some(Tags::One(t)) => usize::from(*t == tag),
            Some(Tags::Many(list)) => list.iter().filter(|&&t| t == tag).count(),
        }
    }

    /// Heap bytes of the index (an estimate, [`crate::heap_size`]): the map and every list of
    /// more than one tag.
    pub(crate) fn heap_bytes(&self) -> usize {
        let lists: usize = self
            .map
            .values()
            .map(|t| match t {
                Tags::One(_) => 0,
                Tags::Many(list) => list.capacity() * std::mem::size_of::<u32>(),
            })
            .sum();
        self.map.heap_bytes() + lists
    }

    /// Links in the whole index (one per group per pending id).
    pub(crate) fn links(&self) -> usize {
        self.map
            .values()
            .map(|t| match t {
                Tags::One(_) => 1,
                Tags::Many(list) => list.len(),
            })
            .sum()
    }
}

/// What a stream keeps about its groups besides the groups themselves.
#[derive(Debug, Clone, Default)]
pub(crate) struct GroupIndex {
    /// Pending id to the groups whose PEL holds it (Redis 8.2's `cgroups_ref`).
    pub(crate) refs: PelRefs,
    /// Group tags (in `refs`) to group names.
    pub(crate) tags: HashMap<u32, Bytes>,
    /// The tag the next group gets.
    pub(crate) next_tag: u32,
    /// The smallest last-delivered id over the groups, cached; `None` when it must be
    /// recomputed (any change to a group's cursor, or to the set of groups, clears it).
    pub(crate) min_last_id: Option<StreamId>,
}

impl GroupIndex {
    /// Heap bytes of the index, itself (it is boxed) included; group names are shared with
    /// the groups and not counted again.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of::<GroupIndex>()
            + self.refs.heap_bytes()
            + crate::heap_size::hash_map::<u32, Bytes>(self.tags.capacity())
    }
}
