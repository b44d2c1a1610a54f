//! XCLAIM and XAUTOCLAIM, on one group: moving pending entries to another consumer.
//!
//! Both drop a pending entry whose stream entry no longer exists (XAUTOCLAIM reports it), skip
//! entries idle for less than the minimum, and always create the claiming consumer. A claim
//! sets the delivery time, bumps the delivery count (unless JUSTID; XCLAIM's RETRYCOUNT sets it)
//! and marks the consumer active.

use crate::id::StreamId;
use crate::node::EntryRef;

use super::nack::bump;
use super::refs::PelRefs;
use super::{Group, StreamView, elapsed_ms};

/// XCLAIM's options, already resolved against the command's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaimOptions {
    /// Entries idle for less than this are skipped (0 = no check).
    pub min_idle_ms: u64,
    /// The delivery time to record (`now - IDLE`, or `TIME`, clamped to `[0, now]`; `None`
    /// means now).
    pub delivery_time: Option<u64>,
    /// RETRYCOUNT: the delivery count to set.
    pub retry_count: Option<u64>,
    /// FORCE: create pending entries for ids that exist but are not pending.
    pub force: bool,
    /// JUSTID: do not bump the delivery count.
    pub just_id: bool,
    /// LASTID: raise the group's cursor to this id if it is larger.
    pub last_id: Option<StreamId>,
}

/// XAUTOCLAIM's arguments.
#[derive(Debug, Clone, Copy)]
pub struct AutoClaimOptions {
    /// Entries idle for less than this are skipped (0 = no check).
    pub min_idle_ms: u64,
    /// The PEL id to start scanning from.
    pub start: StreamId,
    /// The most entries to claim (deleted ones count too); the scan looks at ten times this.
    pub count: usize,
    /// JUSTID: do not bump the delivery count.
    pub just_id: bool,
}

/// What XAUTOCLAIM did besides claiming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoClaimed {
    /// Where the next call should start: the PEL id after the last one examined, or `0-0` at
    /// the end.
    pub next: StreamId,
    /// Pending ids whose entries were gone, now removed from the PEL.
    pub deleted: Vec<StreamId>,
}

impl Group {
    /// XCLAIM: claims `ids` for `consumer`; `emit` gets each claimed entry.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn claim(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        consumer: &[u8],
        ids: &[StreamId],
        options: &ClaimOptions,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> usize {
        if let Some(last_id) = options.last_id
            && last_id > self.last_id
        {
            self.last_id = last_id;
        }
        let delivery_time = options.delivery_time.unwrap_or(now_ms);
        let (owner, _) = self.consumer_or_create(consumer, now_ms);
        if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
            c.seen_time = now_ms;
        }
        let mut claimed = 0;
        for &id in ids {
            let Some(entry) = stream.get(id) else {
                self.take(refs, id);
                continue;
            };
            let (count, forced) = match self.pel.get(&id) {
                Some(nack) => {
                    // A NACKed entry is claimable whatever the minimum idle time.
                    if options.min_idle_ms > 0
                        && !nack.is_nacked()
                        && elapsed_ms(now_ms, nack.delivery_time) < options.min_idle_ms as i64
                    {
                        continue;
                    }
                    (nack.delivery_count, false)
                }
                // A forced NACK starts at count 1, as Redis creates it, then is claimed.
                None if options.force => (1, true),
                None => continue,
            };
            let count = match options.retry_count {
                Some(n) => n,
                None if options.just_id => count,
                None => bump(count),
            };
            debug_assert!(forced || self.pel.contains_key(&id));
            self.place(refs, id, Some(&owner), delivery_time, count);
            if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
                c.active_time = Some(now_ms);
            }
            emit(entry);
            claimed += 1;
        }
        claimed
    }

    /// XAUTOCLAIM: scans the PEL from `start`, looking at no more than `count * 10` entries,
    /// claiming up to `count` idle ones for `consumer` (a deleted entry uses up one of
    /// `count` too); `emit` gets each claimed entry.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn auto_claim(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        consumer: &[u8],
        options: &AutoClaimOptions,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> AutoClaimed {
        const ATTEMPTS_PER_COUNT: usize = 10;
        let AutoClaimOptions {
            min_idle_ms,
            start,
            count,
            just_id,
        } = *options;
        let (owner, _) = self.consumer_or_create(consumer, now_ms);
        if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
            c.seen_time = now_ms;
        }
        let mut attempts = count.saturating_mul(ATTEMPTS_PER_COUNT);
        let mut budget = count;
        let mut deleted = Vec::new();
        let mut cursor = Some(start);
        while attempts > 0 && budget > 0 {
            let Some(from) = cursor else { break };
            let Some((&id, nack)) = self.pel.range_from(from).next() else {
                cursor = None;
                break;
            };
            let (delivery_time, delivery_count, nacked) =
                (nack.delivery_time, nack.delivery_count, nack.is_nacked());
            attempts -= 1;
            cursor = id.next();
            let Some(entry) = stream.get(id) else {
                self.take(refs, id);
                deleted.push(id);
                budget -= 1;
                continue;
            };
            if min_idle_ms > 0 && !nacked && elapsed_ms(now_ms, delivery_time) < min_idle_ms as i64
            {
                continue;
            }
            let delivery_count = if just_id {
                delivery_count
            } else {
                bump(delivery_count)
            };
            self.place(refs, id, Some(&owner), now_ms, delivery_count);
            if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
                c.active_time = Some(now_ms);
            }
            emit(entry);
            budget -= 1;
        }
        let next = cursor
            .and_then(|from| self.pel.range_from(from).next().map(|(&id, _)| id))
            .unwrap_or(StreamId::MIN);
        AutoClaimed { next, deleted }
    }
}
