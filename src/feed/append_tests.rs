//! Recorded appends and `append_retrying` on the embedded backend, with a wrapper that loses
//! requests or replies on chosen calls (what a broken connection does), and one that hides the
//! IDMP record (an old server).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use echomq_engine::{Keyspace, ManualClock, StreamId, Trim};
use parking_lot::Mutex;

use super::backend::Recorded;
use super::*;

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;

const FAST: RetryPolicy = RetryPolicy {
    deadline: Duration::from_secs(30),
    first_backoff: Duration::from_millis(1),
    max_backoff: Duration::from_millis(2),
};

/// What the next recorded append does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Runs and answers.
    None,
    /// Never reaches the backend: fails as a broken connection.
    LoseRequest,
    /// Runs, then fails as a broken connection (the reply is lost).
    LoseReply,
    /// Never reaches the backend: fails as a refused connection (nothing sent).
    Refused,
}

type Hook = Box<dyn FnOnce() + Send>;

/// The embedded backend behind scripted faults; `records` false hides XIDMPRECORD.
struct Faulty {
    inner: Embedded,
    records: bool,
    faults: Mutex<VecDeque<Fault>>,
    /// What runs before the n-th add (1-based): another writer getting in between.
    before: Mutex<HashMap<usize, Hook>>,
    adds: Mutex<usize>,
}

impl Faulty {
    fn new(inner: Embedded, records: bool, faults: &[Fault]) -> Faulty {
        Faulty {
            inner,
            records,
            faults: Mutex::new(faults.iter().copied().collect()),
            before: Mutex::new(HashMap::new()),
            adds: Mutex::new(0),
        }
    }

    fn lost() -> FeedError {
        FeedError::ConnectionLost {
            server: "test".into(),
            reason: "connection reset".into(),
        }
    }

    /// Runs this add's hook, takes the next fault.
    fn next(&self) -> Fault {
        let n = {
            let mut adds = self.adds.lock();
            *adds += 1;
            *adds
        };
        let hook = self.before.lock().remove(&n);
        if let Some(hook) = hook {
            hook();
        }
        self.faults.lock().pop_front().unwrap_or(Fault::None)
    }

    fn faulted<T>(&self, run: impl FnOnce() -> Result<T, FeedError>) -> Result<T, FeedError> {
        match self.next() {
            Fault::None => run(),
            Fault::LoseRequest => Err(Faulty::lost()),
            Fault::LoseReply => run().and(Err(Faulty::lost())),
            Fault::Refused => Err(FeedError::ConnectFailed {
                server: "test".into(),
                reason: "connection refused".into(),
            }),
        }
    }
}

impl Backend for Faulty {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        self.faulted(|| self.inner.add(key, id, fields))
    }

    fn records_appends(&self) -> Result<bool, FeedError> {
        Ok(self.records)
    }

    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        self.faulted(|| self.inner.add_recorded(key, id, fields, pid, iid))
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        self.inner.range(key, start, end, count, reverse)
    }

    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        self.inner.meta(key)
    }

    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        self.inner.trim(key, trim)
    }
}

fn keyspace() -> (Arc<ManualClock>, Arc<Keyspace>) {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    (clock, keyspace)
}

fn faulty_feed(records: bool, faults: &[Fault]) -> (Feed<Faulty>, Arc<ManualClock>, Arc<Keyspace>) {
    let (clock, keyspace) = keyspace();
    let backend = Faulty::new(Embedded::new(keyspace.clone()), records, faults);
    (Feed::with_clock(backend, clock.clone()), clock, keyspace)
}

/// Another writer of the same keyspace, minting with the same clock.
fn other_writer(clock: &Arc<ManualClock>, keyspace: &Arc<Keyspace>) -> Feed<Embedded> {
    Feed::with_clock(Embedded::new(keyspace.clone()), clock.clone()).with_producer("other")
}

