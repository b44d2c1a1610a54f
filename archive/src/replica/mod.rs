//! Replication of the archive to an S3-compatible bucket behind a create-only commit fence,
//! restore from it, and writer takeover (`docs/architecture.md`, "Fold, merge and
//! replication"; what the fence needs from the store: `docs/reference/object-stores.md`).
//!
//! Objects under the replica's prefix (every one immutable once written):
//!
//! | key | what | written |
//! |---|---|---|
//! | `commits/{version:020}` | [`commit::Commit`]: prev hash, W, page range, segments, writer, epoch, own hash | create-only (`If-None-Match: *`), never deleted |
//! | `segments/{first:016x}-{last:016x}-{rand}` | [`segment`]: the pages of (part of) one commit | plain PUT of a new random key |
//!
//! Modules:
//! - [`store`]: the [`store::ObjectStore`] trait, an in-memory store with fault injection,
//!   and the S3 store (`rust-s3`, blocking; Tigris' consistency header).
//! - [`commit`], [`segment`]: the two object formats, each with its encode/decode.
//! - [`writer`]: the fence protocol (pending state saved before each commit PUT; 412/409/5xx
//!   handling; fencing; takeover by epoch bump).
//! - [`state`]: the writer's local state and where it is kept.
//! - [`restore`]: walking and checking the chain, fetching segments, verify.
//! - [`local`]: the archive side: state in the archive's redb file, the next batch from its
//!   fold receipts, restored commits installed into it.
//! - [`replicator`]: rounds of replication, on a thread of their own.
//! - [`location`]: parsing `s3://bucket/prefix` locations.
//!
//! Invariants: versions are gap-free from 1; each commit's `prev_hash` is its predecessor's
//! hash; page ranges follow each other; epochs never decrease; a version holds exactly one
//! commit and a writer that finds another writer's commit at its version stops (fenced).

pub(crate) mod codec;
pub mod commit;
pub mod error;
pub mod local;
pub mod location;
pub mod replicator;
pub mod restore;
pub mod segment;
pub mod state;
pub mod store;
pub mod types;
pub mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_archive;

pub use error::{ReplicaError, StoreError};
pub use local::{ArchiveState, load_state, next_batch, restore_into};
pub use location::Location;
pub use replicator::{Replicator, ReplicatorHandle, ReplicatorLink, ReplicatorStatus};
pub use state::{LocalState, MemoryState, ReplicaHead, StateStore};
pub use store::memory::MemoryStore;
#[cfg(feature = "s3")]
pub use store::s3::{S3Config, S3Store};
pub use store::{ObjectStore, PutOutcome};
pub use types::{CommitHash, Epoch, FoldRef, Page, PageRange, Version, WriterId};
pub use writer::{Batch, Receipt, Writer, WriterOptions};
