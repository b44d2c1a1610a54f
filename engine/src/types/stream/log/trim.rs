//! Trimming (XTRIM, and XADD with MAXLEN/MINID), exactly as Redis walks it
//! (`docs/reference/streams.md` §2.2).
//!
//! Nodes are visited from the head. A whole node goes when what remains still satisfies the
//! strategy (MAXLEN: `length - node_live >= maxlen`; MINID: the node's last element, tombstone or
//! not, is below the minimum). The first node that cannot go whole ends an approximate (`~`)
//! trim, so `~` may under-trim but never over-trims; an exact trim instead tombstones that node's
//! entries until the target is met, and stops. A non-zero `limit` caps the live entries an
//! approximate trim may remove, checked before each node.
//!
//! Deletion strategies (Redis 8.2, `docs/reference/streams-8.md` §1.3): KEEPREF (the default) is
//! the walk above and leaves pending entries of removed ids dangling. DELREF and ACKED never drop a
//! node whole up front: they go entry by entry through every node that qualifies, even with `~`
//! (8.6). DELREF first removes each trimmed id from every PEL (found through the stream's reference
//! index, not by scanning PELs); ACKED skips a referenced entry (see [`References`]) and goes on
//! with later ones. A qualifying node whose every live entry went is freed, and the walk continues
//! past a node only if it qualified.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;

use crate::config::NodeLimits;
use crate::group::Group;
use crate::group::refs::PelRefs;
use crate::id::StreamId;

use super::Stream;

/// What deleting an entry does to the consumer groups' references to it (XADD and XTRIM's
/// trimming, XDELEX, XACKDEL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteStrategy {
    /// Delete the entry; pending entries for it stay, dangling (the default).
    #[default]
    KeepRef,
    /// Delete the entry and remove it from every group's PEL.
    DelRef,
    /// Delete the entry only if no group references it.
    Acked,
}

/// The group side of a deletion, borrowed apart from the stream's nodes.
///
/// An entry is **referenced** when the stream has a group and either its id is above the
/// smallest group cursor (some group has not read it) or some group's PEL holds it.
pub(crate) struct References<'a> {
    groups: &'a mut BTreeMap<Bytes, Group>,
    refs: &'a mut PelRefs,
    tags: &'a HashMap<u32, Bytes>,
    /// The smallest group cursor, `None` without groups.
    min_last_id: Option<StreamId>,
}

impl References<'_> {
    /// Whether a group still references `id`.
    pub(crate) fn is_referenced(&self, id: StreamId) -> bool {
        self.min_last_id
            .is_some_and(|min| id > min || self.refs.contains(id))
    }

    /// Removes `id` from every PEL that holds it.
    pub(crate) fn drop_refs(&mut self, id: StreamId) {
        for tag in self.refs.take(id) {
            if let Some(name) = self.tags.get(&tag)
                && let Some(group) = self.groups.get_mut(name)
            {
                group.drop_pending(self.refs, id);
            }
        }
    }

    /// What the strategy lets a deletion of live entry `id` do: `true` to delete it (after
    /// DELREF's cleanup), `false` to keep it (ACKED, referenced).
    pub(crate) fn allow(&mut self, strategy: DeleteStrategy, id: StreamId) -> bool {
        match strategy {
            DeleteStrategy::KeepRef => true,
            DeleteStrategy::DelRef => {
                self.drop_refs(id);
                true
            }
            DeleteStrategy::Acked => !self.is_referenced(id),
        }
    }
}

/// What a trim keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimStrategy {
    /// Keep at most this many live entries (the newest).
    MaxLen(u64),
    /// Remove entries with ids below this one.
    MinId(StreamId),
}

/// A trim request: the strategy, `~` or exact, the work limit for `~`, and what happens to
/// group references.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
    /// KEEPREF, DELREF or ACKED.
    pub delete: DeleteStrategy,
    /// What to keep.
    pub strategy: TrimStrategy,
    /// `~`: remove whole nodes only.
    pub approx: bool,
    /// For `~`: the most live entries to remove, `Some(0)` for no limit, `None` for Redis's
    /// default (`100 * stream-node-max-entries`, see [`NodeLimits::default_approx_trim_limit`]).
    /// Exact trims are never limited (Redis rejects LIMIT without `~` when parsing).
    pub limit: Option<u64>,
}

