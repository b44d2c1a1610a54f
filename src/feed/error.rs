//! The feed layer's errors.

use echomq_engine::StreamId;
use thiserror::Error;

use super::brand::Brand;

/// A branded id that does not parse or is not the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BrandedError {
    /// No `_` between brand and digits.
    #[error("a branded id is <BRAND>_<13 base32 digits>")]
    Malformed,
    /// An unknown brand prefix.
    #[error("unknown brand '{0}'")]
    UnknownBrand(String),
    /// Not 13 digits.
    #[error("a branded id has 13 digits, not {0}")]
    Length(usize),
    /// A character outside Crockford's upper-case alphabet.
    #[error("'{0}' is not a Crockford base32 digit")]
    InvalidChar(char),
    /// A value past the 42 + 22-bit space.
    #[error("the value does not fit 42 bits of milliseconds and 22 of sequence")]
    OutOfRange,
    /// Another brand than the one required.
    #[error("expected a {expected} id, got a {found} id")]
    WrongBrand {
        /// The brand required.
        expected: Brand,
        /// The brand given.
        found: Brand,
    },
}

/// An error from the feed layer. Nothing was written when a call returns one, except
/// [`FeedError::Backend`], where the backend says what happened.
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
    /// The backend failed (the engine's or the server's error text).
    #[error("backend: {0}")]
    Backend(String),
}
