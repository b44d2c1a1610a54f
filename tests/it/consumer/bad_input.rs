//! Bad input: a panicking handler, entries without a parsable `id` field, a group deleted under
//! a running consumer, poison entries.

use echomq::feed::backend::{GroupBackend, GroupStart};
use echomq::feed::consumer::{ConsumerError, GroupLost, PoisonPolicy};
use echomq::feed::{Backend, ConsumerSettings, Delivery, StreamConsumer, Subscription, stream_key};

use super::{Log, Target, append, every_target, wait_until};

fn settings() -> ConsumerSettings {
    ConsumerSettings {
        start: GroupStart::Beginning,
        block_ms: 20,
        beat_interval_ms: 20,
        claim_idle_ms: 40,
        ..ConsumerSettings::default()
    }
}

fn subscription(stream: &str) -> Subscription {
    Subscription::new("cm", stream, "notify", "c1")
}

#[test]
fn a_panicking_handler_is_caught_and_the_consumer_keeps_running() {
    let target = Target::embedded();
    let feed = target.feed();
    let ids = append(&feed, "panics", 0, 4);
    let log = Log::default();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription("panics"),
        ConsumerSettings {
            claim_idle_ms: 600_000,
            beat_interval_ms: 600_000,
            ..settings()
        },
        move |d: Delivery| {
            l.record(&d);
            if d.get("n") == Some("1") {
                panic!("handler bug on entry 1");
            }
            Ok::<(), String>(())
        },
    )
    .unwrap();
    wait_until("every delivery", || consumer.metrics().acked == 3);
    let later = append(&feed, "panics", 4, 1);
    wait_until("a delivery after the panic", || log.len() == 5);
    assert!(consumer.is_running());
    assert_eq!(log.all()[4].id, later[0]);
    let metrics = consumer.stop().unwrap();
    assert_eq!(
        (metrics.panicked, metrics.failed, metrics.pending),
        (1, 1, 1)
    );
    let key = stream_key("cm", "panics");
    let pending = target.raw(&["XPENDING", &key, "notify", "-", "+", "10"]);
    assert!(
        pending.contains(&ids[1].stream_id().to_string()),
        "{pending}"
    );
}

fn malformed_entries_are_parked_and_acked(target: &Target) {
    let key = stream_key("cm", "malformed");
    let dead = stream_key("cm", "malformed:dead");
    let backend = target.backend();
    let feed = target.feed();
    let good = append(&feed, "malformed", 0, 1);
    // No id field; an id field that does not parse; an id field naming another entry.
    backend.add_auto(&key, &[b"kind", b"guess"]).unwrap();
    backend
        .add_auto(&key, &[b"id", b"EVT_nope", b"kind", b"x"])
        .unwrap();
    backend
        .add_auto(
            &key,
            &[b"id", good[0].to_string().as_bytes(), b"kind", b"y"],
        )
        .unwrap();
    let after = append(&feed, "malformed", 1, 1);
    let log = Log::default();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &backend,
        subscription("malformed"),
        settings(),
        move |d: Delivery| {
            l.record(&d);
            Ok::<(), String>(())
        },
    )
    .unwrap();
    wait_until("the good entries and the parking", || {
        log.len() == 2 && consumer.metrics().dead_lettered == 3
    });
    // Several beats later, nothing was redelivered: parked entries are acked, never looped on.
    let beats = consumer.metrics().beats;
    wait_until("a few more beats", || consumer.metrics().beats >= beats + 3);
    let metrics = consumer.stop().unwrap();
    assert_eq!(
        (
            metrics.delivered,
            metrics.malformed,
            metrics.acked,
            metrics.pending
        ),
        (5, 3, 5, 0),
        "{target}: {metrics:?}"
    );
    assert_eq!(
        log.all().iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![good[0], after[0]]
    );
    assert_eq!(backend.meta(&dead).unwrap().map(|m| m.length), Some(3));
    let parked = backend
        .range(
            &dead,
            echomq::engine::StreamId::MIN,
            echomq::engine::StreamId::MAX,
            None,
            false,
        )
        .unwrap();
    assert_eq!(parked[0].fields.get("dead.source"), Some(key.as_str()));
    assert!(
        parked[1]
            .fields
            .get("dead.reason")
            .is_some_and(|r| !r.is_empty()),
        "{:?}",
        parked[1].fields
    );
    assert_eq!(
        parked[2].fields.get("kind"),
        Some("y"),
        "the original fields follow"
    );
}

#[test]
fn entries_without_a_parsable_id_are_reported_parked_and_acked() {
    for target in every_target(Target::embedded_wall()) {
        malformed_entries_are_parked_and_acked(&target);
    }
}

