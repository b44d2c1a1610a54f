//! Consumer groups: a group's delivery cursor, its pending entries list (PEL) and consumers.
//!
//! Vocabulary (reference §1.1, §4):
//! - a **group** has `last_id` (the last id delivered with `>`), `entries_read` (a logical
//!   count of entries read, `None` when unknown) and a PEL;
//! - a **NACK** is one pending entry: its owner, last delivery time and delivery count;
//! - a **consumer** has `seen_time` (last read or claim attempt), `active_time` (last
//!   successful read or claim, `None` if never) and its own PEL.
//!
//! Invariants ([`Group::check`]): every id in the group PEL is in exactly one consumer's PEL,
//! the consumer named by its NACK; every id in a consumer's PEL is in the group PEL with that
//! owner. Group and consumer names iterate in byte order, as Redis's rax does.
//!
//! Both PELs are [`ChunkMap`]s: pending entries arrive in id order, so chunks fill completely
//! and a pending entry costs about 64 bytes (Redis needs about 84).
//!
//! Layout: this file holds the group's state and the moves that keep its two PELs in step;
//! `deliver`, `claim` and `pending` are the command-sized operations on one [`Group`], and
//! `counters` computes entries-read and lag. A [`Stream`](crate::Stream) owns its groups; the
//! group API callers use is the one `impl Stream` block in `api`.

mod api;
mod claim;
mod counters;
mod deliver;
mod pending;

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::chunk_map::ChunkMap;
use crate::id::StreamId;
use crate::node::{EntryRef, Node};
use crate::stream::{Range, lookup};

use self::counters::Counters;

pub use claim::{AutoClaimOptions, AutoClaimed, ClaimOptions};
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
    /// Unix ms of the last delivery (or what XCLAIM set).
    pub delivery_time: u64,
    /// Times delivered.
    pub delivery_count: u64,
    /// The consumer holding it.
    pub owner: ConsumerName,
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
}

impl Group {
    fn new(last_id: StreamId, entries_read: Option<i64>) -> Group {
        Group {
            last_id,
            entries_read,
            pel: ChunkMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    /// Pending entries of the whole group.
    pub fn pending_count(&self) -> usize {
        self.pel.len()
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
    /// had.
    fn delete_consumer(&mut self, consumer: &[u8]) -> u64 {
        let Some(removed) = self.consumers.remove(consumer) else {
            return 0;
        };
        for (id, ()) in removed.pel.iter() {
            self.pel.remove(id);
        }
        removed.pel.len() as u64
    }

    /// Removes `id` from the group PEL and its owner's PEL; returns the NACK.
    fn remove_pending(&mut self, id: StreamId) -> Option<Nack> {
        let nack = self.pel.remove(&id)?;
        if let Some(owner) = self.consumers.get_mut(nack.owner.as_bytes()) {
            owner.pel.remove(&id);
        }
        Some(nack)
    }

    /// Makes `owner` hold `id` (creating the NACK if needed, moving it if held by another).
    /// The consumer must exist.
    fn assign(
        &mut self,
        id: StreamId,
        owner: &ConsumerName,
        delivery_time: u64,
        delivery_count: u64,
    ) {
        if let Some(nack) = self.pel.get_mut(&id) {
            if nack.owner != *owner {
                let previous = std::mem::replace(&mut nack.owner, owner.clone());
                if let Some(c) = self.consumers.get_mut(previous.as_bytes()) {
                    c.pel.remove(&id);
                }
            }
            nack.delivery_time = delivery_time;
            nack.delivery_count = delivery_count;
        } else {
            self.pel.insert(
                id,
                Nack {
                    delivery_time,
                    delivery_count,
                    owner: owner.clone(),
                },
            );
        }
        if let Some(c) = self.consumers.get_mut(owner.as_bytes()) {
            c.pel.insert(id, ());
        }
    }

    /// Heap bytes of the PELs, for memory reports.
    pub fn pel_heap_bytes(&self) -> usize {
        self.pel.heap_bytes()
            + self
                .consumers
                .values()
                .map(|c| c.pel.heap_bytes())
                .sum::<usize>()
    }

    /// Checks the invariants in the module doc.
    pub fn check(&self) -> Result<(), String> {
        self.pel.check()?;
        let mut held = 0;
        for (name, consumer) in &self.consumers {
            consumer.pel.check()?;
            for (id, ()) in consumer.pel.iter() {
                match self.pel.get(id) {
                    Some(nack) if nack.owner == *name => {}
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
        for (id, nack) in self.pel.iter() {
            if !self
                .consumers
                .get(nack.owner.as_bytes())
                .is_some_and(|c| c.pel.contains_key(id))
            {
                return Err(format!(
                    "{id} is owned by {:?}, whose PEL lacks it",
                    nack.owner
                ));
            }
        }
        if held != self.pel.len() {
            return Err(format!(
                "consumers hold {held} ids, the group PEL {}",
                self.pel.len()
            ));
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
mod model_tests;
#[cfg(test)]
mod tests;
