//! A consumer group rebuilt from a snapshot (the RDB loader in [`crate::rdb`]), with Redis
//! 8.8's load checks: every consumer's pending id is in the group PEL and owned once, every
//! NACK-zone id is in the group PEL and owned by no consumer. An unowned id outside the NACK
//! zone (no Redis writes one) joins the end of the zone, so the group's invariants hold.
//!
//! The delivery-time order is rebuilt as Redis's loader rebuilds its time list: the NACK zone
//! in the order saved, then owned entries by delivery time, equal times in id order.

use std::collections::{BTreeMap, HashSet};

use bytes::Bytes;

use crate::id::StreamId;
use crate::stream::Stream;

use super::{ConsumerName, Group};

/// One entry of a group PEL as a snapshot holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadedPending {
    pub id: StreamId,
    pub delivery_time: u64,
    pub delivery_count: u64,
}

/// One consumer as a snapshot holds it.
#[derive(Debug, Clone)]
pub(crate) struct LoadedConsumer {
    pub name: Vec<u8>,
    pub seen_time: u64,
    pub active_time: Option<u64>,
    pub pending: Vec<StreamId>,
}

/// One group as a snapshot holds it.
#[derive(Debug, Clone)]
pub(crate) struct LoadedGroup {
    pub name: Vec<u8>,
    pub last_id: StreamId,
    pub entries_read: Option<i64>,
    pub pel: Vec<LoadedPending>,
    pub consumers: Vec<LoadedConsumer>,
    pub nack_zone: Vec<StreamId>,
}

impl Stream {
    /// Adds a group read from a snapshot; the error is Redis's reason for refusing it.
    pub(crate) fn restore_group(&mut self, loaded: LoadedGroup) -> Result<(), String> {
        if self.groups.contains_key(loaded.name.as_slice()) {
            return Err("Duplicated consumer group name".into());
        }
        // id -> (time, count, owner)
        let mut pel: BTreeMap<StreamId, (u64, u64, Option<ConsumerName>)> = BTreeMap::new();
        for p in &loaded.pel {
            if pel
                .insert(p.id, (p.delivery_time, p.delivery_count, None))
                .is_some()
            {
                return Err("Duplicated global PEL entry loading stream consumer group".into());
            }
        }
        let tag = self.index.next_tag;
        let mut group = Group::new(loaded.last_id, loaded.entries_read, tag);
        for consumer in &loaded.consumers {
            let (name, created) = group.consumer_or_create(&consumer.name, consumer.seen_time);
            if !created {
                return Err("Duplicate stream consumer detected.".into());
            }
            if let Some(c) = group.consumers.get_mut(consumer.name.as_slice()) {
                c.active_time = consumer.active_time;
            }
            for id in &consumer.pending {
                let Some(entry) = pel.get_mut(id) else {
                    return Err("Consumer entry not found in group global PEL".into());
                };
                if entry.2.is_some() {
                    return Err("Stream consumer PEL entry already has a consumer assigned".into());
                }
                entry.2 = Some(name.clone());
            }
        }
        let mut zone = Vec::with_capacity(loaded.nack_zone.len());
        let mut in_zone = HashSet::with_capacity(loaded.nack_zone.len());
        for id in &loaded.nack_zone {
            match pel.get(id) {
                None => return Err("Stream NACK zone entry not found in group global PEL".into()),
                Some((_, _, Some(_))) => {
                    return Err("Stream NACK zone entry has a consumer assigned".into());
                }
                Some(_) => {}
            }
            if !in_zone.insert(*id) {
                return Err("Stream NACK zone entry listed twice".into());
            }
            zone.push(*id);
        }
        zone.extend(
            pel.iter()
                .filter(|(id, (_, _, owner))| owner.is_none() && !in_zone.contains(*id))
                .map(|(id, _)| *id),
        );
        let refs = &mut self.index.refs;
        for id in zone {
            if let Some(&(_, count, _)) = pel.get(&id) {
                group.place(refs, id, None, 0, count);
            }
        }
        let mut owned: Vec<(u64, StreamId, u64, ConsumerName)> = pel
            .into_iter()
            .filter_map(|(id, (time, count, owner))| owner.map(|o| (time, id, count, o)))
            .collect();
        owned.sort_by_key(|&(time, id, _, _)| (time, id));
        for (time, id, count, owner) in owned {
            group.place(refs, id, Some(&owner), time, count);
        }
        let name = Bytes::from(loaded.name);
        self.index.next_tag = self.index.next_tag.wrapping_add(1);
        self.index.tags.insert(tag, name.clone());
        self.groups.insert(name, group);
        self.index.min_last_id = None;
        Ok(())
    }
}
