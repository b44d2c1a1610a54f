//! Archive tests against simple models: fold and read versus a `BTreeMap`, the page line,
//! merge-reads, and corrupt files.

mod corrupt;
mod fold_read;
mod model;
mod pages;
mod reopen;

use echomq_engine::{Entry, StreamId};
use tempfile::TempDir;

use crate::Archive;

/// A fresh archive in a temporary directory (kept alive by the returned guard).
pub(crate) fn archive() -> (TempDir, Archive) {
    let dir = tempfile::tempdir().unwrap();
    let archive = Archive::open(dir.path().join("archive.redb")).unwrap();
    (dir, archive)
}

/// An entry `ms-seq` with one field naming it.
pub(crate) fn entry(ms: u64, seq: u64) -> Entry {
    let id = StreamId::new(ms, seq);
    Entry {
        id,
        fields: vec![
            ("n".into(), id.to_string().into()),
            ("x".into(), "yz".into()),
        ],
    }
}
