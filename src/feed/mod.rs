//! The feed layer: the API the application writes and reads its event feed through.
//!
//! - [`brand`]: branded record ids (`EVT_...`), their text form and XADD-id correspondence,
//!   and [`BrandedError`]; [`minter`]: the writer's monotone mint.
//! - [`backend`]: the [`Backend`] trait over the stream commands the feed needs, for the
//!   embedded engine, any Redis-compatible server, a Redis or Valkey Cluster
//!   ([`ClusterBackend`]), and a call-recording wrapper. Each backend
//!   maps its errors once to [`FeedError`]'s typed variants ([`FeedError::NoGroup`], ...).
//! - [`Feed`] (this file): read, time windows ([`minid_floor`], [`maxid_ceil`]) and trim, over
//!   streams named `emq:{<queue>}:stream:<name>`; `append.rs`: appends, recorded in the
//!   stream's IDMP map where the backend can, and [`Feed::append_retrying`], which retries an
//!   append through transport failures without writing it twice.
//! - With [`Feed::with_archive`], trims fold first and reads merge archive and live stream
//!   (the `echomq-archive` crate).
//! - [`projection`]: folds over a window and a cached projection that is reused while the
//!   window's inputs are unchanged and extended when entries are only appended.
//! - [`consumer`]: [`StreamConsumer`], a named consumer in a group: backlog first, then new
//!   entries, acks on success, an XAUTOCLAIM beat; [`dedup`]: once-per-branded-id handlers.
//! - [`retention`]: [`StreamRetention`], declared trim policies applied on a beat through
//!   [`Feed::trim`].
//!
//! Rules: every branded id argument is checked for its brand, and every window for its order,
//! before any backend call; an entry's `id` field must agree with its stream id when read back.

mod append;
pub mod backend;
pub mod brand;
pub mod consumer;
pub mod dedup;
pub mod error;
pub mod fields;
pub mod minter;
pub mod projection;
pub mod retention;

use std::collections::HashMap;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use echomq_archive::{Archive, RangeQuery};
use echomq_engine::{Clock, StreamId, SystemClock, Trim};
use parking_lot::Mutex;
use time::OffsetDateTime;

pub use append::RetryPolicy;
pub use backend::{
    Backend, ClusterBackend, Embedded, RawEntry, Recorded, Recording, RedisBackend, StreamMeta,
};
pub use brand::{Brand, Branded, BrandedError, SEQ_MAX};
pub use consumer::{ConsumerSettings, Delivery, StreamConsumer, Subscription};
pub use error::FeedError;
pub use fields::Fields;
pub use minter::Minter;
pub use projection::{CachedProjection, Refresh, Window};
pub use retention::{RetentionPolicy, StreamRetention};

/// The field every feed entry stores its branded id under, first.
pub const ID_FIELD: &str = "id";

/// The key of stream `name` in `queue`: `emq:{<queue>}:stream:<name>`. The braces are a Redis
/// Cluster hash tag, so all streams of one queue live in one slot.
pub fn stream_key(queue: &str, name: &str) -> String {
    let mut key = String::with_capacity(queue.len() + name.len() + 13);
    key.push_str("emq:{");
    key.push_str(queue);
    key.push_str("}:stream:");
    key.push_str(name);
    key
}

/// Unix milliseconds of an instant, if a branded id can carry it.
pub fn instant_ms(t: OffsetDateTime) -> Result<u64, FeedError> {
    let ms = t.unix_timestamp_nanos().div_euclid(1_000_000);
    u64::try_from(ms)
        .ok()
        .filter(|&ms| ms <= brand::MS_MAX)
        .ok_or(FeedError::InstantOutOfRange(t))
}

/// The smallest stream id at `t`'s millisecond: `<ms>-0`.
pub fn minid_floor(t: OffsetDateTime) -> Result<StreamId, FeedError> {
    Ok(StreamId::new(instant_ms(t)?, 0))
}

/// The largest branded stream id at `t`'s millisecond: `<ms>-4194303`.
pub fn maxid_ceil(t: OffsetDateTime) -> Result<StreamId, FeedError> {
    Ok(StreamId::new(instant_ms(t)?, SEQ_MAX))
}

/// A feed entry read back: its branded id and its payload (the fields after `id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The receipt the writer got.
    pub id: Branded,
    /// Field/value pairs, in the order written.
    pub fields: Fields,
}

