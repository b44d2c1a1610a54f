//! The archive side of replication: the writer's state in the archive's own redb file, the
//! next batch read from the archive's tables, and restored commits installed into it.
//!
//! Table `replica` (`&str -> &[u8]`), one row `state`: the encoded [`LocalState`] (writer,
//! epoch, head, pending commit, fence). It is written in one durable redb transaction, so
//! "pending" and "replicated" move together; it lives beside the pages it describes.
//!
//! Batches: pages after the head's last page, found through the `extents` table (one row per
//! fold). A fold is one transaction, so the pages after any committed fold's end are whole
//! folds; the batch is those folds in page order, capped at [`BATCH_PAGES_MAX`].

use std::collections::BTreeMap;

use bytes::Bytes;
use echomq_engine::StreamId;
use redb::{Durability, ReadableDatabase, ReadableTable, TableDefinition};

use super::commit::Commit;
use super::error::{ReplicaError, Result};
use super::restore::{self, ChainSummary, Progress, RestoreSink};
use super::state::{LocalState, StateStore};
use super::store::ObjectStore;
use super::types::{FoldRef, Page, PageRange};
use super::writer::Batch;
use crate::format::tables::{EXTENTS, META, META_NEXT_PAGE, STREAMS};
use crate::format::{ARCHIVE_BASE, PageNo};
use crate::{Archive, ArchiveError, FoldReceipt};

/// The replication state table.
pub const REPLICA: TableDefinition<&str, &[u8]> = TableDefinition::new("replica");
/// Its one row.
const STATE_ROW: &str = "state";
/// Pages per commit at most: bounds a round's memory (pages are held while uploading) and
/// keeps a commit's upload short enough to retry.
pub const BATCH_PAGES_MAX: u64 = 200_000;

fn db_err(e: impl Into<redb::Error>) -> ReplicaError {
    ReplicaError::Archive(ArchiveError::from(e.into()))
}

/// The writer state kept in an archive.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveState<'a>(pub &'a Archive);

/// Reads the replication state of `archive` (`None` if it never replicated or restored).
pub fn load_state(archive: &Archive) -> Result<Option<LocalState>> {
    let read = archive.db()?.begin_read().map_err(db_err)?;
    let table = match read.open_table(REPLICA) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(db_err(e)),
    };
    let row = table.get(STATE_ROW).map_err(db_err)?;
    row.map(|v| LocalState::decode(v.value())).transpose()
}

fn save_state(archive: &Archive, state: &LocalState) -> Result<()> {
    let mut tx = archive.db()?.begin_write().map_err(db_err)?;
    tx.set_durability(Durability::Immediate).map_err(db_err)?;
    {
        let mut table = tx.open_table(REPLICA).map_err(db_err)?;
        table
            .insert(STATE_ROW, state.encode().as_slice())
            .map_err(db_err)?;
    }
    tx.commit().map_err(db_err)
}

impl StateStore for ArchiveState<'_> {
    fn load(&mut self) -> Result<Option<LocalState>> {
        load_state(self.0)
    }

    fn save(&mut self, state: &LocalState) -> Result<()> {
        save_state(self.0, state)
    }
}

/// The owned flavour for a replicator thread.
#[derive(Debug, Clone)]
pub struct SharedArchiveState(pub std::sync::Arc<Archive>);

impl StateStore for SharedArchiveState {
    fn load(&mut self) -> Result<Option<LocalState>> {
        load_state(&self.0)
    }

    fn save(&mut self, state: &LocalState) -> Result<()> {
        save_state(&self.0, state)
    }
}

