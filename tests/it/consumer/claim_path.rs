//! The claim path a consumer runs, chosen once at start from what the server has, and what it
//! changes: on `XREADGROUP … CLAIM` / `XNACK … FAIL` backends (the engine, `echomq serve`,
//! Redis 8.8) a failed entry is redelivered at once, long before `claim_idle_ms`; on Redis 7
//! and Valkey the XAUTOCLAIM beat stays. Every entry is still handled until acked, once each.

use std::collections::HashMap;

use echomq::feed::backend::{GroupBackend, GroupStart, ReadFrom};
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

/// The backend layer under the CLAIM path: a claiming read hands out idle entries (as claims,
/// with their counts) before new ones, and an entry handed back with `XNACK … FAIL` comes
/// first in the next read whatever its idle time, its count kept and then bumped.
fn claiming_read_on(target: &Target) {
    const MIN_IDLE_MS: u64 = 200;
    let key = stream_key("cm", "claiming");
    let backend = target.backend();
    backend
        .create_group(&key, "g", GroupStart::Beginning)
        .unwrap();
    let feed = target.feed();
    let old = append(&feed, "claiming", 0, 3);
    let held = backend
        .read_group(&key, "g", "a", ReadFrom::New, 10, None)
        .unwrap();
    assert_eq!(held.len(), 3, "{target}");
    match target {
        Target::Embedded { .. } => target.advance_ms(MIN_IDLE_MS + 1),
        _ => std::thread::sleep(std::time::Duration::from_millis(MIN_IDLE_MS + 50)),
    }
    let new = append(&feed, "claiming", 3, 2);
    let read = backend
        .read_group(
            &key,
            "g",
            "b",
            ReadFrom::Claiming {
                min_idle_ms: MIN_IDLE_MS,
            },
            10,
            None,
        )
        .unwrap();
    let seen: Vec<_> = read
        .iter()
        .map(|e| (e.id, e.claimed, e.delivery_count))
        .collect();
    let expected: Vec<_> = old
        .iter()
        .map(|id| (id.stream_id(), true, 2))
        .chain(new.iter().map(|id| (id.stream_id(), false, 1)))
        .collect();
    assert_eq!(
        seen, expected,
        "{target}: idle entries first, then new ones"
    );
    assert_eq!(
        backend.pending_count(&key, "g", "b").unwrap(),
        5,
        "{target}"
    );

    // Handed back: first in line for any consumer, at once, its count kept (2), then bumped.
    let back = old[1].stream_id();
    assert_eq!(
        backend.nack_fail(&key, "g", &[back]).unwrap(),
        1,
        "{target}"
    );
    assert_eq!(
        backend.pending_count(&key, "g", "b").unwrap(),
        4,
        "{target}"
    );
    let again = backend
        .read_group(
            &key,
            "g",
            "c",
            ReadFrom::Claiming {
                min_idle_ms: 3_600_000,
            },
            10,
            None,
        )
        .unwrap();
    let again: Vec<_> = again
        .iter()
        .map(|e| (e.id, e.claimed, e.delivery_count))
        .collect();
    assert_eq!(again, vec![(back, true, 3)], "{target}");
    assert_eq!(
        backend.nack_fail(&key, "g", &[old[2].stream_id()]).unwrap(),
        1
    );
    assert!(
        backend.nack_fail(&key, "nogroup", &[back]).is_err(),
        "{target}: XNACK on a missing group is an error"
    );
}

#[test]
fn a_claiming_read_takes_idle_and_nacked_entries_before_new_ones() {
    let mut targets = vec![Target::embedded(), Target::serve()];
    targets.extend(Target::redis8());
    for target in targets {
        claiming_read_on(&target);
    }
}

#[test]
fn redis_7_and_valkey_report_no_claim_path_and_refuse_xnack() {
    for target in [Target::redis(), Target::valkey()].into_iter().flatten() {
        let backend = target.backend();
        let key = stream_key("cm", "old");
        assert!(!backend.claims_on_read(&key).unwrap(), "{target}");
        // The trait's default is what a consumer on such a backend never calls; the wire
        // backend sends XNACK and the server refuses it as unknown.
        let err = backend
            .nack_fail(&key, "g", &[echomq::engine::StreamId::new(1, 0)])
            .unwrap_err()
            .to_string();
        assert!(
            err.to_lowercase().contains("unknown command"),
            "{target}: {err}"
        );
    }
}
