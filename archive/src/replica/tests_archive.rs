//! Replication of a real archive: fold on A, replicate, restore on B, read the same; takeover
//! by B fences A.

use std::sync::Arc;

use echomq_engine::{Entry, StreamId};

use super::restore;
use super::*;
use crate::Archive;
use crate::tests::{archive, entry};

const PREFIX: &str = "node";

fn fold(archive: &Archive, stream: &[u8], ms: std::ops::Range<u64>) {
    let entries: Vec<Entry> = ms.map(|i| entry(i, 0)).collect();
    archive.fold(stream, &entries).unwrap();
}

fn same_reads(a: &Archive, b: &Archive) {
    let streams = a.streams().unwrap();
    assert_eq!(streams, b.streams().unwrap());
    for (stream, _) in streams {
        assert_eq!(
            a.range(&stream, StreamId::MIN, StreamId::MAX, None)
                .unwrap(),
            b.range(&stream, StreamId::MIN, StreamId::MAX, None)
                .unwrap()
        );
    }
    b.check_invariants().unwrap();
}

#[test]
fn fold_replicate_restore_reads_the_same_and_takeover_fences_the_old_node() {
    let store = MemoryStore::new();
    let (_da, a) = archive();
    let a = Arc::new(a);
    fold(&a, b"emq:{cm}:stream:events", 1..50);
    fold(&a, b"emq:{cm}:stream:rooms", 1..10);
    let mut rep_a = Replicator::open(
        Arc::clone(&a),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap();
    assert_eq!(rep_a.drain().unwrap(), 1, "two folds go up in one commit");
    fold(&a, b"emq:{cm}:stream:events", 50..60);
    assert_eq!(rep_a.drain().unwrap(), 1);

    let (_db, b) = archive();
    let summary = restore_into(&b, &store, PREFIX, &mut |_| {}).unwrap();
    assert_eq!(summary.pages, 49 + 9 + 10);
    same_reads(&a, &b);
    // Restoring again into a non-empty archive is refused and changes nothing.
    assert!(matches!(
        restore_into(&b, &store, PREFIX, &mut |_| {}),
        Err(ReplicaError::NotEmpty { .. })
    ));

    // B takes over; A is fenced at its next commit; B's folds replicate after A's.
    let b = Arc::new(b);
    let mut rep_b = Replicator::open(
        Arc::clone(&b),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap();
    assert_eq!(rep_b.writer().epoch(), Some(Epoch(2)));
    fold(&a, b"emq:{cm}:stream:events", 60..61);
    assert!(matches!(rep_a.round(), Err(ReplicaError::Fenced { .. })));
    fold(&b, b"emq:{cm}:stream:events", 60..70);
    assert_eq!(rep_b.drain().unwrap(), 1);

    let (_dc, c) = archive();
    restore_into(&c, &store, PREFIX, &mut |_| {}).unwrap();
    same_reads(&b, &c);
}

#[test]
fn the_replicator_thread_keeps_up_and_stops() {
    let store = MemoryStore::new();
    let (_da, a) = archive();
    let a = Arc::new(a);
    let handle = Replicator::open(
        Arc::clone(&a),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .spawn();
    for round in 0..20u64 {
        fold(&a, b"s", round * 10 + 1..round * 10 + 11);
        handle.notify();
    }
    let last = crate::ARCHIVE_BASE + 199;
    let status = handle.wait_for_page(last, std::time::Duration::from_secs(20));
    assert_eq!(
        status.head.and_then(|h| h.last_page),
        Some(last),
        "{status:?}"
    );
    let status = handle.stop();
    assert!(status.stopped && !status.fenced, "{status:?}");
    let (_db, b) = archive();
    restore_into(&b, &store, PREFIX, &mut |_| {}).unwrap();
    same_reads(&a, &b);
}

#[test]
fn a_notification_replicates_a_fold_without_the_poll_and_the_status_reports_lag() {
    /// So long that a test passing within its timeout was woken by the notification.
    const NEVER: std::time::Duration = std::time::Duration::from_secs(3600);
    let store = MemoryStore::new();
    let (_da, a) = archive();
    let a = Arc::new(a);
    fold(&a, b"s", 1..11);
    let handle = Replicator::open(
        Arc::clone(&a),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .spawn_polling(NEVER);
    let link = handle.link();
    let first = crate::ARCHIVE_BASE + 9;
    let timeout = std::time::Duration::from_secs(20);
    // The first round runs at start, unasked.
    let status = link.wait_for(timeout, |s| s.replicated_page() == Some(first));
    assert_eq!(status.replicated_page(), Some(first), "{status:?}");
    assert_eq!(status.epoch, Some(Epoch(1)));
    assert!(!status.pending && !status.fenced);
    assert_eq!(status.lag_pages(10), 0);

    fold(&a, b"s", 11..16);
    assert_eq!(link.status().lag_pages(15), 5, "folded, not replicated");
    link.notify();
    let status = link.wait_for(timeout, |s| s.replicated_page() == Some(first + 5));
    assert_eq!(status.replicated_page(), Some(first + 5), "{status:?}");
    assert_eq!(status.notifications, 1);
    assert_eq!(status.commits, 2);
    assert_eq!(status.lag_pages(15), 0);
    handle.stop();
}

#[test]
fn lag_counts_pages_from_the_archive_base() {
    let mut status = ReplicatorStatus::default();
    assert_eq!(status.lag_pages(0), 0);
    assert_eq!(status.lag_pages(7), 7, "nothing replicated yet");
    status.head = Some(ReplicaHead {
        version: Version(1),
        hash: CommitHash([0; 32]),
        epoch: Epoch(1),
        last_page: Some(crate::ARCHIVE_BASE + 2),
    });
    assert_eq!(status.replicated_pages(), 3);
    assert_eq!(status.lag_pages(7), 4);
    assert_eq!(status.lag_pages(3), 0);
    assert_eq!(status.lag_pages(2), 0, "never negative");
}

#[test]
fn replication_through_faults_and_restarts_ends_with_an_exact_copy() {
    use super::store::memory::{Fault, RandomFaults};
    let store = MemoryStore::new();
    let (_da, a) = archive();
    let a = Arc::new(a);
    let options = WriterOptions {
        attempts_max: 2,
        ..WriterOptions::no_backoff()
    };
    let mut ms = 1;
    let (mut failed, mut landed) = (0, 0);
    for round in 0..60u64 {
        fold(&a, if round % 3 == 0 { b"x" } else { b"y" }, ms..ms + 7);
        ms += 7;
        // A new process each round, its requests failing a third of the time.
        let client = store.connect();
        client.set_random_faults(Some(RandomFaults {
            seed: round + 1,
            percent: 35,
            kinds: vec![
                Fault::Fail,
                Fault::TimeoutAfterWrite,
                Fault::ServerError,
                Fault::Conflict,
            ],
        }));
        if let Ok(mut replicator) =
            Replicator::open(Arc::clone(&a), client, PREFIX, options.clone())
        {
            match replicator.round() {
                Ok(_) => landed += 1,
                Err(ReplicaError::Unresolved { .. } | ReplicaError::Store(_)) => failed += 1,
                Err(e) => panic!("round {round}: {e}"),
            }
        } else {
            failed += 1;
        }
        // Whatever happened, the bucket holds a valid chain.
        restore::verify(&store.connect(), PREFIX, &mut |_| {}).unwrap();
    }
    assert!(
        failed > 5 && landed > 5,
        "faults {failed}, commits {landed}"
    );
    let mut replicator = Replicator::open(
        Arc::clone(&a),
        store.connect(),
        PREFIX,
        WriterOptions::no_backoff(),
    )
    .unwrap();
    replicator.drain().unwrap();
    let (_db, b) = archive();
    restore_into(&b, &store, PREFIX, &mut |_| {}).unwrap();
    same_reads(&a, &b);
}

#[test]
fn an_archive_refuses_to_continue_its_chain_in_another_replica() {
    let store = MemoryStore::new();
    let (_da, a) = archive();
    let a = Arc::new(a);
    fold(&a, b"s", 1..5);
    Replicator::open(
        Arc::clone(&a),
        store.connect(),
        "one",
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .drain()
    .unwrap();
    fold(&a, b"s", 5..9);
    let before = store.objects().len();
    match Replicator::open(
        Arc::clone(&a),
        store.connect(),
        "two",
        WriterOptions::no_backoff(),
    ) {
        Err(ReplicaError::WrongReplica { key, .. }) => {
            assert_eq!(key, "two/commits/00000000000000000001")
        }
        other => panic!("expected WrongReplica, got {other:?}"),
    }
    assert_eq!(
        store.objects().len(),
        before,
        "nothing written to the other prefix"
    );
    // The right one still works.
    Replicator::open(
        Arc::clone(&a),
        store.connect(),
        "/one/",
        WriterOptions::no_backoff(),
    )
    .unwrap()
    .drain()
    .unwrap();
}
