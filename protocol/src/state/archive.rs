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
//!
//! Health (Redis's `-MISCONF` posture): a fold that fails because the storage failed (an I/O
//! error such as a full disk; after one redb refuses every call until reopened) marks the
//! archive failed. While it is, a write that would trim an archived stream (XTRIM, XADD with
//! MAXLEN/MINID) is refused with [`ServerArchive::refusal`] and changes nothing, so the live
//! stream cannot lose unarchived entries and cannot grow silently either; other writes and
//! reads go on. [`ServerArchive::keep_open`] (a task of the running server) reopens the
//! archive with a doubling backoff, from [`REOPEN_BACKOFF_FIRST`] up to
//! [`REOPEN_BACKOFF_MAX`], logging each failed attempt and the recovery; INFO reports
//! `archive_status`, the failure and the attempts.
//!
//! Deferred trims (XADD with `~`): such an XADD on an archived stream trims nothing and folds
//! nothing under the keyspace lock; it notes the last id its trim would remove
//! ([`ServerArchive::defer_trim`]) and replies. The archive's syncer thread
//! ([`super::archive_sync`]) then copies those entries out, folds them, makes every fold of
//! its round durable with one fsync, and only then applies the trims, each as an exact
//! `XTRIM key MINID = <id> [strategy]` that the AOF records after the XADD
//! ([`ServerArchive::commit`]). So no client waits on the archive, many trims share one
//! fsync, and a crash or a failed fold or fsync leaves the entries live (the trim did not
//! run, as when an XADD's fold fails). Only approximate trims are deferred, since they may
//! leave more entries than asked anyway; an exact trim, and XTRIM (whose reply is the count
//! removed, and which must answer a failing fold's error with nothing trimmed), fold durably
//! first.
//!
//! Start (Redis's XSETID): [`ServerArchive::seed_watermarks`] gives each archived stream a live
//! last id of at least its W, so `*` continues above W and an explicit id at or below W gets
//! XADD's "equal or smaller" error instead of landing where EMQ.XRANGE never shows it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use echomq_archive::replica::ReplicatorLink;
use echomq_archive::{Archive, ArchiveError, FoldBatch, TrimOutcome};
use echomq_engine::{
    DeleteStrategy, Keyspace, NodeLimits, Reply, Stream, StreamId, Trim, TrimDone, TrimHook, Value,
};
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::ServerState;
use super::archive_sync::{ArchiveSync, DeferredTrims};
use crate::glob;

/// The first wait before reopening a failed archive.
pub const REOPEN_BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between reopen attempts.
pub const REOPEN_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Why the archive cannot fold, while it cannot.
#[derive(Debug, Clone)]
pub struct ArchiveFailure {
    /// The storage error that failed the fold.
    pub error: String,
    /// When it failed.
    pub since: Instant,
    /// Reopen attempts that failed since.
    pub attempts: u64,
    /// The last failed attempt's error, if any.
    pub last_attempt_error: Option<String>,
}

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
    /// Set while the archive cannot fold (see the module doc).
    failure: Mutex<Option<ArchiveFailure>>,
    /// Successful reopens after a failure.
    reopens: AtomicU64,
    /// Wakes [`ServerArchive::keep_open`] when the archive fails.
    failed: Notify,
    /// The deferred trims, per key: the last id to remove and the deletion strategy.
    trims: Mutex<DeferredTrims>,
    /// Set by a deferred trim, cleared by the commit request that hands it to the syncer.
    pending: AtomicBool,
    /// Whether `failure` is set, read without its lock by every write that may trim.
    failing: AtomicBool,
    /// The thread that commits deferred folds ([`super::archive_sync`]).
    syncer: ArchiveSync,
}

