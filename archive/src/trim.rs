//! Fold-before-trim over an in-process engine stream.
//!
//! [`Archive::fold_then_trim`] asks the engine what the trim would remove
//! ([`Stream::trim_preview`]: for `~` the whole nodes it drops, for `=` also the partial
//! node's prefix), folds exactly the entries above W among them in one durable transaction,
//! and only then trims. The caller holds the stream (`&mut`), so nothing can be appended or
//! trimmed in between and the trim removes exactly what was previewed; the check that the
//! preview's last id is at or below the durable W is the guard that a trim never passes W.
//!
//! Live entries at or below W are taken as already archived (a crash between fold and trim,
//! or a `~` trim after a wider fold, leaves some); [`Archive::check_archived`] makes sure they
//! are, so a stream recreated below W is refused instead of losing entries.
//!
//! Callers that cannot preview (a remote Redis) fold a superset and trim by `MINID` below W
//! instead; see `echomq::feed`.

use echomq_engine::{DeleteStrategy, EntryRef, NodeLimits, Stream, StreamId, Trim};

use crate::Archive;
use crate::batch::{BatchEntry, FoldBatch};
use crate::error::{ArchiveError, Result};
use crate::fold::{FoldEntry, FoldReceipt};

/// What a fold-before-trim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimOutcome {
    /// Live entries the trim removed.
    pub removed: u64,
    /// The fold that covered them, `None` when they were all at or below W already.
    pub folded: Option<FoldReceipt>,
}

impl Archive {
    /// The check every trim of an archived stream passes first: a trim that removes entries up
    /// to `last` may run only if the durable W of `key` is at or above `last`. Returns W, or
    /// [`ArchiveError::TrimPastWatermark`] (fold first; nothing may be trimmed).
    pub fn guard_trim(&self, key: &[u8], last: StreamId) -> Result<StreamId> {
        match self.watermark(key)? {
            Some(w) if w >= last => Ok(w),
            watermark => Err(ArchiveError::TrimPastWatermark {
                requested: last,
                watermark,
            }),
        }
    }

    /// Checks that every entry in `live` (ascending, all at or below W) is in the archive, same
    /// id and same fields: live entries a trim would drop as "already archived" must really be
    /// there, or a stream recreated below W would lose them. Costs one archive range read over
    /// their span, and nothing in the common case where no live entry is at or below W.
    pub fn check_archived<E: FoldEntry>(&self, key: &[u8], live: &[E]) -> Result<()> {
        let (Some(first), Some(last)) = (live.first(), live.last()) else {
            return Ok(());
        };
        let watermark = self.guard_trim(key, last.id())?;
        let archived = self.range(key, first.id(), last.id(), None)?;
        let mut archived = archived.iter().peekable();
        for entry in live {
            let id = entry.id();
            while archived.next_if(|a| a.id < id).is_some() {}
            let same = archived.next_if(|a| a.id == id).is_some_and(|a| {
                a.fields.len() == entry.pairs().count()
                    && a.fields
                        .iter()
                        .zip(entry.pairs())
                        .all(|((f, v), (lf, lv))| f.as_ref() == lf && v.as_ref() == lv)
            });
            if !same {
                return Err(ArchiveError::NotArchived { id, watermark });
            }
        }
        Ok(())
    }

    /// Folds what `trim` would remove from `stream` (archived under `key`), then trims it.
    /// On an error nothing was trimmed (a fold that committed stays: it is idempotent).
    pub fn fold_then_trim(
        &self,
        key: &[u8],
        stream: &mut Stream,
        trim: &Trim,
        limits: NodeLimits,
    ) -> Result<TrimOutcome> {
        let preview = stream.trim_preview(trim, limits);
        let Some(last) = preview.last else {
            return Ok(TrimOutcome {
                removed: stream.trim(trim, limits),
                folded: None,
            });
        };
        let watermark = self.watermark(key)?;
        if let Some(w) = watermark {
            let below: Vec<EntryRef<'_>> = stream.range(StreamId::MIN, w.min(last)).collect();
            self.check_archived(key, &below)?;
        }
        let mut folded = None;
        if watermark < Some(last) {
            let from = watermark.and_then(StreamId::next).unwrap_or(StreamId::MIN);
            let entries: Vec<EntryRef<'_>> = stream.range(from, last).collect();
            folded = self.fold(key, &entries)?;
        }
        self.guard_trim(key, last)?;
        let removed = stream.trim(trim, limits);
        debug_assert_eq!(
            removed, preview.removed,
            "the trim removes what it previewed"
        );
        Ok(TrimOutcome { removed, folded })
    }

    /// The first half of a deferred fold-before-trim, given the live entries (copied out of
    /// the stream as a [`FoldBatch`], in id order) that the trim will remove: checks that
    /// those at or below the watermark are archived as they are, and folds the rest without
    /// an fsync. Nothing is trimmed: once [`Archive::sync`] made the fold durable,
    /// [`Archive::trim_folded`] removes the entries up to the last of them.
    pub fn fold_for_deferred_trim(
        &self,
        key: &[u8],
        entries: &FoldBatch,
    ) -> Result<Option<FoldReceipt>> {
        let watermark = self.watermark(key)?;
        let archived: Vec<BatchEntry<'_>> = entries
            .iter()
            .take_while(|e| Some(e.id()) <= watermark)
            .collect();
        self.check_archived(key, &archived)?;
        if archived.len() == entries.len() {
            return Ok(None);
        }
        // The fold skips the entries at or below W itself.
        self.fold_deferred(key, entries)
    }

    /// The second half: removes the entries of `stream` up to `up_to` that `delete` allows
    /// (an exact `MINID` trim just above it), after checking they are archived. Returns the
    /// trim applied and how many entries it removed.
    pub fn trim_folded(
        &self,
        key: &[u8],
        stream: &mut Stream,
        up_to: StreamId,
        delete: DeleteStrategy,
        limits: NodeLimits,
    ) -> Result<(Trim, u64)> {
        self.guard_trim(key, up_to)?;
        let mut trim = Trim::minid(up_to.next().unwrap_or(StreamId::MAX));
        trim.delete = delete;
        let removed = stream.trim(&trim, limits);
        Ok((trim, removed))
    }
}
