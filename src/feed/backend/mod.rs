//! Where the feed's streams live: one [`Backend`] trait over the stream commands the feed
//! needs, implemented by the embedded engine ([`Embedded`]), by any Redis-compatible server
//! ([`RedisBackend`]: `echomq serve`, Redis, Valkey) and by a Redis or Valkey Cluster
//! ([`ClusterBackend`]). The two server backends share every command (`server.rs`,
//! `redis_groups.rs`, over the `wire::Wire` trait); they differ only in how a command reaches
//! its node. [`Recording`] wraps a backend and logs
//! every call, to prove that bad input is refused before any call is made. [`groups`] holds the
//! consumer-group commands the consumer runtime needs ([`GroupBackend`]), implemented by the
//! same two backends in their own files.
//!
//! Idempotent appends: a backend whose [`Backend::records_appends`] is true stores each append
//! with an IDMP record of it ([`Backend::add_recorded`]: XADD and XIDMPRECORD in one atomic
//! step), which is what lets `Feed::append_retrying` retry an append whose reply was lost
//! without writing it twice. XIDMPRECORD, not `XADD … IDMP`, because Redis accepts IDMP only
//! with `*` ids and the feed's ids are minted (the branded id is the stream id).

mod cluster;
mod embedded;
mod embedded_groups;
mod fold_trim;
pub mod groups;
mod link;
mod recording;
mod redis;
mod redis_groups;
mod server;
pub(crate) mod wire;

use echomq_archive::Archive;
use echomq_engine::{StreamId, Trim};

pub use cluster::ClusterBackend;
pub use embedded::Embedded;
pub use groups::{Block, Claimed, GroupBackend, GroupEntry, GroupStart, Interrupt, ReadFrom};
pub use recording::Recording;
pub use redis::RedisBackend;

use super::error::FeedError;
use super::fields::Fields;

/// A stored entry: its id and its field/value pairs in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEntry {
    /// The stream id.
    pub id: StreamId,
    /// Field/value pairs.
    pub fields: Fields,
}

/// The bookkeeping numbers of a stream (XINFO STREAM), enough to tell whether a window's
/// entries can have changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamMeta {
    /// Live entries.
    pub length: u64,
    /// Last id ever added or set.
    pub last_id: StreamId,
    /// First live entry.
    pub first_id: StreamId,
    /// Largest id removed by XDEL.
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
}

/// What [`Backend::add_recorded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The entry was appended at this id and recorded under the producer.
    Added(StreamId),
    /// The XADD was refused (the id is not above the stream's top) and an entry exists at the
    /// id, now recorded under the producer's iid: this writer's earlier attempt, or another
    /// writer's entry at the same id (XIDMPRECORD records against any existing entry).
    Exists,
    /// The XADD was refused and no entry exists at the id: nothing of this append is stored.
    Absent,
}

/// The stream commands the feed uses.
pub trait Backend: Send + Sync {
    /// XADD with an explicit id; `fields` is `field, value, field, value, ...`. Returns the id.
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError>;
    /// Whether this backend records appends in the stream's IDMP map
    /// ([`Backend::add_recorded`]): the embedded engine, `echomq serve` and Redis 8.6.2 and
    /// later (XIDMPRECORD) do; older servers and Valkey do not. A server backend asks the
    /// server once (`COMMAND INFO xidmprecord`) and remembers the answer.
    fn records_appends(&self) -> Result<bool, FeedError> {
        Ok(false)
    }
    /// One atomic step (MULTI/EXEC on a server): `XADD key id fields...`, then
    /// `XIDMPRECORD key pid iid id`. Only for a backend whose
    /// [`Backend::records_appends`] is true; the default refuses.
    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        let _ = (key, id, fields, pid, iid);
        Err(FeedError::Backend(
            "this backend does not record appends (no XIDMPRECORD)".into(),
        ))
    }
    /// XRANGE (or XREVRANGE with `reverse`) over `[start, end]`, at most `count`.
    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError>;
    /// XINFO STREAM's numbers; `None` for a missing stream.
    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError>;
    /// XTRIM; returns the entries removed.
    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError>;
    /// Fold-before-trim: folds into `archive` the entries `trim` will remove, durably, then
    /// trims, never past the archive's watermark W. Returns the entries removed.
    ///
    /// The default works over any server: it folds what an exact trim would remove and trims
    /// by `MINID` at or below W (see `fold_trim`). The embedded engine overrides it with the
    /// engine's exact preview, so `~` folds only the whole nodes it drops.
    fn fold_then_trim(&self, key: &str, trim: &Trim, archive: &Archive) -> Result<u64, FeedError> {
        fold_trim::fold_superset_then_trim(self, key, trim, archive)
    }
}

impl<B: Backend + ?Sized> Backend for std::sync::Arc<B> {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        (**self).add(key, id, fields)
    }

    fn records_appends(&self) -> Result<bool, FeedError> {
        (**self).records_appends()
    }

    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        (**self).add_recorded(key, id, fields, pid, iid)
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        (**self).range(key, start, end, count, reverse)
    }

    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        (**self).meta(key)
    }

    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        (**self).trim(key, trim)
    }

    fn fold_then_trim(&self, key: &str, trim: &Trim, archive: &Archive) -> Result<u64, FeedError> {
        (**self).fold_then_trim(key, trim, archive)
    }
}

/// The XTRIM arguments for a trim, as text.
pub(crate) fn trim_args(trim: &Trim) -> Vec<String> {
    let mut args = Vec::new();
    match trim.strategy {
        echomq_engine::TrimStrategy::MaxLen(n) => {
            args.push("MAXLEN".to_string());
            args.push(if trim.approx { "~" } else { "=" }.to_string());
            args.push(n.to_string());
        }
        echomq_engine::TrimStrategy::MinId(id) => {
            args.push("MINID".to_string());
            args.push(if trim.approx { "~" } else { "=" }.to_string());
            args.push(id.to_string());
        }
    }
    if trim.approx
        && let Some(limit) = trim.limit
    {
        args.push("LIMIT".to_string());
        args.push(limit.to_string());
    }
    args
}

#[cfg(test)]
mod error_tests;
