//! The writer side of the commit fence (`docs/reference/object-stores.md`).
//!
//! One commit per replication round:
//! 1. upload the batch's pages as new segment objects (random keys: never overwrites);
//! 2. save the encoded commit as `pending` in the local state (durable) **before** sending;
//! 3. `PUT commits/{v}` with `If-None-Match: *` and act on the answer:
//!
//! | answer | action |
//! |---|---|
//! | 2xx | head := v, pending := none (one save) |
//! | 412 | GET it: our bytes = success; another commit = **fenced**, stop for good |
//! | 409 | retry the same bytes after a back-off |
//! | timeout, reset, 5xx | GET it: absent = retry the same bytes; ours = success; other = fenced |
//!
//! Invariants: a version is only ever sent with one set of bytes (the pending ones), so a
//! delayed duplicate of our own PUT can never be mistaken for another writer; a fenced writer
//! sends nothing more (every call fails before touching the store); commit objects are never
//! deleted. Takeover: a writer that does not own the chain (restored from it) commits an
//! epoch bump at head + 1; the old writer's next commit then finds its version taken.

use std::time::Duration;

use super::commit::{Commit, EncodedCommit, commit_key};
use super::error::{ReplicaError, Result, StoreError};
use super::segment;
use super::state::{LocalState, ReplicaHead, StateStore};
use super::store::{ObjectStore, PutOutcome};
use super::types::{CommitHash, Epoch, FoldRef, Page, PageRange, Version, WriterId};

/// Retry and sizing knobs.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Tries per request before a round gives up (the commit then stays pending).
    pub attempts_max: u32,
    /// First back-off; doubles per retry up to `backoff_max`.
    pub backoff_initial: Duration,
    /// Longest back-off.
    pub backoff_max: Duration,
    /// Segment size to aim for.
    pub segment_bytes: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            // About 25 s of back-off in total: rides out a restart of the store's front end.
            attempts_max: 8,
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(5),
            segment_bytes: segment::SEGMENT_BYTES_TARGET,
        }
    }
}

impl WriterOptions {
    /// No sleeping between retries (tests with an in-memory store).
    pub fn no_backoff() -> WriterOptions {
        WriterOptions {
            backoff_initial: Duration::ZERO,
            backoff_max: Duration::ZERO,
            ..WriterOptions::default()
        }
    }

    fn pause(&self, attempt: u32) {
        if attempt == 0 || self.backoff_initial.is_zero() {
            return;
        }
        let factor = 1u32 << (attempt - 1).min(16);
        std::thread::sleep(
            self.backoff_initial
                .saturating_mul(factor)
                .min(self.backoff_max),
        );
    }
}

/// What one replication round sends: the pages after the head's last page up to
/// `range.last`, and the folds that wrote them.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// The pages, strictly increasing, inside `range`.
    pub pages: Vec<Page>,
    /// The page range this commit covers; `first` must follow the head's last page.
    pub range: Option<PageRange>,
    /// The folds that wrote the pages, in page order, tiling `range`.
    pub folds: Vec<FoldRef>,
}

/// A landed commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// Its version.
    pub version: Version,
    /// Its hash.
    pub hash: CommitHash,
    /// Segments uploaded.
    pub segments: usize,
    /// Segment bytes uploaded.
    pub segment_bytes: u64,
}

/// How reading a commit back ended.
enum ReadBack {
    Ours,
    Absent,
    Theirs(Commit),
    Failed(String),
}

/// A writer on one prefix of one bucket.
#[derive(Debug)]
pub struct Writer<S: ObjectStore, L: StateStore> {
    store: S,
    prefix: String,
    state_store: L,
    state: LocalState,
    options: WriterOptions,
}

