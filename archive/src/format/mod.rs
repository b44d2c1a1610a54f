//! The on-disk format: every table, its key layout, its value encoding, and what is immutable.
//!
//! One redb file holds the business pages of the application and the stream archive. redb
//! gives atomic, durable transactions (copy-on-write B-trees, checksummed commit slots); this
//! module decides what goes in them.
//!
//! ```text
//!                      u64 page space (table "pages": u64 -> bytes)
//!   0                                   1 << 63                              u64::MAX
//!   +-----------------------------------+---------------------------------------+
//!   | business pages: put_page/get_page | archive records: one record per page,  |
//!   | (opaque bytes, any use)           | allocated upwards by fold, never reused|
//!   +-----------------------------------+---------------------------------------+
//!                                       ^ ARCHIVE_BASE
//!
//!   table "streams":  stream key bytes -> (stream_no, W.ms, W.seq, records)
//!   table "extents":  (stream_no, first.ms, first.seq) -> (first_page, last_page, last.ms, last.seq)
//!   table "meta":     "format_version" -> 1, "next_page" -> next free archive page,
//!                     "next_stream" -> next stream_no
//!
//!   fold(stream, [e1 .. en]) in ONE write transaction (Durability::Immediate):
//!     pages[p .. p+n-1] = record(e1) .. record(en)     p = next_page
//!     extents[(s, e1.id)] = (p, p+n-1, en.id)          the fold receipt
//!     streams[key] = (s, en.id, records + n)           W advances to en.id
//!     meta.next_page = p + n
//! ```
//!
//! | table | key | value | immutable? |
//! |---|---|---|---|
//! | `pages` below [`ARCHIVE_BASE`] | business page number | the caller's bytes | no (`put_page` overwrites) |
//! | `pages` at/above [`ARCHIVE_BASE`] | archive page number | a [`record`] | yes, once committed |
//! | `extents` | `(stream_no, first id)` | `(first_page, last_page, last id)` | yes, once committed |
//! | `streams` | the stream's key (binary) | `(stream_no, W, records)` | W only grows |
//! | `meta` | a name | a number | `next_page`, `next_stream` only grow |
//!
//! Invariants (checked by [`crate::Archive::check_invariants`]):
//! - every archive page is covered by exactly one extent, extents of one stream are ordered and
//!   disjoint in ids and in pages, and their pages are below `next_page`;
//! - the records of an extent decode, pass their checksum, belong to its stream, and are in
//!   strictly increasing id order from `first` to `last`;
//! - a stream's W is the `last` id of its last extent and `records` the sum of its extents;
//! - no archive write lands below [`ARCHIVE_BASE`] and no business write at or above it.
//!
//! Record size: a record is stored at its natural size, never padded to a "page" of fixed
//! size. redb's own pages are 4 KiB and a value that does not fit one with its key and header
//! is rounded up to the next allocation (a 4096-byte value takes 8 KiB), so padding records to
//! 4 KiB would double the file; small feed entries (~100 bytes) pack about 30 to a redb page.
//!
//! Why extents rather than an id-to-page index: a fold writes a run of consecutive pages, so
//! one extent row per fold locates every record, and a range read scans pages in key order
//! (redb's fastest path) instead of one index lookup per record.

pub mod page;
pub mod record;
pub mod tables;

pub use page::{ARCHIVE_BASE, PageNo};