impl Drop for ServerArchive {
    fn drop(&mut self) {
        self.syncer.close();
    }
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
            failure: Mutex::new(None),
            reopens: AtomicU64::new(0),
            failed: Notify::new(),
            trims: Mutex::new(DeferredTrims::default()),
            pending: AtomicBool::new(false),
            failing: AtomicBool::new(false),
            syncer: ArchiveSync::default(),
        }
    }

    /// Starts the thread that commits deferred folds for `state` (the server's start; without
    /// it, [`ServerArchive::request_commit`] commits inline).
    pub(crate) fn start_syncer(&self, state: Weak<ServerState>) {
        self.syncer.start(state);
    }

    /// The commit pipeline's archive step, for a connection about to reply or the cron: hands
    /// deferred folds to the syncer thread without waiting for them (see
    /// [`super::archive_sync`]); `force` (the cron) asks for a round even when no fold is
    /// new, so an fsync that failed is retried. Without a running syncer, commits inline.
    pub(crate) fn request_commit(&self, keyspace: &Keyspace, force: bool) {
        let pending = self.pending.swap(false, Ordering::AcqRel);
        let wanted = pending || (force && self.archive.needs_sync());
        if !wanted {
            return;
        }
        if self.syncer.running() {
            self.syncer.request();
        } else {
            self.commit(keyspace);
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

    /// Streams with a deferred trim not yet applied (INFO's `archive_deferred_trims`).
    pub fn deferred_trims(&self) -> usize {
        self.trims.lock().len()
    }

    /// Successful reopens after a failure (INFO's `archive_reopens`).
    pub fn reopens(&self) -> u64 {
        self.reopens.load(Ordering::Relaxed)
    }

    /// The current failure, `None` while the archive folds.
    pub fn failure(&self) -> Option<ArchiveFailure> {
        self.failure.lock().clone()
    }

    /// The reply to a write that would trim an archived stream while the archive cannot fold;
    /// `None` when it can.
    pub fn refusal(&self) -> Option<Reply> {
        if !self.failing.load(Ordering::Acquire) {
            return None;
        }
        let failure = self.failure.lock();
        let failure = failure.as_ref()?;
        Some(Reply::Error(format!(
            "MISCONF the archive cannot fold ({}); writes that would trim an archived stream are refused until it is reopened (retried with backoff; see INFO archive)",
            failure.error.replace(['\r', '\n'], " ")
        )))
    }

    /// Marks the archive failed by `e` (if it is a storage failure) and wakes the reopener.
    fn fail(&self, e: &ArchiveError) {
        if !e.needs_reopen() {
            return;
        }
        let mut failure = self.failure.lock();
        if failure.is_none() {
            tracing::error!(
                error = %e,
                "archive failed; trims of archived streams are refused until it is reopened"
            );
            *failure = Some(ArchiveFailure {
                error: e.to_string(),
                since: Instant::now(),
                attempts: 0,
                last_attempt_error: None,
            });
            self.failing.store(true, Ordering::Release);
        }
        drop(failure);
        self.failed.notify_one();
    }

    /// Reopens the archive whenever it has failed, with a doubling backoff, until the future
    /// is dropped (the server stops).
    pub async fn keep_open(&self) {
        loop {
            if self.failure.lock().is_none() {
                self.failed.notified().await;
                continue;
            }
            let mut backoff = REOPEN_BACKOFF_FIRST;
            loop {
                tokio::time::sleep(backoff).await;
                let archive = Arc::clone(&self.archive);
                let outcome = tokio::task::spawn_blocking(move || archive.reopen()).await;
                let mut failure = self.failure.lock();
                match outcome {
                    Ok(Ok(())) => {
                        let attempts = failure.take().map_or(0, |f| f.attempts) + 1;
                        self.failing.store(false, Ordering::Release);
                        self.reopens.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(attempts, "archive reopened; trims fold again");
                        break;
                    }
                    Ok(Err(e)) => {
                        if let Some(f) = failure.as_mut() {
                            f.attempts += 1;
                            f.last_attempt_error = Some(e.to_string());
                            tracing::warn!(
                                attempt = f.attempts,
                                error = %e,
                                retry_in_ms = (backoff * 2).min(REOPEN_BACKOFF_MAX).as_millis() as u64,
                                "archive reopen failed"
                            );
                        }
                    }
                    Err(e) => tracing::error!(error = %e, "archive reopen task failed"),
                }
                backoff = (backoff * 2).min(REOPEN_BACKOFF_MAX);
            }
        }
    }

    /// Gives each archived stream (database 0) a live last id of at least its W, as XSETID
    /// would: a missing stream is created empty with last id W and `entries_added` the
    /// records folded. Run once at start, before any client connects.
    pub fn seed_watermarks(&self, keyspace: &Keyspace) -> Result<(), ArchiveError> {
        let streams = self.archive.streams()?;
        keyspace.run_db(ARCHIVE_DB, |db, _| {
            for (key, state) in streams {
                let Some(w) = state.watermark else {
                    continue;
                };
                match db.stream_mut_raw(&key) {
                    Ok(Some(live)) => {
                        if live.last_id() < w {
                            // The live top is below W (it always is: W is the highest folded
                            // id), so this cannot fail.
                            let _ = live.set_id(w, None, None);
                        }
                    }
                    Ok(None) => {
                        let mut live = Stream::new();
                        if live.set_id(w, Some(state.records), None).is_ok() {
                            db.insert(&key, Value::Stream(Box::new(live)));
                        }
                    }
                    // Another type under the key: not a stream this archive can guard.
                    Err(_) => {}
                }
            }
        });
        Ok(())
    }

    /// An XADD's approximate trim of an archived stream, under the keyspace lock: notes what
    /// it would remove (the live entries up to the preview's last id) for the syncer to fold
    /// and trim ([`ServerArchive::commit`]); no archive I/O here. A trim already covered by a
    /// deferred one of the same strategy adds nothing.
    pub fn defer_trim(&self, key: &[u8], live: &Stream, trim: &Trim, limits: NodeLimits) {
        let Some(last) = live.trim_preview(trim, limits).last else {
            return;
        };
        if self.trims.lock().defer(key, last, trim.delete) {
            self.pending.store(true, Ordering::Release);
        }
    }

    /// The syncer's round (see [`super::archive_sync`]): under the keyspace lock, copies out
    /// the entries each deferred trim removes; outside it, checks those already archived and
    /// folds the rest, then one fsync makes every fold durable; under the lock again, trims
    /// each stream up to what was folded, propagated as an exact XTRIM, and wakes the
    /// replicator. A fold that fails skips its trim (its entries stay live) and is counted; a
    /// failed fsync skips them all and marks the archive failed. The XADDs' replies stand.
    pub fn commit(&self, keyspace: &Keyspace) {
        // The copy under the lock is the records' encoding itself, one buffer per stream
        // (`FoldBatch`), not an owned entry per entry.
        let copied: Vec<(Bytes, StreamId, DeleteStrategy, FoldBatch)> =
            keyspace.run_db(ARCHIVE_DB, |db, _| {
                let round = self.trims.lock().start_round();
                round
                    .into_iter()
                    .map(|(key, (up_to, delete))| {
                        let entries = match db.stream(&key) {
                            Ok(Some(live)) => FoldBatch::of(live.range(StreamId::MIN, up_to)),
                            _ => FoldBatch::new(),
                        };
                        (key, up_to, delete, entries)
                    })
                    .collect()
            });
        let mut folded = Vec::with_capacity(copied.len());
        for (key, up_to, delete, entries) in copied {
            match self.archive.fold_for_deferred_trim(&key, &entries) {
                Ok(receipt) => {
                    if let Some(receipt) = receipt {
                        self.folds.fetch_add(1, Ordering::Relaxed);
                        self.records_folded
                            .fetch_add(receipt.records(), Ordering::Relaxed);
                    }
                    folded.push((key, up_to, delete));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a deferred archive fold failed; its trim did not run");
                    self.fold_errors.fetch_add(1, Ordering::Relaxed);
                    self.fail(&e);
                }
            }
        }
        match self.archive.sync() {
            Ok(synced) => {
                self.apply_trims(keyspace, folded);
                if synced && let Some(replica) = &self.replica {
                    replica.link.notify();
                }
            }
            Err(e) => {
                self.trims.lock().end_round();
                tracing::warn!(error = %e, "archive fsync failed; the trims it held did not run");
                self.fold_errors
                    .fetch_add(folded.len().max(1) as u64, Ordering::Relaxed);
                self.fail(&e);
            }
        }
    }

    fn apply_trims(&self, keyspace: &Keyspace, trims: Vec<(Bytes, StreamId, DeleteStrategy)>) {
        keyspace.run_db(ARCHIVE_DB, |db, snapshot| {
            // Under the lock: no XADD sees the round's trims neither deferred nor applied.
            self.trims.lock().end_round();
            for (key, up_to, delete) in trims {
                let Ok(Some(live)) = db.stream_mut_raw(&key) else {
                    continue;
                };
                match self
                    .archive
                    .trim_folded(&key, live, up_to, delete, snapshot.limits)
                {
                    // XTRIM's effects: `xtrim`, WATCH, dirty, and the exact
                    // `XTRIM key MINID = <id> [DELREF|ACKED]` in the AOF after the XADD.
                    Ok((trim, removed)) => db.stream_trimmed(&key, removed, &trim),
                    Err(e) => {
                        tracing::warn!(error = %e, "a deferred archive trim did not run");
                        self.fold_errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
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
                self.fail(e);
            }
        }
    }
}

/// The archive's [`TrimHook`]: XTRIM and a trimming XADD on an archived stream fold what they
/// remove before it goes (the module doc's policy). The engine asks it from inside XADD's and
/// XTRIM's own trim step, so those commands keep their own effects.
#[derive(Debug)]
pub(crate) struct ArchiveTrims {
    state: Weak<ServerState>,
}

impl ArchiveTrims {
    /// The hook of the server whose state `state` is.
    pub(crate) fn new(state: Weak<ServerState>) -> ArchiveTrims {
        ArchiveTrims { state }
    }
}

impl TrimHook for ArchiveTrims {
    fn covers(&self, db: usize, key: &[u8]) -> bool {
        let Some(state) = self.state.upgrade() else {
            return false;
        };
        let pattern = &state.settings().archive_streams;
        state.archive().is_some_and(|a| a.covers(pattern, db, key))
    }

    fn refusal(&self) -> Option<echomq_engine::Error> {
        let state = self.state.upgrade()?;
        match state.archive()?.refusal()? {
            Reply::Error(text) => Some(echomq_engine::Error::TrimRefused(text)),
            _ => None,
        }
    }

    /// Folds durably, then trims; a failed fold is the reply and nothing is trimmed.
    fn trim(
        &self,
        key: &[u8],
        stream: &mut Stream,
        trim: &Trim,
        limits: NodeLimits,
    ) -> echomq_engine::Result<u64> {
        let Some(state) = self.state.upgrade() else {
            return Ok(stream.trim(trim, limits));
        };
        let Some(archive) = state.archive() else {
            return Ok(stream.trim(trim, limits));
        };
        let outcome = archive.archive().fold_then_trim(key, stream, trim, limits);
        archive.count(&outcome);
        outcome
            .map(|o| o.removed)
            .map_err(|e| echomq_engine::Error::TrimRefused(format!("ERR archive: {e}")))
    }

    /// An approximate trim is deferred to the commit pipeline; an exact one folds durably and
    /// trims now. A failed fold skips the trim (counted): the XADD's entry stays added.
    fn trim_after_add(
        &self,
        key: &[u8],
        stream: &mut Stream,
        trim: &Trim,
        limits: NodeLimits,
    ) -> TrimDone {
        let Some(state) = self.state.upgrade() else {
            return TrimDone::Removed(stream.trim(trim, limits));
        };
        let Some(archive) = state.archive() else {
            return TrimDone::Removed(stream.trim(trim, limits));
        };
        if trim.approx {
            archive.defer_trim(key, stream, trim, limits);
            return TrimDone::Deferred;
        }
        let outcome = archive.archive().fold_then_trim(key, stream, trim, limits);
        archive.count(&outcome);
        TrimDone::Removed(outcome.map_or(0, |o| o.removed))
    }
}
