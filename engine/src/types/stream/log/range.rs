//! Range reads: forward (XRANGE) and reverse (XREVRANGE) iteration over live entries.
//!
//! A forward read seeks the last node whose master id is `<= start` (the node that could hold
//! `start`), then walks nodes in order until an id passes `end`; a reverse read seeks the last
//! node whose master id is `<= end` and walks back. Tombstones are skipped. The cost is the
//! nodes overlapping the bounds plus the entries returned, never the size of the stream.

use std::collections::{BTreeMap, btree_map};
use std::iter::Rev;

use crate::id::StreamId;
use crate::node::{EntryRef, Node, RawEntry, Scan};

use super::Stream;

/// The live entry with id `id` in a node index.
pub(crate) fn lookup(nodes: &BTreeMap<StreamId, Node>, id: StreamId) -> Option<EntryRef<'_>> {
    let (&master, node) = nodes.range(..=id).next_back()?;
    let raw = node.find(master, id)?;
    (!raw.deleted).then(|| node.entry(&raw))
}

impl Stream {
    /// Live entries with `start <= id <= end`, in id order.
    pub fn range(&self, start: StreamId, end: StreamId) -> Range<'_> {
        let nodes = if start > end {
            None
        } else {
            let from = self
                .nodes
                .range(..=start)
                .next_back()
                .map_or(start, |(&key, _)| key);
            Some(self.nodes.range(from..=end))
        };
        Range {
            nodes,
            current: None,
            start,
            end,
        }
    }

    /// Live entries with `start <= id <= end`, in reverse id order.
    pub fn rev_range(&self, start: StreamId, end: StreamId) -> RevRange<'_> {
        let nodes = (start <= end).then(|| self.nodes.range(..=end).rev());
        RevRange {
            nodes,
            current: None,
            start,
            end,
        }
    }
}

/// Forward iterator over a range of live entries.
#[derive(Debug)]
pub struct Range<'a> {
    /// Nodes not yet entered; `None` once the range is exhausted.
    nodes: Option<btree_map::Range<'a, StreamId, Node>>,
    /// The node being scanned.
    current: Option<(&'a Node, Scan<'a>)>,
    start: StreamId,
    end: StreamId,
}

impl<'a> Range<'a> {
    /// A range over a node index, for callers that hold other parts of the stream mutably.
    pub(crate) fn new(
        nodes: &'a BTreeMap<StreamId, Node>,
        start: StreamId,
        end: StreamId,
    ) -> Range<'a> {
        let nodes = if start > end {
            None
        } else {
            let from = nodes
                .range(..=start)
                .next_back()
                .map_or(start, |(&key, _)| key);
            Some(nodes.range(from..=end))
        };
        Range {
            nodes,
            current: None,
            start,
            end,
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if let Some((node, scan)) = &mut self.current {
                for raw in scan.by_ref() {
                    if raw.id > self.end {
                        self.nodes = None;
                        self.current = None;
                        return None;
                    }
                    if !raw.deleted && raw.id >= self.start {
                        return Some(node.entry(&raw));
                    }
                }
            }
            let (&master, node) = self.nodes.as_mut()?.next()?;
            self.current = (node.last() >= self.start).then(|| (node, node.scan(master)));
        }
    }
}

/// Reverse iterator over a range of live entries.
#[derive(Debug)]
pub struct RevRange<'a> {
    nodes: Option<Rev<btree_map::Range<'a, StreamId, Node>>>,
    /// The node being walked, its entries decoded forwards and popped from the back.
    current: Option<(&'a Node, Vec<RawEntry>)>,
    start: StreamId,
    end: StreamId,
}

impl<'a> Iterator for RevRange<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if let Some((node, raws)) = &mut self.current {
                while let Some(raw) = raws.pop() {
                    if raw.id < self.start {
                        self.nodes = None;
                        self.current = None;
                        return None;
                    }
                    if !raw.deleted && raw.id <= self.end {
                        return Some(node.entry(&raw));
                    }
                }
            }
            let (&master, node) = self.nodes.as_mut()?.next()?;
            if node.last() < self.start {
                self.nodes = None;
                return None;
            }
            self.current = Some((node, node.scan_all(master)));
        }
    }
}
