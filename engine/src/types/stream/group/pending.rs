//! XPENDING, on one group: the summary of its PEL, and its entries by range.

use crate::id::StreamId;

use super::{ConsumerName, Group, elapsed_ms};

/// XPENDING's summary form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSummary {
    /// Pending entries in the group.
    pub count: u64,
    /// The smallest and largest pending ids, if any.
    pub bounds: Option<(StreamId, StreamId)>,
    /// Consumers holding at least one entry, in name order, with how many.
    pub consumers: Vec<(ConsumerName, u64)>,
}

/// One row of XPENDING's extended form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEntry {
    /// The pending id.
    pub id: StreamId,
    /// Its owner, `None` for a NACKed (unowned) entry.
    pub consumer: Option<ConsumerName>,
    /// Milliseconds since the last delivery (0 if the clock went back); -1 for an unowned
    /// entry, as Redis 8.8 shows it.
    pub idle_ms: i64,
    /// Times delivered.
    pub delivery_count: u64,
}

/// XPENDING's range form.
#[derive(Debug, Clone, Copy)]
pub struct PendingQuery<'a> {
    /// Smallest id.
    pub start: StreamId,
    /// Largest id.
    pub end: StreamId,
    /// The most rows.
    pub count: usize,
    /// Only entries idle at least this long (IDLE); 0 = all.
    pub min_idle_ms: i64,
    /// Only this consumer's entries.
    pub consumer: Option<&'a [u8]>,
}

impl Group {
    /// XPENDING key group.
    pub(super) fn pending_summary(&self) -> PendingSummary {
        let bounds = self.pel.first_key().zip(self.pel.last_key());
        let consumers = self
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .map(|(name, c)| (name.clone(), c.pel.len() as u64))
            .collect();
        PendingSummary {
            count: self.pel.len() as u64,
            bounds,
            consumers,
        }
    }

    /// XPENDING key group [IDLE min] start end count [consumer]: the rows the query selects,
    /// in id order (an unknown consumer has none).
    pub(super) fn pending_range(&self, query: &PendingQuery<'_>, now_ms: u64) -> Vec<PendingEntry> {
        let PendingQuery {
            start,
            end,
            count,
            min_idle_ms,
            consumer,
        } = *query;
        let row = |id: StreamId| {
            let nack = self.pel.get(&id)?;
            if nack.is_nacked() {
                // The IDLE filter never excludes an unowned entry.
                return Some(PendingEntry {
                    id,
                    consumer: None,
                    idle_ms: -1,
                    delivery_count: nack.delivery_count,
                });
            }
            let idle = elapsed_ms(now_ms, nack.delivery_time);
            (min_idle_ms == 0 || idle >= min_idle_ms).then(|| PendingEntry {
                id,
                consumer: nack.owner.clone(),
                idle_ms: idle.max(0),
                delivery_count: nack.delivery_count,
            })
        };
        match consumer {
            Some(name) => match self.consumers.get(name) {
                Some(c) => c
                    .pel
                    .range_from(start)
                    .map(|(id, ())| *id)
                    .take_while(|id| *id <= end)
                    .filter_map(row)
                    .take(count)
                    .collect(),
                None => Vec::new(),
            },
            None => self
                .pel
                .range_from(start)
                .map(|(id, _)| *id)
                .take_while(|id| *id <= end)
                .filter_map(row)
                .take(count)
                .collect(),
        }
    }
}
