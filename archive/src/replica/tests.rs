//! The fence protocol against the in-memory store: outcomes, fencing, takeover, restore of
//! damaged buckets, and a property test with injected faults and restarts.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::commit::{Commit, commit_key};
use super::restore::{self, RestoreSink};
use super::store::memory::{Fault, OpKind, RandomFaults};
use super::*;
use echomq_engine::StreamId;

const PREFIX: &str = "t/replica";

/// A restore sink that keeps the pages.
#[derive(Debug, Default)]
struct MapSink(BTreeMap<u64, Vec<u8>>);

impl RestoreSink for MapSink {
    fn apply(&mut self, _: &Commit, pages: Vec<Page>) -> Result<(), String> {
        for p in pages {
            if self.0.insert(p.number, p.bytes).is_some() {
                return Err(format!("page {} twice", p.number));
            }
        }
        Ok(())
    }
}

fn pages(range: std::ops::RangeInclusive<u64>) -> Vec<Page> {
    range
        .map(|n| Page {
            number: n,
            bytes: format!("record {n}").into_bytes(),
        })
        .collect()
}

/// Pages `first..=last` as one fold of stream `s` whose ids are the page numbers.
fn batch(first: u64, last: u64) -> Batch {
    Batch {
        pages: pages(first..=last),
        range: PageRange::new(first, last),
        folds: vec![FoldRef {
            stream: b"s".to_vec(),
            stream_no: 0,
            pages: PageRange { first, last },
            first_id: StreamId { ms: first, seq: 0 },
            watermark: StreamId { ms: last, seq: 0 },
        }],
    }
}

fn open(store: &MemoryStore, state: &MemoryState) -> Writer<MemoryStore, MemoryState> {
    Writer::open(
        store.clone(),
        PREFIX,
        state.clone(),
        WriterOptions::no_backoff(),
    )
    .unwrap()
}

fn restored(store: &MemoryStore) -> (BTreeMap<u64, Vec<u8>>, restore::ChainSummary) {
    let mut sink = MapSink::default();
    let summary = restore::restore(store, PREFIX, &mut sink, &mut |_| {}).unwrap();
    (sink.0, summary)
}

#[test]
fn commits_chain_and_restore_returns_every_page() {
    let store = MemoryStore::new();
    let mut w = open(&store, &MemoryState::default());
    let r1 = w.commit(batch(100, 109)).unwrap();
    let r2 = w.commit(batch(110, 110)).unwrap();
    assert_eq!((r1.version, r2.version), (Version(1), Version(2)));
    let (map, summary) = restored(&store);
    assert_eq!(
        map.keys().copied().collect::<Vec<_>>(),
        (100..=110).collect::<Vec<_>>()
    );
    assert_eq!(
        summary.head.map(|h| (h.version, h.hash)),
        Some((Version(2), r2.hash))
    );
    assert_eq!(
        summary.chain.streams.get(&b"s"[..]),
        Some(&(0, StreamId { ms: 110, seq: 0 }))
    );
    assert_eq!(summary.pages, 11);
}

#[test]
fn a_timeout_after_the_write_is_recognised_as_our_own_commit() {
    let store = MemoryStore::new();
    let state = MemoryState::default();
    let mut w = open(&store, &state);
    // segment put ok, then the commit PUT lands but its answer is lost, then the read-back
    // fails once (5xx): the writer must retry, get 412, read its own bytes, and succeed.
    store.script([
        None,
        Some(Fault::TimeoutAfterWrite),
        Some(Fault::ServerError),
    ]);
    let r = w.commit(batch(1, 3)).unwrap();
    assert_eq!(r.version, Version(1));
    assert_eq!(w.fenced(), None);
    let puts: Vec<OpKind> = store
        .log()
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| *k == OpKind::PutIfAbsent)
        .collect();
    assert_eq!(puts.len(), 2, "{:?}", store.log());
    assert_eq!(restored(&store).1.commits, 1);
}

#[test]
fn a_409_is_retried_with_the_same_bytes() {
    let store = MemoryStore::new();
    let mut w = open(&store, &MemoryState::default());
    store.script([None, Some(Fault::Conflict), Some(Fault::Conflict)]);
    w.commit(batch(1, 1)).unwrap();
    assert_eq!(restored(&store).1.commits, 1);
}

