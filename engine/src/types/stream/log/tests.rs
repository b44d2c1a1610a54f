//! Unit tests for one stream: Redis's corner cases from `docs/reference/streams.md`, §1–§3.

use super::*;

fn limits(entries_max: u64) -> NodeLimits {
    NodeLimits {
        entries_max,
        bytes_max: 4096,
    }
}

/// A stream of `n` entries with ids `1-1 .. 1-n`, fields `f1 v1 f2 v2`.
fn filled(n: u64, lim: NodeLimits) -> Stream {
    let mut s = Stream::new();
    for seq in 1..=n {
        s.add(
            AddId::Explicit(StreamId::new(1, seq)),
            &["f1", "v1", "f2", "v2"],
            0,
            lim,
        )
        .unwrap();
    }
    s.check_invariants().unwrap();
    s
}

fn ids(s: &Stream) -> Vec<StreamId> {
    s.range(StreamId::MIN, StreamId::MAX)
        .map(|e| e.id)
        .collect()
}

#[test]
fn approx_maxlen_removes_whole_nodes_only() {
    let lim = limits(100);
    let mut s = filled(250, lim);
    assert_eq!(s.trim(&Trim::maxlen_approx(151), lim), 0);
    assert_eq!(s.trim(&Trim::maxlen_approx(150), lim), 100);
    assert_eq!(s.len(), 150);
    s.check_invariants().unwrap();
}

#[test]
fn xadd_with_approx_maxlen_555_on_1000_leaves_600() {
    let lim = limits(100);
    let mut s = filled(999, lim);
    s.add(AddId::Auto, &["f1", "v1", "f2", "v2"], 5, lim)
        .unwrap();
    s.trim(&Trim::maxlen_approx(555), lim);
    assert_eq!(s.len(), 600);
    // 555 entries after an exact trim: the head node holds 55 live entries and 45 tombstones.
    let mut s = filled(1000, lim);
    s.trim(&Trim::maxlen(555), lim);
    s.trim(&Trim::maxlen_approx(444), lim);
    assert_eq!(s.len(), 500);
}

#[test]
fn approx_trim_stops_at_limit() {
    let lim = limits(10);
    let mut s = filled(101, lim);
    s.trim(&Trim::maxlen_approx(55).with_limit(30), lim);
    assert_eq!(s.len(), 71);
    s.add(AddId::Auto, &["f1", "v1", "f2", "v2"], 0, lim)
        .unwrap();
    s.trim(&Trim::maxlen_approx(55).with_limit(30), lim);
    assert_eq!(s.len(), 62);
    s.check_invariants().unwrap();
}

#[test]
fn approx_trim_default_limit_is_100_times_node_entries() {
    let lim = limits(1);
    let mut s = filled(102, lim);
    s.trim(&Trim::maxlen_approx(1), lim);
    assert_eq!(s.len(), 2);
    assert_eq!(s.trim(&Trim::maxlen_approx(0).with_limit(0), lim), 2);
    assert_eq!(s.len(), 0);
    assert_eq!(s.node_count(), 0);
    assert_eq!(s.first_id(), StreamId::MIN);
    s.check_invariants().unwrap();
}

#[test]
fn exact_maxlen_tombstones_inside_one_node() {
    let lim = limits(100);
    let mut s = filled(150, lim);
    assert_eq!(s.trim(&Trim::maxlen(60), lim), 90);
    assert_eq!(s.len(), 60);
    assert_eq!(s.node_count(), 2);
    assert_eq!(s.first_id(), StreamId::new(1, 91));
    assert_eq!(
        s.max_deleted_entry_id(),
        StreamId::MIN,
        "trimming never raises max-deleted"
    );
    s.check_invariants().unwrap();
}

#[test]
fn xadd_maxlen_zero_leaves_an_empty_stream_with_advanced_bookkeeping() {
    let lim = limits(100);
    let mut s = Stream::new();
    let id = s.add(AddId::Auto, &["a", "b"], 7, lim).unwrap();
    s.trim(&Trim::maxlen(0), lim);
    assert_eq!(
        (s.len(), s.last_id(), s.entries_added(), s.first_id()),
        (0, id, 1, StreamId::MIN)
    );
    s.check_invariants().unwrap();
}

