//! Idempotent feed appends on real servers: which backends record appends in the stream's
//! IDMP map, what a recorded append answers when resent, and the proof by fault.
//!
//! The proof by fault: the feed talks to the server through [`FaultProxy`], which breaks the
//! connection around random XADDs (the command dropped, run with its reply lost, or racing the
//! close; seeded). [`Feed::append_retrying`] appends [`APPENDS`] entries; read back directly
//! from the server, every append appears exactly once, in order, under the receipt the caller
//! got. On Redis 8.8 and `echomq serve`; on Redis 7.0 (no XIDMPRECORD) the feed does not
//! retry a failure that may have run, and says so.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use echomq::engine::{Keyspace, ManualClock, StreamId};
use echomq::feed::{
    Backend, Embedded, Feed, FeedError, Recorded, RedisBackend, RetryPolicy, stream_key,
};
use echomq::testing::TestServer;

use crate::support::peer::{Peer, PeerKind};
use crate::support::proxy::FaultProxy;

/// Appends per proof run.
const APPENDS: usize = 300;
/// One XADD in this many is faulted.
const FAULT_ONE_IN: u64 = 4;
/// The proxy's seed unless `ECHOMQ_FAULT_SEED` is set.
const SEED_DEFAULT: u64 = 0x1D3E_9A11;

fn url(addr: SocketAddr) -> String {
    format!("redis://{addr}/")
}

fn seed() -> u64 {
    std::env::var("ECHOMQ_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED_DEFAULT)
}

/// A resent recorded append finds its entry; a refused one at a free id finds none.
fn recorded_appends_answer_resends(backend: &impl Backend, name: &str) {
    assert!(backend.records_appends().unwrap(), "{name} records appends");
    let key = stream_key("idmp", "resend");
    let fields: [&[u8]; 2] = [b"id", b"x"];
    let id = StreamId::new(5, 0);
    let first = backend.add_recorded(&key, id, &fields, b"w", b"iid-1");
    assert_eq!(first.unwrap(), Recorded::Added(id), "{name}");
    let again = backend.add_recorded(&key, id, &fields, b"w", b"iid-1");
    assert_eq!(again.unwrap(), Recorded::Exists, "{name}");
    let below = backend.add_recorded(&key, StreamId::new(4, 0), &fields, b"w", b"iid-2");
    assert_eq!(below.unwrap(), Recorded::Absent, "{name}");
    assert_eq!(backend.meta(&key).unwrap().unwrap().length, 1, "{name}");
}

#[test]
fn backends_with_xidmprecord_record_appends() {
    let keyspace = Arc::new(Keyspace::new(Arc::new(ManualClock::new(1_000))));
    recorded_appends_answer_resends(&Embedded::new(keyspace), "embedded");
    let server = TestServer::start().unwrap();
    let serve = RedisBackend::connect(&server.url()).unwrap();
    recorded_appends_answer_resends(&serve, "echomq serve");
    if let Some(peer) = Peer::start(PeerKind::Redis8) {
        let redis8 = RedisBackend::connect(&url(peer.addr())).unwrap();
        recorded_appends_answer_resends(&redis8, "redis 8.8");
    }
}

#[test]
fn older_servers_do_not_record_appends_and_the_feed_says_so() {
    for kind in [PeerKind::Redis, PeerKind::Valkey] {
        let Some(peer) = Peer::start(kind) else {
            continue;
        };
        let feed = Feed::new(RedisBackend::connect(&url(peer.addr())).unwrap());
        assert!(!feed.idempotent_appends().unwrap(), "{kind}");
        let a = feed
            .append_retrying("idmp", "old", &[("k", "a")], &RetryPolicy::default())
            .unwrap();
        let b = feed.append("idmp", "old", &[("k", "b")]).unwrap();
        let stored = feed.read("idmp", "old", ..).unwrap();
        assert_eq!(
            stored.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![a, b],
            "{kind}"
        );
    }
}

/// Appends [`APPENDS`] entries through a faulting proxy to `server`; checks what the server
/// holds, read directly.
fn proof_by_fault(server: SocketAddr, name: &str) {
    let proxy = FaultProxy::start(server, seed(), FAULT_ONE_IN);
    let backend =
        RedisBackend::connect_with(&proxy.url(), Duration::from_secs(5), Duration::from_secs(5))
            .unwrap();
    let feed = Feed::new(backend);
    assert!(feed.idempotent_appends().unwrap(), "{name}");
    let policy = RetryPolicy {
        deadline: Duration::from_secs(60),
        first_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(20),
    };
    let receipts: Vec<_> = (0..APPENDS)
        .map(|n| {
            feed.append_retrying("fault", "events", &[("n", &n.to_string())], &policy)
                .unwrap_or_else(|e| panic!("{name}: append {n}: {e}"))
        })
        .collect();
    let counts = proxy.counts();
    let (before, after, racing) = (
        counts.before.load(Ordering::SeqCst),
        counts.after.load(Ordering::SeqCst),
        counts.racing.load(Ordering::SeqCst),
    );
    eprintln!(
        "{name}: {APPENDS} appends, faults: {before} dropped, {after} replies lost, {racing} racing"
    );
    assert!(
        before > 0 && after > 0 && racing > 0,
        "{name}: every kind of fault happened"
    );
    let direct = Feed::new(RedisBackend::connect(&url(server)).unwrap());
    let stored = direct.read("fault", "events", ..).unwrap();
    let numbers: Vec<String> = stored
        .iter()
        .map(|r| r.get("n").unwrap_or("?").to_string())
        .collect();
    let expected: Vec<String> = (0..APPENDS).map(|n| n.to_string()).collect();
    assert_eq!(
        numbers, expected,
        "{name}: each append exactly once, in order"
    );
    assert_eq!(
        stored.iter().map(|r| r.id).collect::<Vec<_>>(),
        receipts,
        "{name}: under the receipts the caller got"
    );
}

#[test]
fn appends_through_a_faulting_connection_land_once_on_echomq_serve() {
    let server = TestServer::start().unwrap();
    proof_by_fault(server.addr(), "echomq serve");
}

#[test]
fn appends_through_a_faulting_connection_land_once_on_redis_8_8() {
    let Some(peer) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    proof_by_fault(peer.addr(), "redis 8.8");
}

#[test]
fn on_redis_7_a_lost_reply_is_returned_not_retried() {
    let Some(peer) = Peer::start(PeerKind::Redis) else {
        return;
    };
    // Every XADD faulted: the feed must give up on the first that may have run.
    let proxy = FaultProxy::start(peer.addr(), seed(), 1);
    let backend =
        RedisBackend::connect_with(&proxy.url(), Duration::from_secs(5), Duration::from_secs(5))
            .unwrap();
    let feed = Feed::new(backend);
    assert!(!feed.idempotent_appends().unwrap());
    let policy = RetryPolicy {
        deadline: Duration::from_secs(30),
        first_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
    };
    let result = feed.append_retrying("fault", "old", &[("k", "v")], &policy);
    assert!(
        matches!(
            result,
            Err(FeedError::ConnectionLost { .. } | FeedError::ReplyTimeout { .. })
        ),
        "{result:?}"
    );
    let counts = proxy.counts();
    let faults = counts.before.load(Ordering::SeqCst)
        + counts.after.load(Ordering::SeqCst)
        + counts.racing.load(Ordering::SeqCst);
    assert_eq!(faults, 1, "one attempt, not retried");
}
