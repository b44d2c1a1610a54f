//! Trimming (XTRIM, and XADD with MAXLEN/MINID), exactly as Redis walks it (reference §2.2).
//!
//! Nodes are visited from the head. A whole node goes when what remains still satisfies the
//! strategy (MAXLEN: `length - node_live >= maxlen`; MINID: the node's last element, tombstone or
//! not, is below the minimum). The first node that cannot go whole ends an approximate (`~`)
//! trim, so `~` may under-trim but never over-trims; an exact trim instead tombstones that node's
//! entries until the target is met, and stops. A non-zero `limit` caps the live entries an
//! approximate trim may remove, checked before each node.

use crate::config::NodeLimits;
use crate::id::StreamId;

use super::Stream;

/// What a trim keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimStrategy {
    /// Keep at most this many live entries (the newest).
    MaxLen(u64),
    /// Remove entries with ids below this one.
    MinId(StreamId),
}

/// A trim request: the strategy, `~` or exact, and the work limit for `~`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
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
            strategy: TrimStrategy::MaxLen(n),
            approx: false,
            limit: None,
        }
    }

    /// `MAXLEN ~ n` with the default limit.
    pub fn maxlen_approx(n: u64) -> Trim {
        Trim {
            strategy: TrimStrategy::MaxLen(n),
            approx: true,
            limit: None,
        }
    }

    /// `MINID = id`.
    pub fn minid(id: StreamId) -> Trim {
        Trim {
            strategy: TrimStrategy::MinId(id),
            approx: false,
            limit: None,
        }
    }

    /// `MINID ~ id` with the default limit.
    pub fn minid_approx(id: StreamId) -> Trim {
        Trim {
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
    /// Trims the stream; returns the number of live entries removed.
    pub fn trim(&mut self, trim: &Trim, limits: NodeLimits) -> u64 {
        let limit = trim.effective_limit(limits);
        let mut removed = 0u64;
        while let Some(mut head) = self.nodes.first_entry() {
            if let TrimStrategy::MaxLen(maxlen) = trim.strategy
                && self.length <= maxlen
            {
                break;
            }
            let live = head.get().live();
            if limit != 0 && removed + live > limit {
                break;
            }
            let whole = match trim.strategy {
                TrimStrategy::MaxLen(maxlen) => self.length - live >= maxlen,
                TrimStrategy::MinId(min) => head.get().last() < min,
            };
            if whole {
                head.remove();
                self.length -= live;
                removed += live;
                continue;
            }
            if trim.approx {
                break;
            }
            let master = *head.key();
            let node = head.get_mut();
            for raw in node.scan_all(master) {
                if raw.deleted {
                    continue;
                }
                let done = match trim.strategy {
                    TrimStrategy::MaxLen(maxlen) => self.length <= maxlen,
                    TrimStrategy::MinId(min) => raw.id >= min,
                };
                if done {
                    break;
                }
                node.mark_deleted(&raw);
                self.length -= 1;
                removed += 1;
            }
            break;
        }
        if removed > 0 {
            self.first_id = self.first_live_id();
        }
        removed
    }
}
