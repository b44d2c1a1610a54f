//! The statistics part of a [`Db`](super::Db): INFO's `expired_keys` and `expired_subkeys`
//! (and of those the active expiry cycle's), `keyspace_hits` and `keyspace_misses`. CONFIG RESETSTAT zeroes
//! them.
//!
//! Invariant (checked by [`Stats::check_invariants`]): keys (and hash fields) expired by the
//! active cycle are among the keys (fields) expired.

/// Counters of one database.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stats {
    /// Keys deleted because they expired: on access and by the active cycle.
    pub(crate) expired_keys: u64,
    /// Of those, the keys the active cycle deleted.
    pub(crate) expired_keys_active: u64,
    /// Hash fields deleted because they expired (`expired_subkeys`).
    pub(crate) expired_subkeys: u64,
    /// Of those, the fields the active cycle deleted.
    pub(crate) expired_subkeys_active: u64,
    /// Read lookups that found their key.
    pub(crate) keyspace_hits: u64,
    /// Read lookups that did not.
    pub(crate) keyspace_misses: u64,
}

impl Stats {
    /// Checks the invariant of the module doc.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        if self.expired_keys_active > self.expired_keys {
            return Err(format!(
                "{} keys expired by the active cycle, {} expired in all",
                self.expired_keys_active, self.expired_keys
            ));
        }
        if self.expired_subkeys_active > self.expired_subkeys {
            return Err("more fields expired actively than in all".into());
        }
        Ok(())
    }
}