impl Trim {
    /// `MAXLEN = n`.
    pub fn maxlen(n: u64) -> Trim {
        Trim {
            delete: DeleteStrategy::KeepRef,
            strategy: TrimStrategy::MaxLen(n),
            approx: false,
            limit: None,
        }
    }

    /// `MAXLEN ~ n` with the default limit.
    pub fn maxlen_approx(n: u64) -> Trim {
        Trim {
            delete: DeleteStrategy::KeepRef,
            strategy: TrimStrategy::MaxLen(n),
            approx: true,
            limit: None,
        }
    }

    /// `MINID = id`.
    pub fn minid(id: StreamId) -> Trim {
        Trim {
            delete: DeleteStrategy::KeepRef,
            strategy: TrimStrategy::MinId(id),
            approx: false,
            limit: None,
        }
    }

    /// `MINID ~ id` with the default limit.
    pub fn minid_approx(id: StreamId) -> Trim {
        Trim {
            delete: DeleteStrategy::KeepRef,
            strategy: TrimStrategy::MinId(id),
            approx: true,
            limit: None,
        }
    }

    /// The same trim with `LIMIT n` (0 = unlimited).
    pub fn with_limit(self, n: u64) -> Trim {
        Trim {
            limit: Some(n),
            ..self
        }
    }

    /// The same trim with this deletion strategy.
    pub fn with_delete(self, delete: DeleteStrategy) -> Trim {
        Trim { delete, ..self }
    }

    /// The limit in force: 0 means none.
    pub(super) fn effective_limit(&self, limits: NodeLimits) -> u64 {
        if !self.approx {
            return 0;
        }
        self.limit
            .unwrap_or_else(|| limits.default_approx_trim_limit())
    }
}

impl Stream {
    /// The group side of a deletion: the reference index, the groups and their smallest
    /// cursor (computed once, then cached), borrowed apart from the nodes.
    pub(crate) fn references(
        &mut self,
    ) -> (&mut BTreeMap<StreamId, crate::node::Node>, References<'_>) {
        let min_last_id = self.min_group_last_id();
        (
            &mut self.nodes,
            References {
                groups: &mut self.groups,
                refs: &mut self.index.refs,
                tags: &self.index.tags,
                min_last_id,
            },
        )
    }

    /// Trims the stream; returns the number of live entries removed.
    pub fn trim(&mut self, trim: &Trim, limits: NodeLimits) -> u64 {
        let limit = trim.effective_limit(limits);
        let keep_ref = trim.delete == DeleteStrategy::KeepRef;
        let mut length = self.length;
        let (nodes, mut references) = self.references();
        let mut removed = 0u64;
        let mut cursor = nodes.first_key_value().map(|(&k, _)| k);
        while let Some(master) = cursor {
            cursor = nodes
                .range((
                    std::ops::Bound::Excluded(master),
                    std::ops::Bound::Unbounded,
                ))
                .next()
                .map(|(&k, _)| k);
            if let TrimStrategy::MaxLen(maxlen) = trim.strategy
                && length <= maxlen
            {
                break;
            }
            let Some(node) = nodes.get_mut(&master) else {
                break;
            };
            let live = node.live();
            if limit != 0 && removed + live > limit {
                break;
            }
            let eligible = match trim.strategy {
                TrimStrategy::MaxLen(maxlen) => length - live >= maxlen,
                TrimStrategy::MinId(min) => node.last() < min,
            };
            if eligible && keep_ref {
                nodes.remove(&master);
                length -= live;
                removed += live;
                continue;
            }
            if trim.approx && keep_ref {
                break;
            }
            let mut from_node = 0;
            for raw in node.scan_all(master) {
                let done = match trim.strategy {
                    TrimStrategy::MaxLen(maxlen) => length <= maxlen,
                    TrimStrategy::MinId(min) => raw.id >= min,
                };
                if done {
                    break;
                }
                if raw.deleted || !references.allow(trim.delete, raw.id) {
                    continue;
                }
                node.mark_deleted(&raw);
                length -= 1;
                from_node += 1;
            }
            removed += from_node;
            if eligible && from_node == live {
                nodes.remove(&master);
                continue;
            }
            if eligible {
                continue;
            }
            break;
        }
        self.length = length;
        if removed > 0 {
            self.first_id = self.first_live_id();
        }
        removed
    }
}
