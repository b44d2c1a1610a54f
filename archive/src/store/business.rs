//! The business page API: pages below [`ARCHIVE_BASE`], for the application's own use. Every
//! call refuses a page at or above the line before touching the file, so business code can
//! never overwrite or read archive records through it.

use std::ops::RangeInclusive;

use redb::{Durability, ReadableDatabase};

use super::Archive;
use crate::error::{ArchiveError, Result};
use crate::format::tables::PAGES;
use crate::format::{ARCHIVE_BASE, PageNo};

fn business(page: PageNo) -> Result<u64> {
    if page.is_business() {
        Ok(page.0)
    } else {
        Err(ArchiveError::ReservedPage(page))
    }
}

impl Archive {
    /// Writes a business page durably, replacing what it held.
    pub fn put_page(&self, page: PageNo, bytes: &[u8]) -> Result<()> {
        let page = business(page)?;
        let mut tx = self.db()?.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        tx.open_table(PAGES)?.insert(page, bytes)?;
        tx.commit()?;
        Ok(())
    }

    /// Removes a business page; returns whether it existed.
    pub fn delete_page(&self, page: PageNo) -> Result<bool> {
        let page = business(page)?;
        let mut tx = self.db()?.begin_write()?;
        tx.set_durability(Durability::Immediate)?;
        let existed = tx.open_table(PAGES)?.remove(page)?.is_some();
        tx.commit()?;
        Ok(existed)
    }

    /// Reads a business page.
    pub fn get_page(&self, page: PageNo) -> Result<Option<Vec<u8>>> {
        let page = business(page)?;
        let read = self.db()?.begin_read()?;
        let pages = read.open_table(PAGES)?;
        Ok(pages.get(page)?.map(|v| v.value().to_vec()))
    }

    /// The business pages in `range`, in page order. Both ends must be business pages.
    pub fn pages(&self, range: RangeInclusive<PageNo>) -> Result<Vec<(PageNo, Vec<u8>)>> {
        let (start, end) = (business(*range.start())?, business(*range.end())?);
        let read = self.db()?.begin_read()?;
        let pages = read.open_table(PAGES)?;
        let mut out = Vec::new();
        if start > end {
            return Ok(out);
        }
        for row in pages.range(start..=end.min(ARCHIVE_BASE - 1))? {
            let (page, bytes) = row?;
            out.push((PageNo(page.value()), bytes.value().to_vec()));
        }
        Ok(out)
    }
}
