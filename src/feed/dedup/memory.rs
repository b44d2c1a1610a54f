//! The in-memory dedup store: marks in a map behind a mutex, for one process.

use std::collections::HashMap;

use parking_lot::Mutex;

use super::{Claim, DedupError, DedupStore};
use crate::feed::brand::Branded;

/// One id's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// Leased by `token` until `until_ms`.
    Lease { token: u64, until_ms: u64 },
    /// Done.
    Done,
}

/// Marks in memory. [`MemoryDedup::prune_before`] forgets old done marks.
#[derive(Debug, Default)]
pub struct MemoryDedup {
    /// Per scope, the marks by branded value (ids of one scope share a brand in practice;
    /// the brand is part of the key anyway).
    marks: Mutex<HashMap<(String, Branded), Mark>>,
}

impl MemoryDedup {
    /// An empty store.
    pub fn new() -> MemoryDedup {
        MemoryDedup::default()
    }

    /// Forgets done marks of ids minted before Unix ms `ms` (entries that old are trimmed or
    /// will never be redelivered); returns how many.
    pub fn prune_before(&self, ms: u64) -> usize {
        let mut marks = self.marks.lock();
        let before = marks.len();
        marks.retain(|(_, id), mark| !(*mark == Mark::Done && id.ms() < ms));
        before - marks.len()
    }

    /// Marks held (leases and done).
    pub fn len(&self) -> usize {
        self.marks.lock().len()
    }

    /// Whether no mark is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl DedupStore for MemoryDedup {
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError> {
        let mut marks = self.marks.lock();
        let key = (scope.to_string(), id);
        let claim = match marks.get(&key) {
            Some(Mark::Done) => Claim::Done,
            Some(Mark::Lease { token: t, until_ms }) if *t != token && *until_ms > now_ms => {
                Claim::Busy
            }
            _ => Claim::Taken,
        };
        if claim == Claim::Taken {
            marks.insert(
                key,
                Mark::Lease {
                    token,
                    until_ms: now_ms.saturating_add(lease_ms),
                },
            );
        }
        Ok(claim)
    }

    fn finish(&self, scope: &str, id: Branded, _token: u64) -> Result<(), DedupError> {
        self.marks
            .lock()
            .insert((scope.to_string(), id), Mark::Done);
        Ok(())
    }

    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        let mut marks = self.marks.lock();
        let key = (scope.to_string(), id);
        if matches!(marks.get(&key), Some(Mark::Lease { token: t, .. }) if *t == token) {
            marks.remove(&key);
        }
        Ok(())
    }

    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError> {
        Ok(self.marks.lock().get(&(scope.to_string(), id)) == Some(&Mark::Done))
    }
}
