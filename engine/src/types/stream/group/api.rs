//! The consumer-group API of [`Stream`]: every group operation, in this one `impl Stream`
//! block.
//!
//! A stream owns its groups (`Stream::groups`, by name); the operations themselves are methods
//! of [`Group`] in this module's siblings (`deliver`: XREADGROUP and XACK, `claim`: XCLAIM and
//! XAUTOCLAIM, `pending`: XPENDING, `counters`: entries-read and lag). Each method here finds
//! the named group, [`GroupError::NoGroup`] if there is none, and hands it a [`StreamView`]
//! of the stream's entries and counters. The stream's own operations (append, ranges, delete,
//! trim, XSETID) are in [`crate::stream`].

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::id::StreamId;
use crate::node::EntryRef;
use crate::stream::Stream;

use super::counters::Counters;
use super::refs::PelRefs;
use super::{
    AutoClaimOptions, AutoClaimed, ClaimOptions, Group, GroupError, NackMode, PendingEntry,
    PendingQuery, PendingSummary, StreamView,
};

/// The group called `name`.
fn find<'a>(groups: &'a BTreeMap<Bytes, Group>, name: &[u8]) -> Result<&'a Group, GroupError> {
    groups.get(name).ok_or(GroupError::NoGroup)
}

/// The group called `name`, to change.
fn find_mut<'a>(
    groups: &'a mut BTreeMap<Bytes, Group>,
    name: &[u8],
) -> Result<&'a mut Group, GroupError> {
    groups.get_mut(name).ok_or(GroupError::NoGroup)
}

impl Stream {
    /// The group called `name`, to change, and beside it the entries and counters it reads
    /// and the stream's reference index. Its cursor may move, so the cached minimum of the
    /// groups' cursors is cleared.
    fn group_and_view(
        &mut self,
        name: &[u8],
    ) -> Result<(&mut Group, StreamView<'_>, &mut PelRefs), GroupError> {
        let view = StreamView {
            nodes: &self.nodes,
            counters: Counters::of(self),
        };
        let group = find_mut(&mut self.groups, name)?;
        self.index.min_last_id = None;
        Ok((group, view, &mut self.index.refs))
    }

    // Groups and consumers (XGROUP, XINFO).

    /// The groups, in name order.
    pub fn groups(&self) -> impl Iterator<Item = (&Bytes, &Group)> {
        self.groups.iter()
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// A group by name.
    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.groups.get(name)
    }

    /// XGROUP CREATE: a group delivering entries after `last_id`.
    pub fn create_group(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<i64>,
    ) -> Result<(), GroupError> {
        if self.groups.contains_key(name) {
            return Err(GroupError::Exists);
        }
        // 8.2.2+: ENTRIESREAD above entries-added is capped to entries-added.
        let entries_read = entries_read.map(|n| n.min(self.entries_added() as i64));
        let name = Bytes::copy_from_slice(name);
        let tag = self.index.next_tag;
        self.index.next_tag = self.index.next_tag.wrapping_add(1);
        self.index.tags.insert(tag, name.clone());
        self.groups
            .insert(name, Group::new(last_id, entries_read, tag));
        self.index.min_last_id = None;
        Ok(())
    }

    /// XGROUP SETID: moves the cursor and resets `entries_read`; the PEL is untouched.
    pub fn set_group_id(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<i64>,
    ) -> Result<(), GroupError> {
        let entries_read = entries_read.map(|n| n.min(self.entries_added() as i64));
        let group = find_mut(&mut self.groups, name)?;
        group.last_id = last_id;
        group.entries_read = entries_read;
        self.index.min_last_id = None;
        Ok(())
    }

