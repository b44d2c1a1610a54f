//! The archive's one error enum. Every message says what the caller can do.

use echomq_engine::StreamId;
use thiserror::Error;

use crate::format::PageNo;
use crate::format::record::RecordFault;

/// An archive error. When a call returns one, nothing it would have written was committed.
#[derive(Debug, Error)]
pub enum ArchiveError {
    /// A business call named a page at or above the archive line.
    #[error(
        "page {0} is in the archive's reserved range (>= 1 << 63); business pages must be below it"
    )]
    ReservedPage(PageNo),
    /// `fold` was given entries not in strictly increasing id order.
    #[error(
        "fold input out of order: {next} after {prev}; pass a mint-ordered slice (nothing was folded)"
    )]
    OutOfOrder {
        /// The previous id in the input.
        prev: StreamId,
        /// The id that does not follow it.
        next: StreamId,
    },
    /// A trim would remove entries the archive does not hold yet.
    #[error(
        "a trim up to {requested} would pass the durable watermark {watermark:?}; fold first (nothing was trimmed)"
    )]
    TrimPastWatermark {
        /// The last id the trim would remove.
        requested: StreamId,
        /// The stream's durable watermark.
        watermark: Option<StreamId>,
    },
    /// A merge-read kept racing folds that moved W; the read returned nothing.
    #[error("the watermark kept moving during a merge-read; retry the read")]
    WatermarkMoving,
    /// A live entry at or below W is not in the archive: the live stream was recreated (or
    /// written with explicit ids) below W after the archive was folded into.
    #[error(
        "live entry {id} is at or below the watermark {watermark} but not in the archive (the stream was recreated below W); nothing was trimmed: add entries above W, or fold them under another stream key"
    )]
    NotArchived {
        /// The live entry.
        id: StreamId,
        /// The stream's W.
        watermark: StreamId,
    },
    /// The archive page space is used up.
    #[error("the archive page space is exhausted; start a new archive file")]
    PagesExhausted,
    /// A record failed to decode or its checksum.
    #[error(
        "archive record at page {page} is corrupt ({fault}); restore the archive from a replica or backup"
    )]
    CorruptRecord {
        /// The page.
        page: PageNo,
        /// What is wrong.
        fault: RecordFault,
    },
    /// The archive's own tables disagree with each other or with the format.
    #[error("archive file is inconsistent: {0}; restore it from a replica or backup")]
    Inconsistent(String),
    /// The file was written by another format version.
    #[error(
        "archive format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedFormat {
        /// The version in the file.
        found: u64,
        /// The version this build reads.
        supported: u64,
    },
    /// The file is not a redb database or its structure is damaged.
    #[error("archive file is corrupt or truncated ({0}); restore it from a replica or backup")]
    CorruptFile(String),
    /// Another process or handle has the file open.
    #[error("archive file is already open elsewhere; close the other handle or use another file")]
    AlreadyOpen,
    /// An I/O error from the file system.
    #[error("archive I/O error: {0}; check the disk and retry")]
    Io(#[from] std::io::Error),
    /// Any other storage error from redb.
    #[error("archive storage error: {0}; retry, or reopen the archive")]
    Storage(String),
    /// The archive's handle is closed: a reopen after an I/O error has not succeeded yet.
    #[error(
        "the archive is closed after an I/O error and not reopened yet; check the disk, it is retried"
    )]
    Closed,
}

impl ArchiveError {
    /// Whether the error is the storage failing (I/O, redb's "previous I/O error", a closed
    /// handle) rather than the call being wrong: after one the archive must be reopened
    /// ([`crate::Archive::reopen`]) before it can fold again.
    pub fn needs_reopen(&self) -> bool {
        matches!(
            self,
            ArchiveError::Io(_) | ArchiveError::Storage(_) | ArchiveError::Closed
        )
    }
}

/// Results of archive calls.
pub type Result<T, E = ArchiveError> = std::result::Result<T, E>;

impl From<redb::Error> for ArchiveError {
    fn from(e: redb::Error) -> ArchiveError {
        match e {
            redb::Error::Corrupted(text) => ArchiveError::CorruptFile(text),
            redb::Error::DatabaseAlreadyOpen => ArchiveError::AlreadyOpen,
            redb::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData
                ) =>
            {
                ArchiveError::CorruptFile(io.to_string())
            }
            redb::Error::Io(io) => ArchiveError::Io(io),
            other => ArchiveError::Storage(other.to_string()),
        }
    }
}

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for ArchiveError {
            fn from(e: $t) -> ArchiveError {
                ArchiveError::from(redb::Error::from(e))
            }
        }
    )*};
}

from_redb!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);
