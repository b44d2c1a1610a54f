//! The page space: `u64` page numbers, split at [`ARCHIVE_BASE`] into business pages and
//! archive pages.

use std::fmt;

/// The first archive page. Business pages are `0 .. ARCHIVE_BASE`; the archive owns the top
/// half so that either side can grow without ever meeting the other.
pub const ARCHIVE_BASE: u64 = 1 << 63;

/// A page number in the store's `u64` page space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageNo(pub u64);

impl PageNo {
    /// Whether this page belongs to the stream archive (at or above [`ARCHIVE_BASE`]).
    pub fn is_archive(self) -> bool {
        self.0 >= ARCHIVE_BASE
    }

    /// Whether this page belongs to the business page space (below [`ARCHIVE_BASE`]).
    pub fn is_business(self) -> bool {
        !self.is_archive()
    }
}

impl fmt::Display for PageNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_splits_the_space_in_two() {
        assert!(PageNo(0).is_business());
        assert!(PageNo(ARCHIVE_BASE - 1).is_business());
        assert!(PageNo(ARCHIVE_BASE).is_archive());
        assert!(PageNo(u64::MAX).is_archive());
    }
}
