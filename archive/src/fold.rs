//! Fold: entries about to be trimmed become archive records, one per page, and the stream's
//! watermark W advances, all in one durable transaction.
//!
//! Rules:
//! - the input is a mint-ordered slice: ids strictly increasing, or [`ArchiveError::OutOfOrder`]
//!   and nothing is written;
//! - entries at or below W are already archived and are skipped, so folding the same slice
//!   twice (a crash between fold and trim, a retried trim) is a no-op;
//! - pages are allocated upwards from `next_page`, always at or above [`ARCHIVE_BASE`];
//! - the transaction commits with `Durability::Immediate` (fsync) because the trim that follows
//!   relies on it: after a crash, a commit made with `Durability::None` would be gone and so
//!   would the trimmed entries. One fold is one transaction however many entries it holds
//!   (group commit: the fsync is paid once per fold, not per record).
//! - A *deferred* fold (the server's XADD, under its keyspace lock) commits with
//!   `Durability::None` and marks the archive unsynced; nothing is trimmed yet.
//!   [`Archive::sync`] (the server's commit pipeline, outside the lock) makes every deferred
//!   fold durable with one empty `Immediate` commit, which in redb covers the earlier ones, and
//!   only then are the trims they allow applied ([`Archive::trim_folded`]). A crash or a failed
//!   sync before that loses the fold and no trim ran, so nothing is lost.

use std::ops::Bound;
use std::sync::atomic::Ordering;

use echomq_engine::{Entry, EntryRef, StreamId};
use redb::{Durability, ReadableTable, WriteTransaction};

use crate::Archive;
use crate::batch::FoldBatch;
use crate::error::{ArchiveError, Result};
use crate::format::record;
use crate::format::tables::{EXTENTS, META, META_NEXT_PAGE, META_NEXT_STREAM, PAGES, STREAMS};
use crate::format::{ARCHIVE_BASE, PageNo};
use crate::store::StreamState;

/// An entry that can be folded: an id and its field/value pairs.
pub trait FoldEntry {
    /// The entry's stream id.
    fn id(&self) -> StreamId;
    /// Field/value pairs in order.
    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])>;
}

impl FoldEntry for Entry {
    fn id(&self) -> StreamId {
        self.id
    }

    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields.iter().map(|(f, v)| (f.as_ref(), v.as_ref()))
    }
}

impl FoldEntry for EntryRef<'_> {
    fn id(&self) -> StreamId {
        self.id
    }

    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.fields()
    }
}

/// What one committed fold wrote: the unit replication ships.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldReceipt {
    /// The stream's key.
    pub stream: Vec<u8>,
    /// The stream's number in the file.
    pub stream_no: u64,
    /// The first page written.
    pub first_page: PageNo,
    /// The last page written (pages `first_page..=last_page`, one record each).
    pub last_page: PageNo,
    /// The first id folded.
    pub first_id: StreamId,
    /// The new watermark: the last id folded.
    pub watermark: StreamId,
}

impl FoldReceipt {
    /// Records written.
    pub fn records(&self) -> u64 {
        self.last_page.0 - self.first_page.0 + 1
    }
}

/// What a fold reads: a slice of entries, or a [`FoldBatch`] of records encoded already.
pub(crate) trait FoldSource {
    /// Entries held.
    fn count(&self) -> usize;
    /// The id of entry `i`.
    fn id_at(&self, i: usize) -> StreamId;
    /// Writes entry `i`'s record for `page` of stream `stream_no` to `out` (cleared first).
    fn record_at(&self, i: usize, out: &mut Vec<u8>, page: PageNo, stream_no: u64);
}

impl<E: FoldEntry> FoldSource for [E] {
    fn count(&self) -> usize {
        self.len()
    }

    fn id_at(&self, i: usize) -> StreamId {
        self[i].id()
    }

    fn record_at(&self, i: usize, out: &mut Vec<u8>, page: PageNo, stream_no: u64) {
        let entry = &self[i];
        record::encode(out, page, stream_no, entry.id(), entry.pairs());
    }
}

impl FoldSource for FoldBatch {
    fn count(&self) -> usize {
        self.len()
    }

    fn id_at(&self, i: usize) -> StreamId {
        self.id(i)
    }

    fn record_at(&self, i: usize, out: &mut Vec<u8>, page: PageNo, stream_no: u64) {
        out.clear();
        out.extend_from_slice(self.get(i).record());
        record::seal(out, page, stream_no);
    }
}

/// Checks that ids strictly increase.
fn check_order<S: FoldSource + ?Sized>(entries: &S) -> Result<()> {
    for i in 1..entries.count() {
        let (prev, next) = (entries.id_at(i - 1), entries.id_at(i));
        if next <= prev {
            return Err(ArchiveError::OutOfOrder { prev, next });
        }
    }
    Ok(())
}

