//! Consumer groups: a group's delivery cursor, its pending entries list (PEL) and consumers.
//!
//! Vocabulary (`docs/reference/streams.md` §1.1, §4):
//! - a **group** has `last_id` (the last id delivered with `>`), `entries_read` (a logical
//!   count of entries read, `None` when unknown) and a PEL;
//! - a **NACK** is one pending entry: its owner, last delivery time and delivery count;
//! - a **consumer** has `seen_time` (last read or claim attempt), `active_time` (last
//!   successful read or claim, `None` if never) and its own PEL.
//!
//! Invariants ([`Group::check`]): every owned id in the group PEL is in exactly one consumer's
//! PEL, the consumer named by its NACK; every id in a consumer's PEL is in the group PEL with
//! that owner; an unowned id (handed back with XNACK, Redis 8.8) is in no consumer's PEL and has
//! delivery time 0. Every pending id has exactly one place in the delivery-time order
//! (`by_time`), whose head is the NACK zone: exactly the unowned ids, in NACK order. The
//! stream's reference index (`refs`) lists the group under each of its pending ids once
//! (checked by the stream). Group and consumer names iterate in byte order, as Redis's rax does.
//!
//! Both PELs are [`ChunkMap`]s: pending entries arrive in id order, so chunks fill completely
//! and a pending entry costs about 72 bytes there (Redis 7 needs about 84). The Redis 8.x
//! indexes are `ChunkMap`s too, for the same reason (deliveries append to them, acks take
//! from their heads): the delivery-time order (about 40 bytes per entry) and the stream's
//! reference index (about 40 bytes per id); about 155 bytes per pending entry in all, where
//! Redis 8.8 takes 214. [`Group::pel_heap_bytes`] and [`crate::Stream::pel_heap_bytes`] count
//! all of them.
//!
//! Layout: this file holds the group's state and the moves that keep its two PELs in step;
//! `deliver`, `claim` and `pending` are the command-sized operations on one [`Group`], and
//! `counters` computes entries-read and lag. A [`Stream`](crate::Stream) owns its groups; the
//! group API callers use is the one `impl Stream` block in `api`.

mod api;
mod claim;
mod claim_read;
mod counters;
mod deliver;
mod nack;
mod pending;
pub(crate) mod refs;
pub(crate) mod restore;

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::chunk_map::ChunkMap;
use crate::id::StreamId;
use crate::node::{EntryRef, Node};
use crate::stream::{Range, lookup};

use self::counters::Counters;
use self::refs::PelRefs;

pub use claim::{AutoClaimOptions, AutoClaimed, ClaimOptions};
pub use nack::NackMode;
pub use pending::{PendingEntry, PendingQuery, PendingSummary};

/// A stream's nodes by master id, as [`crate::Stream`] keeps them.
type Nodes = BTreeMap<StreamId, Node>;

/// A consumer's name: shared between the consumer table and every NACK it owns.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConsumerName(Arc<[u8]>);

impl ConsumerName {
    /// A name from bytes.
    pub fn new(name: &[u8]) -> ConsumerName {
        ConsumerName(Arc::from(name))
    }

    /// The name's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl Borrow<[u8]> for ConsumerName {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for ConsumerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

/// One pending entry.
#[derive(Debug, Clone)]
pub struct Nack {
    /// Unix ms of the last delivery (or what XCLAIM set); 0 while NACKed (unowned).
    pub delivery_time: u64,
    /// Times delivered.
    pub delivery_count: u64,
    /// The consumer holding it; `None` for an entry handed back with XNACK (the NACK zone).
    pub owner: Option<ConsumerName>,
    /// Placement order in the group's delivery-time index (ties keep placement order).
    seq: u64,
}

impl Nack {
    /// The owner's name, empty for an unowned (NACKed) entry, as Redis shows it.
    pub fn owner_bytes(&self) -> &[u8] {
        self.owner.as_ref().map_or(&[], |o| o.as_bytes())
    }

