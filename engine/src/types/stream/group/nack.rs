//! XNACK, on one group (Redis 8.8): hand pending entries back without acknowledging them.
//!
//! A NACKed entry stays in the group PEL with no owner and delivery time 0, leaves its
//! consumer's PEL, and goes to the end of the NACK zone, the FIFO head of the group's
//! delivery-time order, so it is the first to be claimed. Its delivery count follows the mode
//! (or RETRYCOUNT, which overrides it).

use crate::id::StreamId;

use super::refs::PelRefs;
use super::{Group, StreamView};

/// The largest delivery count Redis keeps (LLONG_MAX): FATAL sets it, deliveries stop there.
pub(crate) const DELIVERY_COUNT_MAX: u64 = i64::MAX as u64;

/// XNACK's mode: what happens to the delivery count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NackMode {
    /// Undo the delivery: count - 1, not below 0.
    Silent,
    /// A failed attempt: the count stays.
    Fail,
    /// Never retry: the count becomes LLONG_MAX.
    Fatal,
}

impl NackMode {
    /// The count after a NACK in this mode, or `retry_count` when given.
    fn apply(self, count: u64, retry_count: Option<u64>) -> u64 {
        if let Some(n) = retry_count {
            return n;
        }
        match self {
            NackMode::Silent => count.saturating_sub(1),
            NackMode::Fail => count,
            NackMode::Fatal => DELIVERY_COUNT_MAX,
        }
    }
}

/// One more delivery, saturating at LLONG_MAX as Redis does.
pub(crate) fn bump(count: u64) -> u64 {
    if count >= DELIVERY_COUNT_MAX {
        count
    } else {
        count + 1
    }
}

impl Group {
    /// XNACK: moves each pending id (owned, NACKed or a ghost) to the end of the NACK zone;
    /// with `force`, an id not pending whose entry exists becomes a new NACKed entry with count
    /// 0 before the mode applies. Returns how many ids were NACKed (duplicates count each time).
    pub(super) fn nack_ids(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        ids: &[StreamId],
        mode: NackMode,
        retry_count: Option<u64>,
        force: bool,
    ) -> u64 {
        let mut nacked = 0;
        for &id in ids {
            let count = match self.pel.get(&id) {
                Some(nack) => nack.delivery_count,
                None if force && stream.get(id).is_some() => 0,
                None => continue,
            };
            self.place(refs, id, None, 0, mode.apply(count, retry_count));
            nacked += 1;
        }
        nacked
    }
}