/// The next batch: whole folds after page `after` (`None`: from the first archive page), at
/// most [`BATCH_PAGES_MAX`] pages (always at least one fold). `None` when nothing is new.
pub fn next_batch(archive: &Archive, after: Option<u64>) -> Result<Option<Batch>> {
    let start = after.map_or(ARCHIVE_BASE, |p| p.saturating_add(1));
    let read = archive.db()?.begin_read().map_err(db_err)?;
    let meta = read.open_table(META).map_err(db_err)?;
    let next_page = meta
        .get(META_NEXT_PAGE)
        .map_err(db_err)?
        .map_or(ARCHIVE_BASE, |v| v.value());
    if next_page <= start {
        return Ok(None);
    }
    let streams = read.open_table(STREAMS).map_err(db_err)?;
    let extents = read.open_table(EXTENTS).map_err(db_err)?;
    let mut folds = Vec::new();
    for row in streams.iter().map_err(db_err)? {
        let (key, value) = row.map_err(db_err)?;
        let stream_no = value.value().0;
        let range = (stream_no, 0, 0)..=(stream_no, u64::MAX, u64::MAX);
        // A stream's extents grow in ids and pages together: walk back from the newest.
        for extent in extents.range(range).map_err(db_err)?.rev() {
            let (k, v) = extent.map_err(db_err)?;
            let (_, first_ms, first_seq) = k.value();
            let (first_page, last_page, w_ms, w_seq) = v.value();
            if last_page < start {
                break;
            }
            if first_page < start {
                return Err(ReplicaError::LocalState(format!(
                    "fold {first_page:016x}..={last_page:016x} straddles the replicated page {:016x}: the archive and its replication state disagree; restore it",
                    start - 1
                )));
            }
            folds.push(FoldRef {
                stream: key.value().to_vec(),
                stream_no,
                pages: PageRange {
                    first: first_page,
                    last: last_page,
                },
                first_id: StreamId::new(first_ms, first_seq),
                watermark: StreamId::new(w_ms, w_seq),
            });
        }
    }
    drop((meta, streams, extents, read));
    folds.sort_by_key(|f| f.pages.first);
    let mut expect = start;
    let mut taken = Vec::new();
    for fold in folds {
        if fold.pages.first != expect {
            return Err(ReplicaError::LocalState(format!(
                "archive pages {expect:016x}.. are not covered by a fold: run the archive's check"
            )));
        }
        if !taken.is_empty() && fold.pages.last - start >= BATCH_PAGES_MAX {
            break;
        }
        expect = fold.pages.last + 1;
        taken.push(fold);
    }
    let (Some(first), Some(last)) = (taken.first(), taken.last()) else {
        return Ok(None);
    };
    let range = PageRange {
        first: first.pages.first,
        last: last.pages.last,
    };
    let pages: Vec<Page> = archive
        .raw_pages(PageNo(range.first)..=PageNo(range.last))?
        .into_iter()
        .map(|(n, bytes)| Page {
            number: n.0,
            bytes: bytes.to_vec(),
        })
        .collect();
    if pages.len() as u64 != range.last - range.first + 1 {
        return Err(ReplicaError::LocalState(format!(
            "archive pages {range} are incomplete ({} found): run the archive's check",
            pages.len()
        )));
    }
    Ok(Some(Batch {
        pages,
        range: Some(range),
        folds: taken,
    }))
}

/// Installs restored commits into an archive.
#[derive(Debug)]
pub struct ArchiveSink<'a>(pub &'a Archive);

impl RestoreSink for ArchiveSink<'_> {
    fn apply(&mut self, commit: &Commit, pages: Vec<Page>) -> std::result::Result<(), String> {
        if commit.folds.is_empty() {
            return Ok(());
        }
        let receipts: Vec<FoldReceipt> = commit
            .folds
            .iter()
            .map(|f| FoldReceipt {
                stream: f.stream.clone(),
                stream_no: f.stream_no,
                first_page: PageNo(f.pages.first),
                last_page: PageNo(f.pages.last),
                first_id: f.first_id,
                watermark: f.watermark,
            })
            .collect();
        let pages: BTreeMap<PageNo, Bytes> = pages
            .into_iter()
            .map(|p| (PageNo(p.number), Bytes::from(p.bytes)))
            .collect();
        self.0
            .install(&receipts, &pages)
            .map_err(|e| format!("commit {}: {e}", commit.version))
    }
}

/// Restores the replica under `prefix` into `archive`, which must be empty, and records the
/// chain's head as this archive's replication state (not owning the chain: a replicator
/// opened on it takes over with an epoch bump).
pub fn restore_into(
    archive: &Archive,
    store: &dyn ObjectStore,
    prefix: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<ChainSummary> {
    let stats = archive.stats()?;
    if stats.archive_pages > 0 || stats.streams > 0 {
        return Err(ReplicaError::NotEmpty {
            path: archive.path().display().to_string(),
            what: format!("{} archive pages", stats.archive_pages),
        });
    }
    if load_state(archive)?.is_some() {
        return Err(ReplicaError::NotEmpty {
            path: archive.path().display().to_string(),
            what: "replication state".into(),
        });
    }
    let summary = restore::restore(store, prefix, &mut ArchiveSink(archive), progress)?;
    save_state(
        archive,
        &LocalState {
            epoch: None,
            head: summary.head,
            ..LocalState::fresh()
        },
    )?;
    Ok(summary)
}
