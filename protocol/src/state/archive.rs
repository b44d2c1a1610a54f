//! The server's archive: the open [`Archive`], which streams it covers, and its counters.
//!
//! Policy: a stream has an archive policy when the server was started with an archive, the
//! stream is in database 0 (where the feed's streams live; the archive's stream names are the
//! keys, so other databases are not covered and trim as plain Redis does), and its key matches
//! the `archive-streams` glob (CONFIG SET; default `*`, every stream). For such a stream,
//! XTRIM and XADD's MAXLEN/MINID fold the entries they remove into the archive, durably,
//! before removing them, and EMQ.XRANGE / EMQ.XREVRANGE read archive and live stream as one.
//!
//! Replication (`echomq serve --replicate`): when the server holds an [`ArchiveReplica`],
//! every fold that commits notifies its replicator, so the fold's pages go up at once instead
//! of at the replicator's next poll; INFO's `archive` section reports the replicator's status.
//! A fenced or failing replicator never blocks trims or reads: folds still commit locally.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use echomq_archive::replica::ReplicatorLink;
use echomq_archive::{Archive, TrimOutcome};

use crate::glob;

/// The database whose streams the archive covers.
pub const ARCHIVE_DB: usize = 0;

/// The replicator an archive's folds go up through, and where to.
#[derive(Debug, Clone)]
pub struct ArchiveReplica {
    /// The replica's location as the user gave it (`s3://bucket/prefix`), for INFO.
    pub location: String,
    /// The running replicator.
    pub link: ReplicatorLink,
}

/// The archive a server folds into, with INFO's counters.
#[derive(Debug)]
pub struct ServerArchive {
    /// The archive file.
    archive: Arc<Archive>,
    /// Folds committed by trims.
    folds: AtomicU64,
    /// Records those folds wrote.
    records_folded: AtomicU64,
    /// Trims refused (XTRIM) or skipped (XADD) because the fold failed.
    fold_errors: AtomicU64,
    /// The replicator, when the archive is replicated.
    replica: Option<ArchiveReplica>,
}

impl ServerArchive {
    /// Wraps an open archive, replicated through `replica` when given.
    pub fn new(archive: Arc<Archive>, replica: Option<ArchiveReplica>) -> ServerArchive {
        ServerArchive {
            archive,
            folds: AtomicU64::new(0),
            records_folded: AtomicU64::new(0),
            fold_errors: AtomicU64::new(0),
            replica,
        }
    }

    /// The archive file.
    pub fn archive(&self) -> &Arc<Archive> {
        &self.archive
    }

    /// The replicator, when the archive is replicated.
    pub fn replica(&self) -> Option<&ArchiveReplica> {
        self.replica.as_ref()
    }

    /// INFO's `archive_folds`, `archive_records_folded` and `archive_fold_errors`.
    pub fn counters(&self) -> (u64, u64, u64) {
        (
            self.folds.load(Ordering::Relaxed),
            self.records_folded.load(Ordering::Relaxed),
            self.fold_errors.load(Ordering::Relaxed),
        )
    }

    /// Whether `key` in database `db` has an archive policy under `pattern`.
    pub fn covers(&self, pattern: &str, db: usize, key: &[u8]) -> bool {
        db == ARCHIVE_DB && glob::matches(pattern.as_bytes(), key, false)
    }

    /// Counts a fold-before-trim's outcome and, when a fold committed, wakes the replicator.
    pub fn count(&self, outcome: &Result<TrimOutcome, echomq_archive::ArchiveError>) {
        match outcome {
            Ok(TrimOutcome {
                folded: Some(receipt),
                ..
            }) => {
                self.folds.fetch_add(1, Ordering::Relaxed);
                self.records_folded
                    .fetch_add(receipt.records(), Ordering::Relaxed);
                if let Some(replica) = &self.replica {
                    replica.link.notify();
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "archive fold failed; the trim did not run");
                self.fold_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
