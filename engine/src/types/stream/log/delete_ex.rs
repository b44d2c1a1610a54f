//! XDELEX and XACKDEL (Redis 8.2): deletion by id with a deletion strategy, and a per-id
//! result (`docs/reference/streams-8.md` §1.4, §1.5).
//!
//! XDELEX checks ACKED's reference rule before existence, so a missing id that a group has not
//! read reports [`DeleteResult::Referenced`]; DELREF drops the id from every PEL whether or not
//! the entry exists. XACKDEL acts only on ids pending in its group: it acks them, then deletes
//! each by the strategy (the ack stands even when ACKED keeps the entry). Both delete as one
//! batch, so the stream's first id is recomputed once.

use crate::id::StreamId;

use super::{DeleteBatch, DeleteStrategy, Stream};

/// What happened to one id of XDELEX or XACKDEL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteResult {
    /// XDELEX: no such entry; XACKDEL: not pending in the group (reply -1).
    Missing,
    /// Deleted (XACKDEL: also when the pending entry's stream entry was already gone) (1).
    Deleted,
    /// Kept because a group still references it (ACKED only) (2).
    Referenced,
}

impl DeleteResult {
    /// The integer Redis replies.
    pub fn code(self) -> i64 {
        match self {
            DeleteResult::Missing => -1,
            DeleteResult::Deleted => 1,
            DeleteResult::Referenced => 2,
        }
    }
}

impl Stream {
    /// XDELEX: deletes each id as the strategy allows; returns one result per id and how
    /// many entries were deleted.
    pub fn delete_ex(
        &mut self,
        ids: &[StreamId],
        strategy: DeleteStrategy,
    ) -> (Vec<DeleteResult>, u64) {
        let mut batch = DeleteBatch::default();
        let results = ids
            .iter()
            .map(|&id| {
                // KEEPREF allows every deletion.
                if strategy != DeleteStrategy::KeepRef && !self.references().1.allow(strategy, id) {
                    return DeleteResult::Referenced;
                }
                if self.delete_in(&mut batch, id) {
                    DeleteResult::Deleted
                } else {
                    DeleteResult::Missing
                }
            })
            .collect();
        let deleted = self.finish_delete(batch);
        (results, deleted)
    }

    /// XACKDEL: acks each id pending in `group`, then deletes it as the strategy allows;
    /// returns one result per id (`None` without such a group), how many were acked and how
    /// many entries were deleted.
    pub fn ack_delete(
        &mut self,
        group: &[u8],
        ids: &[StreamId],
        strategy: DeleteStrategy,
    ) -> Option<(Vec<DeleteResult>, u64, u64)> {
        // Acking one id changes nothing another id's deletion looks at (its own PEL entries
        // only), so all acks come first, with one group lookup.
        let g = self.groups.get_mut(group)?;
        let mut acked = 0;
        let mut results: Vec<DeleteResult> = ids
            .iter()
            .map(|&id| {
                if g.drop_pending(&mut self.index.refs, id) {
                    acked += 1;
                    DeleteResult::Deleted
                } else {
                    DeleteResult::Missing
                }
            })
            .collect();
        let mut batch = DeleteBatch::default();
        for (&id, result) in ids.iter().zip(&mut results) {
            if *result == DeleteResult::Missing {
                continue;
            }
            if strategy != DeleteStrategy::KeepRef && !self.references().1.allow(strategy, id) {
                *result = DeleteResult::Referenced;
                continue;
            }
            self.delete_in(&mut batch, id);
        }
        let deleted = self.finish_delete(batch);
        Some((results, acked, deleted))
    }
}
