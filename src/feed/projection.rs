//! Projections: folds over a time window of the feed, and a cache that avoids re-folding.
//!
//! A projection is deterministic in the entries it folds, so it can always be recomputed from
//! the log. [`CachedProjection`] keeps the last result together with the stream's bookkeeping
//! numbers ([`StreamMeta`]) at the time it was computed, and on the next read:
//! - numbers unchanged: returns the stored result (one metadata call, no range read);
//! - only appends since (entries-added and length grew by the same amount, first and
//!   max-deleted ids unchanged): every new entry is newer than anything folded, so it folds just
//!   the new entries that fall in the window (none if the window ended before them);
//! - anything else (a delete, a trim, XSETID): re-folds the window from scratch.

use echomq_engine::StreamId;
use time::OffsetDateTime;

use super::backend::{Backend, StreamMeta};
use super::error::FeedError;
use super::{Feed, Record, maxid_ceil, minid_floor, stream_key};

/// The slice of the feed a projection folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// `[t0, t1]`, both edges included.
    Closed(OffsetDateTime, OffsetDateTime),
    /// `[t0, +inf)`.
    Since(OffsetDateTime),
}

impl Window {
    /// The stream-id bounds of the window.
    pub fn bounds(self) -> Result<(StreamId, StreamId), FeedError> {
        match self {
            Window::Closed(t0, t1) if t1 < t0 => Err(FeedError::InvertedWindow { t0, t1 }),
            Window::Closed(t0, t1) => Ok((minid_floor(t0)?, maxid_ceil(t1)?)),
            Window::Since(t0) => Ok((minid_floor(t0)?, StreamId::MAX)),
        }
    }
}

/// How the last [`CachedProjection::get`] produced its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// Returned the stored result.
    Reused,
    /// Folded only entries appended since.
    Extended,
    /// Folded the whole window.
    Recomputed,
}

/// A fold over a window, cached while the window's inputs are unchanged.
pub struct CachedProjection<A, F> {
    queue: String,
    name: String,
    window: Window,
    init: A,
    step: F,
    cached: Option<(Option<StreamMeta>, A)>,
    last_refresh: Option<Refresh>,
}

impl<A: std::fmt::Debug, F> std::fmt::Debug for CachedProjection<A, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedProjection")
            .field("stream", &stream_key(&self.queue, &self.name))
            .field("window", &self.window)
            .field("last_refresh", &self.last_refresh)
            .finish_non_exhaustive()
    }
}

impl<A: Clone, F: Fn(&mut A, &Record)> CachedProjection<A, F> {
    /// A projection of `queue`/`name` over `window`, folding `step` from `init`.
    pub fn new(
        queue: &str,
        name: &str,
        window: Window,
        init: A,
        step: F,
    ) -> CachedProjection<A, F> {
        CachedProjection {
            queue: queue.to_string(),
            name: name.to_string(),
            window,
            init,
            step,
            cached: None,
            last_refresh: None,
        }
    }

    /// How the last `get` produced its result.
    pub fn last_refresh(&self) -> Option<Refresh> {
        self.last_refresh
    }

    /// The projection now.
    pub fn get<B: Backend>(&mut self, feed: &Feed<B>) -> Result<&A, FeedError> {
        let (start, end) = self.window.bounds()?;
        let key = stream_key(&self.queue, &self.name);
        let meta = feed.backend().meta(&key)?;
        let refresh = match (&self.cached, meta) {
            (Some((old, _)), now) if *old == now => Refresh::Reused,
            (Some((Some(old), _)), Some(now)) if only_appended(old, &now) => Refresh::Extended,
            _ => Refresh::Recomputed,
        };
        match refresh {
            Refresh::Reused => {}
            Refresh::Extended => {
                let Some((Some(old), acc)) = self.cached.as_mut() else {
                    return Err(FeedError::Backend("projection cache lost".into()));
                };
                let from = old
                    .last_id
                    .next()
                    .map_or(StreamId::MAX, |next| next.max(start));
                if from <= end {
                    for entry in feed.backend().range(&key, from, end, None, false)? {
                        (self.step)(acc, &Record::from_raw(entry, super::Brand::Evt)?);
                    }
                }
            }
            Refresh::Recomputed => {
                let mut acc = self.init.clone();
                for entry in feed.backend().range(&key, start, end, None, false)? {
                    (self.step)(&mut acc, &Record::from_raw(entry, super::Brand::Evt)?);
                }
                self.cached = Some((meta, acc));
            }
        }
        if let Some((stored, _)) = self.cached.as_mut() {
            *stored = meta;
        }
        self.last_refresh = Some(refresh);
        self.cached
            .as_ref()
            .map(|(_, acc)| acc)
            .ok_or_else(|| FeedError::Backend("projection cache lost".into()))
    }
}

/// Whether `now` differs from `old` by appends alone.
fn only_appended(old: &StreamMeta, now: &StreamMeta) -> bool {
    let added = now.entries_added.checked_sub(old.entries_added);
    let grown = now.length.checked_sub(old.length);
    old.length > 0
        && added.is_some_and(|a| a > 0)
        && added == grown
        && now.first_id == old.first_id
        && now.max_deleted_id == old.max_deleted_id
        && now.last_id > old.last_id
}
