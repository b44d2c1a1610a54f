//! XREADGROUP's two reads and XACK, on one group.
//!
//! - **New entries** (`>`): entries after the group's `last_id`, each advancing the cursor and
//!   `entries_read`, and (unless NOACK) becoming pending for the reader with count 1 and time
//!   now, taken from another consumer if a SETID moved the cursor back over it.
//! - **History** (an explicit id): the reader's own pending ids after that id; each one whose
//!   entry still exists gets count + 1 and time now; a deleted one is reported without fields.

use crate::id::StreamId;
use crate::node::EntryRef;

use super::nack::bump;
use super::refs::PelRefs;
use super::{Group, StreamView};

impl Group {
    /// Creates `consumer` if missing and marks it seen now.
    pub(super) fn touch_consumer(&mut self, consumer: &[u8], now_ms: u64) -> bool {
        let (name, created) = self.consumer_or_create(consumer, now_ms);
        if let Some(c) = self.consumers.get_mut(name.as_bytes()) {
            c.seen_time = now_ms;
        }
        created
    }

    /// Delivers up to `count` (0 = all) entries of `stream` after the cursor to `consumer`,
    /// calling `emit` for each; returns how many. `more` is asked before each entry: once it
    /// says no, delivery stops and that entry is neither pending nor past the cursor.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver_new(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        consumer: &[u8],
        count: usize,
        noack: bool,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> usize {
        let (owner, _) = self.consumer_or_create(consumer, now_ms);
        let Some(start) = self.last_id.next() else {
            return 0;
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let mut delivered = 0;
        for entry in stream.from(start).take(limit) {
            if !more() {
                break;
            }
            stream
                .counters
                .on_delivery(&mut self.last_id, &mut self.entries_read, entry.id);
            if !noack {
                self.place(refs, entry.id, Some(&owner), now_ms, 1);
            }
            emit(entry);
            delivered += 1;
        }
        if !noack
            && delivered > 0
            && let Some(c) = self.consumers.get_mut(owner.as_bytes())
        {
            c.active_time = Some(now_ms);
        }
        delivered
    }

    /// Re-delivers up to `count` (0 = all) of `consumer`'s pending ids greater than `after`.
    /// `emit` gets each id with its entry in `stream`, or `None` if the entry was deleted;
    /// `more` is asked before each, and an id not emitted is left as it was.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver_history(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        consumer: &[u8],
        after: StreamId,
        count: usize,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(StreamId, Option<EntryRef<'_>>),
    ) -> usize {
        let (name, _) = self.consumer_or_create(consumer, now_ms);
        let Some(start) = after.next() else {
            return 0;
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let ids: Vec<StreamId> = match self.consumers.get(name.as_bytes()) {
            Some(c) => c
                .pel
                .range_from(start)
                .take(limit)
                .map(|(id, ())| *id)
                .collect(),
            None => Vec::new(),
        };
        let mut emitted = 0;
        for &id in &ids {
            if !more() {
                break;
            }
            emitted += 1;
            let entry = stream.get(id);
            if entry.is_some()
                && let Some(count) = self.pel.get(&id).map(|n| n.delivery_count)
            {
                self.place(refs, id, Some(&name), now_ms, bump(count));
            }
            emit(id, entry);
        }
        emitted
    }

    /// XACK: removes the ids from the PEL; returns how many were pending.
    pub(super) fn ack(&mut self, refs: &mut PelRefs, ids: &[StreamId]) -> u64 {
        ids.iter()
            .filter(|&&id| self.take(refs, id).is_some())
            .count() as u64
    }
}
