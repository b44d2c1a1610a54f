//! Damaged files: flipped record bytes, truncation, garbage. Typed errors, never a panic.

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};

use echomq_engine::StreamId;

use super::{archive, entry};
use crate::{Archive, ArchiveError};

/// Overwrites every occurrence of `needle` in the file with `with` (same length).
fn patch(path: &std::path::Path, needle: &[u8], with: &[u8]) -> usize {
    let mut bytes = std::fs::read(path).unwrap();
    let mut hits = 0;
    let mut at = 0;
    while let Some(pos) = bytes[at..].windows(needle.len()).position(|w| w == needle) {
        let start = at + pos;
        bytes[start..start + with.len()].copy_from_slice(with);
        hits += 1;
        at = start + needle.len();
    }
    std::fs::write(path, bytes).unwrap();
    hits
}

#[test]
fn a_flipped_byte_in_a_record_is_a_checksum_error_on_read() {
    let (_dir, archive) = archive();
    let mut batch: Vec<_> = (1..=3).map(|i| entry(i, 0)).collect();
    batch[1].fields[1].1 = "MARKER-VALUE".into();
    archive.fold(b"s", &batch).unwrap();
    let path = archive.path().to_path_buf();
    drop(archive);
    assert!(patch(&path, b"MARKER-VALUE", b"MARKER-VALUF") >= 1);
    // Opening checks the last record only; the damaged one is in the middle.
    let archive = Archive::open(&path).unwrap();
    let err = archive
        .range(b"s", StreamId::MIN, StreamId::MAX, None)
        .unwrap_err();
    assert!(matches!(err, ArchiveError::CorruptRecord { .. }), "{err}");
    assert!(err.to_string().contains("restore"));
    // Reads that do not touch it still work.
    assert_eq!(
        archive
            .range(b"s", StreamId::new(3, 0), StreamId::MAX, None)
            .unwrap(),
        vec![entry(3, 0)]
    );
    assert!(matches!(
        archive.check_invariants(),
        Err(ArchiveError::CorruptRecord { .. })
    ));
}

#[test]
fn a_damaged_last_record_is_found_on_open() {
    let (_dir, archive) = archive();
    let mut last = entry(2, 0);
    last.fields[1].1 = "LAST-MARKER".into();
    archive.fold(b"s", &[entry(1, 0), last]).unwrap();
    let path = archive.path().to_path_buf();
    drop(archive);
    assert!(patch(&path, b"LAST-MARKER", b"LAST-MARKEX") >= 1);
    let err = Archive::open(&path).unwrap_err();
    assert!(matches!(err, ArchiveError::CorruptRecord { .. }), "{err}");
}

#[test]
fn truncated_and_garbage_files_are_typed_errors() {
    let (dir, archive) = archive();
    archive
        .fold(b"s", &(1..=50).map(|i| entry(i, 0)).collect::<Vec<_>>())
        .unwrap();
    let path = archive.path().to_path_buf();
    drop(archive);
    let len = std::fs::metadata(&path).unwrap().len();
    for keep in [len / 2, 100, 10] {
        let copy = dir.path().join(format!("cut-{keep}.redb"));
        std::fs::copy(&path, &copy).unwrap();
        OpenOptions::new()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_len(keep)
            .unwrap();
        match Archive::open(&copy) {
            Err(ArchiveError::CorruptFile(_) | ArchiveError::Io(_) | ArchiveError::Storage(_)) => {}
            Err(other) => panic!("unexpected error for a file cut to {keep} bytes: {other}"),
            // A cut that only removed free space leaves a valid file; it must then be whole.
            Ok(archive) => archive.check_invariants().unwrap(),
        }
    }
    let garbage = dir.path().join("garbage.redb");
    std::fs::write(&garbage, vec![0xA5u8; 8192]).unwrap();
    assert!(Archive::open(&garbage).is_err());
    let mut header = OpenOptions::new().write(true).open(&path).unwrap();
    header.seek(SeekFrom::Start(0)).unwrap();
    header.write_all(b"not a redb file at all").unwrap();
    drop(header);
    let err = Archive::open(&path).unwrap_err();
    assert!(matches!(err, ArchiveError::CorruptFile(_)), "{err:?}");
}
