//! Each backend maps its errors to the feed's typed variants in one place: the embedded backend
//! from the engine's typed errors, the server backend from the error reply's code. Callers (the
//! consumer runtime's group recovery, `Feed::append`'s catch-up, `meta` on a missing key)
//! match those variants.

use std::sync::Arc;

use bytes::Bytes;
use echomq_engine::{Keyspace, ManualClock, Reply, StreamId, Value};

use super::redis::server_error;
use super::{Backend, Embedded, GroupBackend, GroupStart, ReadFrom};
use crate::feed::{Feed, FeedError};

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;

fn embedded() -> Embedded {
    Embedded::new(Arc::new(Keyspace::new(Arc::new(ManualClock::new(T)))))
}

/// The error a server's error reply (`-CODE message`) becomes.
fn from_reply(reply: &str) -> FeedError {
    let value = redis::parse_redis_value(format!("{reply}\r\n").as_bytes()).unwrap();
    server_error(value.extract_error().unwrap_err())
}

/// The variant's name, `other` for the rest.
fn kind(error: &FeedError) -> &'static str {
    match error {
        FeedError::NoGroup(_) => "NoGroup",
        FeedError::BusyGroup(_) => "BusyGroup",
        FeedError::WrongType(_) => "WrongType",
        FeedError::NoSuchKey(_) => "NoSuchKey",
        FeedError::IdNotAboveTop(_) => "IdNotAboveTop",
        FeedError::Backend(_) => "Backend",
        FeedError::ClusterDown(_) => "ClusterDown",
        FeedError::SlotMoved(_) => "SlotMoved",
        FeedError::CrossSlot(_) => "CrossSlot",
        _ => "other",
    }
}

#[test]
fn server_error_replies_map_by_code() {
    let cases = [
        (
            "-NOGROUP No such key 'k' or consumer group 'g' in XREADGROUP with GROUP option",
            "NoGroup",
        ),
        ("-BUSYGROUP Consumer Group name already exists", "BusyGroup"),
        (
            "-WRONGTYPE Operation against a key holding the wrong kind of value",
            "WrongType",
        ),
        ("-ERR no such key", "NoSuchKey"),
        (
            "-ERR The ID specified in XADD is equal or smaller than the target stream top item",
            "IdNotAboveTop",
        ),
        ("-CLUSTERDOWN The cluster is down", "ClusterDown"),
        ("-CLUSTERDOWN Hash slot not served", "ClusterDown"),
        ("-MOVED 3999 127.0.0.1:6381", "SlotMoved"),
        ("-ASK 3999 127.0.0.1:6381", "SlotMoved"),
        (
            "-TRYAGAIN Multiple keys request during rehashing of slot",
            "SlotMoved",
        ),
        (
            "-CROSSSLOT Keys in request don't hash to the same slot",
            "CrossSlot",
        ),
        ("-ERR syntax error", "Backend"),
        ("-NOPERM this user has no permissions", "Backend"),
    ];
    for (reply, expected) in cases {
        let error = from_reply(reply);
        assert_eq!(kind(&error), expected, "{reply} became {error:?}");
        // The text stays the server's.
        let message = reply.trim_start_matches('-').split_once(' ').unwrap().1;
        assert!(error.to_string().contains(message), "{reply}: {error}");
    }
}

#[test]
fn embedded_group_refusals_are_typed() {
    let backend = embedded();
    assert!(matches!(
        backend.read_group("missing", "g", "c", ReadFrom::New, 10, None),
        Err(FeedError::NoGroup(text)) if text.contains("XREADGROUP")
    ));
    assert!(
        backend
            .create_group("k", "g", GroupStart::Beginning)
            .unwrap()
    );
    assert!(!backend.create_group("k", "g", GroupStart::End).unwrap());
    assert!(matches!(
        backend.read_group(
            "k",
            "other",
            "c",
            ReadFrom::Pending(StreamId::MIN),
            10,
            None
        ),
        Err(FeedError::NoGroup(_))
    ));
    assert!(matches!(
        backend.auto_claim("k", "other", "c", 0, StreamId::MIN, 10),
        Err(FeedError::NoGroup(text)) if !text.contains("XREADGROUP")
    ));
    assert!(matches!(
        backend.pending_count("k", "other", "c"),
        Err(FeedError::NoGroup(_))
    ));
}

