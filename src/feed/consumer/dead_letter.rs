//! Parking an entry the consumer will not hand to its handler (a poison entry past its
//! attempts, or one whose `id` field does not parse) on the dead-letter stream.
//!
//! A dead letter is XADDed with an auto id (`*`) and these fields first, then the original
//! entry's fields unchanged (its `id` field included, when it had one):
//!
//! | field | value |
//! |---|---|
//! | `dead.source` | the original stream key |
//! | `dead.entry` | the original stream id |
//! | `dead.group`, `dead.consumer` | who gave up on it |
//! | `dead.attempts` | its delivery count when parked |
//! | `dead.reason` | why, for people |
//!
//! The dead-letter stream lives in the same queue (`emq:{<queue>}:stream:<name>:dead` by
//! default), so it shares the source's Cluster slot. It is not a feed stream: its entries'
//! ids are not branded; read it with XRANGE.

use echomq_engine::StreamId;

use crate::feed::backend::GroupBackend;
use crate::feed::error::FeedError;

/// Who parks an entry and why.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parking<'a> {
    pub source_key: &'a str,
    pub entry: StreamId,
    pub group: &'a str,
    pub consumer: &'a str,
    pub attempts: u64,
    pub reason: &'a str,
}

/// XADDs the dead letter for `parking` with `fields` (the entry's, in order) to `dead_key`.
pub(crate) fn park<B: GroupBackend>(
    backend: &B,
    dead_key: &str,
    parking: &Parking<'_>,
    fields: impl Iterator<Item = (impl AsRef<[u8]>, impl AsRef<[u8]>)>,
) -> Result<StreamId, FeedError> {
    let entry = parking.entry.to_string();
    let attempts = parking.attempts.to_string();
    let head: [(&[u8], &[u8]); 6] = [
        (b"dead.source", parking.source_key.as_bytes()),
        (b"dead.entry", entry.as_bytes()),
        (b"dead.group", parking.group.as_bytes()),
        (b"dead.consumer", parking.consumer.as_bytes()),
        (b"dead.attempts", attempts.as_bytes()),
        (b"dead.reason", parking.reason.as_bytes()),
    ];
    let tail: Vec<(Vec<u8>, Vec<u8>)> = fields
        .map(|(f, v)| (f.as_ref().to_vec(), v.as_ref().to_vec()))
        .collect();
    let mut all: Vec<&[u8]> = Vec::with_capacity(2 * (head.len() + tail.len()));
    for (f, v) in head {
        all.push(f);
        all.push(v);
    }
    for (f, v) in &tail {
        all.push(f);
        all.push(v);
    }
    backend.add_auto(dead_key, &all)
}
