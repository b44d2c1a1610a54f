//! The claim path a consumer runs, chosen once at start from what the server has, and what it
//! changes: on `XREADGROUP … CLAIM` / `XNACK … FAIL` backends (the engine, `echomq serve`,
//! Redis 8.8) a failed entry is redelivered at once, long before `claim_idle_ms`; on Redis 7
//! and Valkey the XAUTOCLAIM beat stays. Every entry is still handled until acked, once each.

use std::collections::HashMap;

use echomq::feed::backend::{GroupBackend, GroupStart};
use echomq::feed::consumer::{ClaimPath, Origin};
use echomq::feed::{ConsumerSettings, Delivery, StreamConsumer, Subscription, stream_key};

use super::{Log, Target, append, wait_until};

/// Every target, each kind of server included (when installed, always under CI).
fn targets() -> Vec<Target> {
    let mut targets = vec![Target::embedded(), Target::serve()];
    targets.extend(Target::redis());
    targets.extend(Target::redis8());
    targets.extend(Target::valkey());
    targets.extend(Target::cluster());
    targets
}

#[test]
fn the_claim_path_is_chosen_from_what_the_server_has_and_reported() {
    for target in targets() {
        let key = stream_key("cm", "path");
        let backend = target.backend();
        assert_eq!(
            backend.claims_on_read(&key).unwrap(),
            target.claim_path() == ClaimPath::ReadClaim,
            "{target}"
        );
        for (read_claim, expected) in [(true, target.claim_path()), (false, ClaimPath::AutoClaim)] {
            let consumer = StreamConsumer::start(
                &backend,
                Subscription::new("cm", "path", "g", "c"),
                ConsumerSettings {
                    read_claim,
                    block_ms: 10,
                    ..ConsumerSettings::default()
                },
                |_: Delivery| Ok::<(), String>(()),
            )
            .unwrap();
            assert_eq!(
                consumer.claim_path(),
                expected,
                "{target}, read_claim {read_claim}"
            );
            let metrics = consumer.stop().unwrap();
            assert_eq!(metrics.claim_path, expected, "{target}");
        }
    }
}

/// Each entry fails on its first attempt. With `claim_idle_ms` far beyond the test's length,
/// only an XNACK can bring an entry back: on the CLAIM path every entry is handled twice
/// (attempts 1 then 2, the second as a claim) and acked once.
fn failures_come_back_at_once(target: &Target) {
    const N: u64 = 40;
    let key = stream_key("cm", "nack");
    target
        .backend()
        .create_group(&key, "g", GroupStart::Beginning)
        .unwrap();
    let ids = append(&target.feed(), "nack", 0, N);
    let log = Log::default();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        Subscription::new("cm", "nack", "g", "c"),
        ConsumerSettings {
            start: GroupStart::Beginning,
            claim_idle_ms: 3_600_000,
            beat_interval_ms: 3_600_000,
            block_ms: 20,
            batch_size: 16,
            ..ConsumerSettings::default()
        },
        move |d: Delivery| {
            l.record(&d);
            if d.attempts == 1 {
                return Err("first attempts fail".to_string());
            }
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(consumer.claim_path(), ClaimPath::ReadClaim, "{target}");
    wait_until("every entry acked", || consumer.metrics().acked == N);
    let metrics = consumer.stop().unwrap();
    assert_eq!(
        (
            metrics.failed,
            metrics.nacked,
            metrics.reclaimed,
            metrics.acked
        ),
        (N, N, N, N),
        "{target}: {metrics:?}"
    );
    let mut attempts: HashMap<_, Vec<_>> = HashMap::new();
    for seen in log.all() {
        attempts
            .entry(seen.id)
            .or_default()
            .push((seen.attempts, seen.origin));
    }
    for id in &ids {
        assert_eq!(
            attempts.get(id).map(Vec::as_slice),
            Some(&[(1, Origin::New), (2, Origin::Reclaimed)][..]),
            "{target}: {id}"
        );
    }
    assert_eq!(metrics.pending, 0, "{target}");
}

#[test]
fn on_the_claim_path_a_failed_entry_is_redelivered_at_once() {
    let mut targets = vec![Target::embedded(), Target::embedded_wall(), Target::serve()];
    targets.extend(Target::redis8());
    for target in targets {
        failures_come_back_at_once(&target);
    }
}
