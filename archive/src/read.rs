//! Range reads of the archive side alone: forward and reverse, XRANGE's inclusive bounds.
//!
//! A read finds the fold extents that overlap `[start, end]`, seeks inside the first one by
//! binary search over its pages (records in an extent are in id order), then scans pages in
//! key order. Every record returned passes its checksum; a record that does not is an error,
//! not a skipped entry.

use std::ops::Bound;

use bytes::Bytes;
use echomq_engine::{Entry, StreamId};
use redb::{ReadOnlyTable, ReadableDatabase};

use crate::Archive;
use crate::error::{ArchiveError, Result};
use crate::format::PageNo;
use crate::format::record;
use crate::format::tables::{EXTENTS, ExtentKey, ExtentValue, PAGES, STREAMS};
use crate::store::{StreamState, corrupt};

/// One fold extent: pages `first_page..=last_page` hold ids `first..=last`.
#[derive(Debug, Clone, Copy)]
struct Extent {
    first: StreamId,
    first_page: u64,
    last_page: u64,
    last: StreamId,
}

type ExtentRow = (ExtentKey, ExtentValue);

fn extent(((_, ms, seq), (first_page, last_page, last_ms, last_seq)): ExtentRow) -> Extent {
    Extent {
        first: StreamId::new(ms, seq),
        first_page,
        last_page,
        last: StreamId::new(last_ms, last_seq),
    }
}

/// A consistent view of one stream's archive: its state and tables from one read transaction.
pub(crate) struct Snapshot {
    pub(crate) state: Option<StreamState>,
    extents: ReadOnlyTable<ExtentKey, ExtentValue>,
    pages: ReadOnlyTable<u64, &'static [u8]>,
}

impl Snapshot {
    pub(crate) fn watermark(&self) -> Option<StreamId> {
        self.state.and_then(|s| s.watermark)
    }

    fn decode(&self, stream_no: u64, page: u64, bytes: &[u8]) -> Result<Entry> {
        let record = record::decode(PageNo(page), Bytes::copy_from_slice(bytes))
            .map_err(|f| corrupt(page, f))?;
        if record.stream_no != stream_no {
            return Err(ArchiveError::Inconsistent(format!(
                "page {} holds a record of another stream",
                PageNo(page)
            )));
        }
        Ok(record.entry)
    }

    fn peek(&self, page: u64) -> Result<StreamId> {
        let bytes = self.pages.get(page)?.ok_or_else(|| {
            ArchiveError::Inconsistent(format!("page {} of a fold is missing", PageNo(page)))
        })?;
        record::peek(bytes.value())
            .map(|(_, id)| id)
            .map_err(|f| corrupt(page, f))
    }

    /// The first page of `e` whose id satisfies `past` (a monotone predicate), or one past the
    /// extent.
    fn partition(&self, e: &Extent, past: impl Fn(StreamId) -> bool) -> Result<u64> {
        let (mut lo, mut hi) = (e.first_page, e.last_page + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if past(self.peek(mid)?) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo)
    }

    fn key(stream_no: u64, id: StreamId) -> (u64, u64, u64) {
        (stream_no, id.ms, id.seq)
    }

    /// Entries with `start <= id <= end`, forward, at most `limit`.
    pub(crate) fn range(&self, start: StreamId, end: StreamId, limit: usize) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        let Some(state) = self.state else {
            return Ok(out);
        };
        if start > end || limit == 0 {
            return Ok(out);
        }
        let s = state.stream_no;
        let mut extents: Vec<Extent> = Vec::new();
        if let Some(row) = self
            .extents
            .range(Self::key(s, StreamId::MIN)..=Self::key(s, start))?
            .next_back()
        {
            let (k, v) = row?;
            let e = extent((k.value(), v.value()));
            if e.last >= start {
                extents.push(e);
            }
        }
        let after = (
            Bound::Excluded(Self::key(s, start)),
            Bound::Included(Self::key(s, end)),
        );
        for row in self.extents.range(after)? {
            let (k, v) = row?;
            extents.push(extent((k.value(), v.value())));
        }
        for e in extents {
            let from = if e.first >= start {
                e.first_page
            } else {
                self.partition(&e, |id| id >= start)?
            };
            for row in self.pages.range(from..=e.last_page)? {
                let (page, bytes) = row?;
                let entry = self.decode(s, page.value(), bytes.value())?;
                if entry.id > end {
                    return Ok(out);
                }
                out.push(entry);
                if out.len() == limit {
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    /// Entries with `start <= id <= end`, newest first, at most `limit`.
    pub(crate) fn rev_range(
        &self,
        start: StreamId,
        end: StreamId,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        let Some(state) = self.state else {
            return Ok(out);
        };
        if start > end || limit == 0 {
            return Ok(out);
        }
        let s = state.stream_no;
        for row in self
            .extents
            .range(Self::key(s, StreamId::MIN)..=Self::key(s, end))?
            .rev()
        {
            let (k, v) = row?;
            let e = extent((k.value(), v.value()));
            if e.last < start {
                break;
            }
            let to = if e.last <= end {
                e.last_page
            } else {
                match self.partition(&e, |id| id > end)?.checked_sub(1) {
                    Some(p) if p >= e.first_page => p,
                    _ => continue,
                }
            };
            for row in self.pages.range(e.first_page..=to)?.rev() {
                let (page, bytes) = row?;
                let entry = self.decode(s, page.value(), bytes.value())?;
                if entry.id < start {
                    return Ok(out);
                }
                out.push(entry);
                if out.len() == limit {
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }
}

impl Archive {
    /// A consistent view of `stream`'s archive.
    pub(crate) fn snapshot(&self, stream: &[u8]) -> Result<Snapshot> {
        let read = self.db()?.begin_read()?;
        let state = read
            .open_table(STREAMS)?
            .get(stream)?
            .map(|r| StreamState::from_row(r.value()));
        Ok(Snapshot {
            state,
            extents: read.open_table(EXTENTS)?,
            pages: read.open_table(PAGES)?,
        })
    }

    /// Archived entries of `stream` with `start <= id <= end`, in id order, at most `count`.
    pub fn range(
        &self,
        stream: &[u8],
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
    ) -> Result<Vec<Entry>> {
        self.snapshot(stream)?
            .range(start, end, count.unwrap_or(usize::MAX))
    }

    /// Archived entries of `stream` with `start <= id <= end`, newest first, at most `count`.
    pub fn rev_range(
        &self,
        stream: &[u8],
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
    ) -> Result<Vec<Entry>> {
        self.snapshot(stream)?
            .rev_range(start, end, count.unwrap_or(usize::MAX))
    }
}
