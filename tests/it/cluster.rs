//! The feed on a real Redis Cluster under faults (the feed and consumer suites run on a
//! cluster as one more backend in `feed` and `consumer`).
//!
//! - Bad input: a key without a hash tag is refused before anything is sent; a cluster that
//!   is down and a slot that moves mid-call are typed, retryable errors.
//! - Resharding: the slot of the queue's hash tag moves to another master, key by key, while a
//!   producer appends and a `StreamConsumer` reads; both retry with backoff and resume.
//! - Failover: the master owning the queue is killed with SIGKILL and its replica promoted.
//!   With replicated appends (`WAIT 1`) no acknowledged append is lost; without, the test
//!   counts and reports the acknowledged appends the failover lost.
//!
//! In every fault test the delivery contract is checked by payload: every acknowledged append
//! still in the stream is delivered at least once, and nothing is delivered that the producer
//! did not try to append.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use echomq::engine::StreamId;
use echomq::feed::backend::{GroupBackend, GroupStart, ReadFrom};
use echomq::feed::{
    Backend, Branded, ClusterBackend, ConsumerSettings, Delivery, Feed, FeedError, StreamConsumer,
    Subscription, stream_key,
};
use parking_lot::Mutex;

use crate::support::cluster::{self, Cluster, NODE_TIMEOUT_FAST_MS};

/// How long a test waits for the producer or the consumer to get somewhere.
const WAIT: Duration = Duration::from_secs(30);
/// Appends acknowledged before a fault, and again after it.
const APPENDS_PER_PHASE: u64 = 100;

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn cluster_a_key_without_a_hash_tag_is_refused_before_anything_is_sent() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let backend = cluster.backend();
    let refused = |r: Result<(), FeedError>| {
        assert!(
            matches!(&r, Err(FeedError::NoHashTag { key }) if key == "plain"),
            "{r:?}"
        );
        let text = r.unwrap_err().to_string();
        assert!(
            text.contains("hash tag") && text.contains("{queue}"),
            "{text}"
        );
    };
    refused(
        backend
            .add("plain", StreamId::new(1, 0), &[b"f", b"v"])
            .map(drop),
    );
    refused(backend.meta("plain").map(drop));
    refused(
        backend
            .range("plain", StreamId::MIN, StreamId::MAX, None, false)
            .map(drop),
    );
    refused(
        backend
            .create_group("plain", "g", GroupStart::End)
            .map(drop),
    );
    refused(
        backend
            .read_group("plain", "g", "c", ReadFrom::New, 1, None)
            .map(drop),
    );
    refused(backend.add_auto("plain", &[b"f", b"v"]).map(drop));
    for port in cluster.live_ports() {
        assert_eq!(
            cluster::call(port, &["DBSIZE"]).ok(),
            Some(redis::Value::Int(0)),
            "nothing was written on {port}"
        );
    }
    // The feed's own keys carry the tag and go through. A cluster does not record appends
    // (no MULTI/EXEC pinned to one node), so they are plain XADDs.
    let feed = Feed::new(backend);
    assert!(!feed.idempotent_appends().unwrap());
    feed.append("cm", "tagged", &[("k", "v")]).unwrap();
    assert_eq!(feed.read("cm", "tagged", ..).unwrap().len(), 1);
}

#[test]
fn cluster_down_is_a_typed_error_that_says_retry() {
    let Some(mut cluster) = Cluster::start_with(NODE_TIMEOUT_FAST_MS) else {
        return;
    };
    let masters = cluster.masters();
    let (dead, alive) = (masters[0], masters[1]);
    // A queue served by a master that stays up: the whole cluster refuses once any slot has no
    // master (cluster-require-full-coverage, the default).
    let queue = (0..)
        .map(|i| format!("q{i}"))
        .find(|q| cluster.master_of(cluster.slot_of(&stream_key(q, "s"))) == alive)
        .unwrap();
    let feed = Feed::new(cluster.backend());
    feed.append(&queue, "s", &[("k", "v")]).unwrap();
    let replica = cluster.replica_of(dead);
    cluster.kill(replica);
    cluster.kill(dead);
    cluster.wait_state("fail");
    let error = feed.append(&queue, "s", &[("k", "v")]).unwrap_err();
    assert!(matches!(error, FeedError::ClusterDown(_)), "{error:?}");
    assert!(error.is_retryable(), "{error}");
    assert!(error.to_string().contains("retry"), "{error}");
}

