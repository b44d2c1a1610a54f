//! The protocol crate's errors: malformed requests ([`ProtocolError`]), the server commands'
//! error replies ([`CommandError`]) and CONFIG SET's refusals ([`ConfigRefusal`]), and
//! persistence that cannot be loaded or written ([`PersistError`], [`ManifestError`]).

mod command;
mod config;

use thiserror::Error;

pub use command::CommandError;
pub use config::{ConfigRefusal, ConfigWhy};

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

/// Persistence that cannot be written or loaded: the AOF (its manifest, files, rewrites) or
/// `dump.rdb`. The texts are Redis's log lines.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PersistError {
    /// The manifest is malformed.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// A file or directory cannot be created, read, written, synced or renamed: what was
    /// done, to which path, and the system's reason. Retrying may succeed once the disk or
    /// the permissions are fixed.
    #[error("{what} {path}: {reason}")]
    Io {
        /// What was being done (`cannot create`, `cannot fsync`, ...).
        what: &'static str,
        /// The file or directory.
        path: String,
        /// The system's error.
        reason: String,
    },
    /// The manifest exists but cannot be read.
    #[error("cannot read {path}: {reason}")]
    ManifestUnreadable {
        /// The manifest.
        path: String,
        /// The system's error.
        reason: String,
    },
    /// The manifest is malformed: which manifest, at which line, and Redis's reason.
    #[error("Bad AOF manifest {path} at line {line}: '{text}': {error}")]
    ManifestInvalid {
        /// The manifest.
        path: String,
        /// The line (from 1; 0 when the whole file is at fault).
        line: usize,
        /// The line's text.
        text: String,
        /// What is wrong.
        error: ManifestError,
    },
    /// A file the manifest lists is not there (Redis's line, on which it refuses to start:
    /// loading the others would serve part of the data as if it were all).
    #[error("Unable to obtain the AOF file {file} length. stat: {reason}")]
    FileMissing {
        /// The file.
        file: String,
        /// The system's error.
        reason: String,
    },
    /// A file the manifest lists is there but cannot be read.
    #[error("Fatal error: can't open the append log file {file} for reading: {reason}")]
    FileUnreadable {
        /// The file.
        file: String,
        /// The system's error.
        reason: String,
    },
    /// The cut of a truncated last file failed.
    #[error("Error truncating the AOF file {file}: {reason}")]
    TruncateFailed {
        /// The file.
        file: String,
        /// The system's error.
        reason: String,
    },
    /// The commands pending before a rewrite could not be written.
    #[error(transparent)]
    WriteFailed(#[from] AofWriteError),
    /// A rewrite was asked for while one runs.
    #[error("Background append only file rewriting already in progress")]
    RewriteInProgress,
    /// The rewrite's thread did not start.
    #[error("cannot start the rewrite thread: {0}")]
    RewriteNotStarted(String),
    /// An AOF base in RDB form (`.base.rdb`, or an old AOF's preamble) that does not decode:
    /// the data is corrupt.
    #[error("Bad file format reading the append only file {file}: the RDB preamble: {error}")]
    PreambleCorrupt {
        /// The file.
        file: String,
        /// What is wrong with it.
        error: echomq_engine::error::RdbError,
    },
    /// `dump.rdb` exists but cannot be read.
    #[error("Fatal error loading the DB, check server logs. Exiting. ({path}: {reason})")]
    RdbUnreadable {
        /// The file.
        path: String,
        /// The system's error.
        reason: String,
    },
    /// `dump.rdb` does not decode: the data is corrupt; the server does not start on it.
    #[error("{error}. Fatal error loading the DB {path}. Exiting.")]
    RdbCorrupt {
        /// The file.
        path: String,
        /// What is wrong with it.
        error: echomq_engine::error::RdbError,
    },
    /// A file holds something that is not a command.
    #[error(
        "Bad file format reading the append only file {file} at offset {offset}. make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>."
    )]
    BadFormat {
        /// The file.
        file: String,
        /// Where its last valid command ends.
        offset: u64,
    },
    /// A file ends inside a command and the cut may not be made.
    #[error(
        "Unexpected end of file reading the append only file {file} at offset {offset}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
    )]
    Truncated {
        /// The file.
        file: String,
        /// Where its last valid command ends.
        offset: u64,
    },
    /// A command the server does not know.
    #[error("Unknown command '{command}' reading the append only file {file}")]
    UnknownCommand {
        /// The command's name.
        command: String,
        /// The file.
        file: String,
    },
}

/// An AOF manifest that does not parse: Redis's wording for each check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ManifestError {
    /// A line that is not `key value` pairs naming a file, its sequence and its type.
    #[error("Invalid AOF manifest file format")]
    InvalidFormat,
    /// Two base files.
    #[error("Found duplicate base file information")]
    DuplicateBase,
    /// An incremental file whose sequence number is not above the one before.
    #[error("Found a non-monotonic sequence number")]
    NonMonotonicSeq,
    /// No base and no incremental file.
    #[error("Found an empty AOF manifest")]
    Empty,
    /// A file name with a path separator (`../x`, `/etc/x`): the AOF's files are only ever
    /// inside its directory, so loading, or deleting after a rewrite, reaches nothing else.
    #[error("File can't be a path, just a filename")]
    FileIsPath,
}

/// Why the AOF did not make a commit durable. The replies that waited on it are not sent (the
/// connection closes); the bytes stay pending for the next write, and write commands get
/// `-MISCONF` until one succeeds.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AofWriteError {
    /// The write failed: the system's error.
    #[error("{0}")]
    Write(String),
    /// The group syncer's round that covered these bytes failed to write or fsync them.
    #[error("the AOF write or fsync failed")]
    RoundFailed,
    /// The fsync that covered these bytes failed.
    #[error("the AOF fsync failed")]
    FsyncFailed,
    /// The AOF was turned off, or the server stopped, while the commit waited.
    #[error("the AOF is gone")]
    Gone,
}