/// The IDMP records of the stream: `(pid, iid, id)`.
fn records(keyspace: &Keyspace, key: &str) -> Vec<(String, String, StreamId)> {
    keyspace.run(|db, _| {
        db.stream(key.as_bytes())
            .unwrap()
            .map(|s| {
                s.idmp()
                    .iter()
                    .map(|(p, i, id)| {
                        (
                            String::from_utf8_lossy(p).into_owned(),
                            String::from_utf8_lossy(i).into_owned(),
                            id,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

fn ids(records: &[Record]) -> Vec<Branded> {
    records.iter().map(|r| r.id).collect()
}

#[test]
fn embedded_appends_are_recorded_under_the_feed_producer() {
    let (clock, keyspace) = keyspace();
    let feed = Feed::with_clock(Embedded::new(keyspace.clone()), clock).with_producer("writer-1");
    assert!(feed.idempotent_appends().unwrap());
    assert_eq!(feed.producer(), "writer-1");
    let a = feed.append("cm", "events", &[("k", "a")]).unwrap();
    let b = feed.append("cm", "events", &[("k", "b")]).unwrap();
    let key = stream_key("cm", "events");
    assert_eq!(
        records(&keyspace, &key),
        vec![
            ("writer-1".into(), a.to_string(), a.stream_id()),
            ("writer-1".into(), b.to_string(), b.stream_id()),
        ]
    );
    assert_eq!(ids(&feed.read("cm", "events", ..).unwrap()), vec![a, b]);
}

#[test]
fn feeds_get_distinct_default_producers() {
    let (clock, keyspace) = keyspace();
    let one = Feed::with_clock(Embedded::new(keyspace.clone()), clock.clone());
    let two = Feed::with_clock(Embedded::new(keyspace), clock);
    assert_ne!(one.producer(), two.producer());
    assert!(!one.producer().is_empty());
}

#[test]
fn a_lost_reply_is_retried_into_the_original_receipt_once() {
    let (feed, _, keyspace) = faulty_feed(true, &[Fault::LoseReply, Fault::LoseReply]);
    let a = feed
        .append_retrying("cm", "events", &[("k", "a")], &FAST)
        .unwrap();
    assert_eq!(
        *feed.backend().adds.lock(),
        3,
        "two lost replies, one answer"
    );
    let b = feed
        .append_retrying("cm", "events", &[("k", "b")], &FAST)
        .unwrap();
    let stored = feed.read("cm", "events", ..).unwrap();
    assert_eq!(ids(&stored), vec![a, b], "each append stored once");
    assert_eq!(stored[0].get("k"), Some("a"));
    let key = stream_key("cm", "events");
    assert_eq!(records(&keyspace, &key).len(), 2);
}

#[test]
fn a_lost_request_is_resent_with_the_same_id() {
    let (feed, _, _) = faulty_feed(true, &[Fault::LoseRequest, Fault::LoseReply]);
    let a = feed
        .append_retrying("cm", "events", &[("k", "a")], &FAST)
        .unwrap();
    assert_eq!(ids(&feed.read("cm", "events", ..).unwrap()), vec![a]);
    assert_eq!(a.stream_id(), StreamId::new(T, 0), "the first mint is kept");
}

#[test]
fn a_lost_reply_is_found_behind_another_writers_later_append() {
    let (feed, clock, keyspace) = faulty_feed(true, &[Fault::LoseReply]);
    let other = other_writer(&clock, &keyspace);
    let hook: Hook = Box::new(move || {
        other.append("cm", "events", &[("k", "other")]).unwrap();
    });
    feed.backend().before.lock().insert(2, hook);
    let a = feed
        .append_retrying("cm", "events", &[("k", "a")], &FAST)
        .unwrap();
    let stored = feed.read("cm", "events", ..).unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!((stored[0].id, stored[0].get("k")), (a, Some("a")));
    assert_eq!(stored[1].get("k"), Some("other"));
}

#[test]
fn a_lost_request_whose_id_another_writer_took_is_minted_again() {
    let (feed, clock, keyspace) = faulty_feed(true, &[Fault::LoseRequest]);
    let other = other_writer(&clock, &keyspace);
    let hook: Hook = Box::new(move || {
        // Same clock, empty stream: the other writer mints the very id of the lost request.
        let taken = other.append("cm", "events", &[("k", "other")]).unwrap();
        assert_eq!(taken.stream_id(), StreamId::new(T, 0));
    });
    feed.backend().before.lock().insert(2, hook);
    let a = feed
        .append_retrying("cm", "events", &[("k", "a")], &FAST)
        .unwrap();
    assert_eq!(
        a.stream_id(),
        StreamId::new(T, 1),
        "minted again above the other's"
    );
    let stored = feed.read("cm", "events", ..).unwrap();
    assert_eq!(
        stored.iter().map(|r| r.get("k")).collect::<Vec<_>>(),
        vec![Some("other"), Some("a")]
    );
    assert_eq!(stored[1].id, a);
}

#[test]
fn without_records_only_unsent_failures_are_retried() {
    let (feed, _, _) = faulty_feed(false, &[Fault::Refused, Fault::Refused]);
    assert!(!feed.idempotent_appends().unwrap());
    let a = feed
        .append_retrying("cm", "events", &[("k", "a")], &FAST)
        .unwrap();
    assert_eq!(*feed.backend().adds.lock(), 3);
    feed.backend().faults.lock().push_back(Fault::LoseReply);
    let lost = feed.append_retrying("cm", "events", &[("k", "b")], &FAST);
    assert!(
        matches!(lost, Err(FeedError::ConnectionLost { .. })),
        "a retry could write twice: {lost:?}"
    );
    assert_eq!(*feed.backend().adds.lock(), 4, "not retried");
    let stored = feed.read("cm", "events", ..).unwrap();
    assert_eq!(stored.len(), 2, "the lost reply's entry is stored, once");
    assert_eq!(stored[0].id, a);
}

#[test]
fn append_without_retrying_returns_the_transport_failure() {
    let (feed, _, _) = faulty_feed(true, &[Fault::LoseRequest]);
    let lost = feed.append("cm", "events", &[("k", "a")]);
    assert!(matches!(lost, Err(FeedError::ConnectionLost { .. })));
    assert!(feed.read("cm", "events", ..).unwrap().is_empty());
}

#[test]
fn retries_stop_at_the_deadline_with_the_last_failure() {
    let faults = [Fault::LoseRequest; 10_000];
    let (feed, _, _) = faulty_feed(true, &faults);
    let policy = RetryPolicy {
        deadline: Duration::from_millis(20),
        first_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
    };
    let result = feed.append_retrying("cm", "events", &[("k", "a")], &policy);
    assert!(matches!(result, Err(FeedError::ConnectionLost { .. })));
    assert!(*feed.backend().adds.lock() >= 2, "retried before giving up");
    assert!(feed.read("cm", "events", ..).unwrap().is_empty());
}

#[test]
fn bad_input_is_refused_before_any_retry_or_call() {
    let (feed, _, _) = faulty_feed(true, &[]);
    assert!(matches!(
        feed.append_retrying("cm", "events", &[], &FAST),
        Err(FeedError::NoFields)
    ));
    assert!(matches!(
        feed.append_retrying("cm", "events", &[("id", "x")], &FAST),
        Err(FeedError::ReservedField)
    ));
    assert_eq!(*feed.backend().adds.lock(), 0);
}
