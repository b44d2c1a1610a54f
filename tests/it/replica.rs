//! Archive replication end to end: two writers racing on one prefix (in-memory store and a
//! real moto server), a round trip fold → replicate → restore → merge-read on another node,
//! and the typed errors for bad buckets, wrong credentials and damaged objects.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use bytes::Bytes;
use echomq_archive::replica::commit::{Commit, commit_key};
use echomq_archive::replica::restore;
use echomq_archive::replica::store::ObjectMeta;
use echomq_archive::replica::{
    Batch, FoldRef, LocalState, MemoryState, MemoryStore, ObjectStore, Page, PageRange, PutOutcome,
    ReplicaError, Replicator, StateStore, StoreError, WriterId, WriterOptions, restore_into,
};
use echomq_archive::{Archive, RangeQuery};
use echomq_engine::{Entry, StreamId};

use crate::support::moto::Moto;

/// Counts the requests a store handle sends (to prove a fenced writer sends nothing more).
#[derive(Debug, Clone)]
struct Counted<S> {
    inner: S,
    requests: Arc<AtomicU64>,
}

impl<S> Counted<S> {
    fn new(inner: S) -> Counted<S> {
        Counted {
            inner,
            requests: Arc::default(),
        }
    }

    fn sent(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }

    fn tick(&self) {
        self.requests.fetch_add(1, Ordering::SeqCst);
    }
}

