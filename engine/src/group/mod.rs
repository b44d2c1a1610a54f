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

mod claim;
mod deliver;
mod pending;

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use bytes::Bytes;

use crate::chunk_map::ChunkMap;
use crate::id::StreamId;
use crate::stream::Stream;

pub use claim::{AutoClaimOptions, AutoClaimed, ClaimOptions};
pub use pending::{PendingEntry, PendingQuery, PendingSummary};

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

/// The stream's counters that entries-read and lag are computed from (reference §4.7).
#[derive(Debug, Clone, Copy)]
struct Counters {
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
}

impl Counters {
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
    fn lag(&self, group: &Group) -> Option<i64> {
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

    /// Advances a group's cursor past a delivered `id` (reference §4.7, "on each delivery").
    fn on_delivery(&self, last_id: &mut StreamId, entries_read: &mut Option<i64>, id: StreamId) {
        if id <= *last_id {
            return;
        }
        match *entries_read {
            Some(read) if !self.has_tombstones(*last_id, StreamId::MAX) => {
                *entries_read = Some(read + 1);
            }
            _ if self.entries_added > 0 => *entries_read = self.estimate(id),
            _ => {}
        }
        *last_id = id;
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

impl Stream {
    fn counters(&self) -> Counters {
        Counters {
            length: self.len(),
            last_id: self.last_id(),
            first_id: self.first_id(),
            max_deleted: self.max_deleted_entry_id(),
            entries_added: self.entries_added(),
        }
    }

    /// The groups, in name order.
    pub fn groups(&self) -> impl Iterator<Item = (&Bytes, &Group)> {
        self.groups.iter()
    }

    /// Number of groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// A group by name.
    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.groups.get(name)
    }

    /// XGROUP CREATE: a group delivering entries after `last_id`.
    pub fn create_group(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<i64>,
    ) -> Result<(), GroupError> {
        if self.groups.contains_key(name) {
            return Err(GroupError::Exists);
        }
        self.groups.insert(
            Bytes::copy_from_slice(name),
            Group::new(last_id, entries_read),
        );
        Ok(())
    }

    /// XGROUP SETID: moves the cursor and resets `entries_read`; the PEL is untouched.
    pub fn set_group_id(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<i64>,
    ) -> Result<(), GroupError> {
        let group = self.groups.get_mut(name).ok_or(GroupError::NoGroup)?;
        group.last_id = last_id;
        group.entries_read = entries_read;
        Ok(())
    }

    /// XGROUP DESTROY: whether the group existed.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        self.groups.remove(name).is_some()
    }

    /// XGROUP CREATECONSUMER: whether it was created.
    pub fn create_consumer(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        now_ms: u64,
    ) -> Result<bool, GroupError> {
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        Ok(group.consumer_or_create(consumer, now_ms).1)
    }

    /// XGROUP DELCONSUMER: removes the consumer and its pending entries (from the group PEL
    /// too); returns how many it had.
    pub fn delete_consumer(&mut self, group: &[u8], consumer: &[u8]) -> Result<u64, GroupError> {
        let group = self.groups.get_mut(group).ok_or(GroupError::NoGroup)?;
        let Some(removed) = group.consumers.remove(consumer) else {
            return Ok(0);
        };
        for (id, ()) in removed.pel.iter() {
            group.pel.remove(id);
        }
        Ok(removed.pel.len() as u64)
    }

    /// The group's lag (entries not yet delivered), `None` when unknown.
    pub fn group_lag(&self, group: &Group) -> Option<i64> {
        self.counters().lag(group)
    }

    pub(crate) fn check_groups(&self) -> Result<(), String> {
        for (name, group) in &self.groups {
            group
                .check()
                .map_err(|e| format!("group {:?}: {e}", String::from_utf8_lossy(name)))?;
        }
        Ok(())
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
