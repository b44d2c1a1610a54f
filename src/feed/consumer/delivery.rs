//! What a handler receives.

use std::fmt;
use std::sync::Arc;

use crate::feed::brand::Branded;
use crate::feed::fields::Fields;

/// A consumer group's name (cheap to clone: every delivery carries it).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupName(Arc<str>);

impl GroupName {
    /// A group name.
    pub fn new(name: &str) -> GroupName {
        GroupName(Arc::from(name))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GroupName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for GroupName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

/// How an entry reached this consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// From the consumer's own PEL at start (`XREADGROUP ... 0`): delivered to this name
    /// before, never acked.
    Backlog,
    /// A first delivery (`>`).
    New,
    /// Claimed after sitting idle (from a dead peer, or from this consumer after a failure on
    /// the XAUTOCLAIM path), or after a failure handed it back with XNACK (the CLAIM path): by
    /// the beat's XAUTOCLAIM or by the claim phase of an `XREADGROUP … CLAIM` read.
    Reclaimed,
}

/// One entry handed to a handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The branded id, the entry's receipt and the dedup key.
    pub id: Branded,
    /// The entry's fields after `id`.
    pub payload: Fields,
    /// The entry's delivery count in the group, this delivery included (1 the first time).
    pub attempts: u64,
    /// The group delivering it.
    pub group: GroupName,
    /// How it got here.
    pub origin: Origin,
}

impl Delivery {
    /// The first value of `field` in the payload, if UTF-8.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.payload.get(field)
    }
}
