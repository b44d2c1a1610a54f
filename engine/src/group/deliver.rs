//! XREADGROUP's two reads and XACK.
//!
//! - **New entries** (`>`): entries after the group's `last_id`, each advancing the cursor and
//!   `entries_read`, and (unless NOACK) becoming pending for the reader with count 1 and time
//!   now, taken from another consumer if a SETID moved the cursor back over it.
//! - **History** (an explicit id): the reader's own pending ids after that id; each one whose
//!   entry still exists gets count + 1 and time now; a deleted one is reported without fields.

use crate::id::StreamId;
use crate::node::EntryRef;
use crate::stream::{Range, Stream, lookup};

use super::{GroupError, Nack};

impl Stream {
    /// Whether XREADGROUP `>` can serve `group` now: the last live entry is past its cursor.
    pub fn group_has_new(&self, group: &[u8]) -> Result<bool, GroupError> {
        let group = self.groups.get(group).ok_or(GroupError::NoGroup)?;
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
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        let (name, _) = group.consumer_or_create(consumer, now_ms);
        if let Some(c) = group.consumers.get_mut(name.as_bytes()) {
            c.seen_time = now_ms;
        }
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
        let counters = self.counters();
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        let (owner, _) = group.consumer_or_create(consumer, now_ms);
        let Some(start) = group.last_id.next() else {
            return Ok(0);
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let mut delivered = 0;
        for entry in Range::new(&self.nodes, start, StreamId::MAX).take(limit) {
            counters.on_delivery(&mut group.last_id, &mut group.entries_read, entry.id);
            if !noack {
                let nack = Nack {
                    delivery_time: now_ms,
                    delivery_count: 1,
                    owner: owner.clone(),
                };
                if let Some(previous) = group.pel.insert(entry.id, nack)
                    && previous.owner != owner
                    && let Some(c) = group.consumers.get_mut(previous.owner.as_bytes())
                {
                    c.pel.remove(&entry.id);
                }
                if let Some(c) = group.consumers.get_mut(owner.as_bytes()) {
                    c.pel.insert(entry.id, ());
                    c.active_time = Some(now_ms);
                }
            }
            emit(entry);
            delivered += 1;
        }
        Ok(delivered)
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
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        let (name, _) = group.consumer_or_create(consumer, now_ms);
        let Some(start) = after.next() else {
            return Ok(0);
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let ids: Vec<StreamId> = match group.consumers.get(name.as_bytes()) {
            Some(c) => c
                .pel
                .range_from(start)
                .take(limit)
                .map(|(id, ())| *id)
                .collect(),
            None => Vec::new(),
        };
        for &id in &ids {
            let entry = lookup(&self.nodes, id);
            if entry.is_some()
                && let Some(nack) = group.pel.get_mut(&id)
            {
                nack.delivery_time = now_ms;
                nack.delivery_count = nack.delivery_count.saturating_add(1);
            }
            emit(id, entry);
        }
        Ok(ids.len())
    }

    /// XACK: removes the ids from the PEL; returns how many were pending.
    pub fn ack(&mut self, group: &[u8], ids: &[StreamId]) -> Result<u64, GroupError> {
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        Ok(ids
            .iter()
            .filter(|&&id| group.remove_pending(id).is_some())
            .count() as u64)
    }
}
