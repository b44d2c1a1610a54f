//! The retention driver: declared streams are trimmed on the beat (`~` never below n), by age
//! with the manual clock, and undeclared streams are never touched.

use std::sync::Arc;
use std::time::Duration;

use echomq::feed::retention::Trimmer;
use echomq::feed::{Backend, Feed, RetentionPolicy, StreamRetention, TrimPolicy};

use super::{Either, T, Target, append, wait_until};

fn length(feed: &Feed<Either>, stream: &str) -> u64 {
    feed.meta("cm", stream).unwrap().map_or(0, |m| m.length)
}

#[test]
fn declared_streams_are_trimmed_by_hand_and_undeclared_ones_never() {
    let target = Target::embedded();
    let Target::Embedded { clock, .. } = &target else {
        unreachable!()
    };
    let feed = Arc::new(target.feed());
    for (i, stream) in ["capped", "aged", "exact", "free"].into_iter().enumerate() {
        for n in 0..1_000u64 {
            clock.set(T + n);
            feed.append(
                "cm",
                stream,
                &[("n", &n.to_string()), ("s", &i.to_string())],
            )
            .unwrap();
        }
    }
    clock.set(T + 1_999);
    let driver = StreamRetention::with_clock("test", Arc::clone(&feed), clock.clone());
    driver.declare(
        "cm",
        "capped",
        RetentionPolicy::MaxLen {
            n: 250,
            approx: true,
        },
    );
    driver.declare(
        "cm",
        "aged",
        RetentionPolicy::MaxAge {
            age_ms: 1_300,
            approx: false,
        },
    );
    driver.declare(
        "cm",
        "exact",
        RetentionPolicy::MaxLen {
            n: 10,
            approx: false,
        },
    );
    let pass = driver.apply();
    assert_eq!(pass.len(), 3);
    assert!(pass.iter().all(|t| t.result.is_ok()), "{pass:?}");

    let capped = length(&feed, "capped");
    assert!(
        (250..350).contains(&capped),
        "~ trims whole 100-entry nodes: never below n, at most a node above ({capped})"
    );
    // Minted at T + n, cut-off T + 1999 - 1300 = T + 699: entries 699.. stay.
    assert_eq!(length(&feed, "aged"), 301);
    assert_eq!(
        feed.read("cm", "aged", ..).unwrap()[0].get("n"),
        Some("699")
    );
    assert_eq!(length(&feed, "exact"), 10);
    assert_eq!(length(&feed, "free"), 1_000, "undeclared: untouched");

    // Ages move with the clock.
    clock.advance(100);
    driver.apply();
    assert_eq!(length(&feed, "aged"), 201);
    assert_eq!(driver.forget("cm", "aged").map(|_| ()), Some(()));
    clock.advance(100_000);
    driver.apply();
    assert_eq!(length(&feed, "aged"), 201, "forgotten: no longer trimmed");
    let metrics = driver.metrics();
    assert_eq!((metrics.passes, metrics.errors), (3, 0));
}

fn trimmed_on_the_beat(target: &Target) {
    const KEEP: u64 = 200;
    let feed = Arc::new(target.feed());
    let driver = Arc::new(StreamRetention::new("beat", Arc::clone(&feed)));
    driver.declare(
        "cm",
        "beat",
        RetentionPolicy::MaxLen {
            n: KEEP,
            approx: true,
        },
    );
    let beat = driver.start(Duration::from_millis(5)).unwrap();
    let mut appended = 0;
    for _ in 0..10 {
        append(&feed, "beat", appended, 100);
        appended += 100;
        let len = length(&feed, "beat");
        assert!(
            len >= KEEP.min(appended),
            "{target}: ~ never trims below n ({len} of {appended})"
        );
    }
    wait_until("a trim on the beat", || length(&feed, "beat") < appended);
    append(&feed, "other", 0, 500);
    let passes = driver.metrics().passes;
    wait_until("two more passes", || driver.metrics().passes >= passes + 2);
    beat.stop();
    assert!(length(&feed, "beat") >= KEEP);
    assert_eq!(
        length(&feed, "other"),
        500,
        "{target}: undeclared: untouched"
    );
    // A manual trim is the same public verb, equally supported.
    Trimmer::trim(
        &*feed,
        "cm",
        "other",
        TrimPolicy::MaxLen {
            n: 5,
            approx: false,
        },
    )
    .unwrap();
    assert_eq!(length(&feed, "other"), 5);
    assert!(
        feed.backend()
            .meta("emq:{cm}:stream:beat")
            .unwrap()
            .is_some()
    );
}

#[test]
fn declared_streams_are_trimmed_on_the_beat_and_approx_never_goes_below_n() {
    let mut targets = vec![Target::embedded_wall(), Target::serve()];
    targets.extend(Target::redis());
    targets.extend(Target::cluster());
    for target in targets {
        trimmed_on_the_beat(&target);
    }
}
