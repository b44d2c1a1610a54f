//! XREADGROUP's CLAIM phase (Redis 8.4), on one group: idle pending entries, walked in
//! delivery-time order (the NACK zone first), are claimed by the reader before new entries.
//!
//! The walk stops at the first entry idle for less than the minimum (idle is `now - delivery
//! time` in unsigned arithmetic, as Redis computes it), after COUNT emitted entries, or at the
//! entry that was last in the order when the walk began. A ghost (an id whose stream entry is
//! gone) is skipped, stays pending and is not counted. Each claimed entry is reported with its
//! idle time and its count before the claim, then owned by the reader, counted once more, and
//! moved to the end of the order. The cost is O(log n) per claimed or skipped entry.
//!
//! One guard Redis lacks: the walk takes at most as many steps as there were pending entries
//! when it began. Without it, after the clock went back (a claimed entry, re-timed to now,
//! then lands before entries delivered "later") two entries could leapfrog each other forever
//! under `CLAIM 0` with no COUNT; with a clock that never goes back every entry is visited at
//! most once anyway, so the guard changes nothing else.

use crate::node::EntryRef;

use super::nack::bump;
use super::refs::PelRefs;
use super::{Group, StreamView};

impl Group {
    /// Whether a CLAIM read can serve this group now, and the delivery time of the first
    /// pending entry whose stream entry exists (for the blocking wake-up): `(claimable,
    /// delivery_time)`.
    pub(super) fn claimable(
        &self,
        stream: StreamView<'_>,
        min_idle_ms: u64,
        now_ms: u64,
    ) -> (bool, Option<u64>) {
        for &id in self.by_time.values() {
            if stream.get(id).is_none() {
                continue;
            }
            let Some(nack) = self.pel.get(&id) else {
                continue;
            };
            let idle = now_ms.wrapping_sub(nack.delivery_time);
            return (idle >= min_idle_ms, Some(nack.delivery_time));
        }
        (false, None)
    }

    /// The claim phase: claims up to `count` (0 = no limit) idle entries for `consumer`;
    /// `emit` gets each entry with its idle time and its count before the claim. Returns how
    /// many were claimed. `more` is asked before each claim: an entry not claimed keeps its
    /// owner, count and time.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn claim_idle(
        &mut self,
        stream: StreamView<'_>,
        refs: &mut PelRefs,
        consumer: &[u8],
        min_idle_ms: u64,
        count: usize,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(EntryRef<'_>, i64, u64),
    ) -> usize {
        let (owner, _) = self.consumer_or_create(consumer, now_ms);
        let Some((&tail, _)) = self.by_time.last_key_value() else {
            return 0;
        };
        let mut claimed = 0;
        let mut steps = self.by_time.len();
        let mut cursor = self.by_time.first_key_value().map(|(&k, &id)| (k, id));
        while let Some((key, id)) = cursor {
            if steps == 0 {
                break;
            }
            steps -= 1;
            let next = self.by_time.next_after(&key).map(|(&k, &id)| (k, id));
            let Some(nack) = self.pel.get(&id) else {
                break;
            };
            let idle = now_ms.wrapping_sub(nack.delivery_time);
            if idle < min_idle_ms {
                break;
            }
            let delivery_count = nack.delivery_count;
            if let Some(entry) = stream.get(id) {
                if !more() {
                    break;
                }
                emit(entry, idle as i64, delivery_count);
                self.place(refs, id, Some(&owner), now_ms, bump(delivery_count));
                if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
                    c.active_time = Some(now_ms);
                }
                claimed += 1;
                if count != 0 && claimed >= count {
                    break;
                }
            }
            cursor = if key == tail { None } else { next };
        }
        claimed
    }
}
