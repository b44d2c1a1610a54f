//! Idempotent handlers: do the work for a branded id once, and turn any later delivery of the
//! same id into a no-op.
//!
//! The consumer runtime delivers at least once: after a crash, a failure or a reclaim, the same
//! entry comes again, possibly to another consumer at the same moment. [`Dedup::once`] keys
//! the work by the branded id (within a scope, such as "render"):
//!
//! 1. `begin` takes a **lease** on the id (or learns it is **done**, or that another holder's
//!    lease is live: **busy**). Taking a lease is atomic in every store, so of two racing
//!    consumers exactly one does the work.
//! 2. The work runs. `Ok` marks the id **done** (durably, in a durable store); `Err` or a panic
//!    gives the lease back so a redelivery can try again.
//! 3. A later delivery of a done id is skipped (`Ok(Once::Skipped)`, so the handler acks it);
//!    one that finds a live lease of another holder fails with [`OnceError::Busy`], so the
//!    entry stays pending and comes back after the holder finished.
//!
//! A lease expires after `lease_ms` (default 30 s): if a holder dies mid-work, the id becomes
//! free again. So "exactly once" holds when the work takes less than the lease and the process
//! does not die between the work and the done mark; otherwise the work may run twice, never
//! zero times.
//!
//! Stores: [`MemoryDedup`] (one process), [`DurableDedup`] (a redb file: done marks survive a
//! restart) and [`RedisDedup`] (`SET NX PX` on any Redis-compatible server, shared by every
//! process of a group).

mod durable;
mod memory;
mod redis;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use echomq_engine::{Clock, SystemClock};
use thiserror::Error;

use super::brand::Branded;

pub use durable::DurableDedup;
pub use memory::MemoryDedup;
pub use redis::RedisDedup;

/// How long a lease lasts unless set: longer than any sane render, short enough that a dead
/// holder's ids come free within one reclaim threshold (the consumer's default).
pub const LEASE_MS_DEFAULT: u64 = 30_000;

/// What [`DedupStore::begin`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The caller holds the lease now (new, expired, or already its own).
    Taken,
    /// The id was done before.
    Done,
    /// Another holder's lease is live.
    Busy,
}

/// A dedup store failed (I/O, a corrupt file, a server error).
#[derive(Debug, Error)]
pub enum DedupError {
    /// The redb file could not be opened, read or written.
    #[error("dedup store file: {0}; check the path and disk, then reopen")]
    File(String),
    /// The server refused or the connection failed.
    #[error("dedup store server: {0}; retry when the server is reachable")]
    Server(String),
    /// A stored mark does not decode: the store is corrupt or another program wrote to it.
    #[error("dedup store holds an unreadable mark for {0}; the store is corrupt")]
    Corrupt(String),
}

/// Where marks live. `token` identifies a lease holder; `now_ms` and `lease_ms` are by the
/// [`Dedup`]'s clock (a server store uses the server's clock for expiry instead).
pub trait DedupStore: Send + Sync {
    /// Takes the lease on `(scope, id)` unless it is done or leased by another token.
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError>;
    /// Marks `(scope, id)` done.
    fn finish(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError>;
    /// Drops the lease on `(scope, id)` if `token` holds it.
    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError>;
    /// Whether `(scope, id)` is done.
    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError>;
}

impl<S: DedupStore + ?Sized> DedupStore for Arc<S> {
    fn begin(
        &self,
        scope: &str,
        id: Branded,
        token: u64,
        now_ms: u64,
        lease_ms: u64,
    ) -> Result<Claim, DedupError> {
        (**self).begin(scope, id, token, now_ms, lease_ms)
    }
    fn finish(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        (**self).finish(scope, id, token)
    }
    fn abandon(&self, scope: &str, id: Branded, token: u64) -> Result<(), DedupError> {
        (**self).abandon(scope, id, token)
    }
    fn is_done(&self, scope: &str, id: Branded) -> Result<bool, DedupError> {
        (**self).is_done(scope, id)
    }
}

/// What [`Dedup::once`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Once<T> {
    /// The work ran and the id is now done.
    Ran(T),
    /// The id was done before; nothing ran.
    Skipped,
}

/// Why [`Dedup::once`] did not complete the work.
#[derive(Debug, Error)]
pub enum OnceError<E> {
    /// Another holder is doing this id now; leave the entry pending and let it come back.
    #[error("{0} is being handled by another consumer; it will be redelivered")]
    Busy(Branded),
    /// The store failed; nothing is marked, retry later.
    #[error(transparent)]
    Store(#[from] DedupError),
    /// The work failed; the lease was given back.
    #[error("{0}")]
    Work(E),
}

/// A process-unique lease token: random per [`Dedup`], so two helpers never share leases.
fn fresh_token() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// Gives the lease back if the work panics.
struct Abandon<'a, S: DedupStore> {
    dedup: &'a Dedup<S>,
    id: Branded,
    armed: bool,
}

impl<S: DedupStore> Drop for Abandon<'_, S> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self
                .dedup
                .store
                .abandon(&self.dedup.scope, self.id, self.dedup.token);
        }
    }
}

/// The once-per-id helper over a store, for one scope.
pub struct Dedup<S> {
    store: S,
    scope: String,
    token: u64,
    lease_ms: u64,
    clock: Arc<dyn Clock>,
}

impl<S> std::fmt::Debug for Dedup<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dedup")
            .field("scope", &self.scope)
            .field("lease_ms", &self.lease_ms)
            .finish_non_exhaustive()
    }
}

impl<S: DedupStore> Dedup<S> {
    /// A helper marking ids of `scope` in `store`, with the default lease and the wall clock.
    pub fn new(store: S, scope: &str) -> Dedup<S> {
        Dedup {
            store,
            scope: scope.to_string(),
            token: fresh_token(),
            lease_ms: LEASE_MS_DEFAULT,
            clock: Arc::new(SystemClock),
        }
    }

    /// Sets how long a lease lasts (at least 1 ms).
    pub fn with_lease_ms(mut self, lease_ms: u64) -> Dedup<S> {
        self.lease_ms = lease_ms.max(1);
        self
    }

    /// Reads lease times from `clock` (memory and file stores).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Dedup<S> {
        self.clock = clock;
        self
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Runs `work` unless `id` is done or another holder is on it; marks it done on `Ok`.
    pub fn once<T, E>(
        &self,
        id: Branded,
        work: impl FnOnce() -> Result<T, E>,
    ) -> Result<Once<T>, OnceError<E>> {
        let now_ms = self.clock.now_ms();
        match self
            .store
            .begin(&self.scope, id, self.token, now_ms, self.lease_ms)?
        {
            Claim::Done => return Ok(Once::Skipped),
            Claim::Busy => return Err(OnceError::Busy(id)),
            Claim::Taken => {}
        }
        let mut guard = Abandon {
            dedup: self,
            id,
            armed: true,
        };
        match work() {
            Ok(value) => {
                guard.armed = false;
                self.store.finish(&self.scope, id, self.token)?;
                Ok(Once::Ran(value))
            }
            Err(e) => Err(OnceError::Work(e)),
        }
    }

    /// Whether `id` is done.
    pub fn is_done(&self, id: Branded) -> Result<bool, DedupError> {
        self.store.is_done(&self.scope, id)
    }
}

#[cfg(test)]
mod tests;
