//! A stream rebuilt from a snapshot's parts (the RDB loader in [`crate::rdb`]).
//!
//! The loader decodes every node and hands them here with the stream's counters; `first_id` is
//! recomputed from the nodes rather than trusted. The caller adds the groups and then checks
//! the whole value with [`Stream::check_invariants`] before it is stored.

use std::collections::BTreeMap;

use crate::id::StreamId;
use crate::node::Node;

use super::Stream;
use super::idmp::Idmp;

/// A stream's counters as a snapshot holds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadedCounters {
    /// Live entries.
    pub length: u64,
    /// Last id ever added or set.
    pub last_id: StreamId,
    /// Largest id removed by XDEL.
    pub max_deleted_entry_id: StreamId,
    /// Every entry ever added.
    pub entries_added: u64,
}

impl Stream {
    /// A stream of these nodes and counters, without groups.
    pub(crate) fn from_loaded(
        nodes: BTreeMap<StreamId, Node>,
        counters: LoadedCounters,
        idmp: Idmp,
    ) -> Stream {
        let mut stream = Stream {
            nodes,
            length: counters.length,
            last_id: counters.last_id,
            first_id: StreamId::MIN,
            max_deleted_entry_id: counters.max_deleted_entry_id,
            entries_added: counters.entries_added,
            idmp,
            ..Stream::default()
        };
        stream.first_id = stream.first_live_id();
        stream
    }
}
