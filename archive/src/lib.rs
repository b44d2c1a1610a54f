//! echomq-archive: the redb page store that trimmed stream entries are folded into, the
//! watermark W, merge-reads of archive and live tail, and S3 replication.
//!
//! - [`format`](mod@format): the on-disk format, every table and key layout, the record encoding (version
//!   and checksum), what is immutable; the page space split at [`ARCHIVE_BASE`].
//! - `store`: the [`Archive`] handle: open and recovery checks, stream state, figures,
//!   `check_invariants`, and the business page API (`put_page`, `get_page`, `pages`), which
//!   refuses archive pages.
//! - `fold`: [`Archive::fold`], entries and W in one durable transaction, idempotent at or
//!   below W, mint order enforced.
//! - `batch`: [`FoldBatch`], live entries copied out as records encoded already (the server's
//!   copy under its lock for a deferred fold), one buffer for the lot.
//! - `read`: archive-only range reads, forward and reverse.
//! - `merge`: [`Archive::read_merged`], the split on W between archive and live stream.
//! - `trim`: [`Archive::fold_then_trim`], fold-before-trim on an engine stream: the engine's
//!   trim preview says what would go, that is folded durably, then the stream is trimmed.
//! - [`fault`]: a storage backend whose writes fail on demand (a full disk), for tests of
//!   [`Archive::reopen`].
//! - [`error`]: the one error enum; `fuzzing` (the `fuzzing` feature, and this crate's tests):
//!   the fuzz targets of the record and replica decoders.
//! - [`replica`]: replication to an S3-compatible bucket behind a create-only commit fence,
//!   restore and verification, writer takeover (its own error enum, [`replica::ReplicaError`]).
//!
//! # Seam for replication (a module of this crate)
//! - `self.db()` (`pub(crate)`): the open redb [`redb::Database`], for starting one
//!   transaction (it sits behind a lock so [`Archive::reopen`] can replace it after an I/O
//!   error); [`format::tables`] has every table definition, so replication keeps its own table
//!   (`replica`) in the same file.
//! - How replication follows the folds: it does not hook into them. A fold commits on its
//!   own; the replicator finds the folds after its head through the `extents` table
//!   ([`replica::next_batch`]), records its pending and replicated state in its own durable
//!   transaction ([`replica::ArchiveState`]), and is woken after each committed fold by
//!   [`replica::ReplicatorLink::notify`] (the server does this for every fold-before-trim) or
//!   by its poll.
//! - `Archive::set_fold_hook(hook)` (`pub(crate)`): a spare seam, installed by nothing but
//!   its test: `hook(&tx, &receipt)` would run inside every fold's transaction before it
//!   commits (folds from the feed, the server and `fold_then_trim` alike), for state that must
//!   commit atomically with a fold; an error aborts the fold. `Archive::fold_with(stream,
//!   entries, also)` does the same for one fold ([`Archive::fold`] passes a no-op).
//! - [`FoldReceipt`]: stream, stream number, page range, first id and the new W;
//!   [`Archive::receipts_after`] lists the receipts of folds committed after a page.
//! - [`Archive::raw_pages`]: the stored bytes of archive pages in a range (a segment's body).
//! - [`Archive::install`]: writes restored pages, their fold receipts and W atomically, after
//!   checking every record (restore).

mod batch;
pub mod error;
pub mod fault;
mod fold;
pub mod format;
// The fuzz targets: for cargo-fuzz (fuzz/ enables the feature) and this crate's replays.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
mod merge;
mod raw;
mod read;
pub mod replica;
mod store;
mod trim;

pub use batch::{BatchEntry, FoldBatch};
pub use echomq_engine as engine;
pub use error::{ArchiveError, Result};
pub use fold::{FoldEntry, FoldReceipt};
pub use format::{ARCHIVE_BASE, PageNo};
pub use merge::{LiveRange, MERGE_ATTEMPTS_MAX, RangeQuery};
pub use store::{Archive, ArchiveStats, StreamState};
pub use trim::TrimOutcome;

#[cfg(test)]
mod tests;
