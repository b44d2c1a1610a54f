//! The redb table definitions and the names of `meta` rows (layouts in [`super`]).

use redb::TableDefinition;

/// All pages, business and archive: page number -> bytes.
pub const PAGES: TableDefinition<u64, &[u8]> = TableDefinition::new("pages");

/// Per stream: key -> `(stream_no, W.ms, W.seq, records)`. `records == 0` means nothing was
/// folded yet and W is absent.
pub const STREAMS: TableDefinition<&[u8], (u64, u64, u64, u64)> = TableDefinition::new("streams");

/// One row per fold (the fold receipt): `(stream_no, first.ms, first.seq)` ->
/// `(first_page, last_page, last.ms, last.seq)`.
pub const EXTENTS: TableDefinition<ExtentKey, ExtentValue> = TableDefinition::new("extents");

/// `extents` key: `(stream_no, first.ms, first.seq)`.
pub type ExtentKey = (u64, u64, u64);
/// `extents` value: `(first_page, last_page, last.ms, last.seq)`.
pub type ExtentValue = (u64, u64, u64, u64);

/// Counters and the format version.
pub const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// `meta` row: the format version the file was written with.
pub const META_FORMAT_VERSION: &str = "format_version";
/// `meta` row: the next archive page a fold allocates (starts at `ARCHIVE_BASE`).
pub const META_NEXT_PAGE: &str = "next_page";
/// `meta` row: the next stream number.
pub const META_NEXT_STREAM: &str = "next_stream";

/// The format this code writes and reads. A file with another version is refused on open.
pub const FORMAT_VERSION: u64 = 1;