#[test]
fn an_unresolved_commit_stays_pending_and_lands_on_the_next_round_byte_for_byte() {
    let store = MemoryStore::new();
    let state = MemoryState::default();
    let mut w = open(&store, &state);
    // Segment ok, then every request fails: the round gives up with the commit pending.
    store.script(std::iter::once(None).chain(std::iter::repeat_n(Some(Fault::Fail), 100)));
    let err = w.commit(batch(1, 2)).unwrap_err();
    assert!(matches!(err, ReplicaError::Unresolved { .. }), "{err}");
    let pending = state.clone().load().unwrap().unwrap().pending.unwrap();
    drop(w);
    store.script(std::iter::empty::<Option<Fault>>());
    store.set_random_faults(None);
    // A restart settles it before anything else.
    let fresh = store.connect();
    let w = Writer::open(fresh, PREFIX, state.clone(), WriterOptions::no_backoff()).unwrap();
    assert_eq!(w.head().map(|h| h.version), Some(Version(1)));
    assert_eq!(
        store.objects().get(&commit_key(PREFIX, Version(1))),
        Some(&pending)
    );
}

#[test]
fn a_second_writer_is_fenced_and_then_sends_nothing() {
    let store = MemoryStore::new();
    let state_a = MemoryState::default();
    let mut a = open(&store, &state_a);
    a.commit(batch(1, 1)).unwrap();
    // B is a copy of A's node (same state), e.g. a restored snapshot started twice.
    let state_b = MemoryState::default();
    let mut copy = state_b.clone();
    copy.save(&state_a.clone().load().unwrap().unwrap())
        .unwrap();
    let b_store = store.connect();
    let mut b = Writer::open(
        b_store.clone(),
        PREFIX,
        state_b,
        WriterOptions::no_backoff(),
    )
    .unwrap();
    a.commit(batch(2, 2)).unwrap();
    let err = b.commit(batch(2, 3)).unwrap_err();
    assert!(
        matches!(
            err,
            ReplicaError::Fenced {
                version: Version(2),
                ..
            }
        ),
        "{err}"
    );
    let sent = b_store.log().len();
    assert!(matches!(
        b.commit(batch(2, 3)),
        Err(ReplicaError::Fenced { .. })
    ));
    assert!(matches!(
        b.resolve_pending(),
        Err(ReplicaError::Fenced { .. })
    ));
    assert_eq!(b_store.log().len(), sent, "a fenced writer sent requests");
    // The chain is A's alone.
    let (map, summary) = restored(&store);
    assert_eq!(map.len(), 2);
    assert_eq!(summary.head_writer.map(|(w, _)| w), Some(a.writer_id()));
}

#[test]
fn takeover_bumps_the_epoch_and_fences_the_old_writer_at_its_next_commit() {
    let store = MemoryStore::new();
    let mut a = open(&store, &MemoryState::default());
    a.commit(batch(1, 5)).unwrap();
    // Node B restores: its state names the head but does not own the chain.
    let summary = restore::read_chain(&store, PREFIX, &mut |_| {}).unwrap().1;
    let mut b_state = MemoryState::default();
    b_state
        .save(&LocalState {
            epoch: None,
            head: summary.head,
            ..LocalState::fresh()
        })
        .unwrap();
    let mut b = open(&store, &b_state);
    assert_eq!(b.epoch(), Some(Epoch(2)));
    assert_eq!(b.head().map(|h| h.version), Some(Version(2)));
    let err = a.commit(batch(6, 6)).unwrap_err();
    assert!(
        matches!(
            err,
            ReplicaError::Fenced {
                by_epoch: Epoch(2),
                ..
            }
        ),
        "{err}"
    );
    b.commit(batch(6, 7)).unwrap();
    let (map, summary) = restored(&store);
    assert_eq!(map.len(), 7);
    assert_eq!(summary.head_writer, Some((b.writer_id(), Epoch(2))));
}