#[test]
fn embedded_stream_refusals_are_typed() {
    let backend = embedded();
    backend
        .keyspace()
        .run(|db, _| db.insert(b"s", Value::String(Bytes::from_static(b"x").into())));
    assert!(matches!(
        backend.add("s", StreamId::new(1, 0), &[b"f", b"v"]),
        Err(FeedError::WrongType(_))
    ));
    backend
        .add("k", StreamId::new(5, 0), &[b"f", b"v"])
        .unwrap();
    assert!(matches!(
        backend.add("k", StreamId::new(5, 0), &[b"f", b"v"]),
        Err(FeedError::IdNotAboveTop(_))
    ));
    assert!(matches!(
        backend.add("k", StreamId::new(4, 9), &[b"f", b"v"]),
        Err(FeedError::IdNotAboveTop(_))
    ));
}

#[test]
fn append_catches_up_when_another_writer_moved_the_top() {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    let a = Feed::with_clock(Embedded::new(keyspace.clone()), clock.clone());
    let b = Feed::with_clock(Embedded::new(keyspace.clone()), clock.clone());
    let first = b.append("q", "s", &[("n", "1")]).unwrap();
    a.append("q", "s", &[("n", "2")]).unwrap();
    let top = a.append("q", "s", &[("n", "3")]).unwrap();
    // B's minter still stands at its own first id: its next mint is at or below the top, the
    // backend refuses it as IdNotAboveTop, and append re-seeds and mints again.
    let caught_up = b.append("q", "s", &[("n", "4")]).unwrap();
    assert!(first < top && top < caught_up, "{first} {top} {caught_up}");
    assert_eq!(
        keyspace.execute(&["XLEN", "emq:{q}:stream:s"]).unwrap(),
        Reply::Int(4)
    );
}

#[test]
fn cluster_refusals_say_what_to_do_and_are_retryable() {
    for reply in [
        "-CLUSTERDOWN The cluster is down",
        "-MOVED 3999 127.0.0.1:6381",
    ] {
        let error = from_reply(reply);
        assert!(error.is_retryable(), "{error}");
        assert!(error.to_string().contains("retry"), "{error}");
    }
    assert!(!from_reply("-CROSSSLOT Keys in request don't hash to the same slot").is_retryable());
    assert!(!from_reply("-ERR syntax error").is_retryable());
}

#[test]
fn one_predicate_for_worth_retrying_and_one_for_nothing_sent() {
    let (server, reason) = ("127.0.0.1:1".to_string(), "refused".to_string());
    let refused = FeedError::ConnectFailed {
        server: server.clone(),
        reason: reason.clone(),
    };
    let lost = FeedError::ConnectionLost { server, reason };
    let connect_timeout = FeedError::ConnectTimeout {
        server: "s".into(),
        after_ms: 1,
    };
    let reply_timeout = FeedError::ReplyTimeout {
        server: "s".into(),
        after_ms: 1,
    };
    let not_replicated = FeedError::NotReplicated {
        id: StreamId::new(1, 0),
        acked: 0,
        wanted: 1,
        timeout_ms: 1,
    };
    // Nothing was sent: retryable, and the command did not run.
    for error in [&refused, &connect_timeout] {
        assert!(error.is_retryable() && error.is_unsent(), "{error}");
    }
    // May have run: retryable, but not unsent.
    for error in [&lost, &reply_timeout, &not_replicated] {
        assert!(error.is_retryable() && !error.is_unsent(), "{error}");
    }
    let no_tag = FeedError::NoHashTag { key: "k".into() };
    assert!(!no_tag.is_retryable() && !no_tag.is_unsent());
    assert!(!from_reply("-ERR syntax error").is_unsent());
}
