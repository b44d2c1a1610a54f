//! The consumer-group commands the consumer runtime needs, as one [`GroupBackend`] trait beside
//! [`super::Backend`]: XGROUP CREATE ... MKSTREAM, XREADGROUP (own history after an id, or new
//! entries with `>` and BLOCK), XACK with many ids, XAUTOCLAIM, XPENDING, and XADD `*` for the
//! dead-letter stream.
//!
//! Implemented by the embedded engine (typed calls into the keyspace, no argument parsing on
//! the hot path; blocking through the engine's blocked-reader registry) and by any
//! Redis-compatible server (`echomq serve`, Redis, Valkey). A consumer works on
//! [`GroupBackend::dedicated`]: its own connection to a server, so its blocking read never holds
//! up the connection other callers share.
//!
//! Every read reports each entry's delivery count as the group's PEL holds it after the read:
//! 1 for a first delivery with `>`, one more for each history read or claim.
//!
//! Redis 8.8's way to retry ([`GroupBackend::claims_on_read`]): one `XREADGROUP … CLAIM
//! min-idle >` ([`ReadFrom::Claiming`]) takes idle pending entries (NACKed ones first, then the
//! oldest delivery) before new ones, and `XNACK … FAIL` ([`GroupBackend::nack_fail`]) hands a
//! failed entry back so the next CLAIM read takes it at once. Backends without them (Redis 7,
//! Valkey 8) keep XAUTOCLAIM.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use echomq_engine::{Clock, Parker, StreamId, Wake};

use crate::feed::error::FeedError;
use crate::feed::fields::Fields;

/// Where a group created by [`GroupBackend::create_group`] starts delivering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupStart {
    /// `0`: every entry in the stream, from its first.
    Beginning,
    /// `$`: only entries appended after the group exists (what `XGROUP CREATE ... $` does).
    #[default]
    End,
}

/// What an XREADGROUP reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    /// The consumer's own pending entries with ids after this one (`XREADGROUP ... <id>`;
    /// `0-0` reads the whole PEL).
    Pending(StreamId),
    /// Entries never delivered to the group (`>`).
    New,
    /// `XREADGROUP … CLAIM min_idle_ms … >` (Redis 8.4+, echomq): pending entries of any
    /// consumer idle at least `min_idle_ms` (NACKed ones first, whatever their idle time),
    /// then new entries, COUNT in all. Only on a backend whose
    /// [`GroupBackend::claims_on_read`] is true.
    Claiming {
        /// CLAIM's min-idle-time, at least 1.
        min_idle_ms: u64,
    },
}

/// An entry as a group read hands it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupEntry {
    /// The stream id.
    pub id: StreamId,
    /// Its fields; `None` when the entry was deleted from the stream while pending.
    pub fields: Option<Fields>,
    /// Times the group delivered it, this delivery included.
    pub delivery_count: u64,
    /// Taken from the PEL by a claim (XAUTOCLAIM, or the claim phase of a
    /// [`ReadFrom::Claiming`] read) rather than read as new or from the reader's own history.
    pub claimed: bool,
}

/// One XAUTOCLAIM call's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claimed {
    /// Where the next call should start; `0-0` when the scan reached the PEL's end.
    pub next: StreamId,
    /// The entries now held by the claiming consumer.
    pub entries: Vec<GroupEntry>,
    /// Pending ids whose entries no longer exist, which the server removed from the PEL.
    pub deleted: Vec<StreamId>,
}

/// Interrupts a blocking read: [`GroupBackend::read_group`] returns early (with nothing) once
/// [`Interrupt::raise`] is called. Backends that cannot interrupt a read in flight (a server
/// connection) return when the read's BLOCK time runs out.
#[derive(Debug, Default)]
pub struct Interrupt {
    raised: AtomicBool,
    parker: Arc<Parker>,
}

impl Interrupt {
    /// A fresh, lowered interrupt.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Raises it for good and wakes a read waiting on it.
    pub fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
        self.parker.wake();
    }

    /// Whether it was raised.
    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// The waker a blocked embedded read parks on.
    pub(crate) fn parker(&self) -> &Arc<Parker> {
        &self.parker
    }

    /// Sleeps for `duration` or until raised.
    pub fn sleep(&self, duration: Duration) {
        if !self.is_raised() {
            self.parker.park_timeout(duration);
        }
    }
}