impl<S: ObjectStore> ObjectStore for Counted<S> {
    fn put_if_absent(
        &self,
        key: &str,
        body: &[u8],
        strong: bool,
    ) -> Result<PutOutcome, StoreError> {
        self.tick();
        self.inner.put_if_absent(key, body, strong)
    }
    fn put(&self, key: &str, body: &[u8]) -> Result<(), StoreError> {
        self.tick();
        self.inner.put(key, body)
    }
    fn get(&self, key: &str, strong: bool) -> Result<Option<Vec<u8>>, StoreError> {
        self.tick();
        self.inner.get(key, strong)
    }
    fn get_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.tick();
        self.inner.get_range(key, range)
    }
    fn head(&self, key: &str, strong: bool) -> Result<Option<ObjectMeta>, StoreError> {
        self.tick();
        self.inner.head(key, strong)
    }
    fn list(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, StoreError> {
        self.tick();
        self.inner.list(prefix, after, limit)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// The batch after `last_page` written by `who`: one fold of stream `s` whose ids are the
/// page numbers, page bytes naming the writer (so the two racers' commits differ).
fn racing_batch(last_page: Option<u64>, who: u8) -> Batch {
    let first = last_page.map_or(1, |p| p + 1);
    let last = first + 2;
    Batch {
        pages: (first..=last)
            .map(|n| Page {
                number: n,
                bytes: vec![who; 16],
            })
            .collect(),
        range: PageRange::new(first, last),
        folds: vec![FoldRef {
            stream: b"s".to_vec(),
            stream_no: 0,
            pages: PageRange { first, last },
            first_id: StreamId::new(first, 0),
            watermark: StreamId::new(last, 0),
        }],
    }
}

/// `rounds` races of two writers that both believe they own the head: every version gets
/// exactly one commit, the loser reports fenced and sends nothing more, and the chain
/// verifies at the end.
fn race<S: ObjectStore + Clone + 'static>(connect: impl Fn() -> S, prefix: &str, rounds: u64) {
    let options = WriterOptions::no_backoff();
    let mut base: Option<LocalState> = None;
    let mut winners = Vec::new();
    for round in 0..rounds {
        let barrier = Arc::new(Barrier::new(2));
        let threads: Vec<_> = [1u8, 2]
            .into_iter()
            .map(|who| {
                let mut state = MemoryState::default();
                if let Some(base) = &base {
                    let mut mine = base.clone();
                    mine.writer = WriterId([who; 16]);
                    state.save(&mine).unwrap();
                } else {
                    // Round 0: both start fresh on the empty prefix.
                    let mut fresh = LocalState::fresh();
                    fresh.writer = WriterId([who; 16]);
                    state.save(&fresh).unwrap();
                }
                let store = Counted::new(connect());
                let barrier = Arc::clone(&barrier);
                let prefix = prefix.to_owned();
                let options = options.clone();
                std::thread::spawn(move || {
                    let mut w = echomq_archive::replica::Writer::open(
                        store.clone(),
                        &prefix,
                        state.clone(),
                        options,
                    )
                    .unwrap();
                    let batch = racing_batch(w.head().and_then(|h| h.last_page), who);
                    barrier.wait();
                    let result = w.commit(batch.clone());
                    let sent = store.sent();
                    let again = w.commit(batch);
                    (who, result, again, sent, store.sent(), state)
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let won: Vec<_> = results.iter().filter(|r| r.1.is_ok()).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: {} winners: {:?}",
            won.len(),
            results.iter().map(|r| (r.0, &r.1)).collect::<Vec<_>>()
        );
        for (who, result, again, sent_before, sent_after, _) in &results {
            if result.is_err() {
                assert!(
                    matches!(result, Err(ReplicaError::Fenced { .. })),
                    "round {round}: loser {who}: {result:?}"
                );
                assert!(matches!(again, Err(ReplicaError::Fenced { .. })));
                assert_eq!(
                    sent_before, sent_after,
                    "round {round}: fenced writer {who} sent requests"
                );
            }
        }
        let (who, _, _, _, _, state) = won[0];
        winners.push(*who);
        base = state.clone().load().unwrap();
    }
    let store = connect();
    let (chain, summary) = restore::read_chain(&store, prefix, &mut |_| {}).unwrap();
    assert_eq!(summary.commits, rounds);
    for (commit, who) in chain.iter().zip(&winners) {
        assert_eq!(commit.commit.writer, WriterId([*who; 16]));
    }
    restore::verify(&store, prefix, &mut |_| {}).unwrap();
    // Each loser uploaded its segment before it lost: exactly one orphan per round.
    let orphans = restore::orphan_segments(&store, prefix, &chain).unwrap();
    assert_eq!(orphans.len() as u64, rounds);
    // Listing in pages with start_after sees every segment once, in key order.
    let segments = format!("{prefix}/segments/");
    let all = store.list(&segments, None, 10_000).unwrap();
    assert_eq!(all.len() as u64, 2 * rounds);
    let first = store.list(&segments, None, 150).unwrap();
    let rest = store
        .list(&segments, Some(&first.last().unwrap().key), 10_000)
        .unwrap();
    let joined: Vec<_> = first.into_iter().chain(rest).collect();
    assert_eq!(joined, all);
    assert!(all.windows(2).all(|w| w[0].key < w[1].key));
}

#[test]
fn racing_writers_on_the_memory_store_never_share_a_version() {
    let store = MemoryStore::new();
    race(|| store.connect(), "race", 100);
}

#[test]
fn racing_writers_on_moto_never_share_a_version() {
    let Some(moto) = Moto::start() else { return };
    moto.bucket("fence");
    race(|| moto.store("fence"), "race/prefix", 100);
}

fn entries(ms: std::ops::Range<u64>) -> Vec<Entry> {
    ms.map(|i| Entry {
        id: StreamId::new(i, 0),
        fields: vec![
            (
                Bytes::from_static(b"id"),
                Bytes::from(format!("EVT_{i:013}")),
            ),
            (
                Bytes::from_static(b"payload"),
                Bytes::from(vec![b'x'; (i % 50) as usize]),
            ),
        ],
    })
    .collect()
}

/// XRANGE-like merge-reads of `stream` over the archive and the live tail `live` (entries
/// above W come from it).
fn merged(archive: &Archive, stream: &[u8], live: &[Entry], query: RangeQuery) -> Vec<Entry> {
    archive
        .read_merged(
            stream,
            query,
            |start: StreamId, end: StreamId, count: Option<usize>, reverse: bool| {
                let mut out: Vec<Entry> = live
                    .iter()
                    .filter(|e| start <= e.id && e.id <= end)
                    .cloned()
                    .collect();
                if reverse {
                    out.reverse();
                }
                out.truncate(count.unwrap_or(usize::MAX));
                Ok::<_, echomq_archive::ArchiveError>(out)
            },
            |e| e,
        )
        .unwrap()
}

#[test]
fn fold_on_a_replicate_to_moto_restore_on_b_merge_reads_equal() {
    let Some(moto) = Moto::start() else { return };
    let store = moto.bucket("roundtrip");
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let a = Arc::new(Archive::open(dir_a.path().join("a.redb")).unwrap());
    let stream = b"emq:{cm}:stream:events";
    let log = entries(1..400);
    for chunk in log[..300].chunks(60) {
        a.fold(stream, chunk).unwrap();
    }
    a.fold(b"emq:{cm}:stream:rooms", &entries(1..20)).unwrap();
    let mut replicator = Replicator::open(
        Arc::clone(&a),
        moto.store("roundtrip"),
        "cm/archive",
        WriterOptions::default(),
    )
    .unwrap();
    assert!(replicator.drain().unwrap() >= 1);

    let b = Archive::open(dir_b.path().join("b.redb")).unwrap();
    let mut steps = 0;
    let summary = restore_into(&b, &store, "cm/archive", &mut |_| steps += 1).unwrap();
    assert!(steps > 0);
    assert_eq!(summary.pages, 300 + 19);
    b.check_invariants().unwrap();
    // Node B's live tail holds what was never folded (ids above W).
    let live = &log[300..];
    for query in [
        RangeQuery::forward(StreamId::MIN, StreamId::MAX, None),
        RangeQuery::forward(StreamId::new(250, 0), StreamId::new(350, 0), Some(100)),
        RangeQuery::reverse(StreamId::new(10, 0), StreamId::new(320, 0), Some(37)),
        RangeQuery::forward(StreamId::new(301, 0), StreamId::MAX, Some(5)),
    ] {
        let on_a = merged(&a, stream, live, query);
        assert_eq!(on_a, merged(&b, stream, live, query), "{query:?}");
        assert!(!on_a.is_empty());
    }
    assert_eq!(
        merged(
            &b,
            stream,
            live,
            RangeQuery::forward(StreamId::MIN, StreamId::MAX, None)
        ),
        log
    );
}

#[test]
fn bad_buckets_and_credentials_are_typed_errors_naming_the_object() {
    let Some(moto) = Moto::start() else { return };
    // A bucket that does not exist.
    let missing = moto.store("no-such-bucket");
    match restore::verify(&missing, "p", &mut |_| {}) {
        Err(ReplicaError::Store(StoreError::NoSuchBucket { bucket, .. })) => {
            assert_eq!(bucket, "no-such-bucket");
        }
        other => panic!("expected NoSuchBucket, got {other:?}"),
    }
    // A writer on it is refused at open with the same error.
    let dir = tempfile::tempdir().unwrap();
    let nowhere = Arc::new(Archive::open(dir.path().join("n.redb")).unwrap());
    match Replicator::open(
        nowhere,
        moto.store("no-such-bucket"),
        "p",
        WriterOptions::no_backoff(),
    ) {
        Err(ReplicaError::Store(StoreError::NoSuchBucket { .. })) => {}
        other => panic!("expected NoSuchBucket, got {other:?}"),
    }
    match moto.store("no-such-bucket").put("p/segments/x", b"x") {
        Err(StoreError::NoSuchBucket { .. }) => {}
        other => panic!("expected NoSuchBucket, got {other:?}"),
    }
    // A foreign object where commit 1 should be: verify names it, a new writer refuses it.
    let store = moto.bucket("foreign");
    store
        .put(
            &commit_key("p", echomq_archive::replica::Version(1)),
            b"<xml>not ours, long enough to look like something</xml>",
        )
        .unwrap();
    match restore::verify(&store, "p", &mut |_| {}) {
        Err(ReplicaError::CorruptCommit { key, .. }) => {
            assert!(key.ends_with("p/commits/00000000000000000001"))
        }
        other => panic!("expected CorruptCommit, got {other:?}"),
    }
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(Archive::open(dir.path().join("x.redb")).unwrap());
    assert!(matches!(
        Replicator::open(
            Arc::clone(&archive),
            moto.store("foreign"),
            "p",
            WriterOptions::no_backoff()
        ),
        Err(ReplicaError::PrefixInUse { .. })
    ));
    // A missing segment.
    let good = moto.bucket("damaged");
    archive.fold(b"s", &entries(1..10)).unwrap();
    Replicator::open(
        Arc::clone(&archive),
        moto.store("damaged"),
        "q",
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .drain()
    .unwrap();
    let (chain, _) = restore::read_chain(&good, "q", &mut |_| {}).unwrap();
    let segment = chain[0].commit.segments[0].key.clone();
    let commit = Commit::decode(
        &good
            .get(&commit_key("q", echomq_archive::replica::Version(1)), true)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(commit.commit.segments[0].key, segment);
    // moto keeps no delete in our trait: overwrite the segment with a truncated copy.
    let bytes = good.get(&segment, false).unwrap().unwrap();
    good.put(&segment, &bytes[..bytes.len() - 3]).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let b = Archive::open(fresh.path().join("b.redb")).unwrap();
    match restore_into(&b, &good, "q", &mut |_| {}) {
        Err(ReplicaError::CorruptSegment { key, .. }) => assert_eq!(key, segment),
        other => panic!("expected CorruptSegment, got {other:?}"),
    }
    assert_eq!(
        b.stats().unwrap().archive_pages,
        0,
        "nothing installed from a bad commit"
    );
}

#[test]
fn wrong_credentials_are_refused_with_a_typed_error() {
    // With authentication on from the first request, moto refuses unknown access keys.
    let Some(moto) = Moto::start_with_env(&[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]) else {
        return;
    };
    let store = moto.store_as("any-bucket", "AKIDWRONG", "wrong-secret");
    assert!(store.describe().contains(moto.endpoint()));
    match store.get("p/commits/00000000000000000001", true) {
        Err(StoreError::Unauthorized { key, status }) => {
            assert_eq!(status, 403);
            assert!(key.contains("p/commits/00000000000000000001"), "{key}");
        }
        other => panic!("expected Unauthorized, got {other:?}"),
    }
}
