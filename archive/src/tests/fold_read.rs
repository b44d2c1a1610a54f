//! Fold and archive-side reads against a `BTreeMap` model.

use std::collections::BTreeMap;

use echomq_engine::{Entry, StreamId};
use proptest::prelude::*;

use super::{archive, entry};
use crate::ArchiveError;

#[test]
fn fold_advances_w_and_refolding_is_a_no_op() {
    let (_dir, archive) = archive();
    let batch: Vec<Entry> = (1..=5).map(|i| entry(i, 0)).collect();
    let receipt = archive.fold(b"s", &batch).unwrap().unwrap();
    assert_eq!(receipt.records(), 5);
    assert_eq!(receipt.first_id, StreamId::new(1, 0));
    assert_eq!(receipt.watermark, StreamId::new(5, 0));
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(5, 0)));
    assert_eq!(archive.fold(b"s", &batch).unwrap(), None);
    assert_eq!(archive.fold(b"s", &batch[..2]).unwrap(), None);
    // A slice straddling W folds only what is above it.
    let more: Vec<Entry> = (4..=7).map(|i| entry(i, 0)).collect();
    let receipt = archive.fold(b"s", &more).unwrap().unwrap();
    assert_eq!(receipt.first_id, StreamId::new(6, 0));
    assert_eq!(receipt.records(), 2);
    assert_eq!(archive.stream_state(b"s").unwrap().unwrap().records, 7);
    assert_eq!(
        archive
            .range(b"s", StreamId::MIN, StreamId::MAX, None)
            .unwrap(),
        (1..=7).map(|i| entry(i, 0)).collect::<Vec<_>>()
    );
    archive.check_invariants().unwrap();
}

#[test]
fn a_fold_whose_transaction_fails_before_commit_leaves_nothing() {
    let (_dir, archive) = archive();
    archive.fold(b"s", &[entry(1, 0)]).unwrap();
    let err = archive
        .fold_with(b"s", &[entry(2, 0), entry(3, 0)], |_, receipt| {
            assert_eq!(receipt.records(), 2);
            Err(ArchiveError::Storage("injected".into()))
        })
        .unwrap_err();
    assert!(matches!(err, ArchiveError::Storage(_)));
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(1, 0)));
    assert_eq!(archive.stats().unwrap().records, 1);
    assert_eq!(
        archive.stats().unwrap().archive_pages,
        1,
        "next_page did not move"
    );
    archive.check_invariants().unwrap();
    // The same entries fold normally afterwards, on the pages the failed fold would have used.
    let receipt = archive
        .fold(b"s", &[entry(2, 0), entry(3, 0)])
        .unwrap()
        .unwrap();
    assert_eq!(receipt.first_page.0, crate::ARCHIVE_BASE + 1);
    archive.check_invariants().unwrap();
}

#[test]
fn out_of_order_input_is_refused_and_writes_nothing() {
    let (_dir, archive) = archive();
    let batch = vec![entry(1, 0), entry(3, 0), entry(2, 0)];
    let err = archive.fold(b"s", &batch).unwrap_err();
    assert!(matches!(err, ArchiveError::OutOfOrder { prev, next }
        if prev == StreamId::new(3, 0) && next == StreamId::new(2, 0)));
    let duplicate = vec![entry(1, 0), entry(1, 0)];
    assert!(matches!(
        archive.fold(b"s", &duplicate),
        Err(ArchiveError::OutOfOrder { .. })
    ));
    assert_eq!(archive.watermark(b"s").unwrap(), None);
    assert_eq!(archive.stats().unwrap().records, 0);
    archive.check_invariants().unwrap();
}

#[test]
fn streams_share_the_file_each_with_its_own_w() {
    let (dir, archive) = archive();
    archive.fold(b"a", &[entry(1, 0), entry(2, 0)]).unwrap();
    archive.fold(b"b", &[entry(1, 5)]).unwrap();
    archive.fold(b"a", &[entry(3, 0)]).unwrap();
    assert_eq!(archive.watermark(b"a").unwrap(), Some(StreamId::new(3, 0)));
    assert_eq!(archive.watermark(b"b").unwrap(), Some(StreamId::new(1, 5)));
    assert_eq!(archive.watermark(b"c").unwrap(), None);
    assert_eq!(
        archive
            .range(b"b", StreamId::MIN, StreamId::MAX, None)
            .unwrap(),
        vec![entry(1, 5)]
    );
    let stats = archive.stats().unwrap();
    assert_eq!(
        (stats.streams, stats.records, stats.archive_pages),
        (2, 4, 4)
    );
    archive.check_invariants().unwrap();
    let path = archive.path().to_path_buf();
    drop(archive);
    let reopened = crate::Archive::open(&path).unwrap();
    assert_eq!(reopened.watermark(b"a").unwrap(), Some(StreamId::new(3, 0)));
    reopened.check_invariants().unwrap();
    drop(dir);
}

#[test]
fn a_second_handle_on_the_same_file_is_a_typed_error() {
    let (_dir, archive) = archive();
    assert!(matches!(
        crate::Archive::open(archive.path()),
        Err(ArchiveError::AlreadyOpen)
    ));
}

#[derive(Debug, Clone)]
enum Op {
    /// Fold the next `n` ids of stream `s` (ids advance by `gap`).
    Fold { s: usize, n: usize, gap: u64 },
    /// Read `[a, b]` of stream `s`, forward or reverse, with a count.
    Read {
        s: usize,
        a: u64,
        b: u64,
        count: Option<usize>,
        reverse: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3usize, 0..12usize, 1..4u64).prop_map(|(s, n, gap)| Op::Fold { s, n, gap }),
        (
            0..3usize,
            0..150u64,
            0..150u64,
            prop::option::of(0..10usize),
            any::<bool>()
        )
            .prop_map(|(s, a, b, count, reverse)| Op::Read {
                s,
                a,
                b,
                count,
                reverse
            }),
    ]
}

