//! The feed layer's backend-independent suite, run on every backend: the embedded engine,
//! `echomq serve` (in-process, over TCP), real Redis and Valkey servers, and a 3-master,
//! 3-replica Redis Cluster.
//!
//! Each backend gets the same checks: receipts increase and read back in mint order with the
//! payload intact, window edges are exact to the millisecond, a restarted writer whose clock is
//! behind the stream top still appends, trims apply, and a cached projection is reused, extended
//! and recomputed correctly.

use std::sync::Arc;

use echomq::engine::{Keyspace, ManualClock};
use echomq::feed::{
    Backend, CachedProjection, Embedded, Feed, Record, RedisBackend, Refresh, TrimPolicy, Window,
};
use echomq::testing::TestServer;
use time::OffsetDateTime;

use crate::support::cluster::Cluster;
use crate::support::peer::{Peer, PeerKind};
use crate::support::resp::Resp;

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;

fn at(ms: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap()
}

/// Runs the suite on backends made by `make` (a fresh one per check, on an empty keyspace).
fn suite<B: Backend>(name: &str, make: impl Fn() -> B) {
    receipts_and_payloads(&make);
    window_edges(&make);
    restarted_writer(&make);
    trims(&make);
    projections(&make);
    eprintln!("feed suite passed on {name}");
}

fn feed<B: Backend>(make: &impl Fn() -> B, clock: &Arc<ManualClock>) -> Feed<B> {
    Feed::with_clock(make(), clock.clone())
}

fn receipts_and_payloads<B: Backend>(make: &impl Fn() -> B) {
    let clock = Arc::new(ManualClock::new(T));
    let feed = feed(make, &clock);
    let a = feed
        .append(
            "cm",
            "receipts",
            &[("kind", "room-opened"), ("room", "RMM_1")],
        )
        .unwrap();
    let b = feed
        .append(
            "cm",
            "receipts",
            &[("kind", "guess"), ("guess", "🍎🐙🚀🎲")],
        )
        .unwrap();
    assert!(a < b);
    let records = feed.read("cm", "receipts", ..).unwrap();
    assert_eq!(records.iter().map(|r| r.id).collect::<Vec<_>>(), vec![a, b]);
    assert_eq!(records[1].get("guess"), Some("🍎🐙🚀🎲"));
    assert_eq!(records[0].fields.len(), 2);
}

fn window_edges<B: Backend>(make: &impl Fn() -> B) {
    let clock = Arc::new(ManualClock::new(T));
    let feed = feed(make, &clock);
    let (t0, t1) = (T + 1_000, T + 2_000);
    let mut minted = Vec::new();
    for ms in [t0 - 1, t0, t1, t1 + 1] {
        clock.set(ms);
        minted.push(
            feed.append("cm", "window", &[("at", &ms.to_string())])
                .unwrap(),
        );
    }
    let window = feed
        .read_window("cm", "window", at(t0), at(t1), None)
        .unwrap();
    assert_eq!(
        window.iter().map(|r| r.id).collect::<Vec<_>>(),
        minted[1..3].to_vec()
    );
    let since = feed.read_since("cm", "window", at(t1), None).unwrap();
    assert_eq!(since.len(), 2);
}

fn restarted_writer<B: Backend>(make: &impl Fn() -> B) {
    let clock = Arc::new(ManualClock::new(T + 10_000));
    let first = feed(make, &clock)
        .append("cm", "restart", &[("n", "1")])
        .unwrap();
    let behind = Arc::new(ManualClock::new(T));
    let second = feed(make, &behind)
        .append("cm", "restart", &[("n", "2")])
        .unwrap();
    assert!(second > first);
}

fn trims<B: Backend>(make: &impl Fn() -> B) {
    let clock = Arc::new(ManualClock::new(T));
    let feed = feed(make, &clock);
    for n in 0..150u64 {
        clock.set(T + n);
        feed.append("cm", "trim", &[("n", &n.to_string())]).unwrap();
    }
    assert_eq!(
        feed.trim(
            "cm",
            "trim",
            TrimPolicy::MaxLen {
                n: 60,
                approx: false
            }
        )
        .unwrap(),
        90
    );
    assert_eq!(feed.read("cm", "trim", ..).unwrap()[0].get("n"), Some("90"));
    assert_eq!(
        feed.trim(
            "cm",
            "trim",
            TrimPolicy::MinId {
                before: at(T + 100),
                approx: false
            }
        )
        .unwrap(),
        10
    );
}

fn projections<B: Backend>(make: &impl Fn() -> B) {
    let clock = Arc::new(ManualClock::new(T));
    let feed = feed(make, &clock);
    let count = |acc: &mut u64, _: &Record| *acc += 1;
    let mut since = CachedProjection::new("cm", "projection", Window::Since(at(T)), 0u64, count);
    for n in 0..5 {
        clock.set(T + n);
        feed.append("cm", "projection", &[("n", "x")]).unwrap();
    }
    assert_eq!(*since.get(&feed).unwrap(), 5);
    assert_eq!(*since.get(&feed).unwrap(), 5);
    assert_eq!(since.last_refresh(), Some(Refresh::Reused));
    feed.append("cm", "projection", &[("n", "y")]).unwrap();
    assert_eq!(*since.get(&feed).unwrap(), 6);
    assert_eq!(since.last_refresh(), Some(Refresh::Extended));
    feed.trim(
        "cm",
        "projection",
        TrimPolicy::MaxLen {
            n: 2,
            approx: false,
        },
    )
    .unwrap();
    assert_eq!(*since.get(&feed).unwrap(), 2);
    assert_eq!(since.last_refresh(), Some(Refresh::Recomputed));
}

#[test]
fn feed_suite_on_the_embedded_engine() {
    let keyspace = Arc::new(Keyspace::new(Arc::new(ManualClock::new(T))));
    suite("embedded", || Embedded::new(keyspace.clone()));
}

#[test]
fn feed_suite_on_echomq_serve() {
    let server = TestServer::start().unwrap();
    suite("echomq serve", || {
        RedisBackend::connect(&server.url()).unwrap()
    });
}

fn peer_url(peer: &mut Peer) -> String {
    let Resp::Array(pair) = peer.call(&["CONFIG", "GET", "port"]) else {
        panic!("CONFIG GET port")
    };
    let Some(Resp::Bulk(port)) = pair.get(1) else {
        panic!("CONFIG GET port")
    };
    format!("redis://127.0.0.1:{}/", String::from_utf8_lossy(port))
}

#[test]
fn feed_suite_on_redis() {
    let Some(mut peer) = Peer::start(PeerKind::Redis) else {
        return;
    };
    let url = peer_url(&mut peer);
    suite("redis", || RedisBackend::connect(&url).unwrap());
}

#[test]
fn feed_suite_on_valkey() {
    let Some(mut peer) = Peer::start(PeerKind::Valkey) else {
        return;
    };
    let url = peer_url(&mut peer);
    suite("valkey", || RedisBackend::connect(&url).unwrap());
}

#[test]
fn feed_suite_on_a_redis_cluster() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    suite("redis cluster", || cluster.backend());
}