#[test]
fn a_restored_node_behind_the_bucket_must_restore_again_before_taking_over() {
    let store = MemoryStore::new();
    let mut a = open(&store, &MemoryState::default());
    a.commit(batch(1, 1)).unwrap();
    let head = restore::read_chain(&store, PREFIX, &mut |_| {})
        .unwrap()
        .1
        .head;
    a.commit(batch(2, 2)).unwrap();
    let mut stale = MemoryState::default();
    stale
        .save(&LocalState {
            epoch: None,
            head,
            ..LocalState::fresh()
        })
        .unwrap();
    let err = Writer::open(store.clone(), PREFIX, stale, WriterOptions::no_backoff()).unwrap_err();
    assert!(
        matches!(
            err,
            ReplicaError::Behind {
                local: Version(1),
                remote: Version(2)
            }
        ),
        "{err}"
    );
}

#[test]
fn a_fresh_writer_refuses_a_prefix_that_holds_a_replica() {
    let store = MemoryStore::new();
    open(&store, &MemoryState::default())
        .commit(batch(1, 1))
        .unwrap();
    let err = Writer::open(
        store,
        PREFIX,
        MemoryState::default(),
        WriterOptions::no_backoff(),
    )
    .unwrap_err();
    assert!(matches!(err, ReplicaError::PrefixInUse { .. }), "{err}");
}

#[test]
fn batches_that_do_not_follow_the_head_are_refused_before_any_upload() {
    let store = MemoryStore::new();
    let mut w = open(&store, &MemoryState::default());
    w.commit(batch(1, 2)).unwrap();
    let before = store.log().len();
    assert!(matches!(
        w.commit(batch(4, 5)),
        Err(ReplicaError::BadBatch(_))
    ));
    let mut unordered = batch(3, 5);
    unordered.pages.swap(0, 1);
    assert!(matches!(
        w.commit(unordered),
        Err(ReplicaError::BadBatch(_))
    ));
    assert_eq!(store.log().len(), before);
}

/// A bucket with three commits for the damage tests.
fn damaged_fixture() -> (MemoryStore, Vec<String>) {
    let store = MemoryStore::new();
    let mut w = open(&store, &MemoryState::default());
    for i in 0..3 {
        w.commit(batch(i * 10 + 1, i * 10 + 10)).unwrap();
    }
    let segments = store
        .objects()
        .keys()
        .filter(|k| k.contains("/segments/"))
        .cloned()
        .collect();
    (store, segments)
}

fn restore_err(store: &MemoryStore) -> ReplicaError {
    restore::restore(store, PREFIX, &mut MapSink::default(), &mut |_| {}).unwrap_err()
}

#[test]
fn restore_names_the_damaged_object() {
    let key2 = commit_key(PREFIX, Version(2));
    // A flipped byte in a commit.
    let (store, _) = damaged_fixture();
    let mut bytes = store.objects()[&key2].clone();
    bytes[20] ^= 1;
    store.tamper(&key2, Some(bytes));
    match restore_err(&store) {
        ReplicaError::CorruptCommit { key, .. } => assert_eq!(key, key2),
        other => panic!("{other}"),
    }
    // A foreign object where a commit should be.
    let (store, _) = damaged_fixture();
    store.tamper(
        &key2,
        Some(b"{\"not\": \"ours\", \"padding\": \"................\"}".to_vec()),
    );
    assert!(matches!(restore_err(&store), ReplicaError::CorruptCommit { key, .. } if key == key2));
    // A valid commit that does not link to its predecessor.
    let (store, _) = damaged_fixture();
    let mut forged = Commit::decode(&store.objects()[&key2]).unwrap().commit;
    forged.prev_hash = CommitHash([9; 32]);
    store.tamper(&key2, Some(forged.encode().bytes));
    assert!(matches!(restore_err(&store), ReplicaError::BrokenChain { key, .. } if key == key2));
    // A missing segment.
    let (store, segments) = damaged_fixture();
    store.tamper(&segments[1], None);
    assert!(
        matches!(restore_err(&store), ReplicaError::MissingSegment { key, .. } if key == segments[1])
    );
    // A truncated and a bit-flipped segment.
    for damage in [0, 1] {
        let (store, segments) = damaged_fixture();
        let mut bytes = store.objects()[&segments[2]].clone();
        if damage == 0 {
            bytes.pop();
        } else {
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
        }
        store.tamper(&segments[2], Some(bytes));
        assert!(
            matches!(restore_err(&store), ReplicaError::CorruptSegment { key, .. } if key == segments[2])
        );
    }
}

