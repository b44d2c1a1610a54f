//! The feed layer's errors.

use echomq_engine::StreamId;
use thiserror::Error;

use super::brand::BrandedError;

/// An error from the feed layer. Nothing was written when a call returns one, except
/// [`FeedError::Backend`], where the backend says what happened, and
/// [`FeedError::ReplyTimeout`] and [`FeedError::ConnectionLost`], where the command may or may
/// not have run ([`FeedError::is_transient`] names the failures worth a retry;
/// `Feed::append_retrying` retries an append through them without writing it twice).
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
    /// Connecting to a server failed (refused, reset, unreachable) before anything was sent.
    #[error("could not connect to {server}: {reason}; retry once the server is back")]
    ConnectFailed {
        /// The server's address.
        server: String,
        /// What the socket layer said.
        reason: String,
    },
    /// The connection broke while a command was sent or its reply read (closed, reset). The
    /// command may or may not have run; the next call reconnects.
    #[error(
        "the connection to {server} broke before the reply ({reason}): the command may or may \
         not have run; retry, the next call reconnects"
    )]
    ConnectionLost {
        /// The server's address.
        server: String,
        /// What the socket layer said.
        reason: String,
    },
}

impl FeedError {
    /// Whether the failure is the transport's, not the command's (a timeout, a refused or
    /// broken connection): worth a retry once the server is back. Of these, only
    /// [`FeedError::ConnectTimeout`] and [`FeedError::ConnectFailed`] say nothing was sent.
    pub fn is_transient(&self) -> bool {
        self.is_timeout()
            || matches!(
                self,
                FeedError::ConnectFailed { .. } | FeedError::ConnectionLost { .. }
            )
    }

    /// Whether the failure happened before the command was sent (so it did not run).
    pub fn is_unsent(&self) -> bool {
        matches!(
            self,
            FeedError::ConnectTimeout { .. } | FeedError::ConnectFailed { .. }
        )
    }

    /// Whether a server did not answer in time (connecting or replying): worth a retry once
    /// the server is back.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            FeedError::ConnectTimeout { .. } | FeedError::ReplyTimeout { .. }
        )
    }
}