/// The number of leading entries at or below `w` (ids ascend).
fn at_or_below<S: FoldSource + ?Sized>(entries: &S, w: StreamId) -> usize {
    let (mut lo, mut hi) = (0, entries.count());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if entries.id_at(mid) <= w {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl Archive {
    /// Folds a mint-ordered slice of `stream`'s entries; returns the receipt, or `None` when
    /// every entry was already at or below W (nothing written).
    pub fn fold<E: FoldEntry>(&self, stream: &[u8], entries: &[E]) -> Result<Option<FoldReceipt>> {
        self.fold_with(stream, entries, |_, _| Ok(()))
    }

    /// [`Archive::fold`] without its fsync: durable once [`Archive::sync`] returns `Ok`.
    pub(crate) fn fold_deferred<S: FoldSource + ?Sized>(
        &self,
        stream: &[u8],
        entries: &S,
    ) -> Result<Option<FoldReceipt>> {
        self.fold_durably(stream, entries, Durability::None, |_, _| Ok(()))
    }

    /// Whether a deferred fold committed since the last [`Archive::sync`] (or a sync failed).
    pub fn needs_sync(&self) -> bool {
        self.unsynced.load(Ordering::Acquire)
    }

    /// Makes every deferred fold durable (one empty fsynced commit); nothing to do when none
    /// committed since the last sync. Returns whether it synced. On an error the archive
    /// stays unsynced, so a later call tries again.
    pub fn sync(&self) -> Result<bool> {
        // A caller that finds nothing to sync while another's fsync runs waits for it: the
        // folds that fsync covers may be its own.
        let _one_at_a_time = self.sync_lock.lock();
        if !self.unsynced.swap(false, Ordering::AcqRel) {
            return Ok(false);
        }
        let synced = self.db().and_then(|db| {
            let mut tx = db.begin_write()?;
            tx.set_durability(Durability::Immediate)?;
            tx.commit()?;
            Ok(())
        });
        match synced {
            Ok(()) => Ok(true),
            Err(e) => {
                self.unsynced.store(true, Ordering::Release);
                Err(e)
            }
        }
    }

    /// [`Archive::fold`], running `also` inside the fold's transaction before it commits, for
    /// state that must commit atomically with the fold (only [`Archive::fold`]'s no-op and
    /// tests use it today). If `also` fails, nothing is committed.
    pub(crate) fn fold_with<E: FoldEntry>(
        &self,
        stream: &[u8],
        entries: &[E],
        also: impl FnOnce(&WriteTransaction, &FoldReceipt) -> Result<()>,
    ) -> Result<Option<FoldReceipt>> {
        self.fold_durably(stream, entries, Durability::Immediate, also)
    }

    fn fold_durably<S: FoldSource + ?Sized>(
        &self,
        stream: &[u8],
        entries: &S,
        durability: Durability,
        also: impl FnOnce(&WriteTransaction, &FoldReceipt) -> Result<()>,
    ) -> Result<Option<FoldReceipt>> {
        check_order(entries)?;
        let deferred = matches!(durability, Durability::None);
        let mut tx = self.db()?.begin_write()?;
        tx.set_durability(durability)?;
        let receipt = {
            let mut streams = tx.open_table(STREAMS)?;
            let mut meta = tx.open_table(META)?;
            let existing = streams
                .get(stream)?
                .map(|r| StreamState::from_row(r.value()));
            let watermark = existing.and_then(|s| s.watermark);
            let fresh = watermark.map_or(0, |w| at_or_below(entries, w));
            let total = entries.count();
            if fresh == total {
                return Ok(None);
            }
            let (first_id, last_id) = (entries.id_at(fresh), entries.id_at(total - 1));
            let mut state = match existing {
                Some(state) => state,
                None => {
                    let stream_no = meta.get(META_NEXT_STREAM)?.map_or(0, |v| v.value());
                    meta.insert(META_NEXT_STREAM, stream_no + 1)?;
                    StreamState {
                        stream_no,
                        watermark: None,
                        records: 0,
                    }
                }
            };
            let first_page = meta
                .get(META_NEXT_PAGE)?
                .map_or(ARCHIVE_BASE, |v| v.value());
            if first_page < ARCHIVE_BASE {
                return Err(ArchiveError::Inconsistent(format!(
                    "next_page {} is below the archive line",
                    PageNo(first_page)
                )));
            }
            let count = (total - fresh) as u64;
            let last_page = first_page
                .checked_add(count - 1)
                .filter(|&p| p < u64::MAX)
                .ok_or(ArchiveError::PagesExhausted)?;
            let mut pages = tx.open_table(PAGES)?;
            // One ascending run through a cursor at the gap where `first_page` goes: redb
            // buffers the run and splices it into full leaves with one update of their
            // ancestors, instead of descending the tree for every record. A page that exists
            // already (a record is immutable) is refused, not overwritten.
            let mut cursor = pages.upper_bound_mut(Bound::Excluded(first_page))?;
            let mut buf = Vec::with_capacity(256);
            for (page, i) in (first_page..).zip(fresh..total) {
                debug_assert!(
                    page >= ARCHIVE_BASE,
                    "the archive never writes below the line"
                );
                entries.record_at(i, &mut buf, PageNo(page), state.stream_no);
                cursor
                    .insert_before(page, buf.as_slice())
                    .map_err(|e| match e {
                        redb::CursorError::UnorderedKey => ArchiveError::Inconsistent(format!(
                            "archive page {} is already written",
                            PageNo(page)
                        )),
                        other => ArchiveError::from(redb::Error::from(other)),
                    })?;
            }
            cursor.close()?;
            tx.open_table(EXTENTS)?.insert(
                (state.stream_no, first_id.ms, first_id.seq),
                (first_page, last_page, last_id.ms, last_id.seq),
            )?;
            state.watermark = Some(last_id);
            state.records += count;
            streams.insert(stream, state.to_row())?;
            meta.insert(META_NEXT_PAGE, last_page + 1)?;
            FoldReceipt {
                stream: stream.to_vec(),
                stream_no: state.stream_no,
                first_page: PageNo(first_page),
                last_page: PageNo(last_page),
                first_id,
                watermark: last_id,
            }
        };
        if let Some(hook) = self.fold_hook.get() {
            hook(&tx, &receipt)?;
        }
        also(&tx, &receipt)?;
        tx.commit()?;
        if deferred {
            self.unsynced.store(true, Ordering::Release);
        }
        Ok(Some(receipt))
    }
}
