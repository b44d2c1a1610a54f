//! Crash and resume: a consumer restarted under its name gets exactly its backlog first, then
//! new entries; a clean cold start has an empty backlog.

use echomq::feed::backend::{GroupBackend, GroupStart, ReadFrom};
use echomq::feed::consumer::{ConsumerError, Origin};
use echomq::feed::{Backend, ConsumerSettings, Delivery, StreamConsumer, Subscription, stream_key};

use super::{Log, Target, append, every_target, wait_until};

fn settings() -> ConsumerSettings {
    ConsumerSettings {
        start: GroupStart::Beginning,
        block_ms: 50,
        beat_interval_ms: 600_000,
        claim_idle_ms: 600_000,
        ..ConsumerSettings::default()
    }
}

fn subscription() -> Subscription {
    Subscription::new("cm", "resume", "notify", "c1")
}

fn recording(log: &Log) -> impl FnMut(Delivery) -> Result<(), String> + Send + 'static {
    let log = log.clone();
    move |d: Delivery| {
        log.record(&d);
        Ok(())
    }
}

fn backlog_first_then_new(target: &Target) {
    let feed = target.feed();
    let key = stream_key("cm", "resume");
    let first = append(&feed, "resume", 0, 6);
    let log = Log::default();

    // First life: entries 1 and 3 fail and stay pending; the others are acked. On the
    // XAUTOCLAIM path, so the failures stay this consumer's (the CLAIM path would NACK them
    // and retry at once); the later lives run on the target's own path.
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(),
        ConsumerSettings {
            read_claim: false,
            ..settings()
        },
        move |d: Delivery| {
            l.record(&d);
            match d.get("n") {
                Some("1") | Some("3") => Err("not now".to_string()),
                _ => Ok(()),
            }
        },
    )
    .unwrap();
    wait_until("the first life's deliveries", || {
        log.len() == 6 && consumer.metrics().acked == 4
    });
    let metrics = consumer.stop().unwrap();
    assert_eq!((metrics.failed, metrics.pending), (2, 2), "{target}");

    // Second life dies holding two new entries: read, never acked, as a killed process leaves
    // them.
    let held = append(&feed, "resume", 6, 2);
    let raw = target.backend();
    let read = raw
        .read_group(&key, "notify", "c1", ReadFrom::New, 2, None)
        .unwrap();
    assert_eq!(
        read.iter().map(|e| e.id).collect::<Vec<_>>(),
        held.iter().map(|b| b.stream_id()).collect::<Vec<_>>()
    );
    let later = append(&feed, "resume", 8, 2);

    // Third life: exactly the backlog, in id order, then the new entries.
    log.clear();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(),
        settings(),
        recording(&log),
    )
    .unwrap();
    wait_until("backlog and new entries", || log.len() == 6);
    let seen = log.all();
    let backlog = [first[1], first[3], held[0], held[1]];
    assert_eq!(
        seen[..4].iter().map(|s| s.id).collect::<Vec<_>>(),
        backlog.to_vec(),
        "{target}: the backlog comes first, in id order"
    );
    assert!(
        seen[..4]
            .iter()
            .all(|s| s.origin == Origin::Backlog && s.attempts == 2),
        "{target}: {seen:?}"
    );
    assert_eq!(
        seen[4..].iter().map(|s| s.id).collect::<Vec<_>>(),
        later.to_vec()
    );
    assert!(
        seen[4..]
            .iter()
            .all(|s| s.origin == Origin::New && s.attempts == 1)
    );
    let metrics = consumer.stop().unwrap();
    assert_eq!((metrics.acked, metrics.pending), (6, 0), "{target}");

    // A clean cold start: nothing pending, so no backlog; new entries only.
    log.clear();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(),
        settings(),
        recording(&log),
    )
    .unwrap();
    let fresh = append(&feed, "resume", 10, 1);
    wait_until("the cold start's delivery", || log.len() == 1);
    assert_eq!(
        log.all()[0],
        super::Seen {
            id: fresh[0],
            attempts: 1,
            origin: Origin::New
        }
    );
    consumer.stop().unwrap();
    assert_eq!(
        raw.pending_count(&key, "notify", "c1").unwrap(),
        0,
        "{target}"
    );
}

