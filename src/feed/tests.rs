//! Feed layer behaviour on the embedded backend: receipts, windows, bad input, projections.

use std::sync::Arc;

use echomq_engine::{Keyspace, ManualClock};
use proptest::prelude::*;
use time::OffsetDateTime;

use super::projection::Refresh;
use super::*;

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;

fn at(ms: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap()
}

fn feed() -> (Feed<Embedded>, Arc<ManualClock>, Arc<Keyspace>) {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    (
        Feed::with_clock(Embedded::new(keyspace.clone()), clock.clone()),
        clock,
        keyspace,
    )
}

#[test]
fn append_returns_increasing_receipts_and_reads_back_in_mint_order() {
    let (feed, clock, _) = feed();
    let a = feed
        .append(
            "cm",
            "events",
            &[("kind", "room-opened"), ("room", "RMM_1")],
        )
        .unwrap();
    let b = feed.append("cm", "events", &[("kind", "guess")]).unwrap();
    clock.set(T - 5_000);
    let c = feed
        .append("cm", "events", &[("kind", "late clock")])
        .unwrap();
    assert!(a < b && b < c);
    assert_eq!(a.brand(), Brand::Evt);
    let records = feed.read("cm", "events", ..).unwrap();
    assert_eq!(
        records.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![a, b, c]
    );
    assert_eq!(records[0].get("room"), Some("RMM_1"));
    assert_eq!(
        records[0].fields.len(),
        2,
        "the id field is not part of the payload"
    );
    assert_eq!(feed.read("cm", "events", b..).unwrap().len(), 2);
    assert_eq!(feed.read("cm", "events", ..b).unwrap().len(), 1);
    assert_eq!(feed.read("cm", "events", b..=b).unwrap()[0].id, b);
}

#[test]
fn window_edges_are_inclusive_to_the_millisecond() {
    let (feed, clock, _) = feed();
    let (t0, t1) = (T + 1_000, T + 2_000);
    let mut minted = Vec::new();
    for ms in [t0 - 1, t0, t0 + 500, t1, t1 + 1] {
        clock.set(ms);
        minted.push(
            feed.append("cm", "events", &[("at", &ms.to_string())])
                .unwrap(),
        );
    }
    let window = feed
        .read_window("cm", "events", at(t0), at(t1), None)
        .unwrap();
    assert_eq!(
        window.iter().map(|r| r.id).collect::<Vec<_>>(),
        minted[1..4].to_vec()
    );
    let since = feed.read_since("cm", "events", at(t1), None).unwrap();
    assert_eq!(
        since.iter().map(|r| r.id).collect::<Vec<_>>(),
        minted[3..].to_vec()
    );
    assert_eq!(
        feed.read_window("cm", "events", at(t0), at(t1), Some(2))
            .unwrap()
            .len(),
        2
    );
    assert_eq!(minid_floor(at(t0)).unwrap().to_string(), format!("{t0}-0"));
    assert_eq!(
        maxid_ceil(at(t1)).unwrap().to_string(),
        format!("{t1}-4194303")
    );
}

#[test]
fn bad_input_fails_before_any_backend_call() {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    let feed = Feed::with_clock(Recording::new(Embedded::new(keyspace)), clock);
    assert!(matches!(
        feed.read_window("cm", "events", at(T), at(T - 1), None),
        Err(FeedError::InvertedWindow { .. })
    ));
    let user = Branded::new(Brand::Usr, 5);
    assert!(matches!(
        feed.read("cm", "events", user..),
        Err(FeedError::Branded(BrandedError::WrongBrand {
            expected: Brand::Evt,
            found: Brand::Usr
        }))
    ));
    assert!(matches!(
        feed.append("cm", "events", &[("id", "x")]),
        Err(FeedError::ReservedField)
    ));
    assert!(matches!(
        feed.append("cm", "events", &[]),
        Err(FeedError::NoFields)
    ));
    assert!(matches!(
        feed.read_since(
            "cm",
            "events",
            at(0) - time::Duration::milliseconds(1),
            None
        ),
        Err(FeedError::InstantOutOfRange(_))
    ));
    assert_eq!(feed.backend().calls(), Vec::<String>::new());
}

#[test]
fn a_tampered_or_missing_id_field_is_reported() {
    let (feed, _, keyspace) = feed();
    let key = stream_key("cm", "events");
    let good = Branded::from_parts(Brand::Evt, T, 1).unwrap().to_string();
    keyspace
        .execute(&["XADD", &key, &format!("{T}-0"), "id", &good, "k", "v"])
        .unwrap();
    assert!(matches!(
        feed.read("cm", "events", ..),
        Err(FeedError::IdMismatch { .. })
    ));
    keyspace.run(|db, _| db.remove(key.as_bytes()));
    keyspace.execute(&["XADD", &key, "5-0", "k", "v"]).unwrap();
    assert!(matches!(
        feed.read("cm", "events", ..),
        Err(FeedError::MissingIdField(_))
    ));
    keyspace.run(|db, _| db.remove(key.as_bytes()));
    keyspace
        .execute(&["XADD", &key, "5-0", "id", "USR_0000000000005", "k", "v"])
        .unwrap();
    assert!(matches!(
        feed.read("cm", "events", ..),
        Err(FeedError::BadIdField { .. })
    ));
    keyspace.run(|db, _| db.remove(key.as_bytes()));
    keyspace
        .execute(&[
            b"XADD".as_slice(),
            key.as_bytes(),
            b"5-0",
            b"id",
            b"\xff\xfe",
            b"k",
            b"v",
        ])
        .unwrap();
    assert!(matches!(
        feed.read("cm", "events", ..),
        Err(FeedError::BadIdField { .. })
    ));
}

