//! Fold-before-trim over a backend that cannot preview a trim (a remote Redis-compatible
//! server): fold the superset an exact (`=`) trim would remove, then trim by `MINID` at or
//! below the durable W.
//!
//! Why this is safe: whatever the requested trim, the entries removed here are exactly the
//! live entries with ids below `bound = min(target, W + 1)`, where `target` is the first id an
//! exact trim would keep. Everything below `bound` is at or below W, so it is archived; and
//! `bound <= target` means the trim never removes more than the `=` form would (a `~` trim
//! stays `~`: whole nodes below the bound only, so it may under-trim, never over-trim).
//! Appends racing the trim land above the bound and are untouched, because the bound is an id,
//! not a count. The cost over the embedded engine's exact preview: with `~`, entries of the
//! partial node are folded while they stay live; a merge-read ignores live ids `<= W`, so they
//! are read once, from the archive.

use echomq_archive::Archive;
use echomq_engine::{Entry, StreamId, Trim, TrimStrategy};

use super::{Backend, RawEntry};
use crate::feed::error::FeedError;

/// An archive entry from a feed entry (fields copied once into shared buffers).
fn to_entry(raw: &RawEntry) -> Entry {
    Entry {
        id: raw.id,
        fields: raw.fields.to_vec(),
    }
}

/// Folds then trims `key` through `backend` with no trim preview (see the module doc).
pub(crate) fn fold_superset_then_trim<B: Backend + ?Sized>(
    backend: &B,
    key: &str,
    trim: &Trim,
    archive: &Archive,
) -> Result<u64, FeedError> {
    // The entries an exact trim would remove, and the first id it would keep.
    let doomed: Vec<RawEntry> = match trim.strategy {
        TrimStrategy::MaxLen(n) => {
            let Some(meta) = backend.meta(key)? else {
                return Ok(0);
            };
            let excess = meta.length.saturating_sub(n);
            // An explicit LIMIT caps what `~` may remove: no need to fold past it.
            let cap = match trim.limit {
                Some(limit) if trim.approx && limit > 0 => excess.min(limit),
                _ => excess,
            };
            if cap == 0 {
                return Ok(0);
            }
            let count = usize::try_from(cap).unwrap_or(usize::MAX);
            backend.range(key, StreamId::MIN, StreamId::MAX, Some(count), false)?
        }
        TrimStrategy::MinId(min) => match min.prev() {
            Some(below) => backend.range(key, StreamId::MIN, below, None, false)?,
            None => Vec::new(),
        },
    };
    let Some(last) = doomed.last().map(|e| e.id) else {
        return Ok(0);
    };
    let entries: Vec<Entry> = doomed.iter().map(to_entry).collect();
    if let Some(w) = archive.watermark(key.as_bytes())? {
        let below = entries.partition_point(|e| e.id <= w);
        archive.check_archived(key.as_bytes(), &entries[..below])?;
    }
    archive.fold(key.as_bytes(), &entries)?;
    let watermark = archive.guard_trim(key.as_bytes(), last)?;
    // Remove ids below `bound`: never above W, never past what `=` would remove.
    let covered = watermark.min(last);
    let Some(bound) = covered.next() else {
        // W is the largest id there is: everything may go.
        return backend.trim(key, trim);
    };
    let guarded = Trim {
        delete: trim.delete,
        strategy: TrimStrategy::MinId(bound),
        approx: trim.approx,
        limit: trim.limit,
    };
    backend.trim(key, &guarded)
}