#[test]
fn restore_hands_nothing_from_a_commit_whose_segment_is_bad() {
    let (store, segments) = damaged_fixture();
    store.tamper(&segments[2], Some(b"junk".to_vec()));
    let mut sink = MapSink::default();
    assert!(restore::restore(&store, PREFIX, &mut sink, &mut |_| {}).is_err());
    assert_eq!(sink.0.len(), 20, "only the two good commits' pages");
}

/// A batch of `todo` as one fold whose ids are the page numbers.
fn whole(todo: Vec<Page>, range: Option<PageRange>) -> Batch {
    let range = range.unwrap();
    Batch {
        pages: todo,
        range: Some(range),
        folds: vec![FoldRef {
            stream: b"s".to_vec(),
            stream_no: 0,
            pages: range,
            first_id: StreamId {
                ms: range.first,
                seq: 0,
            },
            watermark: StreamId {
                ms: range.last,
                seq: 0,
            },
        }],
    }
}

/// One step of the fault property test.
#[derive(Debug, Clone)]
enum Step {
    /// The archive folds this many new pages.
    Fold(u8),
    /// The replicator runs one round.
    Replicate,
    /// The process restarts (the writer is dropped and reopened from its saved state).
    Restart,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (1u8..20).prop_map(Step::Fold),
        4 => Just(Step::Replicate),
        1 => Just(Step::Restart),
    ]
}