#[test]
fn a_restarted_writer_behind_the_stream_top_still_appends() {
    let (feed, _, keyspace) = feed();
    let first = feed.append("cm", "events", &[("n", "1")]).unwrap();
    let clock = Arc::new(ManualClock::new(T - 60_000));
    let restarted = Feed::with_clock(Embedded::new(keyspace), clock);
    let next = restarted.append("cm", "events", &[("n", "2")]).unwrap();
    assert!(next > first);
}

#[test]
fn two_writers_on_one_stream_both_succeed() {
    let (feed, clock, keyspace) = feed();
    let other = Feed::with_clock(Embedded::new(keyspace), clock);
    for n in 0..100 {
        feed.append("cm", "events", &[("w", "a")]).unwrap();
        if n % 3 == 0 {
            other.append("cm", "events", &[("w", "b")]).unwrap();
        }
    }
    assert_eq!(feed.read("cm", "events", ..).unwrap().len(), 134);
}

#[test]
fn concurrent_appends_from_threads_all_succeed_in_order() {
    let (feed, _, _) = feed();
    let feed = Arc::new(feed);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let feed = Arc::clone(&feed);
            std::thread::spawn(move || {
                (0..500)
                    .map(|_| {
                        feed.append("cm", "events", &[("t", &t.to_string())])
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for t in threads {
        let ids = t.join().unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
    let all = feed.read("cm", "events", ..).unwrap();
    assert_eq!(all.len(), 2000);
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
}

#[test]
fn trim_policies() {
    let (feed, clock, _) = feed();
    for n in 0..300u64 {
        clock.set(T + n);
        feed.append("cm", "events", &[("n", &n.to_string())])
            .unwrap();
    }
    assert_eq!(
        feed.trim(
            "cm",
            "events",
            TrimPolicy::MaxLen {
                n: 250,
                approx: true
            }
        )
        .unwrap(),
        0
    );
    assert_eq!(
        feed.trim(
            "cm",
            "events",
            TrimPolicy::MaxLen {
                n: 250,
                approx: false
            }
        )
        .unwrap(),
        50
    );
    let removed = feed
        .trim(
            "cm",
            "events",
            TrimPolicy::MinId {
                before: at(T + 100),
                approx: false,
            },
        )
        .unwrap();
    assert_eq!(removed, 50);
    assert_eq!(
        feed.read("cm", "events", ..).unwrap()[0].get("n"),
        Some("100")
    );
}

#[test]
fn cached_projection_reuses_extends_and_recomputes() {
    let (feed, clock, keyspace) = feed();
    let count = |acc: &mut u64, _: &Record| *acc += 1;
    let mut since = CachedProjection::new("cm", "events", Window::Since(at(T)), 0u64, count);
    let mut closed = CachedProjection::new(
        "cm",
        "events",
        Window::Closed(at(T), at(T + 10)),
        0u64,
        count,
    );
    for n in 0..5 {
        clock.set(T + n);
        feed.append("cm", "events", &[("n", "x")]).unwrap();
    }
    assert_eq!(*since.get(&feed).unwrap(), 5);
    assert_eq!(since.last_refresh(), Some(Refresh::Recomputed));
    assert_eq!(*since.get(&feed).unwrap(), 5);
    assert_eq!(since.last_refresh(), Some(Refresh::Reused));
    assert_eq!(*closed.get(&feed).unwrap(), 5);
    clock.set(T + 20);
    feed.append("cm", "events", &[("n", "after the closed window")])
        .unwrap();
    assert_eq!(*since.get(&feed).unwrap(), 6);
    assert_eq!(since.last_refresh(), Some(Refresh::Extended));
    assert_eq!(*closed.get(&feed).unwrap(), 5);
    assert_eq!(closed.last_refresh(), Some(Refresh::Extended));
    let first = feed.read("cm", "events", ..).unwrap()[1].id;
    keyspace
        .execute(&[
            "XDEL",
            &stream_key("cm", "events"),
            &first.stream_id().to_string(),
        ])
        .unwrap();
    assert_eq!(*since.get(&feed).unwrap(), 5);
    assert_eq!(since.last_refresh(), Some(Refresh::Recomputed));
    assert_eq!(*closed.get(&feed).unwrap(), 4);
}

proptest! {
    #[test]
    fn read_window_equals_filtering_everything_by_mint_instant(
        steps in proptest::collection::vec(0u64..40, 1..60),
        a in 0u64..400,
        b in 0u64..400,
    ) {
        let (feed, clock, _) = feed();
        let mut ms = T;
        for step in steps {
            ms += step / 4;
            clock.set(ms);
            feed.append("cm", "events", &[("k", "v")]).unwrap();
        }
        let (t0, t1) = (T + a.min(b), T + a.max(b));
        let window = feed.read_window("cm", "events", at(t0), at(t1), None).unwrap();
        let filtered: Vec<_> = feed
            .read("cm", "events", ..)
            .unwrap()
            .into_iter()
            .filter(|r| (t0..=t1).contains(&r.id.ms()))
            .collect();
        prop_assert_eq!(window, filtered);
    }
}
