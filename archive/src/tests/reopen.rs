//! An I/O error mid-fold (the disk full) and the archive's recovery by [`Archive::reopen`].

use std::sync::Arc;

use echomq_engine::StreamId;

use super::entry;
use crate::fault::{DiskFull, FaultyFile};
use crate::{Archive, ArchiveError};

#[test]
fn a_fold_on_a_full_disk_fails_whole_and_reopen_recovers_every_committed_fold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("archive.redb");
    let disk = DiskFull::new();
    let archive =
        Archive::open_with_backend(&path, FaultyFile::opener(path.clone(), Arc::clone(&disk)))
            .unwrap();
    archive.fold(b"s", &[entry(1, 1), entry(1, 2)]).unwrap();

    disk.set(true);
    let failed = archive.fold(b"s", &[entry(1, 3)]).unwrap_err();
    assert!(failed.needs_reopen(), "{failed}");
    assert!(disk.refused() > 0);
    // Reopening while the disk is still full fails and leaves the archive closed.
    match archive.reopen() {
        Err(e) => assert!(e.needs_reopen(), "{e}"),
        Ok(()) => {
            // redb may reopen without writing; then the next fold still fails.
            assert!(archive.fold(b"s", &[entry(1, 3)]).is_err());
        }
    }

    disk.set(false);
    archive.reopen().unwrap();
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(1, 2)));
    archive.fold(b"s", &[entry(1, 3)]).unwrap();
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(1, 3)));
    archive.check_invariants().unwrap();
    let ids: Vec<StreamId> = archive
        .range(b"s", StreamId::MIN, StreamId::MAX, None)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(
        ids,
        [
            StreamId::new(1, 1),
            StreamId::new(1, 2),
            StreamId::new(1, 3)
        ]
    );
}

#[test]
fn a_closed_archive_answers_closed_until_reopened() {
    let (_dir, archive) = super::archive();
    archive.fold(b"s", &[entry(1, 1)]).unwrap();
    drop(archive.db.write().take());
    assert!(matches!(archive.watermark(b"s"), Err(ArchiveError::Closed)));
    archive.reopen().unwrap();
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(1, 1)));
}
