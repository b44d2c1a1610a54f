//! A consumer group rebuilt from a snapshot (the RDB loader in [`crate::rdb`]), with Redis
//! 8.8's load checks: every consumer's pending id is in the group PEL and owned once, every
//! NACK-zone id is in the group PEL and owned by no consumer. An unowned id outside the NACK
//! zone (no Redis writes one) joins the end of the zone, so the group's invariants hold.
//!
//! The delivery-time order is rebuilt as Redis's loader rebuilds its time list: the NACK zone
//! in the order saved, then owned entries by delivery time, equal times in id order.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::chunk_map::ChunkMap;
use crate::id::StreamId;
use crate::stream::Stream;

use super::{Consumer, ConsumerName, Group, Nack, TimeKey};

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

/// Where the pending entry `id` is in `pel` (sorted by id), if it is there: at `hint` (just
/// past the previous id found: a consumer's ids are saved in order and usually adjacent in
/// the group PEL) or found by a binary search.
fn find(pel: &[LoadedPending], id: StreamId, hint: usize) -> Option<usize> {
    match pel.get(hint) {
        Some(p) if p.id == id => Some(hint),
        _ => pel.binary_search_by_key(&id, |p| p.id).ok(),
    }
}

impl Stream {
    /// Adds a group read from a snapshot; the error is Redis's reason for refusing it.
    ///
    /// Everything is built in bulk from sorted input, as appends would leave it: the PELs and
    /// the delivery-time order with [`ChunkMap::from_sorted`], the reference index likewise
    /// for a stream's first group. What the placement moves of a live group would do entry by
    /// entry (`Group::place`) gives the same state: placement numbers in placement order (the
    /// NACK zone, then owned entries by delivery time and id), NACKed entries at time 0.
    pub(crate) fn restore_group(&mut self, loaded: LoadedGroup) -> Result<(), String> {
        if self.groups.contains_key(loaded.name.as_slice()) {
            return Err("Duplicated consumer group name".into());
        }
        // Redis writes the PEL in id order; any other order is sorted first.
        let mut pel = loaded.pel;
        if !pel.is_sorted_by_key(|p| p.id) {
            pel.sort_by_key(|p| p.id);
        }
        if pel.windows(2).any(|w| w[0].id == w[1].id) {
            return Err("Duplicated global PEL entry loading stream consumer group".into());
        }
        // Per PEL entry: the index of its owner in `names`.
        let mut owner: Vec<Option<u32>> = vec![None; pel.len()];
        let mut names: Vec<ConsumerName> = Vec::with_capacity(loaded.consumers.len());
        let mut consumers: BTreeMap<ConsumerName, Consumer> = BTreeMap::new();
        for consumer in loaded.consumers {
            if consumers.contains_key(consumer.name.as_slice()) {
                return Err("Duplicate stream consumer detected.".into());
            }
            let index =
                u32::try_from(names.len()).map_err(|_| "Too many stream consumers".to_string())?;
            let mut hint = 0;
            for id in &consumer.pending {
                let Some(at) = find(&pel, *id, hint) else {
                    return Err("Consumer entry not found in group global PEL".into());
                };
                hint = at + 1;
                if owner[at].is_some() {
                    return Err("Stream consumer PEL entry already has a consumer assigned".into());
                }
                owner[at] = Some(index);
            }
            // Each id was owned once above, so the ids are distinct.
            let mut ids = consumer.pending;
            if !ids.is_sorted() {
                ids.sort_unstable();
            }
            let held = ChunkMap::from_sorted(ids.into_iter().map(|id| (id, ())))
                .ok_or_else(|| "Stream consumer PEL entry listed twice".to_string())?;
            let name = ConsumerName::new(&consumer.name);
            names.push(name.clone());
            consumers.insert(
                name,
                Consumer {
                    seen_time: consumer.seen_time,
                    active_time: consumer.active_time,
                    pel: held,
                },
            );
        }
        // Placement numbers, per PEL entry: the NACK zone first, in the order saved, then
        // the unowned entries it leaves out, in id order.
        let mut seq: Vec<Option<u64>> = vec![None; pel.len()];
        let mut by_time: Vec<(TimeKey, StreamId)> = Vec::with_capacity(pel.len());
        let mut next_seq = 0u64;
        let mut place = |at: usize, time_key: TimeKey, seq: &mut [Option<u64>]| {
            seq[at] = Some(next_seq);
            by_time.push((
                TimeKey {
                    seq: next_seq,
                    ..time_key
                },
                pel[at].id,
            ));
            next_seq += 1;
        };
        let unowned = TimeKey {
            owned: false,
            time: 0,
            seq: 0,
        };
        let mut hint = 0;
        for id in &loaded.nack_zone {
            let Some(at) = find(&pel, *id, hint) else {
                return Err("Stream NACK zone entry not found in group global PEL".into());
            };
            hint = at + 1;
            if owner[at].is_some() {
                return Err("Stream NACK zone entry has a consumer assigned".into());
            }
            if seq[at].is_some() {
                return Err("Stream NACK zone entry listed twice".into());
            }
            place(at, unowned, &mut seq);
        }
        let nacked = (0..pel.len()).filter(|&at| owner[at].is_none()).count();
        for at in 0..pel.len() {
            if owner[at].is_none() && seq[at].is_none() {
                place(at, unowned, &mut seq);
            }
        }
        let mut owned: Vec<(u64, StreamId, usize)> = (0..pel.len())
            .filter(|&at| owner[at].is_some())
            .map(|at| (pel[at].delivery_time, pel[at].id, at))
            .collect();
        if !owned.is_sorted() {
            owned.sort_unstable();
        }
        for (time, _, at) in owned {
            let key = TimeKey {
                owned: true,
                time,
                seq: 0,
            };
            place(at, key, &mut seq);
        }
        let tag = self.index.next_tag;
        let mut group = Group::new(loaded.last_id, loaded.entries_read, tag);
        let pairs = pel.iter().enumerate().map(|(at, p)| {
            let owner = owner[at].and_then(|i| names.get(i as usize)).cloned();
            let nack = Nack {
                delivery_time: if owner.is_some() { p.delivery_time } else { 0 },
                delivery_count: p.delivery_count,
                owner,
                seq: seq[at].unwrap_or_default(),
            };
            (p.id, nack)
        });
        let broken = || "Stream PEL could not be rebuilt in order".to_string();
        group.pel = ChunkMap::from_sorted(pairs).ok_or_else(broken)?;
        group.by_time = ChunkMap::from_sorted(by_time).ok_or_else(broken)?;
        group.consumers = consumers;
        group.next_seq = next_seq;
        group.nacked = nacked;
        self.index.refs.link_all(pel.iter().map(|p| p.id), tag);
        let name = Bytes::from(loaded.name);
        self.index.next_tag = self.index.next_tag.wrapping_add(1);
        self.index.tags.insert(tag, name.clone());
        self.groups.insert(name, group);
        self.index.min_last_id = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> StreamId {
        StreamId::new(n, 0)
    }

    fn pending(n: u64, time: u64) -> LoadedPending {
        LoadedPending {
            id: id(n),
            delivery_time: time,
            delivery_count: n,
        }
    }

    fn consumer(name: &str, ids: &[u64]) -> LoadedConsumer {
        LoadedConsumer {
            name: name.as_bytes().to_vec(),
            seen_time: 5,
            active_time: Some(6),
            pending: ids.iter().map(|&n| id(n)).collect(),
        }
    }

    fn group(pel: Vec<LoadedPending>, consumers: Vec<LoadedConsumer>, zone: &[u64]) -> LoadedGroup {
        LoadedGroup {
            name: b"g".to_vec(),
            last_id: id(100),
            entries_read: None,
            pel,
            consumers,
            nack_zone: zone.iter().map(|&n| id(n)).collect(),
        }
    }

    #[test]
    fn a_restored_group_keeps_its_invariants_and_time_order() {
        // Out of id order on purpose; 6 is unowned and outside the saved zone.
        let pel = vec![
            pending(4, 30),
            pending(1, 20),
            pending(2, 0),
            pending(3, 20),
            pending(5, 0),
            pending(6, 0),
        ];
        let consumers = vec![consumer("b", &[3, 1]), consumer("a", &[4])];
        let mut stream = Stream::default();
        stream
            .restore_group(group(pel, consumers, &[5, 2]))
            .unwrap();
        // A second group goes through the reference index's one-by-one path.
        let pel = vec![pending(1, 7), pending(9, 7)];
        let mut second = group(pel, vec![consumer("c", &[9, 1])], &[]);
        second.name = b"h".to_vec();
        stream.restore_group(second).unwrap();
        stream.check_groups(true).unwrap();
        let g = &stream.groups[b"g".as_slice()];
        let order: Vec<u64> = g.pending_by_time().map(|i| i.ms).collect();
        assert_eq!(order, [5, 2, 6, 1, 3, 4]);
        assert_eq!(g.nacked_count(), 3);
        assert_eq!(g.nack(id(6)).unwrap().delivery_time, 0);
        assert_eq!(g.consumer(b"b").unwrap().pending_count(), 2);
        assert_eq!(stream.index.refs.count(id(1), g.tag), 1);
    }

    #[test]
    fn inconsistent_groups_are_refused_with_redis_reasons() {
        let cases: Vec<(LoadedGroup, &str)> = vec![
            (
                group(vec![pending(1, 0), pending(1, 0)], vec![], &[]),
                "Duplicated global PEL entry",
            ),
            (
                group(vec![pending(1, 0)], vec![consumer("a", &[2])], &[]),
                "Consumer entry not found",
            ),
            (
                group(
                    vec![pending(1, 0)],
                    vec![consumer("a", &[1]), consumer("b", &[1])],
                    &[],
                ),
                "already has a consumer assigned",
            ),
            (
                group(vec![pending(1, 0)], vec![consumer("a", &[1, 1])], &[]),
                "already has a consumer assigned",
            ),
            (
                group(vec![], vec![consumer("a", &[]), consumer("a", &[])], &[]),
                "Duplicate stream consumer",
            ),
            (
                group(vec![pending(1, 0)], vec![], &[2]),
                "NACK zone entry not found",
            ),
            (
                group(vec![pending(1, 0)], vec![consumer("a", &[1])], &[1]),
                "NACK zone entry has a consumer",
            ),
            (
                group(vec![pending(1, 0)], vec![], &[1, 1]),
                "NACK zone entry listed twice",
            ),
        ];
        for (loaded, reason) in cases {
            let err = Stream::default().restore_group(loaded).unwrap_err();
            assert!(err.contains(reason), "{err} / {reason}");
        }
    }
}
