//! The archive's central property: any interleaving of appends, folds, trims and merge-reads
//! returns exactly what a never-trimmed log returns, for every range.

use std::collections::BTreeMap;

use echomq_engine::{AddId, Entry, NodeLimits, Stream, StreamId, Trim};
use proptest::prelude::*;

use super::archive;
use crate::{Archive, ArchiveError, RangeQuery};

#[derive(Debug, Clone)]
enum Op {
    /// Append `n` entries (ids advance by 1..3 sequence steps).
    Append(usize),
    /// Fold the oldest `n` live entries without trimming (a fold that ran before a crash).
    Fold(usize),
    /// Fold-before-trim.
    Trim(Trim),
    /// A merge-read.
    Read {
        a: u64,
        b: u64,
        count: Option<usize>,
        reverse: bool,
    },
}

fn id(n: u64) -> StreamId {
    StreamId::new(n / 4, n % 4)
}

fn op() -> impl Strategy<Value = Op> {
    let trim = (
        any::<bool>(),
        0..40u64,
        any::<bool>(),
        prop::option::of(0..30u64),
    )
        .prop_map(|(maxlen, n, approx, limit)| {
            let t = match (maxlen, approx) {
                (true, true) => Trim::maxlen_approx(n),
                (true, false) => Trim::maxlen(n),
                (false, true) => Trim::minid_approx(id(n * 3)),
                (false, false) => Trim::minid(id(n * 3)),
            };
            match limit {
                Some(l) if approx => t.with_limit(l),
                _ => t,
            }
        });
    prop_oneof![
        3 => (1..12usize).prop_map(Op::Append),
        1 => (0..10usize).prop_map(Op::Fold),
        2 => trim.prop_map(Op::Trim),
        3 => (0..200u64, 0..200u64, prop::option::of(0..12usize), any::<bool>())
            .prop_map(|(a, b, count, reverse)| Op::Read { a, b, count, reverse }),
    ]
}

/// A merge-read over the archive and an engine stream.
pub(crate) fn merged(archive: &Archive, key: &[u8], live: &Stream, q: RangeQuery) -> Vec<Entry> {
    archive
        .read_merged::<Entry, ArchiveError>(
            key,
            q,
            |a: StreamId, b: StreamId, count: Option<usize>, reverse: bool| {
                let n = count.unwrap_or(usize::MAX);
                Ok(if reverse {
                    live.rev_range(a, b).take(n).map(|e| e.to_entry()).collect()
                } else {
                    live.range(a, b).take(n).map(|e| e.to_entry()).collect()
                })
            },
            |e| e,
        )
        .unwrap()
}