fn id(n: u64) -> StreamId {
    StreamId::new(n / 3, n % 3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn folds_and_reads_match_a_map(ops in prop::collection::vec(op(), 1..40)) {
        let (_dir, archive) = archive();
        let mut model: Vec<BTreeMap<StreamId, Entry>> = vec![BTreeMap::new(); 3];
        let mut next = [1u64; 3];
        for op in ops {
            match op {
                Op::Fold { s, n, gap } => {
                    let batch: Vec<Entry> = (0..n)
                        .map(|i| {
                            let n = next[s] + i as u64 * gap;
                            let id = id(n);
                            entry(id.ms, id.seq)
                        })
                        .collect();
                    next[s] += n as u64 * gap;
                    archive.fold(&[b's', s as u8], &batch).unwrap();
                    for e in batch {
                        model[s].insert(e.id, e);
                    }
                    prop_assert_eq!(
                        archive.watermark(&[b's', s as u8]).unwrap(),
                        model[s].keys().next_back().copied()
                    );
                }
                Op::Read { s, a, b, count, reverse } => {
                    let (a, b) = (id(a), id(b));
                    let limit = count.unwrap_or(usize::MAX);
                    let key = [b's', s as u8];
                    let (got, want): (Vec<Entry>, Vec<Entry>) = if reverse {
                        (
                            archive.rev_range(&key, a, b, count).unwrap(),
                            if a <= b { model[s].range(a..=b).rev().take(limit).map(|(_, e)| e.clone()).collect() } else { vec![] },
                        )
                    } else {
                        (
                            archive.range(&key, a, b, count).unwrap(),
                            if a <= b { model[s].range(a..=b).take(limit).map(|(_, e)| e.clone()).collect() } else { vec![] },
                        )
                    };
                    prop_assert_eq!(got, want);
                }
            }
            archive.check_invariants().unwrap();
        }
    }
}

#[test]
fn receipts_raw_pages_and_install_restore_an_archive() {
    let (_dir, source) = archive();
    let r1 = source
        .fold(b"a", &[entry(1, 0), entry(2, 0)])
        .unwrap()
        .unwrap();
    let r2 = source.fold(b"b", &[entry(1, 1)]).unwrap().unwrap();
    let r3 = source.fold(b"a", &[entry(3, 0)]).unwrap().unwrap();
    assert_eq!(
        source.receipts_after(None).unwrap(),
        vec![r1.clone(), r2.clone(), r3.clone()]
    );
    assert_eq!(
        source.receipts_after(Some(r1.last_page)).unwrap(),
        vec![r2.clone(), r3.clone()]
    );
    let pages: std::collections::BTreeMap<_, _> = source
        .raw_pages(r1.first_page..=r3.last_page)
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(pages.len(), 4);
    let (_dir2, target) = archive();
    target
        .install(&[r1.clone(), r2.clone(), r3.clone()], &pages)
        .unwrap();
    target.check_invariants().unwrap();
    for key in [&b"a"[..], b"b"] {
        assert_eq!(
            target.watermark(key).unwrap(),
            source.watermark(key).unwrap()
        );
        assert_eq!(
            target
                .range(key, StreamId::MIN, StreamId::MAX, None)
                .unwrap(),
            source
                .range(key, StreamId::MIN, StreamId::MAX, None)
                .unwrap()
        );
    }
    // Installing again is refused whole: the folds are at or below W now.
    assert!(matches!(
        target.install(std::slice::from_ref(&r3), &pages),
        Err(ArchiveError::Inconsistent(_))
    ));
    // A corrupted page is refused, and nothing is installed.
    let (_dir3, other) = archive();
    let mut bad = pages.clone();
    let mut bytes = bad[&r2.first_page].to_vec();
    bytes[20] ^= 1;
    bad.insert(r2.first_page, bytes.into());
    assert!(matches!(
        other.install(&[r1, r2, r3], &bad),
        Err(ArchiveError::CorruptRecord { .. })
    ));
    assert_eq!(other.stats().unwrap().records, 0);
    other.check_invariants().unwrap();
}

#[test]
fn the_fold_hook_writes_in_the_folds_transaction_and_can_abort_it() {
    use redb::{ReadableDatabase, TableDefinition};
    const PENDING: TableDefinition<&str, u64> = TableDefinition::new("test_pending");
    let (_dir, archive) = archive();
    let hook: crate::store::FoldHook = Box::new(|tx, receipt| {
        if receipt.first_id == StreamId::new(9, 0) {
            return Err(ArchiveError::Storage("hook refused".into()));
        }
        tx.open_table(PENDING)?
            .insert("last_page", receipt.last_page.0)?;
        Ok(())
    });
    assert!(archive.set_fold_hook(hook).is_ok());
    assert!(
        archive.set_fold_hook(Box::new(|_, _| Ok(()))).is_err(),
        "one hook only"
    );
    let receipt = archive
        .fold(b"s", &[entry(1, 0), entry(2, 0)])
        .unwrap()
        .unwrap();
    let read = archive.db().unwrap().begin_read().unwrap();
    let pending = read.open_table(PENDING).unwrap();
    assert_eq!(
        pending.get("last_page").unwrap().unwrap().value(),
        receipt.last_page.0
    );
    drop((pending, read));
    assert!(archive.fold(b"s", &[entry(9, 0)]).is_err());
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(2, 0)));
    archive.check_invariants().unwrap();
}
