//! A consumer's counters: updated by its thread with relaxed atomics, read as a
//! [`ConsumerMetrics`] snapshot from any thread. The [`ClaimPath`] is chosen once, before the
//! thread starts, and never changes.

use std::sync::atomic::{AtomicU64, Ordering};

/// How a consumer takes over idle entries and retries failed ones, chosen once at start from
/// what the backend has ([`crate::feed::backend::GroupBackend::claims_on_read`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ClaimPath {
    /// Redis 7 / Valkey: a periodic XAUTOCLAIM beat reclaims entries idle past
    /// `claim_idle_ms`; a failed entry stays pending until then.
    #[default]
    AutoClaim,
    /// Redis 8.8 / echomq: every read is `XREADGROUP … CLAIM claim_idle_ms`, which takes idle
    /// entries before new ones (no separate claim beat), and a failed entry is handed back
    /// with `XNACK … FAIL`, so it is redelivered at once.
    ReadClaim,
}

/// A consumer's counters at one moment. All but `pending` only grow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerMetrics {
    /// Entries handed out by reads (new, backlog and reclaimed), including ones never given
    /// to the handler (malformed, poison, deleted).
    pub delivered: u64,
    /// Entries XACK removed from the PEL (its reply, summed).
    pub acked: u64,
    /// Handler calls that returned an error or panicked: the entry stays pending.
    pub failed: u64,
    /// The part of `failed` that panicked.
    pub panicked: u64,
    /// Entries taken over by a claim: the beat's XAUTOCLAIM, or the claim phase of a CLAIM
    /// read.
    pub reclaimed: u64,
    /// Failed entries handed back with `XNACK … FAIL` (the [`ClaimPath::ReadClaim`] path).
    pub nacked: u64,
    /// Entries this consumer holds in its PEL, as of the last beat (and the stop).
    pub pending: u64,
    /// Entries copied to the dead-letter stream (poison or malformed), then acked.
    pub dead_lettered: u64,
    /// Poison entries acked without handling ([`super::PoisonPolicy::Drop`]).
    pub dropped: u64,
    /// Entries whose `id` field is missing or does not parse (also counted as dead-lettered).
    pub malformed: u64,
    /// Pending ids whose entries were deleted from the stream (acked or dropped by the claim).
    pub deleted: u64,
    /// Times the group was created again after it disappeared.
    pub groups_recreated: u64,
    /// Backend calls that failed (each followed by a back-off).
    pub errors: u64,
    /// Beats run.
    pub beats: u64,
    /// Which path reclaims and retries.
    pub claim_path: ClaimPath,
}

/// The live counters behind [`ConsumerMetrics`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub delivered: AtomicU64,
    pub acked: AtomicU64,
    pub failed: AtomicU64,
    pub panicked: AtomicU64,
    pub reclaimed: AtomicU64,
    pub nacked: AtomicU64,
    pub pending: AtomicU64,
    pub dead_lettered: AtomicU64,
    pub dropped: AtomicU64,
    pub malformed: AtomicU64,
    pub deleted: AtomicU64,
    pub groups_recreated: AtomicU64,
    pub errors: AtomicU64,
    pub beats: AtomicU64,
    pub claim_path: ClaimPath,
}

/// Adds `n` to a counter.
pub(crate) fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    /// Zeroed counters for a consumer on `claim_path`.
    pub fn on(claim_path: ClaimPath) -> Counters {
        Counters {
            claim_path,
            ..Counters::default()
        }
    }

    pub fn snapshot(&self) -> ConsumerMetrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ConsumerMetrics {
            delivered: get(&self.delivered),
            acked: get(&self.acked),
            failed: get(&self.failed),
            panicked: get(&self.panicked),
            reclaimed: get(&self.reclaimed),
            nacked: get(&self.nacked),
            pending: get(&self.pending),
            dead_lettered: get(&self.dead_lettered),
            dropped: get(&self.dropped),
            malformed: get(&self.malformed),
            deleted: get(&self.deleted),
            groups_recreated: get(&self.groups_recreated),
            errors: get(&self.errors),
            beats: get(&self.beats),
            claim_path: self.claim_path,
        }
    }
}