impl Record {
    /// The first value of `field`, as text if it is UTF-8.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field)
    }

    /// Parses a stored entry, checking that its `id` field agrees with its stream id.
    pub fn from_raw(entry: RawEntry, brand: Brand) -> Result<Record, FeedError> {
        let RawEntry {
            id: entry_id,
            mut fields,
        } = entry;
        let Some((name, value)) = fields.pair(0) else {
            return Err(FeedError::MissingIdField(entry_id));
        };
        if name != ID_FIELD.as_bytes() {
            return Err(FeedError::MissingIdField(entry_id));
        }
        let text = std::str::from_utf8(value).map_err(|_| FeedError::BadIdField {
            entry: entry_id,
            reason: "not UTF-8".into(),
        })?;
        let id = Branded::parse_as(text, brand).map_err(|e| FeedError::BadIdField {
            entry: entry_id,
            reason: e.to_string(),
        })?;
        if id.stream_id() != entry_id {
            return Err(FeedError::IdMismatch {
                entry: entry_id,
                field: text.to_string(),
                expected: id.stream_id(),
            });
        }
        fields.drop_first();
        Ok(Record { id, fields })
    }
}

/// Retention for [`Feed::trim`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimPolicy {
    /// Keep the newest `n` entries; `approx` trims whole nodes only (`MAXLEN ~`).
    MaxLen {
        /// Entries to keep.
        n: u64,
        /// `~`.
        approx: bool,
    },
    /// Remove entries minted before `before`; `approx` trims whole nodes only (`MINID ~`).
    MinId {
        /// The cut-off instant.
        before: OffsetDateTime,
        /// `~`.
        approx: bool,
    },
}

impl TrimPolicy {
    /// The engine's trim request for this policy.
    pub fn to_trim(self) -> Result<Trim, FeedError> {
        Ok(match self {
            TrimPolicy::MaxLen { n, approx: true } => Trim::maxlen_approx(n),
            TrimPolicy::MaxLen { n, approx: false } => Trim::maxlen(n),
            TrimPolicy::MinId {
                before,
                approx: true,
            } => Trim::minid_approx(minid_floor(before)?),
            TrimPolicy::MinId {
                before,
                approx: false,
            } => Trim::minid(minid_floor(before)?),
        })
    }
}

/// This feed's writer for one stream: its minter, and the lock that makes mint-then-XADD one
/// step, so threads sharing a feed append in mint order and the single-writer rule (an XADD is
/// never rejected) holds for them too. Other writers are still caught up with by re-seeding.
#[derive(Debug)]
struct StreamWriter {
    minter: Minter,
    append: Mutex<()>,
}

/// The feed API over a backend.
pub struct Feed<B> {
    backend: B,
    clock: Arc<dyn Clock>,
    /// One writer per stream key, its minter seeded from the stream top on first use.
    writers: Mutex<HashMap<String, Arc<StreamWriter>>>,
    /// The brand of entries this feed writes.
    brand: Brand,
    /// Where trimmed entries are folded, and merge-reads take ids `<= W` from.
    archive: Option<Arc<Archive>>,
    /// The IDMP producer id appends are recorded under (see [`append`]).
    producer: String,
}

impl<B: std::fmt::Debug> std::fmt::Debug for Feed<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed")
            .field("backend", &self.backend)
            .field("brand", &self.brand)
            .finish()
    }
}

impl<B: Backend> Feed<B> {
    /// A feed writing `EVT` entries, minting with the wall clock.
    pub fn new(backend: B) -> Feed<B> {
        Feed::with_clock(backend, Arc::new(SystemClock))
    }

    /// A feed minting with `clock`.
    pub fn with_clock(backend: B, clock: Arc<dyn Clock>) -> Feed<B> {
        Feed {
            backend,
            clock,
            writers: Mutex::new(HashMap::new()),
            brand: Brand::Evt,
            archive: None,
            producer: append::default_producer(),
        }
    }

    /// This feed with an archive: [`Feed::trim`] folds what it removes first (and never trims
    /// past the durable watermark W), and `read`, `read_window` and `read_since` merge the
    /// archive (ids `<= W`) with the live stream (ids `> W`), so they return what a log that
    /// was never trimmed would.
    pub fn with_archive(mut self, archive: Arc<Archive>) -> Feed<B> {
        self.archive = Some(archive);
        self
    }

    /// The archive, if one is configured.
    pub fn archive(&self) -> Option<&Arc<Archive>> {
        self.archive.as_ref()
    }

