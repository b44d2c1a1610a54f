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
use super::{
    AutoClaimOptions, AutoClaimed, ClaimOptions, Group, GroupError, PendingEntry, PendingQuery,
    PendingSummary, StreamView,
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
    /// The group called `name`, to change, and beside it the entries and counters it reads.
    fn group_and_view(&mut self, name: &[u8]) -> Result<(&mut Group, StreamView<'_>), GroupError> {
        let view = StreamView {
            nodes: &self.nodes,
            counters: Counters::of(self),
        };
        Ok((find_mut(&mut self.groups, name)?, view))
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
        self.groups.insert(
            Bytes::copy_from_slice(name),
            Group::new(last_id, entries_read),
        );
        Ok(())
    }

    /// XGROUP SETID: moves the cursor and resets `entries_read`; the PEL is untouched.
    pub fn set_group_id(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<i64>,
    ) -> Result<(), GroupError> {
        let group = find_mut(&mut self.groups, name)?;
        group.last_id = last_id;
        group.entries_read = entries_read;
        Ok(())
    }

    /// XGROUP DESTROY: whether the group existed.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        self.groups.remove(name).is_some()
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
        Ok(find_mut(&mut self.groups, group)?.delete_consumer(consumer))
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
    /// each stream it names, whether or not it reads anything).
    pub fn touch_consumer(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<(), GroupError> {
        find_mut(&mut self.groups, group)?.touch_consumer(consumer, now_ms);
        Ok(())
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
        let (group, view) = self.group_and_view(group)?;
        Ok(group.deliver_new(view, consumer, count, noack, now_ms, emit))
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
        let (group, view) = self.group_and_view(group)?;
        Ok(group.deliver_history(view, consumer, after, count, now_ms, emit))
    }

    /// XACK: removes the ids from the PEL; returns how many were pending.
    pub fn ack(&mut self, group: &[u8], ids: &[StreamId]) -> Result<u64, GroupError> {
        Ok(find_mut(&mut self.groups, group)?.ack(ids))
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
        let (group, view) = self.group_and_view(group)?;
        Ok(group.claim(view, consumer, ids, options, now_ms, emit))
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
        let (group, view) = self.group_and_view(group)?;
        Ok(group.auto_claim(view, consumer, options, now_ms, emit))
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

    /// Checks every group's invariants ([`Group::check`]); the error names the group.
    pub(crate) fn check_groups(&self) -> Result<(), String> {
        for (name, group) in &self.groups {
            group
                .check()
                .map_err(|e| format!("group {:?}: {e}", String::from_utf8_lossy(name)))?;
        }
        Ok(())
    }
}