fn check(archive: &Archive, live: &Stream, log: &BTreeMap<StreamId, Entry>) {
    archive.check_invariants().unwrap();
    live.check_invariants().unwrap();
    // W covers every entry the live stream lost.
    let w = archive.watermark(b"s").unwrap();
    let first_live = live.first_entry().map(|e| e.id);
    for id in log.keys() {
        let in_live = live.get(*id).is_some();
        assert!(
            in_live || Some(*id) <= w,
            "{id} is neither live nor archived (W {w:?}, first live {first_live:?})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn merge_reads_equal_a_never_trimmed_log(
        entries_max in 1..6u64,
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let limits = NodeLimits { entries_max, bytes_max: 4096 };
        let (_dir, archive) = archive();
        let mut live = Stream::new();
        let mut log: BTreeMap<StreamId, Entry> = BTreeMap::new();
        let mut next = 1u64;
        for op in ops {
            match op {
                Op::Append(n) => {
                    for i in 0..n {
                        let id = id(next);
                        next += 1 + (i as u64 % 3);
                        let value = format!("v{id}");
                        let fields: Vec<&str> = if i % 2 == 0 { vec!["f", &value] } else { vec!["g", &value, "h", "x"] };
                        live.add(AddId::Explicit(id), &fields, 0, limits).unwrap();
                        log.insert(id, live.get(id).unwrap().to_entry());
                    }
                }
                Op::Fold(n) => {
                    let entries: Vec<_> = live.range(StreamId::MIN, StreamId::MAX).take(n).collect();
                    archive.fold(b"s", &entries).unwrap();
                }
                Op::Trim(t) => {
                    let before = live.len();
                    let outcome = archive.fold_then_trim(b"s", &mut live, &t, limits).unwrap();
                    prop_assert_eq!(live.len(), before - outcome.removed);
                }
                Op::Read { a, b, count, reverse } => {
                    let (a, b) = (id(a), id(b));
                    let limit = count.unwrap_or(usize::MAX);
                    let want: Vec<Entry> = if a > b {
                        vec![]
                    } else if reverse {
                        log.range(a..=b).rev().take(limit).map(|(_, e)| e.clone()).collect()
                    } else {
                        log.range(a..=b).take(limit).map(|(_, e)| e.clone()).collect()
                    };
                    let q = RangeQuery { start: a, end: b, count, reverse };
                    prop_assert_eq!(merged(&archive, b"s", &live, q), want);
                }
            }
            check(&archive, &live, &log);
        }
        // Every range at the end: the whole log both ways.
        let all: Vec<Entry> = log.values().cloned().collect();
        prop_assert_eq!(merged(&archive, b"s", &live, RangeQuery::forward(StreamId::MIN, StreamId::MAX, None)), all.clone());
        let mut rev = all;
        rev.reverse();
        prop_assert_eq!(merged(&archive, b"s", &live, RangeQuery::reverse(StreamId::MIN, StreamId::MAX, None)), rev);
    }
}

#[test]
fn a_fold_and_trim_racing_a_merge_read_makes_it_start_over() {
    let limits = NodeLimits {
        entries_max: 2,
        bytes_max: 4096,
    };
    let (_dir, archive) = archive();
    let live = std::cell::RefCell::new(Stream::new());
    for seq in 1..=10 {
        live.borrow_mut()
            .add(
                AddId::Explicit(StreamId::new(1, seq)),
                &["f", "v"],
                0,
                limits,
            )
            .unwrap();
    }
    let all: Vec<Entry> = live
        .borrow()
        .range(StreamId::MIN, StreamId::MAX)
        .map(|e| e.to_entry())
        .collect();
    let mut calls = 0;
    let got = archive
        .read_merged::<Entry, ArchiveError>(
            b"s",
            RangeQuery::forward(StreamId::MIN, StreamId::MAX, None),
            |a: StreamId, b: StreamId, _count: Option<usize>, _reverse: bool| {
                calls += 1;
                // The first live read happens just after another thread folded and trimmed
                // four entries: it no longer sees them.
                if calls == 1 {
                    archive
                        .fold_then_trim(b"s", &mut live.borrow_mut(), &Trim::maxlen(6), limits)
                        .unwrap();
                }
                Ok(live.borrow().range(a, b).map(|e| e.to_entry()).collect())
            },
            |e| e,
        )
        .unwrap();
    assert_eq!(calls, 2, "W moved, so the read started over");
    assert_eq!(got, all);

    // The same race on a reverse read, which reads the live side first.
    let mut calls = 0;
    let got = archive
        .read_merged::<Entry, ArchiveError>(
            b"s",
            RangeQuery::reverse(StreamId::MIN, StreamId::MAX, None),
            |a: StreamId, b: StreamId, _count: Option<usize>, _reverse: bool| {
                calls += 1;
                if calls == 1 {
                    archive
                        .fold_then_trim(b"s", &mut live.borrow_mut(), &Trim::maxlen(3), limits)
                        .unwrap();
                }
                Ok(live
                    .borrow()
                    .rev_range(a, b)
                    .map(|e| e.to_entry())
                    .collect())
            },
            |e| e,
        )
        .unwrap();
    assert_eq!(calls, 2, "W moved, so the reverse read started over");
    let mut reversed = all.clone();
    reversed.reverse();
    assert_eq!(got, reversed);
}

#[test]
fn a_trim_past_w_is_refused() {
    let (_dir, archive) = archive();
    let err = archive.guard_trim(b"s", StreamId::new(1, 1)).unwrap_err();
    assert!(matches!(
        err,
        ArchiveError::TrimPastWatermark {
            watermark: None,
            ..
        }
    ));
    assert!(err.to_string().contains("fold first"));
    archive
        .fold(b"s", &[super::entry(1, 1), super::entry(1, 2)])
        .unwrap();
    assert_eq!(
        archive.guard_trim(b"s", StreamId::new(1, 2)).unwrap(),
        StreamId::new(1, 2)
    );
    assert!(matches!(
        archive.guard_trim(b"s", StreamId::new(1, 3)),
        Err(ArchiveError::TrimPastWatermark { watermark: Some(w), .. }) if w == StreamId::new(1, 2)
    ));
}

#[test]
fn a_stream_recreated_below_w_is_refused_not_trimmed() {
    let limits = NodeLimits {
        entries_max: 2,
        bytes_max: 4096,
    };
    let (_dir, archive) = archive();
    let mut live = Stream::new();
    for seq in 1..=6 {
        live.add(
            AddId::Explicit(StreamId::new(1, seq)),
            &["f", "old"],
            0,
            limits,
        )
        .unwrap();
    }
    archive
        .fold_then_trim(b"s", &mut live, &Trim::maxlen(0), limits)
        .unwrap();
    assert_eq!(archive.watermark(b"s").unwrap(), Some(StreamId::new(1, 6)));
    // The live stream starts over (a restart of an in-memory server) with ids below W.
    let mut live = Stream::new();
    for seq in [2, 7, 8] {
        live.add(
            AddId::Explicit(StreamId::new(1, seq)),
            &["f", "new"],
            0,
            limits,
        )
        .unwrap();
    }
    let err = archive
        .fold_then_trim(b"s", &mut live, &Trim::maxlen(0), limits)
        .unwrap_err();
    assert!(matches!(err, ArchiveError::NotArchived { .. }), "{err}");
    assert_eq!(live.len(), 3, "nothing was trimmed");
    // A new id below W that the archive lacks fails too.
    let mut live = Stream::new();
    live.add(
        AddId::Explicit(StreamId::new(0, 5)),
        &["f", "new"],
        0,
        limits,
    )
    .unwrap();
    let err = archive
        .fold_then_trim(b"s", &mut live, &Trim::maxlen(0), limits)
        .unwrap_err();
    assert!(
        matches!(err, ArchiveError::NotArchived { id, .. } if id == StreamId::new(0, 5)),
        "{err}"
    );
    assert_eq!(live.len(), 1, "nothing was trimmed");
}