#[test]
fn minid_exact_can_leave_a_head_node_of_tombstones() {
    let lim = limits(100);
    let mut s = filled(3, lim);
    assert_eq!(s.delete(&[StreamId::new(1, 3)]), 1);
    assert_eq!(s.trim(&Trim::minid(StreamId::new(1, 3)), lim), 2);
    assert_eq!((s.len(), s.node_count()), (0, 1));
    s.check_invariants().unwrap();
    s.add(AddId::Auto, &["a", "b"], 0, lim).unwrap();
    assert_eq!(s.first_id(), StreamId::new(1, 4));
    s.check_invariants().unwrap();
}

#[test]
fn minid_approx_looks_at_the_last_element_even_if_deleted() {
    let lim = limits(2);
    let mut s = filled(4, lim);
    s.delete(&[StreamId::new(1, 2)]);
    assert_eq!(s.trim(&Trim::minid_approx(StreamId::new(1, 2)), lim), 0);
    assert_eq!(s.trim(&Trim::minid_approx(StreamId::new(1, 3)), lim), 1);
    assert_eq!(ids(&s), vec![StreamId::new(1, 3), StreamId::new(1, 4)]);
}

#[test]
fn tombstones_count_toward_node_entries() {
    let lim = limits(3);
    let mut s = filled(2, lim);
    s.delete(&[StreamId::new(1, 2)]);
    s.add(AddId::Auto, &["x", "y"], 0, lim).unwrap();
    assert_eq!(s.node_count(), 1);
    s.add(AddId::Auto, &["x", "y"], 0, lim).unwrap();
    assert_eq!(s.node_count(), 2);
    s.check_invariants().unwrap();
}

#[test]
fn large_entries_get_a_node_each() {
    let lim = NodeLimits::default();
    let mut s = Stream::new();
    let big = vec![b'x'; 5000];
    for _ in 0..3 {
        s.add(AddId::Auto, &[b"f".as_slice(), &big], 1, lim)
            .unwrap();
    }
    assert_eq!(s.node_count(), 3);
    s.check_invariants().unwrap();
}

#[test]
fn byte_limit_splits_where_redis_does() {
    // f1 v1 f2 v2 entries: the first node costs 34 listpack bytes with one entry, each further
    // SAMEFIELDS entry 16 (flags 2, ms 2, seq 2, v1 4, v2 4, lp-count 2) while deltas < 128.
    let lim = NodeLimits {
        entries_max: 0,
        bytes_max: 100,
    };
    let s = filled(10, lim);
    // 34 + 16k + 4 (v1+v2 raw) >= 100 first holds at k = 4: five entries per node.
    assert_eq!(s.node_count(), 2);
}

#[test]
fn xdel_bookkeeping() {
    let lim = limits(100);
    let mut s = filled(5, lim);
    assert_eq!(
        s.delete(&[
            StreamId::new(1, 1),
            StreamId::new(1, 1),
            StreamId::new(9, 9)
        ]),
        1
    );
    assert_eq!(s.first_id(), StreamId::new(1, 2));
    assert_eq!(s.max_deleted_entry_id(), StreamId::new(1, 1));
    s.delete(&[StreamId::new(1, 5)]);
    assert_eq!(
        s.last_id(),
        StreamId::new(1, 5),
        "XDEL never lowers last_id"
    );
    assert_eq!(s.max_deleted_entry_id(), StreamId::new(1, 5));
    assert_eq!(
        s.add(AddId::Explicit(StreamId::new(1, 5)), &["a", "b"], 0, lim),
        Err(Error::XaddIdTooSmall)
    );
    s.delete(&[
        StreamId::new(1, 2),
        StreamId::new(1, 3),
        StreamId::new(1, 4),
    ]);
    assert_eq!(
        (s.len(), s.node_count(), s.first_id()),
        (0, 0, StreamId::MIN)
    );
    s.check_invariants().unwrap();
}

