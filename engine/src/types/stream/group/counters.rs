//! Entries-read and lag (`docs/reference/streams.md` §4.7): what a group's counters can be known to
//! be, from the stream's length, first, last and max-deleted ids and entries-added alone.

use crate::id::StreamId;
use crate::stream::Stream;

use super::Group;

/// The stream's counters that entries-read and lag are computed from (`docs/reference/streams.md`
/// §4.7).
#[derive(Debug, Clone, Copy)]
pub(super) struct Counters {
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
}

impl Counters {
    /// `stream`'s counters now.
    pub(super) fn of(stream: &Stream) -> Counters {
        Counters {
            length: stream.len(),
            last_id: stream.last_id(),
            first_id: stream.first_id(),
            max_deleted: stream.max_deleted_entry_id(),
            entries_added: stream.entries_added(),
        }
    }

    /// Whether a tombstone may lie in `[start, end]`: decided from max-deleted alone.
    fn has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        self.length > 0
            && !self.max_deleted.is_zero()
            && start <= self.max_deleted
            && self.max_deleted <= end
    }

    /// The entries-read counter an entry with id `id` would have, if it can be known.
    fn estimate(&self, id: StreamId) -> Option<i64> {
        let added = self.entries_added as i64;
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(added);
        }
        if !id.is_zero() && id < self.max_deleted {
            return None;
        }
        if id == self.last_id {
            return Some(added);
        }
        if id > self.last_id {
            return None;
        }
        if self.max_deleted.is_zero() || self.max_deleted < self.first_id {
            if id < self.first_id {
                return Some(added - self.length as i64);
            }
            if id == self.first_id {
                return Some(added - self.length as i64 + 1);
            }
        }
        None
    }

    /// The group's lag, `None` when it cannot be known.
    pub(super) fn lag(&self, group: &Group) -> Option<i64> {
        let added = self.entries_added as i64;
        if self.entries_added == 0 || self.length == 0 {
            return Some(0);
        }
        if group.last_id < self.first_id && self.max_deleted < self.first_id {
            return Some(self.length as i64);
        }
        if let Some(read) = group.entries_read
            && !self.has_tombstones(group.last_id, StreamId::MAX)
        {
            return Some(added - read);
        }
        self.estimate(group.last_id).map(|read| added - read)
    }

    /// Advances a group's cursor past a delivered `id` (`docs/reference/streams.md` §4.7, "on each
    /// delivery").
    pub(super) fn on_delivery(
        &self,
        last_id: &mut StreamId,
        entries_read: &mut Option<i64>,
        id: StreamId,
    ) {
        if id <= *last_id {
            return;
        }
        // Redis 8.8 counts one more read only from a cursor at or past the first entry (after
        // a trim past the cursor the count is estimated again).
        match *entries_read {
            Some(read)
                if *last_id >= self.first_id && !self.has_tombstones(*last_id, StreamId::MAX) =>
            {
                *entries_read = Some(read + 1);
            }
            _ if self.entries_added > 0 => *entries_read = self.estimate(id),
            _ => {}
        }
        *last_id = id;
    }
}
