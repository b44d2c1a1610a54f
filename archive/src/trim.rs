//! Fold-before-trim over an in-process engine stream.
//!
//! [`Archive::fold_then_trim`] asks the engine what the trim would remove
//! ([`Stream::trim_preview`]: for `~` the whole nodes it drops, for `=` also the partial
//! node's prefix), folds exactly the entries above W among them in one durable transaction,
//! and only then trims. The caller holds the stream (`&mut`), so nothing can be appended or
//! trimmed in between and the trim removes exactly what was previewed; the check that the
//! preview's last id is at or below the durable W is the guard that a trim never passes W.
//!
//! Callers that cannot preview (a remote Redis) fold a superset and trim by `MINID` below W
//! instead; see `echomq::feed`.

use echomq_engine::{EntryRef, NodeLimits, Stream, StreamId, Trim};

use crate::Archive;
use crate::error::{ArchiveError, Result};
use crate::fold::FoldReceipt;

/// What a fold-before-trim did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrimOutcome {
    /// Live entries the trim removed.
    pub removed: u64,
    /// The fold that covered them, `None` when they were all at or below W already.
    pub folded: Option<FoldReceipt>,
}

impl Archive {
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
        let mut watermark = self.watermark(key)?;
        let mut folded = None;
        if watermark < Some(last) {
            let from = watermark.and_then(StreamId::next).unwrap_or(StreamId::MIN);
            let entries: Vec<EntryRef<'_>> = stream.range(from, last).collect();
            folded = self.fold(key, &entries)?;
            watermark = folded.as_ref().map(|r| r.watermark).or(watermark);
        }
        if watermark < Some(last) {
            return Err(ArchiveError::TrimPastWatermark {
                requested: last,
                watermark,
            });
        }
        let removed = stream.trim(trim, limits);
        debug_assert_eq!(
            removed, preview.removed,
            "the trim removes what it previewed"
        );
        Ok(TrimOutcome { removed, folded })
    }
}