    /// XGROUP DESTROY: whether the group existed. Its references leave the index.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        let Some(group) = self.groups.remove(name) else {
            return false;
        };
        for (&id, _) in group.pel.iter() {
            self.index.refs.unlink(id, group.tag);
        }
        self.index.tags.remove(&group.tag);
        self.index.min_last_id = None;
        true
    }

    /// XGROUP CREATECONSUMER: whether it was created.
    pub fn create_consumer(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<bool, GroupError> {
        let group = find_mut(&mut self.groups, group)?;
        Ok(group.consumer_or_create(consumer, now_ms).1)
    }

    /// XGROUP DELCONSUMER: removes the consumer and its pending entries (from the group PEL
    /// too); returns how many it had.
    pub fn delete_consumer(&mut self, group: &[u8], consumer: &[u8]) -> Result<u64, GroupError> {
        let group = find_mut(&mut self.groups, group)?;
        Ok(group.delete_consumer(&mut self.index.refs, consumer))
    }

    /// The group's lag (entries not yet delivered), `None` when unknown.
    pub fn group_lag(&self, group: &Group) -> Option<i64> {
        Counters::of(self).lag(group)
    }

    // Reading (XREADGROUP) and acknowledging (XACK).

    /// Whether XREADGROUP `>` can serve `group` now: the last live entry is past its cursor.
    pub fn group_has_new(&self, group: &[u8]) -> Result<bool, GroupError> {
        let group = find(&self.groups, group)?;
        Ok(self.last_entry().is_some_and(|e| e.id > group.last_id))
    }

    /// Creates `consumer` if missing and marks it seen now (every XREADGROUP does this for
    /// each stream it names, whether or not it reads anything); returns whether it created it.
    pub fn touch_consumer(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<bool, GroupError> {
        Ok(find_mut(&mut self.groups, group)?.touch_consumer(consumer, now_ms))
    }

    /// Delivers up to `count` (0 = all) entries after the group's cursor to `consumer`,
    /// calling `emit` for each; returns how many.
    pub fn deliver_new(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        count: usize,
        noack: bool,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> Result<usize, GroupError> {
        self.deliver_new_while(group, consumer, count, noack, now_ms, &mut || true, emit)
    }

    /// [`Stream::deliver_new`], asking `more` before each entry: delivery stops at the first
    /// no, and that entry is left undelivered (not pending, the cursor before it).
    #[allow(clippy::too_many_arguments)]
    pub fn deliver_new_while(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        count: usize,
        noack: bool,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> Result<usize, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.deliver_new(view, refs, consumer, count, noack, now_ms, more, emit))
    }

    /// Re-delivers up to `count` (0 = all) of `consumer`'s pending ids greater than `after`.
    /// `emit` gets each id with its entry, or `None` if the entry was deleted.
    pub fn deliver_history(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        after: StreamId,
        count: usize,
        now_ms: u64,
        emit: &mut dyn FnMut(StreamId, Option<EntryRef<'_>>),
    ) -> Result<usize, GroupError> {
        self.deliver_history_while(group, consumer, after, count, now_ms, &mut || true, emit)
    }

    /// [`Stream::deliver_history`], asking `more` before each id: an id not emitted keeps its
    /// delivery count and time.
    #[allow(clippy::too_many_arguments)]
    pub fn deliver_history_while(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        after: StreamId,
        count: usize,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(StreamId, Option<EntryRef<'_>>),
    ) -> Result<usize, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.deliver_history(view, refs, consumer, after, count, now_ms, more, emit))
    }

    /// XACK: removes the ids from the PEL; returns how many were pending.
    pub fn ack(&mut self, group: &[u8], ids: &[StreamId]) -> Result<u64, GroupError> {
        let group = find_mut(&mut self.groups, group)?;
        Ok(group.ack(&mut self.index.refs, ids))
    }

    // Claiming (XCLAIM, XAUTOCLAIM).

    /// XCLAIM: claims `ids` for `consumer`; `emit` gets each claimed entry.
    pub fn claim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        ids: &[StreamId],
        options: &ClaimOptions,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> Result<usize, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.claim(view, refs, consumer, ids, options, now_ms, emit))
    }

    /// XAUTOCLAIM: scans the PEL from `start`, looking at no more than `count * 10` entries,
    /// claiming up to `count` idle ones for `consumer` (a deleted entry uses up one of
    /// `count` too); `emit` gets each claimed entry.
    pub fn auto_claim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        options: &AutoClaimOptions,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> Result<AutoClaimed, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.auto_claim(view, refs, consumer, options, now_ms, emit))
    }

    // Redis 8.4+ reads (XREADGROUP CLAIM) and 8.8's XNACK.

    /// Whether XREADGROUP `... CLAIM min_idle` can claim from `group` now, and the delivery
    /// time of its first pending entry whose stream entry exists (for the blocking wake-up).
    pub fn group_claimable(
        &self,
        group: &[u8],
        min_idle_ms: u64,
        now_ms: u64,
    ) -> Result<(bool, Option<u64>), GroupError> {
        let view = StreamView {
            nodes: &self.nodes,
            counters: Counters::of(self),
        };
        Ok(find(&self.groups, group)?.claimable(view, min_idle_ms, now_ms))
    }

    /// XREADGROUP CLAIM's claim phase: claims up to `count` (0 = all) pending entries idle
    /// for at least `min_idle_ms` for `consumer`, in delivery-time order (the NACK zone
    /// first); `emit` gets each with its idle time and its delivery count before the claim.
    #[allow(clippy::too_many_arguments)]
    pub fn claim_idle(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle_ms: u64,
        count: usize,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>, i64, u64),
    ) -> Result<usize, GroupError> {
        self.claim_idle_while(
            group,
            consumer,
            min_idle_ms,
            count,
            now_ms,
            &mut || true,
            emit,
        )
    }

    /// [`Stream::claim_idle`], asking `more` before each claim: an entry not claimed keeps
    /// its owner, count and time.
    #[allow(clippy::too_many_arguments)]
    pub fn claim_idle_while(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle_ms: u64,
        count: usize,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(EntryRef<'_>, i64, u64),
    ) -> Result<usize, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.claim_idle(view, refs, consumer, min_idle_ms, count, now_ms, more, emit))
    }

    /// XNACK: hands `ids` back to the group unowned, at the end of its NACK zone; returns how
    /// many were NACKed.
    pub fn nack(
        &mut self,
        group: &[u8],
        ids: &[StreamId],
        mode: NackMode,
        retry_count: Option<u64>,
        force: bool,
    ) -> Result<u64, GroupError> {
        let (group, view, refs) = self.group_and_view(group)?;
        Ok(group.nack_ids(view, refs, ids, mode, retry_count, force))
    }

    // The pending entries (XPENDING).

    /// XPENDING key group.
    pub fn pending_summary(&self, group: &[u8]) -> Result<PendingSummary, GroupError> {
        Ok(find(&self.groups, group)?.pending_summary())
    }

    /// `XPENDING key group [IDLE min] start end count [consumer]`: the rows the query selects,
    /// in id order (an unknown consumer has none).
    pub fn pending_range(
        &self,
        group: &[u8],
        query: &PendingQuery<'_>,
        now_ms: u64,
    ) -> Result<Vec<PendingEntry>, GroupError> {
        Ok(find(&self.groups, group)?.pending_range(query, now_ms))
    }

    /// Checks every group's invariants ([`Group::check`]) and the reference index (every
    /// PEL entry indexed once for its group, nothing else indexed, tags naming their groups)
    /// and the cached minimum cursor; the error names the group. Without `walk_pels`, the
    /// per-entry walks (`Group::check`, the index lookups) are left out and the counts are
    /// checked.
    pub(crate) fn check_groups(&self, walk_pels: bool) -> Result<(), String> {
        let mut pending = 0;
        for (name, group) in &self.groups {
            let named = |e: String| format!("group {:?}: {e}", String::from_utf8_lossy(name));
            if walk_pels {
                group.check().map_err(named)?;
                group.check_refs(&self.index.refs).map_err(named)?;
            }
            if self.index.tags.get(&group.tag) != Some(name) {
                return Err(named(format!("tag {} does not name this group", group.tag)));
            }
            pending += group.pending_count();
        }
        if self.index.tags.len() != self.groups.len() {
            return Err(format!(
                "{} group tags for {} groups",
                self.index.tags.len(),
                self.groups.len()
            ));
        }
        if self.index.refs.links() != pending {
            return Err(format!(
                "the reference index has {} links for {pending} pending entries",
                self.index.refs.links()
            ));
        }
        if let Some(cached) = self.index.min_last_id {
            let real = self.groups.values().map(|g| g.last_id).min();
            if real != Some(cached) {
                return Err(format!(
                    "cached minimum cursor {cached} but the groups' is {real:?}"
                ));
            }
        }
        Ok(())
    }

    /// The smallest cursor over the groups (`None` without groups), from the cache or
    /// computed once and cached.
    pub(crate) fn min_group_last_id(&mut self) -> Option<StreamId> {
        if self.groups.is_empty() {
            return None;
        }
        if self.index.min_last_id.is_none() {
            self.index.min_last_id = self.groups.values().map(|g| g.last_id).min();
        }
        self.index.min_last_id
    }
}