/// How long a read may block, and what can cut it short.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    /// BLOCK milliseconds (by the backend's clock); at least 1.
    pub ms: u64,
    /// Cuts the wait short where the backend can.
    pub interrupt: &'a Interrupt,
}

/// The group commands the consumer runtime uses.
pub trait GroupBackend: Send + Sync {
    /// XGROUP CREATE `key` `group` (`0` or `$`) MKSTREAM. `Ok(false)` if the group exists.
    fn create_group(&self, key: &str, group: &str, start: GroupStart) -> Result<bool, FeedError>;

    /// XREADGROUP GROUP `group` `consumer` COUNT `count` `[BLOCK ms]` STREAMS `key` `from`. A read
    /// of new entries with `block` waits for entries up to its time; history reads never
    /// block. A missing key or group is [`FeedError::NoGroup`].
    fn read_group(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        from: ReadFrom,
        count: usize,
        block: Option<Block<'_>>,
    ) -> Result<Vec<GroupEntry>, FeedError>;

    /// XACK with every id at once; returns how many were pending.
    fn ack(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError>;

    /// XAUTOCLAIM `key` `group` `consumer` `min_idle_ms` `start` COUNT `count`.
    fn auto_claim(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        min_idle_ms: u64,
        start: StreamId,
        count: usize,
    ) -> Result<Claimed, FeedError>;

    /// Whether the server has XREADGROUP … CLAIM and XNACK (Redis 8.8, `echomq serve`, the
    /// embedded engine), so a consumer can read with [`ReadFrom::Claiming`] and hand failures
    /// back with [`GroupBackend::nack_fail`]. Asked on the node serving `key`; the default is
    /// no.
    fn claims_on_read(&self, key: &str) -> Result<bool, FeedError> {
        let _ = key;
        Ok(false)
    }

    /// `XNACK key group FAIL IDS n ids…`: hands `ids` back to the group unowned, their
    /// delivery counts kept, first in line for the next CLAIM read. Returns how many were
    /// pending. Only where [`GroupBackend::claims_on_read`] is true; the default refuses.
    fn nack_fail(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        let _ = (key, group, ids);
        Err(FeedError::Backend(
            "this backend has no XNACK (Redis 8.8 or echomq needed)".into(),
        ))
    }

    /// How many entries `consumer` holds (XPENDING's summary).
    fn pending_count(&self, key: &str, group: &str, consumer: &str) -> Result<u64, FeedError>;

    /// XADD `key` `*` with `fields` (`field, value, ...`); returns the id.
    fn add_auto(&self, key: &str, fields: &[&[u8]]) -> Result<StreamId, FeedError>;

    /// A handle on the same data for one consumer's own use (its own connection to a server).
    fn dedicated(&self) -> Result<Self, FeedError>
    where
        Self: Sized;

    /// The clock the backend judges idle times and BLOCK deadlines by (a server's wall clock
    /// for a remote server).
    fn clock(&self) -> Arc<dyn Clock>;
}

impl<B: GroupBackend> GroupBackend for Arc<B> {
    fn create_group(&self, key: &str, group: &str, start: GroupStart) -> Result<bool, FeedError> {
        (**self).create_group(key, group, start)
    }

    fn read_group(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        from: ReadFrom,
        count: usize,
        block: Option<Block<'_>>,
    ) -> Result<Vec<GroupEntry>, FeedError> {
        (**self).read_group(key, group, consumer, from, count, block)
    }

    fn ack(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        (**self).ack(key, group, ids)
    }

    fn auto_claim(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        min_idle_ms: u64,
        start: StreamId,
        count: usize,
    ) -> Result<Claimed, FeedError> {
        (**self).auto_claim(key, group, consumer, min_idle_ms, start, count)
    }

    fn claims_on_read(&self, key: &str) -> Result<bool, FeedError> {
        (**self).claims_on_read(key)
    }

    fn nack_fail(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        (**self).nack_fail(key, group, ids)
    }

    fn pending_count(&self, key: &str, group: &str, consumer: &str) -> Result<u64, FeedError> {
        (**self).pending_count(key, group, consumer)
    }

    fn add_auto(&self, key: &str, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        (**self).add_auto(key, fields)
    }

    /// A dedicated handle on the shared backend's data (a new connection for a server).
    fn dedicated(&self) -> Result<Arc<B>, FeedError> {
        Ok(Arc::new((**self).dedicated()?))
    }

    fn clock(&self) -> Arc<dyn Clock> {
        (**self).clock()
    }
}