    /// A forward range read: merged with the archive when one is configured.
    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
    ) -> Result<Vec<RawEntry>, FeedError> {
        let Some(archive) = &self.archive else {
            return self.backend.range(key, start, end, count, false);
        };
        archive.read_merged(
            key.as_bytes(),
            RangeQuery::forward(start, end, count),
            |a: StreamId, b: StreamId, count: Option<usize>, reverse: bool| {
                self.backend.range(key, a, b, count, reverse)
            },
            |entry| RawEntry {
                id: entry.id,
                fields: Fields::from_pairs(
                    entry.fields.iter().map(|(f, v)| (f.as_ref(), v.as_ref())),
                ),
            },
        )
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The writer of `key`, its minter seeded from the stream's last id the first time.
    fn writer(&self, key: &str) -> Result<Arc<StreamWriter>, FeedError> {
        if let Some(writer) = self.writers.lock().get(key) {
            return Ok(Arc::clone(writer));
        }
        let writer = Arc::new(StreamWriter {
            minter: Minter::new(),
            append: Mutex::new(()),
        });
        if let Some(meta) = self.backend.meta(key)? {
            writer.minter.seed(meta.last_id);
        }
        Ok(Arc::clone(
            self.writers.lock().entry(key.to_string()).or_insert(writer),
        ))
    }

    fn records(&self, entries: Vec<RawEntry>) -> Result<Vec<Record>, FeedError> {
        entries
            .into_iter()
            .map(|e| Record::from_raw(e, self.brand))
            .collect()
    }

    /// Entries with branded ids in `range` (`..` for all), in mint order.
    pub fn read(
        &self,
        queue: &str,
        name: &str,
        range: impl RangeBounds<Branded>,
    ) -> Result<Vec<Record>, FeedError> {
        let start = match range.start_bound() {
            Bound::Unbounded => Some(StreamId::MIN),
            Bound::Included(b) => Some(b.expect_brand(self.brand)?.stream_id()),
            Bound::Excluded(b) => b.expect_brand(self.brand)?.stream_id().next(),
        };
        let end = match range.end_bound() {
            Bound::Unbounded => Some(StreamId::MAX),
            Bound::Included(b) => Some(b.expect_brand(self.brand)?.stream_id()),
            Bound::Excluded(b) => b.expect_brand(self.brand)?.stream_id().prev(),
        };
        let (Some(start), Some(end)) = (start, end) else {
            return Ok(Vec::new());
        };
        if start > end {
            return Ok(Vec::new());
        }
        self.records(self.range(&stream_key(queue, name), start, end, None)?)
    }

    /// Entries minted in `[t0, t1]` (both edges included), at most `count`, in mint order.
    pub fn read_window(
        &self,
        queue: &str,
        name: &str,
        t0: OffsetDateTime,
        t1: OffsetDateTime,
        count: Option<usize>,
    ) -> Result<Vec<Record>, FeedError> {
        if t1 < t0 {
            return Err(FeedError::InvertedWindow { t0, t1 });
        }
        let (start, end) = (minid_floor(t0)?, maxid_ceil(t1)?);
        self.records(self.range(&stream_key(queue, name), start, end, count)?)
    }

    /// Entries minted at or after `t0`, at most `count`, in mint order.
    pub fn read_since(
        &self,
        queue: &str,
        name: &str,
        t0: OffsetDateTime,
        count: Option<usize>,
    ) -> Result<Vec<Record>, FeedError> {
        let start = minid_floor(t0)?;
        self.records(self.range(&stream_key(queue, name), start, StreamId::MAX, count)?)
    }

    /// Trims the stream by `policy`; returns the entries removed. With an archive, the
    /// entries the trim removes are folded durably first, and nothing above the archive's
    /// watermark is ever removed ([`Backend::fold_then_trim`]).
    pub fn trim(&self, queue: &str, name: &str, policy: TrimPolicy) -> Result<u64, FeedError> {
        let trim = policy.to_trim()?;
        let key = stream_key(queue, name);
        match &self.archive {
            Some(archive) => self.backend.fold_then_trim(&key, &trim, archive),
            None => self.backend.trim(&key, &trim),
        }
    }

    /// The stream's bookkeeping numbers, `None` if it does not exist.
    pub fn meta(&self, queue: &str, name: &str) -> Result<Option<StreamMeta>, FeedError> {
        self.backend.meta(&stream_key(queue, name))
    }
}

#[cfg(test)]
mod append_tests;
#[cfg(test)]
mod archive_tests;
#[cfg(test)]
mod tests;