    /// Whether this entry is in the NACK zone (has no owner).
    pub fn is_nacked(&self) -> bool {
        self.owner.is_none()
    }

    fn time_key(&self) -> TimeKey {
        TimeKey {
            owned: self.owner.is_some(),
            time: self.delivery_time,
            seq: self.seq,
        }
    }
}

/// A pending entry's place in its group's delivery-time order (Redis 8.4's time list): the
/// NACK zone first, in the order entries were NACKed, then owned entries by delivery time,
/// equal times in the order they were placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TimeKey {
    owned: bool,
    time: u64,
    seq: u64,
}

/// A consumer of a group.
#[derive(Debug, Clone)]
pub struct Consumer {
    /// Unix ms of the last read or claim attempt.
    pub seen_time: u64,
    /// Unix ms of the last successful read or claim; `None` if never.
    pub active_time: Option<u64>,
    /// Ids this consumer holds (the NACKs live in the group PEL).
    pel: ChunkMap<StreamId, ()>,
}

impl Consumer {
    fn new(now_ms: u64) -> Consumer {
        Consumer {
            seen_time: now_ms,
            active_time: None,
            pel: ChunkMap::new(),
        }
    }

    /// Entries this consumer holds.
    pub fn pending_count(&self) -> usize {
        self.pel.len()
    }

    /// The ids this consumer holds, in order.
    pub fn pending_ids(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.pel.iter().map(|(id, ())| *id)
    }
}

/// A consumer group.
#[derive(Debug, Clone)]
pub struct Group {
    /// The last id delivered with `>`.
    pub last_id: StreamId,
    /// Entries the group has read, `None` when unknown (Redis's -1).
    pub entries_read: Option<i64>,
    /// Pending entries by id.
    pel: ChunkMap<StreamId, Nack>,
    /// Consumers by name, in byte order.
    consumers: BTreeMap<ConsumerName, Consumer>,
    /// The pending ids in delivery-time order (the NACK zone first): XREADGROUP CLAIM walks it.
    /// Deliveries mostly append to it (their time is now) and acks take from its head, the
    /// pattern a [`ChunkMap`] keeps dense.
    by_time: ChunkMap<TimeKey, StreamId>,
    /// The next placement number for `by_time`.
    next_seq: u64,
    /// Entries in the NACK zone (unowned).
    nacked: usize,
    /// This group's tag in the stream's [`PelRefs`].
    tag: u32,
}

impl Group {
    fn new(last_id: StreamId, entries_read: Option<i64>, tag: u32) -> Group {
        Group {
            last_id,
            entries_read,
            pel: ChunkMap::new(),
            consumers: BTreeMap::new(),
            by_time: ChunkMap::new(),
            next_seq: 0,
            nacked: 0,
            tag,
        }
    }

    /// Pending entries of the whole group.
    pub fn pending_count(&self) -> usize {
        self.pel.len()
    }

    /// Pending entries in the NACK zone (`nacked-count`).
    pub fn nacked_count(&self) -> usize {
        self.nacked
    }

    /// The consumers, in name order.
    pub fn consumers(&self) -> impl Iterator<Item = (&ConsumerName, &Consumer)> {
        self.consumers.iter()
    }