#[test]
fn auto_ids_follow_the_clock_and_never_go_back() {
    let lim = limits(100);
    let mut s = Stream::new();
    assert_eq!(
        s.add(AddId::Auto, &["a", "b"], 10, lim),
        Ok(StreamId::new(10, 0))
    );
    assert_eq!(
        s.add(AddId::Auto, &["a", "b"], 10, lim),
        Ok(StreamId::new(10, 1))
    );
    assert_eq!(
        s.add(AddId::Auto, &["a", "b"], 5, lim),
        Ok(StreamId::new(10, 2))
    );
    assert_eq!(
        s.add(AddId::AutoSeq(10), &["a", "b"], 0, lim),
        Ok(StreamId::new(10, 3))
    );
    assert_eq!(
        s.add(AddId::AutoSeq(9), &["a", "b"], 0, lim),
        Err(Error::XaddIdTooSmall)
    );
    assert_eq!(
        s.add(AddId::AutoSeq(12), &["a", "b"], 0, lim),
        Ok(StreamId::new(12, 0))
    );
    assert_eq!(
        s.add(AddId::Explicit(StreamId::MIN), &["a", "b"], 0, lim),
        Err(Error::XaddIdZero)
    );
    s.set_id(StreamId::new(12, u64::MAX), None, None).unwrap();
    assert_eq!(
        s.add(AddId::AutoSeq(12), &["a", "b"], 0, lim),
        Err(Error::XaddIdTooSmall)
    );
    assert_eq!(
        s.add(AddId::Auto, &["a", "b"], 0, lim),
        Ok(StreamId::new(13, 0))
    );
    s.set_id(StreamId::MAX, None, None).unwrap();
    assert_eq!(
        s.add(AddId::Auto, &["a", "b"], 0, lim),
        Err(Error::StreamExhausted)
    );
    s.check_invariants().unwrap();
}

#[test]
fn fresh_stream_seq_auto_at_zero_gives_0_1() {
    let mut s = Stream::new();
    assert_eq!(
        s.add(AddId::AutoSeq(0), &["a", "b"], 0, limits(100)),
        Ok(StreamId::new(0, 1))
    );
}

#[test]
fn ranges_honour_bounds_and_skip_tombstones() {
    let lim = limits(3);
    let mut s = filled(10, lim);
    s.delete(&[StreamId::new(1, 4), StreamId::new(1, 5)]);
    let fwd: Vec<u64> = s
        .range(StreamId::new(1, 3), StreamId::new(1, 7))
        .map(|e| e.id.seq)
        .collect();
    assert_eq!(fwd, vec![3, 6, 7]);
    let rev: Vec<u64> = s
        .rev_range(StreamId::new(1, 3), StreamId::new(1, 7))
        .map(|e| e.id.seq)
        .collect();
    assert_eq!(rev, vec![7, 6, 3]);
    assert_eq!(s.range(StreamId::new(1, 5), StreamId::new(1, 4)).count(), 0);
    assert_eq!(s.rev_range(StreamId::new(2, 0), StreamId::MAX).count(), 0);
    assert_eq!(s.last_entry().map(|e| e.id), Some(StreamId::new(1, 10)));
    assert_eq!(s.get(StreamId::new(1, 4)).map(|e| e.id), None);
    assert_eq!(
        s.get(StreamId::new(1, 6)).map(|e| e.id),
        Some(StreamId::new(1, 6))
    );
}

#[test]
fn field_order_and_duplicates_are_preserved() {
    let mut s = Stream::new();
    s.add(AddId::Auto, &["b", "1", "a", "2", "b", "3"], 1, limits(100))
        .unwrap();
    let e = s.first_entry().unwrap().to_entry();
    let got: Vec<(&[u8], &[u8])> = e
        .fields
        .iter()
        .map(|(f, v)| (f.as_ref(), v.as_ref()))
        .collect();
    assert_eq!(
        got,
        vec![(&b"b"[..], &b"1"[..]), (b"a", b"2"), (b"b", b"3")]
    );
}

#[test]
fn xsetid_checks_in_redis_order() {
    let lim = limits(100);
    let mut s = filled(3, lim);
    s.delete(&[StreamId::new(1, 2)]);
    let e = |r: Result<()>| r.unwrap_err();
    assert_eq!(
        e(s.set_id(StreamId::new(1, 1), None, Some(StreamId::new(1, 2)))),
        Error::XsetidBelowGivenMaxDeleted
    );
    assert_eq!(
        e(s.set_id(StreamId::new(1, 1), None, None)),
        Error::XsetidBelowMaxDeleted
    );
    assert_eq!(
        e(s.set_id(StreamId::new(1, 2), None, None)),
        Error::XsetidBelowTop
    );
    assert_eq!(
        e(s.set_id(StreamId::new(1, 3), Some(1), None)),
        Error::XsetidEntriesAddedBelowLength
    );
    s.set_id(StreamId::new(5, 0), Some(100), Some(StreamId::new(4, 0)))
        .unwrap();
    assert_eq!(
        (s.last_id(), s.entries_added(), s.max_deleted_entry_id()),
        (StreamId::new(5, 0), 100, StreamId::new(4, 0))
    );
    let mut empty = Stream::new();
    empty.set_id(StreamId::MIN, None, None).unwrap();
    s.check_invariants().unwrap();
}
