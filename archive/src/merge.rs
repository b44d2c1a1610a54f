//! Merge-read: one range read over archive and live stream, split on the watermark W.
//!
//! Ids `<= W` come from the archive, ids `> W` from the live stream, with XRANGE's inclusive
//! bounds and COUNT. Because a trim never removes an entry above the durable W, the union is
//! what a never-trimmed log returns; live entries at or below W (folded but not yet trimmed,
//! or kept by a `~` trim after an over-wide fold) are ignored, so nothing is returned twice.
//!
//! Races: a fold and trim may run between reading W and reading the live side. The archive
//! side is read from one snapshot (records at or below a W never change), and after the live
//! read W is read again: if it moved, entries just above the old W may have been trimmed
//! before the live read saw them, so the read starts over. Folds take milliseconds and live
//! reads microseconds, so a retry is rare and [`MERGE_ATTEMPTS_MAX`] is never reached unless
//! the archive is folded into continuously.

use echomq_engine::{Entry, StreamId};

use crate::Archive;
use crate::error::ArchiveError;

/// How many times a merge-read starts over because W moved under it before giving up.
pub const MERGE_ATTEMPTS_MAX: usize = 16;

/// The live side of a merge-read: reads `[start, end]` (reverse: newest first), at most
/// `count` entries (`None`: all).
pub trait LiveRange<T, E> {
    /// The live read.
    fn read(
        &mut self,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<T>, E>;
}

impl<T, E, F> LiveRange<T, E> for F
where
    F: FnMut(StreamId, StreamId, Option<usize>, bool) -> Result<Vec<T>, E>,
{
    fn read(
        &mut self,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<T>, E> {
        self(start, end, count, reverse)
    }
}

/// The bounds of a merge-read, as XRANGE takes them: `start <= id <= end`, at most `count`
/// entries (`None`: all), newest first when `reverse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeQuery {
    /// The lowest id returned.
    pub start: StreamId,
    /// The highest id returned.
    pub end: StreamId,
    /// The most entries returned.
    pub count: Option<usize>,
    /// Newest first (XREVRANGE).
    pub reverse: bool,
}

impl RangeQuery {
    /// A forward read of `[start, end]`.
    pub fn forward(start: StreamId, end: StreamId, count: Option<usize>) -> RangeQuery {
        RangeQuery {
            start,
            end,
            count,
            reverse: false,
        }
    }

    /// A reverse read of `[start, end]`.
    pub fn reverse(start: StreamId, end: StreamId, count: Option<usize>) -> RangeQuery {
        RangeQuery {
            start,
            end,
            count,
            reverse: true,
        }
    }
}

fn remaining(count: Option<usize>, taken: usize) -> Option<usize> {
    count.map(|n| n.saturating_sub(taken))
}

impl Archive {
    /// Reads `stream`'s `query` range from the archive (ids `<= W`) and `live` (ids `> W`). `convert` turns an
    /// archived [`Entry`] into the live side's item type.
    pub fn read_merged<T, E>(
        &self,
        stream: &[u8],
        query: RangeQuery,
        mut live: impl LiveRange<T, E>,
        mut convert: impl FnMut(Entry) -> T,
    ) -> Result<Vec<T>, E>
    where
        E: From<ArchiveError>,
    {
        let RangeQuery {
            start,
            end,
            count,
            reverse,
        } = query;
        if start > end || count == Some(0) {
            return Ok(Vec::new());
        }
        for _ in 0..MERGE_ATTEMPTS_MAX {
            let snapshot = self.snapshot(stream)?;
            let w = snapshot.watermark();
            // The live part: ids above W within the bounds (none when W is the last id).
            let live_start = match w {
                None => Some(start),
                Some(w) => w.next().map(|above| above.max(start)),
            }
            .filter(|&s| s <= end);
            let archive_end = w.filter(|&w| w >= start).map(|w| w.min(end));
            let limit = count.unwrap_or(usize::MAX);
            let mut out: Vec<T>;
            if reverse {
                out = match live_start {
                    Some(s) => live.read(s, end, count, true)?,
                    None => Vec::new(),
                };
                if live_start.is_some() && self.watermark(stream)? != w {
                    continue;
                }
                if let Some(archive_end) = archive_end
                    && out.len() < limit
                {
                    let archived = snapshot.rev_range(start, archive_end, limit - out.len())?;
                    out.extend(archived.into_iter().map(&mut convert));
                }
            } else {
                out = match archive_end {
                    Some(archive_end) => snapshot
                        .range(start, archive_end, limit)?
                        .into_iter()
                        .map(&mut convert)
                        .collect(),
                    None => Vec::new(),
                };
                if let Some(s) = live_start
                    && out.len() < limit
                {
                    let tail = live.read(s, end, remaining(count, out.len()), false)?;
                    if self.watermark(stream)? != w {
                        continue;
                    }
                    out.extend(tail);
                }
            }
            return Ok(out);
        }
        Err(ArchiveError::WatermarkMoving.into())
    }
}