#[test]
fn cluster_a_slot_moved_mid_call_is_a_typed_error_once_the_redirects_run_out() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let (held, missing) = (stream_key("cm", "held"), stream_key("cm", "missing"));
    let slot = cluster.slot_of(&held);
    assert_eq!(cluster.slot_of(&missing), slot, "one queue, one slot");
    let from = cluster.master_of(slot);
    let to = cluster.masters().into_iter().find(|m| *m != from).unwrap();
    let backend = cluster.backend();
    backend
        .add(&held, StreamId::new(1, 0), &[b"f", b"v"])
        .unwrap();
    // A slot half moved: its owner still serves the keys it holds, and sends clients of any
    // other key to the destination (ASK), which is not importing and sends them back (MOVED),
    // until the client's redirects run out.
    let dest = cluster::text(&cluster::call(to, &["CLUSTER", "MYID"]).unwrap());
    let slot_text = slot.to_string();
    cluster::call(
        from,
        &["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &dest],
    )
    .unwrap();
    backend
        .add(&held, StreamId::new(2, 0), &[b"f", b"v"])
        .unwrap();
    let read = |key: &str| backend.range(key, StreamId::MIN, StreamId::MAX, None, false);
    let error = read(&missing).unwrap_err();
    assert!(matches!(error, FeedError::SlotMoved(_)), "{error:?}");
    assert!(
        error.is_retryable() && error.to_string().contains("retry"),
        "{error}"
    );
    // Once the slot settles, the same call goes through.
    cluster::call(from, &["CLUSTER", "SETSLOT", &slot_text, "STABLE"]).unwrap();
    assert!(read(&missing).unwrap().is_empty());
    assert_eq!(read(&held).unwrap().len(), 2);
}

/// What the producer did.
#[derive(Debug, Default)]
struct Produced {
    /// Acknowledged appends: payload sequence number and receipt.
    acked: Vec<(u64, Branded)>,
    /// Sequence numbers tried (acknowledged or not: a failed append may still have landed).
    tried: u64,
    /// Failed attempts by error kind, for the report.
    errors: BTreeMap<&'static str, u64>,
}

fn kind(error: &FeedError) -> &'static str {
    match error {
        FeedError::ClusterDown(_) => "ClusterDown",
        FeedError::SlotMoved(_) => "SlotMoved",
        FeedError::NotReplicated { .. } => "NotReplicated",
        FeedError::ConnectFailed { .. } => "ConnectFailed",
        FeedError::ConnectionLost { .. } => "ConnectionLost",
        FeedError::ReplyTimeout { .. } | FeedError::ConnectTimeout { .. } => "Timeout",
        _ => "other",
    }
}

/// A producer appending `n=<seq>` to `cm/orders`, retrying each failed append with backoff
/// (10 ms doubling to 400 ms) until it is acknowledged, until `stop`.
fn produce(
    feed: Feed<ClusterBackend>,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
) -> JoinHandle<Produced> {
    thread::spawn(move || {
        let mut produced = Produced::default();
        let mut seq = 0u64;
        let mut backoff = Duration::from_millis(10);
        while !stop.load(Ordering::SeqCst) {
            produced.tried = seq + 1;
            match feed.append("cm", "orders", &[("n", &seq.to_string())]) {
                Ok(id) => {
                    produced.acked.push((seq, id));
                    acked.fetch_add(1, Ordering::SeqCst);
                    seq += 1;
                    backoff = Duration::from_millis(10);
                    thread::sleep(Duration::from_millis(2));
                }
                Err(e) => {
                    assert!(e.is_retryable(), "a fault the producer cannot retry: {e}");
                    *produced.errors.entry(kind(&e)).or_default() += 1;
                    thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_millis(400));
                }
            }
        }
        produced
    })
}

/// A consumer of `cm/orders` recording each delivery's sequence number.
fn consume(backend: &ClusterBackend, seen: &Arc<Mutex<Vec<u64>>>) -> StreamConsumer {
    let seen = Arc::clone(seen);
    StreamConsumer::start(
        backend,
        Subscription::new("cm", "orders", "workers", "c1"),
        ConsumerSettings {
            start: GroupStart::Beginning,
            block_ms: 50,
            claim_idle_ms: 600_000,
            beat_interval_ms: 600_000,
            retry_backoff_ms: 20,
            retry_backoff_ms_max: 400,
            ..ConsumerSettings::default()
        },
        move |d: Delivery| {
            let n = d.get("n").and_then(|n| n.parse().ok()).ok_or("no n")?;
            seen.lock().push(n);
            Ok::<(), &str>(())
        },
    )
    .unwrap()
}

/// What a fault test found.
struct Outcome {
    /// Acknowledged appends missing from the stream afterwards.
    lost: Vec<u64>,
    acked: usize,
    redelivered: usize,
    errors: BTreeMap<&'static str, u64>,
}

