//! The feed layer's errors.

use echomq_engine::StreamId;
use thiserror::Error;

use super::brand::BrandedError;

/// An error from the feed layer. Nothing was written when a call returns one, except
/// [`FeedError::Backend`], where the backend says what happened,
/// [`FeedError::ReplyTimeout`] and [`FeedError::ConnectionLost`], where the command may or may
/// not have run, and [`FeedError::NotReplicated`], where the master holds an entry it did not
/// acknowledge.
///
/// Two predicates say what to do: [`FeedError::is_retryable`] names the failures worth a retry
/// after a backoff (transport failures, a cluster failing over or resharding, an append not yet
/// replicated), and [`FeedError::is_unsent`] the ones that happened before anything was sent
/// ([`FeedError::ConnectTimeout`], [`FeedError::ConnectFailed`]), so the command did not run.
/// `Feed::append_retrying` retries an append through the first kind without writing it twice
/// where the backend records appends, and through the second kind only where it does not.
///
/// The refusals callers act on have their own variants ([`FeedError::NoGroup`],
/// [`FeedError::BusyGroup`], [`FeedError::WrongType`], [`FeedError::NoSuchKey`],
/// [`FeedError::IdNotAboveTop`]), each carrying the engine's or the server's error text. Each
/// backend maps its errors to them in one function (the embedded backend from the engine's
/// typed errors, the server backend from the reply's error code), so callers match variants,
/// never text.
#[derive(Debug, Error)]
pub enum FeedError {
    /// A branded id argument is malformed or of the wrong brand.
    #[error(transparent)]
    Branded(#[from] BrandedError),
    /// `t1` is before `t0`.
    #[error("inverted window: {t1} is before {t0}")]
    InvertedWindow {
        /// The window start.
        t0: time::OffsetDateTime,
        /// The window end.
        t1: time::OffsetDateTime,
    },
    /// An instant before the Unix epoch, or past what a branded id can carry.
    #[error("instant {0} is outside what a branded id can carry")]
    InstantOutOfRange(time::OffsetDateTime),
    /// `append` was given the reserved field name `id`.
    #[error("the field name 'id' is reserved for the branded id")]
    ReservedField,
    /// `append` was given no fields.
    #[error("an entry needs at least one field")]
    NoFields,
    /// A stored entry has no `id` field first.
    #[error("entry {0} has no 'id' field first")]
    MissingIdField(StreamId),
    /// A stored entry's `id` field is not UTF-8 or not a branded id.
    #[error("entry {entry}: the 'id' field does not parse: {reason}")]
    BadIdField {
        /// The entry.
        entry: StreamId,
        /// Why.
        reason: String,
    },
    /// A stored entry's `id` field names another id than the entry's own.
    #[error("entry {entry}: the 'id' field says {field}, which is stored under {expected}")]
    IdMismatch {
        /// The entry id.
        entry: StreamId,
        /// What the field says.
        field: String,
        /// The stream id that field corresponds to.
        expected: StreamId,
    },
    /// The stream holds ids outside the branded space (written by something else).
    #[error("stream id {0} does not fit a branded id")]
    ForeignId(StreamId),
    /// The archive failed (a fold, a merge-read); its message says what to do.
    #[error(transparent)]
    Archive(#[from] echomq_archive::ArchiveError),
    /// The key or the consumer group does not exist (`NOGROUP`): the group was destroyed or
    /// the stream deleted.
    #[error("backend: {0}")]
    NoGroup(String),
    /// XGROUP CREATE of a group that exists (`BUSYGROUP`).
    #[error("backend: {0}")]
    BusyGroup(String),
    /// The key holds another type than a stream (`WRONGTYPE`).
    #[error("backend: {0}")]
    WrongType(String),
    /// The command needs the key to exist and it does not (`ERR no such key`).
    #[error("backend: {0}")]
    NoSuchKey(String),
    /// An XADD id is not above the stream's top (another writer appended first).
    #[error("backend: {0}")]
    IdNotAboveTop(String),
    /// The backend failed otherwise (the engine's or the server's error text).
    #[error("backend: {0}")]
    Backend(String),
    /// A cluster backend was given a key without a `{hash tag}`: the cluster could spread one
    /// queue's keys over many slots. Nothing was sent.
    #[error(
        "key {key:?} has no hash tag: on a cluster every key of a queue must carry the queue in \
         braces (emq:{{queue}}:...) so its streams share one slot; use the feed's key helpers \
         or add the tag"
    )]
    NoHashTag {
        /// The refused key.
        key: String,
    },
    /// The cluster is down (`CLUSTERDOWN`): a slot has no reachable master, as while a
    /// failover elects a replica. The command was not applied; retry with backoff, the cluster
    /// serves again once the failover completes.
    #[error(
        "cluster down, the command was not applied; retry with backoff until a failover \
         completes: {0}"
    )]
    ClusterDown(String),
    /// The key's slot moved while the call ran (`MOVED`, `ASK` or `TRYAGAIN` after the client
    /// library's redirects and retries ran out, as during a resharding). The command was not
    /// applied; retry, the next call follows the refreshed slot map.
    #[error(
        "the key's slot moved while the call ran and the redirects ran out; the command was not \
         applied; retry: {0}"
    )]
    SlotMoved(String),
    /// A multi-key command named keys in different slots (`CROSSSLOT`); put them under one hash
    /// tag.
    #[error("keys in different cluster slots; put them under one hash tag: {0}")]
    CrossSlot(String),
    /// A replicated append ([`crate::feed::RedisBackend::with_replicated_append`]) reached fewer
    /// replicas than asked within its timeout. The entry is on the master and may reach the
    /// replicas later, or be lost if the master fails first: it is not acknowledged. Retry (a
    /// retry appends it again under a new id) or treat it as not written.
    #[error(
        "append {id} reached {acked} of {wanted} replicas within {timeout_ms} ms: not \
         acknowledged; retry or treat it as not written"
    )]
    NotReplicated {
        /// The id the master stored it under.
        id: StreamId,
        /// Replicas that acknowledged it.
        acked: u64,
        /// Replicas asked for.
        wanted: u32,
        /// WAIT's timeout.
        timeout_ms: u64,
    },
    /// Connecting to a server (TCP connect and handshake) took longer than the connect
    /// timeout. Nothing was sent.
    #[error(
        "{server} did not accept a connection and answer the handshake within {after_ms} ms: \
         check the address and that a Redis-protocol server runs there, then retry"
    )]
    ConnectTimeout {
        /// The server's address.
        server: String,
        /// The timeout that ran out.
        after_ms: u64,
    },
    /// A server did not answer a command within the reply timeout (plus the command's BLOCK
    /// time). The command may or may not have run; the connection was dropped and the next call
    /// reconnects.
    #[error(
        "{server} did not answer within {after_ms} ms (hung, overloaded or unreachable): the \
         command may or may not have run; retry, the next call reconnects"
    )]
    ReplyTimeout {
        /// The server's address.
        server: String,
        /// The timeout that ran out.
        after_ms: u64,
    },
    /// Connecting to a server or cluster node failed (refused, reset, unreachable) before
    /// anything was sent: the command did not run.
    #[error("could not connect to {server}: {reason}; retry once the server is back")]
    ConnectFailed {
        /// The server's address, or the cluster's seed nodes.
        server: String,
        /// What the socket layer said.
        reason: String,
    },
    /// The connection to a server or cluster node broke while a command was sent or its reply
    /// read (closed, reset; a node killed or restarting, a failover under way). The command may
    /// or may not have run; the connection was dropped and the next call reconnects (on a
    /// cluster, from the seed nodes, reading the slot map afresh).
    #[error(
        "the connection to {server} broke before the reply ({reason}): the command may or may \
         not have run; retry, the next call reconnects"
    )]
    ConnectionLost {
        /// The server's address, or the cluster's seed nodes.
        server: String,
        /// What the socket layer said.
        reason: String,
    },
}

impl FeedError {
    /// Whether the call may succeed if retried after a backoff: a timeout, a refused or broken
    /// connection, a cluster that is down or failing over, a slot that moved, an append not
    /// yet replicated. Of these, only the [`FeedError::is_unsent`] ones say the command did
    /// not run; a plain retry of the others may run it twice.
    pub fn is_retryable(&self) -> bool {
        self.is_timeout()
            || matches!(
                self,
                FeedError::ConnectFailed { .. }
                    | FeedError::ConnectionLost { .. }
                    | FeedError::ClusterDown(_)
                    | FeedError::SlotMoved(_)
                    | FeedError::NotReplicated { .. }
            )
    }

    /// Whether the failure happened before the command was sent (so it did not run).
    pub fn is_unsent(&self) -> bool {
        matches!(
            self,
            FeedError::ConnectTimeout { .. } | FeedError::ConnectFailed { .. }
        )
    }

    /// Whether a server did not answer in time (connecting or replying).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            FeedError::ConnectTimeout { .. } | FeedError::ReplyTimeout { .. }
        )
    }
}
