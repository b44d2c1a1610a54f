//! The feed with an archive: trims fold first, reads merge archive and live stream, and the
//! preview-less (remote) fold-before-trim keeps the same guarantees.

use std::sync::Arc;

use echomq_archive::{Archive, ArchiveError};
use echomq_engine::{Keyspace, ManualClock, StreamId, Trim};
use proptest::prelude::*;
use tempfile::TempDir;

use super::*;

const T: u64 = 1_796_000_000_000;

fn at(ms: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap()
}

/// A backend with no trim preview: the embedded engine seen the way a remote server is, so
/// `fold_then_trim` takes the trait's default (superset fold, guarded MINID trim).
#[derive(Debug)]
struct NoPreview(Embedded);

impl Backend for NoPreview {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        self.0.add(key, id, fields)
    }
    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        self.0.range(key, start, end, count, reverse)
    }
    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        self.0.meta(key)
    }
    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        self.0.trim(key, trim)
    }
}

struct Setup {
    _dir: TempDir,
    archive: Arc<Archive>,
    keyspace: Arc<Keyspace>,
    clock: Arc<ManualClock>,
}

fn setup(node_entries: u64) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let archive = Arc::new(Archive::open(dir.path().join("a.redb")).unwrap());
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    keyspace.config().set_node_entries_max(node_entries);
    Setup {
        _dir: dir,
        archive,
        keyspace,
        clock,
    }
}

fn ids(records: &[Record]) -> Vec<Branded> {
    records.iter().map(|r| r.id).collect()
}

#[test]
fn trim_folds_first_and_reads_still_see_everything() {
    let s = setup(10);
    let feed = Feed::with_clock(
        Recording::new(Embedded::new(s.keyspace.clone())),
        s.clock.clone(),
    )
    .with_archive(s.archive.clone());
    let mut minted = Vec::new();
    for i in 0..35u64 {
        s.clock.set(T + i);
        minted.push(
            feed.append("cm", "events", &[("n", &i.to_string())])
                .unwrap(),
        );
    }
    // `~` drops whole nodes of 10: 20 entries go (35 - 20 = 15 >= 12, a third would leave 5).
    let removed = feed
        .trim(
            "cm",
            "events",
            TrimPolicy::MaxLen {
                n: 12,
                approx: true,
            },
        )
        .unwrap();
    assert_eq!(removed, 20);
    assert!(
        feed.backend()
            .calls()
            .contains(&"fold_then_trim emq:{cm}:stream:events".to_string())
    );
    let key = stream_key("cm", "events");
    assert_eq!(
        s.archive.watermark(key.as_bytes()).unwrap(),
        Some(minted[19].stream_id()),
        "W is the last entry of the last dropped node, no further"
    );
    assert_eq!(feed.meta("cm", "events").unwrap().unwrap().length, 15);
    assert_eq!(ids(&feed.read("cm", "events", ..).unwrap()), minted);
    assert_eq!(
        ids(&feed.read("cm", "events", minted[15]..=minted[25]).unwrap()),
        minted[15..=25].to_vec()
    );
    assert_eq!(
        ids(&feed
            .read_window("cm", "events", at(T + 5), at(T + 24), Some(7))
            .unwrap()),
        minted[5..12].to_vec()
    );
    assert_eq!(
        ids(&feed.read_since("cm", "events", at(T + 18), None).unwrap()),
        minted[18..].to_vec()
    );
    // Exact MINID: the partial node's prefix is folded too.
    feed.trim(
        "cm",
        "events",
        TrimPolicy::MinId {
            before: at(T + 27),
            approx: false,
        },
    )
    .unwrap();
    assert_eq!(
        s.archive.watermark(key.as_bytes()).unwrap(),
        Some(minted[26].stream_id())
    );
    assert_eq!(ids(&feed.read("cm", "events", ..).unwrap()), minted);
    s.archive.check_invariants().unwrap();
}

#[test]
fn without_an_archive_trim_removes_entries_for_good() {
    let s = setup(10);
    let feed = Feed::with_clock(Embedded::new(s.keyspace.clone()), s.clock.clone());
    for i in 0..20u64 {
        s.clock.set(T + i);
        feed.append("cm", "events", &[("n", "x")]).unwrap();
    }
    feed.trim(
        "cm",
        "events",
        TrimPolicy::MaxLen {
            n: 5,
            approx: false,
        },
    )
    .unwrap();
    assert_eq!(feed.read("cm", "events", ..).unwrap().len(), 5);
    assert_eq!(s.archive.stats().unwrap().records, 0);
}

