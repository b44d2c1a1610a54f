//! The replication layer's one error enum: every variant names the object or the setting at
//! fault and says what the caller can do about it.

use super::types::{Epoch, Version, WriterId};

/// What went wrong talking to the object store. `key` is the object's full key (prefix
/// included) or the bucket when the request had no object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// 401/403, or a signature the store rejected.
    #[error(
        "the object store refused the credentials for {key} (HTTP {status}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY and the bucket's permissions"
    )]
    Unauthorized { key: String, status: u16 },
    /// The bucket itself does not exist.
    #[error("bucket {bucket} does not exist at {endpoint}: create it or fix --replicate")]
    NoSuchBucket { bucket: String, endpoint: String },
    /// Nothing answered (connection refused, DNS, TLS): the request never reached the store.
    #[error(
        "the object store at {endpoint} is unreachable ({reason}) while accessing {key}: check --s3-endpoint and the network, then retry"
    )]
    Unreachable {
        endpoint: String,
        key: String,
        reason: String,
    },
    /// A timeout or a 5xx: the request may or may not have taken effect. Transient.
    #[error("the object store did not answer clearly for {key} ({reason}): retry")]
    Transient { key: String, reason: String },
    /// Any other refusal (400, 405, an unexpected status).
    #[error("the object store rejected the request for {key} with HTTP {status}: {body}")]
    Rejected {
        key: String,
        status: u16,
        body: String,
    },
    /// Bad configuration caught before any request (missing credentials, a bad endpoint URL).
    #[error("object store configuration: {0}")]
    Config(String),
}

impl StoreError {
    /// Whether retrying the same request may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Transient { .. } | StoreError::Unreachable { .. }
        )
    }
}

/// Errors of replication, restore and verification.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The object store failed in a way retrying here did not fix.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another writer holds this version: this writer must stop. Local data is untouched; run a
    /// takeover (after restoring what the other writer committed) to write again.
    #[error(
        "fenced at {key}: version {version} belongs to writer {by_writer} (epoch {by_epoch}), not to this writer {writer} (epoch {epoch}); replication stopped, local data is untouched: restore from the bucket and take over to write again"
    )]
    Fenced {
        key: String,
        version: Version,
        writer: WriterId,
        epoch: Epoch,
        by_writer: WriterId,
        by_epoch: Epoch,
    },
    /// A commit object that does not decode or whose hash does not match its content.
    #[error(
        "corrupt commit object {key}: {reason}; the bucket is damaged or not an echomq replica: restore from another copy or pick a fresh prefix"
    )]
    CorruptCommit { key: String, reason: String },
    /// A commit that decodes but is not the successor of the previous one.
    #[error(
        "broken chain at {key}: {reason}; the bucket was written by something else or edited: do not restore from it, pick a fresh prefix"
    )]
    BrokenChain { key: String, reason: String },
    /// A segment a commit names is not in the bucket.
    #[error(
        "segment {key} named by commit {commit} is missing from the bucket: the replica is incomplete, restore from another copy"
    )]
    MissingSegment { key: String, commit: String },
    /// A segment whose length, checksum or page layout does not match its commit.
    #[error(
        "corrupt segment {key} (named by commit {commit}): {reason}; restore from another copy"
    )]
    CorruptSegment {
        key: String,
        commit: String,
        reason: String,
    },
    /// The store did not settle a commit within the retry budget. The commit stays pending in
    /// local state and is resolved (read back, then re-sent byte for byte) on the next attempt.
    #[error(
        "commit {key} still unresolved after {attempts} attempts ({last}); it stays pending and is retried with the same bytes on the next replication round"
    )]
    Unresolved {
        key: String,
        attempts: u32,
        last: String,
    },
    /// A fresh writer found commits already in the bucket under its prefix.
    #[error(
        "{key} already exists: the prefix holds another replica; restore from it (echomq archive restore) and take over, or pick a fresh prefix"
    )]
    PrefixInUse { key: String },
    /// The archive's last replicated commit is not at this location.
    #[error(
        "this archive's last replicated commit {key} (version {version}) is not in this bucket: point --replicate at the replica this archive wrote (echomq archive status shows it), or restore a new archive from this one"
    )]
    WrongReplica { key: String, version: Version },
    /// The local archive is behind the bucket's head and cannot take over without restoring.
    #[error(
        "the bucket's head is version {remote} but this archive has replicated only {local}: restore before taking over"
    )]
    Behind { local: Version, remote: Version },
    /// A batch that does not follow the replicated pages (a caller bug, not bad data).
    #[error("replication batch rejected: {0}")]
    BadBatch(String),
    /// A commit reached over the wire hashes to a value that is not the one pending locally.
    #[error("local replication state: {0}")]
    LocalState(String),
    /// The local archive failed (its error says what to do).
    #[error(transparent)]
    Archive(#[from] crate::ArchiveError),
    /// Restore needs an archive with nothing folded and no replication state.
    #[error("{path} already holds an archive ({what}); restore into a new, empty directory")]
    NotEmpty { path: String, what: String },
    /// The restore sink (the local archive) refused the pages.
    #[error("installing restored pages: {0}")]
    Sink(String),
}

/// The replication layer's result.
pub type Result<T, E = ReplicaError> = std::result::Result<T, E>;