    /// A consumer by name.
    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.consumers.get(name)
    }

    /// Every pending entry, in id order.
    pub fn pending(&self) -> impl Iterator<Item = (&StreamId, &Nack)> {
        self.pel.iter()
    }

    /// Every pending id in delivery-time order: the NACK zone first, then by delivery time.
    pub fn pending_by_time(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.by_time.values().copied()
    }

    /// The NACK for `id`, if pending.
    pub fn nack(&self, id: StreamId) -> Option<&Nack> {
        self.pel.get(&id)
    }

    /// The consumer called `name`, created (seen now, never active) if missing. Returns the
    /// stored name, to share with NACKs, and whether it was created.
    fn consumer_or_create(&mut self, name: &[u8], now_ms: u64) -> (ConsumerName, bool) {
        if let Some((stored, _)) = self.consumers.get_key_value(name) {
            return (stored.clone(), false);
        }
        let stored = ConsumerName::new(name);
        self.consumers.insert(stored.clone(), Consumer::new(now_ms));
        (stored, true)
    }

    /// Removes a consumer and its pending entries (from the group PEL too); returns how many it
    /// had. NACKed entries are no consumer's and stay.
    fn delete_consumer(&mut self, refs: &mut PelRefs, consumer: &[u8]) -> u64 {
        let Some(removed) = self.consumers.remove(consumer) else {
            return 0;
        };
        for (&id, ()) in removed.pel.iter() {
            self.take(refs, id);
        }
        removed.pel.len() as u64
    }

    /// Removes `id` from this group's PEL (DELREF's cleanup, XACKDEL's ack); see `take`.
    /// Returns whether it was pending.
    pub(crate) fn drop_pending(&mut self, refs: &mut PelRefs, id: StreamId) -> bool {
        self.take(refs, id).is_some()
    }

    /// Removes `id` from the group PEL, its owner's PEL, the time order and the stream's
    /// reference index; returns the NACK.
    fn take(&mut self, refs: &mut PelRefs, id: StreamId) -> Option<Nack> {
        let nack = self.pel.remove(&id)?;
        self.by_time.remove(&nack.time_key());
        match &nack.owner {
            Some(owner) => {
                if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
                    c.pel.remove(&id);
                }
            }
            None => self.nacked -= 1,
        }
        refs.unlink(id, self.tag);
        Some(nack)
    }

    /// Makes `id` pending for `owner` (`None`: at the end of the NACK zone, time 0) with this
    /// delivery time and count, creating the NACK or moving it (to another owner, and to its
    /// new place in the time order).
    fn place(
        &mut self,
        refs: &mut PelRefs,
        id: StreamId,
        owner: Option<&ConsumerName>,
        delivery_time: u64,
        delivery_count: u64,
    ) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let delivery_time = if owner.is_some() { delivery_time } else { 0 };
        // An id past every pending one (a delivery of a new entry) needs no lookup.
        let existing = if self.pel.last_key().is_none_or(|last| last < id) {
            None
        } else {
            self.pel.get_mut(&id)
        };
        let previous = match existing {
            Some(nack) => {
                self.by_time.remove(&nack.time_key());
                let previous = std::mem::replace(&mut nack.owner, owner.cloned());
                nack.delivery_time = delivery_time;
                nack.delivery_count = delivery_count;
                nack.seq = seq;
                self.by_time.insert(nack.time_key(), id);
                Some(previous)
            }
            None => {
                let nack = Nack {
                    delivery_time,
                    delivery_count,
                    owner: owner.cloned(),
                    seq,
                };
                self.by_time.insert(nack.time_key(), id);
                self.pel.insert(id, nack);
                refs.link(id, self.tag);
                None
            }
        };
        let same = previous.as_ref().is_some_and(|p| p.as_ref() == owner);
        if same {
            return;
        }
        match previous {
            Some(Some(old)) => {
                if let Some(c) = self.consumers.get_mut(old.as_bytes()) {
                    c.pel.remove(&id);
                }
            }
            Some(None) => self.nacked -= 1,
            None => {}
        }
        match owner {
            Some(owner) => {
                if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
                    c.pel.insert(id, ());
                }
            }
            None => self.nacked += 1,
        }
    }

    /// Heap bytes of the PELs and the group's own PEL index (the delivery-time order), for
    /// memory reports; the stream-level reference index is counted by
    /// [`crate::Stream::pel_heap_bytes`].
    pub fn pel_heap_bytes(&self) -> usize {
        self.pel.heap_bytes()
            + self
                .consumers
                .values()
                .map(|c| c.pel.heap_bytes())
                .sum::<usize>()
            + self.by_time.heap_bytes()
    }

    /// Checks the invariants in the module doc.
    pub fn check(&self) -> Result<(), String> {
        self.pel.check()?;
        self.by_time.check()?;
        let mut held = 0;
        for (name, consumer) in &self.consumers {
            consumer.pel.check()?;
            for (id, ()) in consumer.pel.iter() {
                match self.pel.get(id) {
                    Some(nack) if nack.owner.as_ref() == Some(name) => {}
                    Some(nack) => {
                        return Err(format!(
                            "{id} is in {name:?}'s PEL but owned by {:?}",
                            nack.owner
                        ));
                    }
                    None => return Err(format!("{id} is in {name:?}'s PEL but not the group's")),
                }
            }
            held += consumer.pel.len();
        }
        let mut unowned = 0;
        for (id, nack) in self.pel.iter() {
            match &nack.owner {
                Some(owner) => {
                    if !self
                        .consumers
                        .get(owner.as_bytes())
                        .is_some_and(|c| c.pel.contains_key(id))
                    {
                        return Err(format!("{id} is owned by {owner:?}, whose PEL lacks it"));
                    }
                }
                None => {
                    unowned += 1;
                    if nack.delivery_time != 0 {
                        return Err(format!(
                            "NACKed {id} has delivery time {}",
                            nack.delivery_time
                        ));
                    }
                }
            }
            if self.by_time.get(&nack.time_key()) != Some(id) {
                return Err(format!("{id} is not at its place in the time order"));
            }
            if nack.seq >= self.next_seq {
                return Err(format!("{id} has a placement number not yet given"));
            }
        }
        if held + unowned != self.pel.len() {
            return Err(format!(
                "consumers hold {held} ids and {unowned} are unowned, the group PEL has {}",
                self.pel.len()
            ));
        }
        if self.by_time.len() != self.pel.len() {
            return Err(format!(
                "time order has {} ids, the PEL {}",
                self.by_time.len(),
                self.pel.len()
            ));
        }
        if unowned != self.nacked {
            return Err(format!(
                "nacked-count {} but {unowned} unowned",
                self.nacked
            ));
        }
        // The NACK zone is exactly the unowned entries, at the head of the time order.
        if let Some((k, _)) = self.by_time.iter().nth(self.nacked)
            && !k.owned
        {
            return Err("an unowned entry lies past the NACK zone".into());
        }
        if self.by_time.iter().take(self.nacked).any(|(k, _)| k.owned) {
            return Err("an owned entry lies in the NACK zone".into());
        }
        Ok(())
    }

    /// Checks that the stream's reference index lists this group under each of its pending
    /// ids exactly once.
    fn check_refs(&self, refs: &PelRefs) -> Result<(), String> {
        for (&id, _) in self.pel.iter() {
            let n = refs.count(id, self.tag);
            if n != 1 {
                return Err(format!("{id} is indexed {n} times for this group"));
            }
        }
        Ok(())
    }
}

/// Why a group operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupError {
    /// XGROUP CREATE of a name in use.
    Exists,
    /// No group by that name.
    NoGroup,
}

/// What a group operation reads of its stream: the entries, and the counters entries-read
/// and lag are computed from. Taken apart from the stream's groups, so one group can change
/// while the entries are read.
#[derive(Clone, Copy)]
pub(super) struct StreamView<'a> {
    nodes: &'a Nodes,
    counters: Counters,
}

impl<'a> StreamView<'a> {
    /// The live entry with this id.
    fn get(&self, id: StreamId) -> Option<EntryRef<'a>> {
        lookup(self.nodes, id)
    }

    /// Live entries from `start` on, in id order.
    fn from(&self, start: StreamId) -> Range<'a> {
        Range::new(self.nodes, start, StreamId::MAX)
    }
}

/// Milliseconds from `then` to `now`, negative if the clock went back.
fn elapsed_ms(now_ms: u64, then_ms: u64) -> i64 {
    (now_ms as i64).wrapping_sub(then_ms as i64)
}

#[cfg(test)]
mod claim_tests;
#[cfg(test)]
mod delete_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod nack_tests;
#[cfg(test)]
mod tests;