#[test]
fn an_archive_error_stops_the_trim() {
    let s = setup(10);
    let feed = Feed::with_clock(Embedded::new(s.keyspace.clone()), s.clock.clone())
        .with_archive(s.archive.clone());
    for i in 0..20u64 {
        s.clock.set(T + i);
        feed.append("cm", "events", &[("n", "x")]).unwrap();
    }
    // Another handle holds a write transaction open; a fold would wait. Instead make the
    // archive refuse: a stream key whose archived W is above the live entries is fine, so use
    // a full page space instead, by installing a receipt at the very top of the page space.
    let key = stream_key("cm", "events");
    let top = echomq_archive::PageNo(u64::MAX - 1);
    let entry = echomq_engine::Entry {
        id: StreamId::new(1, 0),
        fields: vec![("f".into(), "v".into())],
    };
    let mut page = Vec::new();
    echomq_archive::format::record::encode(
        &mut page,
        top,
        0,
        entry.id,
        entry.fields.iter().map(|(f, v)| (f.as_ref(), v.as_ref())),
    );
    let receipt = echomq_archive::FoldReceipt {
        stream: b"other".to_vec(),
        stream_no: 0,
        first_page: top,
        last_page: top,
        first_id: entry.id,
        watermark: entry.id,
    };
    s.archive
        .install(
            &[receipt],
            &[(top, bytes::Bytes::from(page))].into_iter().collect(),
        )
        .unwrap();
    let err = feed
        .trim(
            "cm",
            "events",
            TrimPolicy::MaxLen {
                n: 5,
                approx: false,
            },
        )
        .unwrap_err();
    assert!(
        matches!(err, FeedError::Archive(ArchiveError::PagesExhausted)),
        "{err}"
    );
    assert_eq!(
        feed.meta("cm", "events").unwrap().unwrap().length,
        20,
        "nothing trimmed"
    );
    assert_eq!(s.archive.watermark(key.as_bytes()).unwrap(), None);
}

#[derive(Debug, Clone)]
enum Op {
    Append(u8),
    Trim(TrimPolicyArgs),
    Read(u64, u64, Option<usize>),
}

#[derive(Debug, Clone, Copy)]
struct TrimPolicyArgs {
    maxlen: bool,
    n: u64,
    approx: bool,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (1..10u8).prop_map(Op::Append),
        1 => (any::<bool>(), 0..40u64, any::<bool>())
            .prop_map(|(maxlen, n, approx)| Op::Trim(TrimPolicyArgs { maxlen, n, approx })),
        2 => (0..60u64, 0..60u64, prop::option::of(0..10usize)).prop_map(|(a, b, c)| Op::Read(a, b, c)),
    ]
}

/// Runs `ops` on a feed over `backend` with an archive and checks every read against the
/// list of every receipt ever minted.
fn run<B: Backend>(backend: B, s: &Setup, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let feed = Feed::with_clock(backend, s.clock.clone()).with_archive(s.archive.clone());
    let mut log: Vec<Branded> = Vec::new();
    let mut now = T;
    for op in ops {
        match op {
            Op::Append(n) => {
                for _ in 0..n {
                    now += 1;
                    s.clock.set(now);
                    log.push(feed.append("cm", "events", &[("n", "x")]).unwrap());
                }
            }
            Op::Trim(TrimPolicyArgs { maxlen, n, approx }) => {
                let policy = if maxlen {
                    TrimPolicy::MaxLen { n, approx }
                } else {
                    TrimPolicy::MinId {
                        before: at(T + n),
                        approx,
                    }
                };
                feed.trim("cm", "events", policy).unwrap();
            }
            Op::Read(a, b, count) => {
                let (t0, t1) = (at(T + a.min(b)), at(T + a.max(b)));
                let got = ids(&feed.read_window("cm", "events", t0, t1, count).unwrap());
                let want: Vec<Branded> = log
                    .iter()
                    .copied()
                    .filter(|id| (T + a.min(b)..=T + a.max(b)).contains(&id.stream_id().ms))
                    .take(count.unwrap_or(usize::MAX))
                    .collect();
                prop_assert_eq!(got, want);
            }
        }
        s.archive.check_invariants().unwrap();
        prop_assert_eq!(ids(&feed.read("cm", "events", ..).unwrap()), log.clone());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn embedded_fold_before_trim_loses_nothing(ops in prop::collection::vec(op(), 1..25)) {
        let s = setup(4);
        run(Embedded::new(s.keyspace.clone()), &s, ops)?;
    }

    #[test]
    fn remote_style_fold_before_trim_loses_nothing(ops in prop::collection::vec(op(), 1..25)) {
        let s = setup(4);
        run(NoPreview(Embedded::new(s.keyspace.clone())), &s, ops)?;
    }
}
