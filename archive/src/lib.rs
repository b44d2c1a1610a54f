//! echomq-archive: the redb page store that trimmed stream entries are folded into, the
//! watermark, merge-reads of archive and live tail, and S3 replication.
//!
//! Not built yet: the archive issue fills this crate.

pub use echomq_engine as engine;

pub mod replica;
