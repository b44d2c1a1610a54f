//! The replicator: after local folds commit, their pages go up as segments plus one commit.
//!
//! [`Replicator::round`] is one step (settle a pending commit, read the folds after the
//! head, commit them); [`Replicator::spawn`] runs rounds on a thread of its own, woken by
//! [`ReplicatorLink::notify`] after a fold or, as a fallback for callers that do not notify,
//! every poll interval ([`POLL_INTERVAL`] unless [`Replicator::spawn_polling`] sets another).
//! A notification is never lost: it sets a flag under the status lock that the thread checks
//! before it sleeps. Several folds that
//! land while a commit is in flight go up together in the next one, so replication keeps pace
//! with folding however slow a single PUT is. A fenced replicator stops and reports it;
//! transient failures back off and retry (the commit stays pending in the archive's state).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::error::{ReplicaError, Result};
use super::local::{SharedArchiveState, next_batch};
use super::state::ReplicaHead;
use super::store::ObjectStore;
use super::types::Epoch;
use super::writer::{Receipt, Writer, WriterOptions};
use crate::{ARCHIVE_BASE, Archive};

/// How often an idle replicator looks for new folds without being notified.
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Pause after a failed round before the next one.
const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// Replicates one archive.
#[derive(Debug)]
pub struct Replicator<S: ObjectStore> {
    archive: Arc<Archive>,
    writer: Writer<S, SharedArchiveState>,
}

impl<S: ObjectStore> Replicator<S> {
    /// Opens the writer on the archive's state (taking over if the archive was restored).
    pub fn open(
        archive: Arc<Archive>,
        store: S,
        prefix: &str,
        options: WriterOptions,
    ) -> Result<Self> {
        let writer = Writer::open(
            store,
            prefix,
            SharedArchiveState(Arc::clone(&archive)),
            options,
        )?;
        Ok(Replicator { archive, writer })
    }

    /// The last commit in the bucket.
    pub fn head(&self) -> Option<ReplicaHead> {
        self.writer.head()
    }

    /// The writer underneath.
    pub fn writer(&self) -> &Writer<S, SharedArchiveState> {
        &self.writer
    }

    /// One round: `None` when there was nothing new.
    pub fn round(&mut self) -> Result<Option<Receipt>> {
        self.writer.resolve_pending()?;
        let after = self.writer.head().and_then(|h| h.last_page);
        match next_batch(&self.archive, after)? {
            None => Ok(None),
            Some(batch) => self.writer.commit(batch).map(Some),
        }
    }

    /// Rounds until nothing is new (tests, shutdown, `archive status --sync`).
    pub fn drain(&mut self) -> Result<u64> {
        let mut commits = 0;
        while self.round()?.is_some() {
            commits += 1;
        }
        Ok(commits)
    }

    /// Runs rounds on a new thread until the handle is stopped or the writer is fenced,
    /// looking for new folds every [`POLL_INTERVAL`] when not notified.
    pub fn spawn(self) -> ReplicatorHandle
    where
        S: 'static,
    {
        self.spawn_polling(POLL_INTERVAL)
    }

    /// [`Replicator::spawn`] with another poll interval: a caller that notifies after every
    /// fold (the server does) only needs the poll as a safety net.
    pub fn spawn_polling(mut self, poll_interval: Duration) -> ReplicatorHandle
    where
        S: 'static,
    {
        let shared = Arc::new(Shared::default());
        self.report_state(&mut shared.status.lock());
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("echomq-replicator".into())
            .spawn(move || {
                loop {
                    let result = self.round();
                    let mut status = thread_shared.status.lock();
                    status.rounds += 1;
                    self.report_state(&mut status);
                    let pause = match result {
                        Ok(Some(receipt)) => {
                            status.commits += 1;
                            status.last_error = None;
                            status.segment_bytes += receipt.segment_bytes;
                            Duration::ZERO
                        }
                        Ok(None) => poll_interval,
                        Err(e @ ReplicaError::Fenced { .. }) => {
                            report(&e);
                            status.fenced = true;
                            status.last_error = Some(e.to_string());
                            status.stopped = true;
                            thread_shared.changed.notify_all();
                            return;
                        }
                        Err(e) => {
                            report(&e);
                            status.errors += 1;
                            status.last_error = Some(e.to_string());
                            RETRY_PAUSE
                        }
                    };
                    thread_shared.changed.notify_all();
                    if status.stop {
                        status.stopped = true;
                        thread_shared.changed.notify_all();
                        return;
                    }
                    if !pause.is_zero() && !status.wake {
                        thread_shared.changed.wait_for(&mut status, pause);
                    }
                    status.wake = false;
                    if status.stop {
                        status.stopped = true;
                        thread_shared.changed.notify_all();
                        return;
                    }
                }
            });
        ReplicatorHandle {
            link: ReplicatorLink { shared },
            thread: thread.ok(),
        }
    }

    /// Copies what the writer knows (head, epoch, pending, fenced) into `status`.
    fn report_state(&self, status: &mut ReplicatorStatus) {
        status.head = self.head();
        status.epoch = self.writer.epoch();
        status.pending = self.writer.has_pending();
        status.fenced |= self.writer.fenced().is_some();
    }
}