impl<S: ObjectStore, L: StateStore> Writer<S, L> {
    /// Opens the writer: loads (or creates) the local state, settles a pending commit left by
    /// an earlier run, and takes over if this node does not own the chain yet (it was
    /// restored). A brand-new writer refuses a prefix that already holds commits.
    pub fn open(
        store: S,
        prefix: &str,
        mut state_store: L,
        options: WriterOptions,
    ) -> Result<Self> {
        let prefix = prefix.trim_matches('/');
        let state = match state_store.load()? {
            Some(state) => state,
            None => {
                let first = commit_key(prefix, Version(1));
                // A GET rather than a HEAD: its error body tells a missing bucket apart.
                if store.get(&first, true)?.is_some() {
                    return Err(ReplicaError::PrefixInUse { key: first });
                }
                let state = LocalState::fresh();
                state_store.save(&state)?;
                state
            }
        };
        let mut writer = Writer {
            store,
            prefix: prefix.to_owned(),
            state_store,
            state,
            options,
        };
        writer.check_not_fenced()?;
        writer.check_same_replica()?;
        writer.resolve_pending()?;
        if writer.state.epoch.is_none() {
            writer.take_over()?;
        }
        Ok(writer)
    }

    /// The last commit known to be in the bucket.
    pub fn head(&self) -> Option<ReplicaHead> {
        self.state.head
    }

    /// This writer's id.
    pub fn writer_id(&self) -> WriterId {
        self.state.writer
    }

    /// The epoch it writes in (`None` before a takeover).
    pub fn epoch(&self) -> Option<Epoch> {
        self.state.epoch
    }

    /// Whether a commit is saved as pending: sent (or about to be) but not yet settled.
    pub fn has_pending(&self) -> bool {
        self.state.pending.is_some()
    }

    /// The version it was fenced at, if it was.
    pub fn fenced(&self) -> Option<Version> {
        self.state.fenced
    }

    /// The prefix (no leading or trailing slash).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The head this archive recorded must be in this bucket under this prefix, byte for
    /// byte: otherwise `--replicate` names some other replica, and writing there would start
    /// a chain in the middle that no restore can read.
    fn check_same_replica(&self) -> Result<()> {
        let Some(head) = self.state.head else {
            return Ok(());
        };
        let key = commit_key(&self.prefix, head.version);
        match self.get_retrying(&key)? {
            Some(bytes) if Commit::decode(&bytes).is_ok_and(|c| c.hash == head.hash) => Ok(()),
            _ => Err(ReplicaError::WrongReplica {
                key,
                version: head.version,
            }),
        }
    }

    fn check_not_fenced(&self) -> Result<()> {
        match self.state.fenced {
            None => Ok(()),
            Some(version) => Err(self.fenced_error(version, None)),
        }
    }

    fn fenced_error(&self, version: Version, by: Option<&Commit>) -> ReplicaError {
        ReplicaError::Fenced {
            key: commit_key(&self.prefix, version),
            version,
            writer: self.state.writer,
            epoch: self.state.epoch.unwrap_or_default(),
            by_writer: by.map(|c| c.writer).unwrap_or_default(),
            by_epoch: by.map(|c| c.epoch).unwrap_or_default(),
        }
    }

    /// Settles a commit left pending by an earlier round or run: re-sends the same bytes
    /// until the bucket says it is ours (head advances) or another writer's (fenced).
    pub fn resolve_pending(&mut self) -> Result<()> {
        self.check_not_fenced()?;
        let Some(bytes) = self.state.pending.clone() else {
            return Ok(());
        };
        let encoded = Commit::decode(&bytes).map_err(|e| {
            ReplicaError::LocalState(format!("pending commit does not decode: {e}"))
        })?;
        self.publish(&encoded)
    }