/// Walks the bucket and checks what must hold after every step: the chain validates, every
/// commit the writer reported as landed is there with the reported hash, and the pages are a
/// prefix of what the archive folded, each once.
fn check_invariants(store: &MemoryStore, landed: &BTreeMap<Version, CommitHash>, folded: &[Page]) {
    let mut sink = MapSink::default();
    let clean = store.connect();
    let summary = restore::restore(&clean, PREFIX, &mut sink, &mut |_| {}).unwrap();
    let chain = restore::read_chain(&clean, PREFIX, &mut |_| {}).unwrap().0;
    for (version, hash) in landed {
        let found = chain.get(version.0 as usize - 1).map(|c| c.hash);
        assert_eq!(
            found,
            Some(*hash),
            "landed commit {version} lost or changed"
        );
    }
    let expect: BTreeMap<u64, Vec<u8>> = folded
        .iter()
        .take(sink.0.len())
        .map(|p| (p.number, p.bytes.clone()))
        .collect();
    assert_eq!(
        sink.0, expect,
        "replicated pages are not a prefix of the folded ones"
    );
    assert!(summary.commits >= landed.len() as u64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn faults_never_lose_a_commit_or_fork_the_chain(
        steps in proptest::collection::vec(step(), 1..40),
        seed in 1u64..u64::MAX,
        percent in 0u8..60,
    ) {
        let store = MemoryStore::new();
        let state = MemoryState::default();
        let faults = RandomFaults {
            seed,
            percent,
            kinds: vec![Fault::Fail, Fault::TimeoutAfterWrite, Fault::ServerError, Fault::Conflict],
        };
        let client = store.connect();
        client.set_random_faults(Some(faults.clone()));
        let options = WriterOptions { attempts_max: 3, ..WriterOptions::no_backoff() };
        let mut writer = Writer::open(store.connect(), PREFIX, state.clone(), options.clone()).ok();
        let mut folded: Vec<Page> = Vec::new();
        let mut landed: BTreeMap<Version, CommitHash> = BTreeMap::new();
        let base = 1u64 << 63;
        for step in steps {
            match step {
                Step::Fold(n) => {
                    let start = base + folded.len() as u64;
                    folded.extend(pages(start..=start + u64::from(n) - 1));
                }
                Step::Restart => {
                    writer = None;
                }
                Step::Replicate => {
                    if writer.is_none() {
                        match Writer::open(client.clone(), PREFIX, state.clone(), options.clone()) {
                            Ok(w) => writer = Some(w),
                            Err(e) => {
                                prop_assert!(!matches!(e, ReplicaError::Fenced { .. } | ReplicaError::PrefixInUse { .. } | ReplicaError::CorruptCommit { .. }), "{e}");
                                continue;
                            }
                        }
                    }
                    let Some(w) = writer.as_mut() else { continue };
                    match w.resolve_pending() {
                        Ok(()) => {}
                        Err(e) => {
                            prop_assert!(!matches!(e, ReplicaError::Fenced { .. }), "false fence: {e}");
                            continue;
                        }
                    }
                    if let Some(h) = w.head() {
                        landed.insert(h.version, h.hash);
                    }
                    let done = w.head().and_then(|h| h.last_page).map_or(0, |p| p + 1 - base) as usize;
                    if done >= folded.len() {
                        continue;
                    }
                    let todo = folded[done..].to_vec();
                    let range = PageRange::new(todo[0].number, todo[todo.len() - 1].number);
                    let b = whole(todo, range);
                    match w.commit(b) {
                        Ok(r) => { landed.insert(r.version, r.hash); }
                        Err(e) => prop_assert!(!matches!(e, ReplicaError::Fenced { .. } | ReplicaError::CorruptCommit { .. } | ReplicaError::BadBatch(_)), "{e}"),
                    }
                }
            }
            check_invariants(&store, &landed, &folded);
        }
        // With the faults gone, everything folded reaches the bucket exactly once.
        client.set_random_faults(None);
        let mut w = match writer { Some(w) => w, None => Writer::open(client.clone(), PREFIX, state.clone(), options.clone()).unwrap() };
        w.resolve_pending().unwrap();
        let done = w.head().and_then(|h| h.last_page).map_or(0, |p| p + 1 - base) as usize;
        if done < folded.len() {
            let todo = folded[done..].to_vec();
            let range = PageRange::new(todo[0].number, todo[todo.len() - 1].number);
            let r = w.commit(whole(todo, range)).unwrap();
            landed.insert(r.version, r.hash);
        }
        check_invariants(&store, &landed, &folded);
        let (map, _) = restored(&store);
        prop_assert_eq!(map.len(), folded.len());
    }
}

#[test]
fn a_forged_commit_with_absurd_lengths_and_epochs_is_an_error_not_a_panic() {
    let (store, segments) = damaged_fixture();
    let key3 = commit_key(PREFIX, Version(3));
    let mut forged = Commit::decode(&store.objects()[&key3]).unwrap().commit;
    forged.segments[0].len = u64::MAX;
    forged.segments[0].page_count = u32::MAX;
    forged.epoch = Epoch(u64::MAX);
    store.tamper(&key3, Some(forged.encode().bytes));
    assert!(matches!(
        restore_err(&store),
        ReplicaError::CorruptSegment { key, .. } if key == segments[2]
    ));
    // A node restored from it cannot bump the epoch past the maximum: a typed error.
    let head = restore::read_chain(&store, PREFIX, &mut |_| {})
        .unwrap()
        .1
        .head;
    let mut state = MemoryState::default();
    state
        .save(&LocalState {
            epoch: None,
            head,
            ..LocalState::fresh()
        })
        .unwrap();
    let err = Writer::open(store, PREFIX, state, WriterOptions::no_backoff()).unwrap_err();
    assert!(matches!(err, ReplicaError::LocalState(_)), "{err}");
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
        count in 0u32..4,
    ) {
        let _ = Commit::decode(&bytes);
        let _ = LocalState::decode(&bytes);
        // A segment body with the right magic and a checksum that matches, so decoding gets
        // past the checksum into the page layout.
        let mut segment = b"EMQS\x01".to_vec();
        segment.extend_from_slice(&count.to_be_bytes());
        segment.extend_from_slice(&bytes);
        let reference = super::commit::SegmentRef {
            key: "k".into(),
            pages: PageRange { first: 0, last: u64::MAX },
            page_count: count,
            len: segment.len() as u64,
            sha256: <sha2::Sha256 as sha2::Digest>::digest(&segment).into(),
        };
        let _ = super::segment::decode(&reference, &segment);
    }
}