fn report(e: &ReplicaError) {
    match e {
        ReplicaError::Fenced { .. } => tracing::error!(error = %e, "replication stopped"),
        _ => tracing::warn!(error = %e, "replication round failed; retrying"),
    }
}

/// What a running replicator reports.
#[derive(Debug, Clone, Default)]
pub struct ReplicatorStatus {
    /// The last commit in the bucket.
    pub head: Option<ReplicaHead>,
    /// The epoch the writer writes in (`None` before a takeover).
    pub epoch: Option<Epoch>,
    /// A commit is saved as pending: sent, or about to be, and not yet settled.
    pub pending: bool,
    /// Notifications received ([`ReplicatorLink::notify`]).
    pub notifications: u64,
    /// Rounds run (the first one runs at start, unasked).
    pub rounds: u64,
    /// Commits made by this thread.
    pub commits: u64,
    /// Segment bytes uploaded by this thread.
    pub segment_bytes: u64,
    /// Failed rounds.
    pub errors: u64,
    /// The last failure, cleared by the next success.
    pub last_error: Option<String>,
    /// Another writer holds the chain: replication stopped.
    pub fenced: bool,
    /// The thread has ended.
    pub stopped: bool,
    stop: bool,
    wake: bool,
}

impl ReplicatorStatus {
    /// The last page replicated, `None` before any page went up.
    pub fn replicated_page(&self) -> Option<u64> {
        self.head.and_then(|h| h.last_page)
    }

    /// Pages the archive holds that are not replicated yet, given how many pages it holds
    /// (`ArchiveStats::archive_pages`; pages are numbered from [`ARCHIVE_BASE`] without gaps).
    pub fn lag_pages(&self, archive_pages: u64) -> u64 {
        archive_pages.saturating_sub(self.replicated_pages())
    }

    /// How many pages are replicated (pages are numbered from [`ARCHIVE_BASE`] without gaps,
    /// so this compares with `ArchiveStats::archive_pages`).
    pub fn replicated_pages(&self) -> u64 {
        self.replicated_page()
            .map_or(0, |p| p.saturating_sub(ARCHIVE_BASE).saturating_add(1))
    }
}

#[derive(Debug, Default)]
struct Shared {
    status: Mutex<ReplicatorStatus>,
    changed: Condvar,
}

/// A cheap, cloneable line to a running replicator: wake it, read its status, wait on it.
/// It does not own the thread (the [`ReplicatorHandle`] does), so holders such as the server
/// can keep one without keeping the thread alive.
#[derive(Debug, Clone)]
pub struct ReplicatorLink {
    shared: Arc<Shared>,
}

impl ReplicatorLink {
    /// Wakes the thread (call after a fold committed).
    pub fn notify(&self) {
        let mut status = self.shared.status.lock();
        status.wake = true;
        status.notifications += 1;
        self.shared.changed.notify_all();
    }

    /// A snapshot of the status.
    pub fn status(&self) -> ReplicatorStatus {
        self.shared.status.lock().clone()
    }

    /// Waits, without waking the thread, until `done` holds for the status (or the thread
    /// stops, or `timeout` passes); returns the status then.
    pub fn wait_for(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&ReplicatorStatus) -> bool,
    ) -> ReplicatorStatus {
        let deadline = Instant::now() + timeout;
        let mut status = self.shared.status.lock();
        while !done(&status) && !status.stopped && Instant::now() < deadline {
            self.shared.changed.wait_until(&mut status, deadline);
        }
        status.clone()
    }

    /// Waits until the head's last page reaches `page` (or the thread stops, or `timeout`
    /// passes), waking the thread so it looks at once; returns the status then.
    pub fn wait_for_page(&self, page: u64, timeout: Duration) -> ReplicatorStatus {
        let reached = |s: &ReplicatorStatus| s.replicated_page().is_some_and(|p| p >= page);
        if !reached(&self.status()) {
            let mut status = self.shared.status.lock();
            status.wake = true;
            self.shared.changed.notify_all();
        }
        self.wait_for(timeout, reached)
    }
}

/// Controls a replicator thread; stops it when dropped.
#[derive(Debug)]
pub struct ReplicatorHandle {
    link: ReplicatorLink,
    thread: Option<JoinHandle<()>>,
}

impl ReplicatorHandle {
    /// A link to the thread (for the server: notify after folds, report in INFO).
    pub fn link(&self) -> ReplicatorLink {
        self.link.clone()
    }

    /// Wakes the thread (call after a fold committed).
    pub fn notify(&self) {
        self.link.notify();
    }

    /// A snapshot of the status.
    pub fn status(&self) -> ReplicatorStatus {
        self.link.status()
    }

    /// See [`ReplicatorLink::wait_for_page`].
    pub fn wait_for_page(&self, page: u64, timeout: Duration) -> ReplicatorStatus {
        self.link.wait_for_page(page, timeout)
    }

    /// Stops the thread after its current round and waits for it.
    pub fn stop(mut self) -> ReplicatorStatus {
        self.stop_inner();
        self.status()
    }

    fn stop_inner(&mut self) {
        {
            let shared = &self.link.shared;
            let mut status = shared.status.lock();
            status.stop = true;
            shared.changed.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ReplicatorHandle {
    fn drop(&mut self) {
        self.stop_inner();
    }
}