    /// Replicates one batch as the next version. Settles a pending commit first; the batch
    /// must start right after the head's last page (build it after this returns an error:
    /// the head may have moved).
    pub fn commit(&mut self, batch: Batch) -> Result<Receipt> {
        self.resolve_pending()?;
        let epoch = self.state.epoch.ok_or_else(|| {
            ReplicaError::LocalState("this node does not own the chain: take over first".into())
        })?;
        self.check_batch(&batch)?;
        let mut segments = Vec::new();
        let mut segment_bytes = 0u64;
        for part in segment::split(&batch.pages, self.options.segment_bytes) {
            let Some((reference, bytes)) = segment::encode(&self.prefix, part) else {
                continue;
            };
            self.upload(&reference.key, &bytes)?;
            segment_bytes += bytes.len() as u64;
            segments.push(reference);
        }
        let commit = Commit {
            version: self.next_version(),
            prev_hash: self.state.head.map_or(CommitHash::GENESIS, |h| h.hash),
            epoch,
            writer: self.state.writer,
            pages: batch.range,
            folds: batch.folds,
            segments,
        };
        let segments = commit.segments.len();
        let encoded = commit.encode();
        self.state.pending = Some(encoded.bytes.clone());
        self.state_store.save(&self.state)?;
        self.publish(&encoded)?;
        Ok(Receipt {
            version: encoded.commit.version,
            hash: encoded.hash,
            segments,
            segment_bytes,
        })
    }

    /// Takes the chain over: commits an epoch bump (no pages) at head + 1 with an epoch above
    /// every epoch seen. The previous owner is fenced at its next commit. Refuses when the
    /// bucket has commits past the local head (restore them first).
    pub fn take_over(&mut self) -> Result<Receipt> {
        let head_version = self.state.head.map_or(Version(0), |h| h.version);
        let next = commit_key(&self.prefix, head_version.next());
        if self.get_retrying(&next)?.is_some() {
            let mut remote = head_version.next();
            while self
                .get_retrying(&commit_key(&self.prefix, remote.next()))?
                .is_some()
            {
                remote = remote.next();
            }
            return Err(ReplicaError::Behind {
                local: head_version,
                remote,
            });
        }
        let seen = self.state.head.map_or(Epoch(0), |h| h.epoch);
        let epoch = seen
            .0
            .max(self.state.epoch.map_or(0, |e| e.0))
            .checked_add(1)
            .map(Epoch)
            .ok_or_else(|| {
                ReplicaError::LocalState(
                    "the chain's epoch is at its maximum: replicate to a fresh prefix".into(),
                )
            })?;
        self.state.epoch = Some(epoch);
        self.state.fenced = None;
        let commit = Commit {
            version: self.next_version(),
            prev_hash: self.state.head.map_or(CommitHash::GENESIS, |h| h.hash),
            epoch,
            writer: self.state.writer,
            pages: None,
            folds: Vec::new(),
            segments: Vec::new(),
        };
        let encoded = commit.encode();
        self.state.pending = Some(encoded.bytes.clone());
        self.state_store.save(&self.state)?;
        self.publish(&encoded)?;
        Ok(Receipt {
            version: encoded.commit.version,
            hash: encoded.hash,
            segments: 0,
            segment_bytes: 0,
        })
    }

    fn next_version(&self) -> Version {
        self.state.head.map_or(Version(1), |h| h.version.next())
    }

