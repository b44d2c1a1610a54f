//! Raw page access for replication: reading the stored bytes of archive pages, and installing
//! restored pages with their fold receipts and W in one transaction.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use bytes::Bytes;
use redb::{Durability, ReadableDatabase, ReadableTable};

use crate::error::{ArchiveError, Result};
use crate::fold::FoldReceipt;
use crate::format::record;
use crate::format::tables::{EXTENTS, META, META_NEXT_PAGE, META_NEXT_STREAM, PAGES, STREAMS};
use crate::format::{ARCHIVE_BASE, PageNo};
use crate::store::{Archive, StreamState, corrupt};

impl Archive {
    /// The stored bytes of the archive pages in `range` (records, checksums included), in
    /// page order. Both ends must be archive pages.
    pub fn raw_pages(&self, range: RangeInclusive<PageNo>) -> Result<Vec<(PageNo, Bytes)>> {
        let (start, end) = (*range.start(), *range.end());
        if start.is_business() {
            return Err(ArchiveError::Inconsistent(format!(
                "raw page reads are for archive pages; {start} is a business page"
            )));
        }
        let read = self.db()?.begin_read()?;
        let pages = read.open_table(PAGES)?;
        let mut out = Vec::new();
        for row in pages.range(start.0..=end.0)? {
            let (page, bytes) = row?;
            out.push((PageNo(page.value()), Bytes::copy_from_slice(bytes.value())));
        }
        Ok(out)
    }

    /// The receipts of every committed fold whose pages start after `after` (all folds for
    /// `None`), in page order (= commit order): what a replica has not shipped yet. Walks every
    /// extent (one row per fold).
    pub fn receipts_after(&self, after: Option<PageNo>) -> Result<Vec<FoldReceipt>> {
        let read = self.db()?.begin_read()?;
        let streams = read.open_table(STREAMS)?;
        let extents = read.open_table(EXTENTS)?;
        let mut names = std::collections::HashMap::new();
        for row in streams.iter()? {
            let (key, state) = row?;
            let state = StreamState::from_row(state.value());
            names.insert(state.stream_no, key.value().to_vec());
        }
        let mut out = Vec::new();
        for row in extents.iter()? {
            let (key, value) = row?;
            let (stream_no, first_ms, first_seq) = key.value();
            let (first_page, last_page, last_ms, last_seq) = value.value();
            if after.is_some_and(|a| first_page <= a.0) {
                continue;
            }
            let stream = names.get(&stream_no).cloned().ok_or_else(|| {
                ArchiveError::Inconsistent(format!("a fold of unknown stream number {stream_no}"))
            })?;
            out.push(FoldReceipt {
                stream,
                stream_no,
                first_page: PageNo(first_page),
                last_page: PageNo(last_page),
                first_id: echomq_engine::StreamId::new(first_ms, first_seq),
                watermark: echomq_engine::StreamId::new(last_ms, last_seq),
            });
        }
        out.sort_by_key(|r| r.first_page);
        Ok(out)
    }

    /// Installs restored folds: for each receipt (in fold order), its pages from `pages`, its
    /// extent, and the stream's W, all in one durable transaction. Every record must decode,
    /// belong to the receipt's stream and run from its first id to its W; a receipt must start
    /// above the stream's current W and its pages must be free. On any error nothing is
    /// installed.
    pub fn install(&self, receipts: &[FoldReceipt], pages: &BTreeMap<PageNo, Bytes>) -> Result<()> {
        let bad = |text: String| ArchiveError::Inconsistent(format!("restore: {text}"));
        let mut tx = self.db()?.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        {
            let mut streams = tx.open_table(STREAMS)?;
            let mut extents = tx.open_table(EXTENTS)?;
            let mut page_table = tx.open_table(PAGES)?;
            let mut meta = tx.open_table(META)?;
            for receipt in receipts {
                let (first, last) = (receipt.first_page, receipt.last_page);
                if first.0 < ARCHIVE_BASE || last < first {
                    return Err(bad(format!(
                        "receipt pages {first}..={last} are not archive pages"
                    )));
                }
                let mut state = match streams.get(receipt.stream.as_slice())? {
                    Some(row) => StreamState::from_row(row.value()),
                    None => StreamState {
                        stream_no: receipt.stream_no,
                        watermark: None,
                        records: 0,
                    },
                };
                if state.stream_no != receipt.stream_no {
                    return Err(bad("the stream has another number in this file".into()));
                }
                if state.watermark.is_some_and(|w| w >= receipt.first_id) {
                    return Err(bad(format!(
                        "fold from {} is at or below W",
                        receipt.first_id
                    )));
                }
                let mut prev = None;
                for page in first.0..=last.0 {
                    let bytes = pages
                        .get(&PageNo(page))
                        .ok_or_else(|| bad(format!("page {} is missing", PageNo(page))))?;
                    let rec = record::decode(PageNo(page), bytes.clone())
                        .map_err(|f| corrupt(page, f))?;
                    let id = rec.entry.id;
                    let in_order = match prev {
                        None => id == receipt.first_id,
                        Some(p) => id > p,
                    };
                    if rec.stream_no != receipt.stream_no || !in_order {
                        return Err(bad(format!(
                            "page {} does not fit its receipt",
                            PageNo(page)
                        )));
                    }
                    if page_table.get(page)?.is_some() {
                        return Err(bad(format!("page {} is already in use", PageNo(page))));
                    }
                    page_table.insert(page, bytes.as_ref())?;
                    prev = Some(id);
                }
                if prev != Some(receipt.watermark) {
                    return Err(bad("the last record is not the receipt's W".into()));
                }
                extents.insert(
                    (receipt.stream_no, receipt.first_id.ms, receipt.first_id.seq),
                    (first.0, last.0, receipt.watermark.ms, receipt.watermark.seq),
                )?;
                state.watermark = Some(receipt.watermark);
                state.records += receipt.records();
                streams.insert(receipt.stream.as_slice(), state.to_row())?;
                let next_page = meta
                    .get(META_NEXT_PAGE)?
                    .map_or(ARCHIVE_BASE, |v| v.value());
                meta.insert(META_NEXT_PAGE, next_page.max(last.0 + 1))?;
                let next_stream = meta.get(META_NEXT_STREAM)?.map_or(0, |v| v.value());
                meta.insert(META_NEXT_STREAM, next_stream.max(receipt.stream_no + 1))?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