#[test]
fn a_restarted_consumer_gets_its_backlog_first_then_new_entries() {
    for target in every_target(Target::embedded()) {
        backlog_first_then_new(&target);
    }
}

#[test]
fn dropping_the_handle_stops_the_consumer_and_keeps_unhandled_entries_pending() {
    let target = Target::embedded();
    let feed = target.feed();
    let ids = append(&feed, "resume", 0, 3);
    let log = Log::default();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let l = log.clone();
    let consumer = StreamConsumer::start(
        &target.backend(),
        subscription(),
        ConsumerSettings {
            batch_size: 3,
            ..settings()
        },
        move |d: Delivery| {
            l.record(&d);
            // Holds the first entry until the test has dropped the handle (the stop waits for
            // the entry being handled, then leaves the rest of the batch pending).
            if d.get("n") == Some("0") {
                let _ = rx.recv();
            }
            Ok::<(), String>(())
        },
    )
    .unwrap();
    wait_until("the first delivery", || log.len() == 1);
    consumer.request_stop();
    tx.send(()).unwrap();
    drop(consumer);
    assert_eq!(log.len(), 1, "nothing is handled after the stop");
    let raw = target.backend();
    let key = stream_key("cm", "resume");
    assert_eq!(raw.pending_count(&key, "notify", "c1").unwrap(), 2);
    let pending = raw
        .read_group(
            &key,
            "notify",
            "c1",
            ReadFrom::Pending(ids[0].stream_id()),
            10,
            None,
        )
        .unwrap();
    assert_eq!(
        pending.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![ids[1].stream_id(), ids[2].stream_id()]
    );
}

#[test]
fn bad_settings_and_names_are_refused_before_anything_runs() {
    let target = Target::embedded();
    let refused = StreamConsumer::start(
        &target.backend(),
        subscription(),
        ConsumerSettings {
            batch_size: 0,
            ..ConsumerSettings::default()
        },
        |_: Delivery| Ok::<(), String>(()),
    );
    assert!(matches!(refused, Err(ConsumerError::Settings(_))));
    let refused = StreamConsumer::start(
        &target.backend(),
        Subscription::new("cm", "resume", "notify", ""),
        ConsumerSettings::default(),
        |_: Delivery| Ok::<(), String>(()),
    );
    assert!(matches!(refused, Err(ConsumerError::EmptyName("consumer"))));
    assert!(
        target
            .backend()
            .meta("emq:{cm}:stream:resume")
            .unwrap()
            .is_none(),
        "no stream was created"
    );
}

fn deleted_backlog_entries(target: &Target) {
    let feed = target.feed();
    let key = stream_key("cm", "deleted");
    let backend = target.backend();
    backend
        .create_group(&key, "notify", GroupStart::Beginning)
        .unwrap();
    let ids = append(&feed, "deleted", 0, 3);
    let held = backend
        .read_group(&key, "notify", "c1", ReadFrom::New, 10, None)
        .unwrap();
    assert_eq!(held.len(), 3);
    target.raw(&["XDEL", &key, &ids[1].stream_id().to_string()]);
    let log = Log::default();
    let consumer = StreamConsumer::start(
        &backend,
        Subscription::new("cm", "deleted", "notify", "c1"),
        settings(),
        recording(&log),
    )
    .unwrap();
    wait_until("the backlog", || consumer.metrics().acked == 3);
    let metrics = consumer.stop().unwrap();
    assert_eq!(
        log.all().iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![ids[0], ids[2]],
        "{target}"
    );
    assert_eq!((metrics.deleted, metrics.pending), (1, 0), "{target}");
}

#[test]
fn a_backlog_entry_deleted_from_the_stream_is_acked_away_not_handled() {
    for target in every_target(Target::embedded()) {
        deleted_backlog_entries(&target);
    }
}