/// Runs a producer and a consumer on `cm/orders`; after [`APPENDS_PER_PHASE`] acknowledged
/// appends runs `fault`, then waits for as many more, stops the producer, and checks the
/// delivery contract against what the stream holds.
fn under_fault(
    cluster: &mut Cluster,
    producer: ClusterBackend,
    fault: impl FnOnce(&mut Cluster),
) -> Outcome {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let consumer = consume(&cluster.backend(), &seen);
    let (stop, acked) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let producer = produce(Feed::new(producer), Arc::clone(&stop), Arc::clone(&acked));
    wait_until("the first appends", || {
        acked.load(Ordering::SeqCst) >= APPENDS_PER_PHASE
    });
    fault(cluster);
    let after = acked.load(Ordering::SeqCst);
    wait_until("appends after the fault", || {
        acked.load(Ordering::SeqCst) >= after + APPENDS_PER_PHASE
    });
    stop.store(true, Ordering::SeqCst);
    let produced = producer.join().unwrap();

    let stored: BTreeSet<u64> = Feed::new(cluster.backend())
        .read("cm", "orders", ..)
        .unwrap()
        .iter()
        .map(|r| r.get("n").unwrap().parse().unwrap())
        .collect();
    wait_until("every stored entry delivered", || {
        let seen = seen.lock();
        stored.iter().all(|n| seen.contains(n))
    });
    consumer.stop().unwrap();
    let seen = seen.lock().clone();
    let unique: BTreeSet<u64> = seen.iter().copied().collect();
    assert!(
        unique.iter().all(|n| *n < produced.tried),
        "delivered something never appended: {unique:?} vs {} tried",
        produced.tried
    );
    assert!(
        stored.iter().all(|n| *n < produced.tried),
        "the stream holds something never appended"
    );
    let lost: Vec<u64> = produced
        .acked
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !stored.contains(n))
        .collect();
    Outcome {
        lost,
        acked: produced.acked.len(),
        redelivered: seen.len() - unique.len(),
        errors: produced.errors,
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} acknowledged, {} lost {:?}, {} redelivered, failed attempts retried: {:?}",
            self.acked,
            self.lost.len(),
            self.lost,
            self.redelivered,
            self.errors
        )
    }
}

#[test]
fn cluster_resharding_the_queues_slot_under_a_producer_and_a_consumer_loses_nothing() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let slot = cluster.slot_of(&stream_key("cm", "orders"));
    let from = cluster.master_of(slot);
    let to = cluster.masters().into_iter().find(|m| *m != from).unwrap();
    let producer = cluster.backend();
    let outcome = under_fault(&mut cluster, producer, |cluster| {
        cluster.move_slot(slot, to, Duration::from_millis(150));
    });
    assert_eq!(cluster.master_of(slot), to, "the slot moved");
    eprintln!("resharding slot {slot} from {from} to {to}: {outcome}");
    assert!(
        outcome.lost.is_empty(),
        "a resharding lost acknowledged appends: {outcome}"
    );
}

/// SIGKILLs the master serving the queue, waits for its replica to take over, and restarts
/// the killed node (it rejoins as the new master's replica, so `WAIT 1` can succeed again).
fn kill_the_queues_master(cluster: &mut Cluster) {
    let slot = cluster.slot_of(&stream_key("cm", "orders"));
    let dead = cluster.master_of(slot);
    cluster.kill(dead);
    cluster.wait_failed_over(slot, dead);
    cluster.restart(dead);
}

#[test]
fn cluster_failover_with_replicated_appends_loses_no_acknowledged_append() {
    let Some(mut cluster) = Cluster::start_with(NODE_TIMEOUT_FAST_MS) else {
        return;
    };
    let producer = cluster
        .backend()
        .with_replicated_append(1, Duration::from_millis(500));
    let outcome = under_fault(&mut cluster, producer, kill_the_queues_master);
    eprintln!("failover with WAIT 1: {outcome}");
    assert!(
        outcome.lost.is_empty(),
        "an acknowledged, replicated append was lost: {outcome}"
    );
}

#[test]
fn cluster_failover_without_replicated_appends_counts_the_acknowledged_appends_lost() {
    let Some(mut cluster) = Cluster::start_with(NODE_TIMEOUT_FAST_MS) else {
        return;
    };
    let producer = cluster.backend();
    let outcome = under_fault(&mut cluster, producer, kill_the_queues_master);
    // Asynchronous replication: whatever the master acknowledged and had not yet sent to its
    // replica when it died is gone. On loopback that is usually a handful or none.
    eprintln!("failover without WAIT: {outcome}");
    assert!(outcome.lost.len() < outcome.acked);
}