    fn check_batch(&self, batch: &Batch) -> Result<()> {
        let last = self.state.head.and_then(|h| h.last_page);
        match batch.range {
            None if !batch.pages.is_empty() || !batch.folds.is_empty() => {
                return Err(ReplicaError::BadBatch(
                    "pages or folds without a range".into(),
                ));
            }
            None => {}
            Some(range) => {
                if let Some(last) = last
                    && Some(range.first) != last.checked_add(1)
                {
                    return Err(ReplicaError::BadBatch(format!(
                        "range starts at {:016x}, the replicated pages end at {last:016x}",
                        range.first
                    )));
                }
                let mut prev: Option<u64> = None;
                for page in &batch.pages {
                    if !range.contains(page.number) || prev.is_some_and(|p| p >= page.number) {
                        return Err(ReplicaError::BadBatch(format!(
                            "page {:016x} out of order or outside {range}",
                            page.number
                        )));
                    }
                    prev = Some(page.number);
                }
                let mut next = Some(range.first);
                for fold in &batch.folds {
                    if Some(fold.pages.first) != next || fold.first_id > fold.watermark {
                        return Err(ReplicaError::BadBatch(format!(
                            "fold {} does not follow the previous one",
                            fold.pages
                        )));
                    }
                    next = fold.pages.last.checked_add(1);
                }
                if batch.folds.last().map(|f| f.pages.last) != Some(range.last) {
                    return Err(ReplicaError::BadBatch(format!(
                        "the folds do not cover {range}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Plain PUT of an immutable segment, retried on transient errors (same key, same bytes:
    /// repeating it is harmless).
    fn upload(&self, key: &str, bytes: &[u8]) -> Result<()> {
        self.retrying(key, || self.store.put(key, bytes))
    }

    fn get_retrying(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.retrying(key, || self.store.get(key, true))
    }

    /// Runs `op` on `key` at most `attempts_max` times, pausing between attempts; only
    /// transient store errors are tried again.
    fn retrying<T>(
        &self,
        key: &str,
        mut op: impl FnMut() -> std::result::Result<T, StoreError>,
    ) -> Result<T> {
        let mut last = None;
        for attempt in 0..self.options.attempts_max {
            self.options.pause(attempt);
            match op() {
                Ok(value) => return Ok(value),
                Err(e) if e.is_transient() => last = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(last
            .unwrap_or_else(|| StoreError::Transient {
                key: key.to_owned(),
                reason: "no attempt allowed (attempts_max = 0)".into(),
            })
            .into())
    }

    fn read_back(&self, key: &str, ours: &EncodedCommit) -> Result<ReadBack> {
        match self.store.get(key, true) {
            Ok(None) => Ok(ReadBack::Absent),
            Ok(Some(bytes)) if bytes == ours.bytes => Ok(ReadBack::Ours),
            Ok(Some(bytes)) => match Commit::decode(&bytes) {
                Ok(theirs) => Ok(ReadBack::Theirs(theirs.commit)),
                Err(reason) => Err(ReplicaError::CorruptCommit {
                    key: key.to_owned(),
                    reason,
                }),
            },
            Err(e) if e.is_transient() => Ok(ReadBack::Failed(e.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    /// Sends `encoded` (already saved as pending) until the bucket settles it.
    fn publish(&mut self, encoded: &EncodedCommit) -> Result<()> {
        let version = encoded.commit.version;
        let key = commit_key(&self.prefix, version);
        let mut last = String::from("no attempt allowed");
        for attempt in 0..self.options.attempts_max {
            self.options.pause(attempt);
            match self.store.put_if_absent(&key, &encoded.bytes, true) {
                Ok(PutOutcome::Created) => return self.landed(encoded),
                Ok(PutOutcome::Conflict) => {
                    last = "HTTP 409 (concurrent conditional write)".into();
                    continue;
                }
                Ok(PutOutcome::Exists) => last = "HTTP 412".into(),
                Ok(PutOutcome::Unknown(why)) => last = why,
                Err(e) if e.is_transient() => last = e.to_string(),
                Err(e) => return Err(e.into()),
            }
            match self.read_back(&key, encoded) {
                Ok(ReadBack::Ours) => return self.landed(encoded),
                Ok(ReadBack::Absent) => {}
                Ok(ReadBack::Failed(why)) => last = why,
                Ok(ReadBack::Theirs(theirs)) => {
                    let error = self.fenced_error(version, Some(&theirs));
                    self.mark_fenced(version)?;
                    return Err(error);
                }
                Err(e @ ReplicaError::CorruptCommit { .. }) => {
                    // The version slot holds garbage: no commit of ours can ever land there.
                    self.mark_fenced(version)?;
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ReplicaError::Unresolved {
            key,
            attempts: self.options.attempts_max,
            last,
        })
    }

    fn landed(&mut self, encoded: &EncodedCommit) -> Result<()> {
        let c = &encoded.commit;
        let last_page = c
            .pages
            .map(|p| p.last)
            .or(self.state.head.and_then(|h| h.last_page));
        self.state.head = Some(ReplicaHead {
            version: c.version,
            hash: encoded.hash,
            epoch: c.epoch,
            last_page,
        });
        self.state.pending = None;
        self.state_store.save(&self.state)
    }

    fn mark_fenced(&mut self, version: Version) -> Result<()> {
        self.state.fenced = Some(version);
        self.state.pending = None;
        self.state_store.save(&self.state)
    }
}