fn group_deleted(target: &Target) {
    let key = stream_key("cm", "lost");
    let feed = target.feed();
    // Recreate (the default): the consumer goes on with the new group.
    let log = Log::default();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription("lost"),
        settings(),
        move |d: Delivery| {
            l.record(&d);
            Ok::<(), String>(())
        },
    )
    .unwrap();
    append(&feed, "lost", 0, 1);
    wait_until("the first delivery", || log.len() == 1);
    target.raw(&["XGROUP", "DESTROY", &key, "notify"]);
    wait_until("the group recreated", || {
        consumer.metrics().groups_recreated == 1
    });
    let after = append(&feed, "lost", 1, 1);
    wait_until("a delivery from the new group", || {
        log.all().iter().any(|s| s.id == after[0])
    });
    assert!(consumer.is_running());
    let metrics = consumer.stop().unwrap();
    assert!(metrics.errors <= 2, "{target}: no spinning: {metrics:?}");

    // Stop: the consumer ends with a clear error instead of looping.
    let consumer = StreamConsumer::start(
        &target.backend(),
        Subscription::new("cm", "lost", "notify", "c2"),
        ConsumerSettings {
            on_group_lost: GroupLost::Stop,
            ..settings()
        },
        |_: Delivery| Ok::<(), String>(()),
    )
    .unwrap();
    wait_until("a beat", || consumer.metrics().beats >= 1);
    target.raw(&["DEL", &key]);
    if matches!(
        target,
        Target::Embedded { .. } | Target::EmbeddedWall { .. }
    ) {
        // The engine has no DEL; destroying the group is the same loss.
        target.raw(&["XGROUP", "DESTROY", &key, "notify"]);
    }
    wait_until("the consumer to stop", || !consumer.is_running());
    let stopped = consumer.stop();
    assert!(
        matches!(&stopped, Err(ConsumerError::GroupLost { group, .. }) if group == "notify"),
        "{target}: {stopped:?}"
    );
    let text = stopped.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        text.contains("was deleted while the consumer ran"),
        "{text}"
    );
}

#[test]
fn a_group_deleted_under_a_running_consumer_is_recreated_or_stops_it() {
    for target in every_target(Target::embedded_wall()) {
        group_deleted(&target);
    }
}

fn poison(target: &Target, policy: PoisonPolicy, stream: &str) {
    let feed = target.feed();
    let ids = append(&feed, stream, 0, 2);
    let calls = Log::default();
    let l = calls.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(stream),
        ConsumerSettings {
            max_attempts: Some(3),
            poison: policy,
            ..settings()
        },
        move |d: Delivery| {
            l.record(&d);
            if d.get("n") == Some("0") {
                return Err("always fails".to_string());
            }
            Ok(())
        },
    )
    .unwrap();
    wait_until("the poison entry dealt with", || {
        let m = consumer.metrics();
        m.dead_lettered + m.dropped == 1
    });
    let metrics = consumer.stop().unwrap();
    let attempts: Vec<u64> = calls
        .all()
        .iter()
        .filter(|s| s.id == ids[0])
        .map(|s| s.attempts)
        .collect();
    assert_eq!(
        attempts,
        vec![1, 2, 3],
        "{target}: the handler got max_attempts tries"
    );
    assert_eq!(
        (metrics.acked, metrics.pending),
        (2, 0),
        "{target}: {metrics:?}"
    );
    let dead = target
        .backend()
        .meta(&stream_key("cm", &format!("{stream}:dead")))
        .unwrap()
        .map_or(0, |m| m.length);
    match policy {
        PoisonPolicy::DeadLetter => {
            assert_eq!((metrics.dead_lettered, dead), (1, 1));
            let parked = target
                .backend()
                .range(
                    &stream_key("cm", &format!("{stream}:dead")),
                    echomq::engine::StreamId::MIN,
                    echomq::engine::StreamId::MAX,
                    None,
                    false,
                )
                .unwrap();
            assert_eq!(parked[0].fields.get("dead.attempts"), Some("4"));
            assert_eq!(
                parked[0].fields.get("id"),
                Some(ids[0].to_string().as_str())
            );
            assert_eq!(parked[0].fields.get("n"), Some("0"));
        }
        PoisonPolicy::Drop => assert_eq!((metrics.dropped, dead), (1, 0)),
    }
}

#[test]
fn a_poison_entry_is_parked_or_dropped_after_max_attempts() {
    for target in every_target(Target::embedded_wall()) {
        poison(&target, PoisonPolicy::DeadLetter, "poison");
        poison(&target, PoisonPolicy::Drop, "poison-drop");
    }
}
