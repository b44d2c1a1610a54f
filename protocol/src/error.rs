//! The protocol crate's errors.

use thiserror::Error;

/// A malformed request: Redis replies this text (prefixed `-ERR `) and closes the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// `*<n>` that is not a number or is above `INT_MAX`.
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    /// `$<n>` that is not a number, negative, or above `proto-max-bulk-len`.
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLength,
    /// Something other than `$` where a bulk header belongs.
    #[error("Protocol error: expected '$', got '{}'", char::from(*.0))]
    ExpectedDollar(u8),
    /// A `*` header line longer than the inline limit.
    #[error("Protocol error: too big mbulk count string")]
    TooBigMultibulkCount,
    /// A `$` header line longer than the inline limit.
    #[error("Protocol error: too big bulk count string")]
    TooBigBulkCount,
    /// An inline command longer than the inline limit.
    #[error("Protocol error: too big inline request")]
    TooBigInline,
    /// An inline command with an open quote.
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    /// More than 10 arguments before AUTH.
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulkLength,
    /// A bulk over 16 KiB before AUTH.
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulkLength,
}
