//! Reclaim: a second consumer takes over a dead peer's entries once they sat idle past the
//! threshold (not before), and an entry's attempts grow with each delivery, on both claim
//! paths: the XAUTOCLAIM beat (a failed entry comes back after the threshold) and
//! `XREADGROUP … CLAIM` with `XNACK … FAIL` (a failed entry comes back at once).

use std::time::{Duration, Instant};

use echomq::feed::backend::{GroupBackend, GroupStart, ReadFrom};
use echomq::feed::consumer::{ClaimPath, Origin};
use echomq::feed::{ConsumerSettings, Delivery, StreamConsumer, Subscription, stream_key};

use super::{Log, Target, append, wait_until};

/// A dead peer `a` holds five entries; `b` fails the first one once.
fn start_b(target: &Target, settings: ConsumerSettings, log: &Log) -> StreamConsumer {
    let l = log.clone();
    let mut failed_once = false;
    StreamConsumer::start(
        &target.backend(),
        Subscription::new("cm", "reclaim", "notify", "b"),
        settings,
        move |d: Delivery| {
            l.record(&d);
            if d.get("n") == Some("0") && !failed_once {
                failed_once = true;
                return Err("flaky".to_string());
            }
            Ok(())
        },
    )
    .unwrap()
}

fn dead_peer_holds_five(target: &Target) -> Vec<echomq::feed::Branded> {
    let feed = target.feed();
    let key = stream_key("cm", "reclaim");
    let backend = target.backend();
    backend
        .create_group(&key, "notify", GroupStart::Beginning)
        .unwrap();
    let ids = append(&feed, "reclaim", 0, 5);
    let held = backend
        .read_group(&key, "notify", "a", ReadFrom::New, 10, None)
        .unwrap();
    assert_eq!(held.len(), 5);
    ids
}

#[test]
fn a_second_consumer_reclaims_a_dead_peers_entries_after_the_idle_threshold_manual_clock() {
    let target = Target::embedded();
    let ids = dead_peer_holds_five(&target);
    let log = Log::default();
    let b = start_b(
        &target,
        ConsumerSettings {
            claim_idle_ms: 10_000,
            beat_interval_ms: 1_000,
            block_ms: 1_000,
            read_claim: false,
            ..ConsumerSettings::default()
        },
        &log,
    );
    assert_eq!(b.claim_path(), ClaimPath::AutoClaim, "read_claim: false");
    wait_until("b's first beat", || b.metrics().beats >= 1);
    target.advance_blocked_ms(9_000);
    wait_until("a beat before the threshold", || b.metrics().beats >= 2);
    assert_eq!(log.len(), 0, "nothing is idle long enough yet");

    target.advance_blocked_ms(1_001);
    wait_until("the reclaim", || log.len() == 5);
    let seen = log.all();
    assert_eq!(
        seen.iter().map(|s| s.id).collect::<Vec<_>>(),
        ids,
        "reclaimed in id order"
    );
    assert!(
        seen.iter()
            .all(|s| s.origin == Origin::Reclaimed && s.attempts == 2)
    );
    wait_until("the acks", || b.metrics().acked == 4);

    // The failed one is b's own now; it comes back after the threshold with attempts 3.
    target.advance_blocked_ms(10_001);
    wait_until("the retry", || log.len() == 6);
    assert_eq!(log.all()[5].id, ids[0]);
    assert_eq!(log.all()[5].attempts, 3);
    let metrics = b.stop().unwrap();
    assert_eq!(
        (
            metrics.reclaimed,
            metrics.acked,
            metrics.failed,
            metrics.pending,
            metrics.nacked
        ),
        (6, 5, 1, 0, 0)
    );
}

/// The same on the CLAIM path: the read itself takes the dead peer's idle entries (no claim
/// call between reads), and the failed one is NACKed and read again at once, with no clock
/// movement at all.
#[test]
fn on_the_claim_path_a_read_takes_idle_entries_and_a_failure_comes_back_at_once_manual_clock() {
    let target = Target::embedded();
    let ids = dead_peer_holds_five(&target);
    let log = Log::default();
    let b = start_b(
        &target,
        ConsumerSettings {
            claim_idle_ms: 10_000,
            beat_interval_ms: 1_000,
            block_ms: 1_000,
            ..ConsumerSettings::default()
        },
        &log,
    );
    assert_eq!(b.claim_path(), ClaimPath::ReadClaim);
    wait_until("b's first beat", || b.metrics().beats >= 1);
    target.advance_blocked_ms(9_000);
    wait_until("a beat before the threshold", || b.metrics().beats >= 2);
    assert_eq!(log.len(), 0, "nothing is idle long enough yet");

    // The blocked CLAIM read wakes when the clock passes the threshold.
    target.advance_blocked_ms(1_001);
    wait_until("the claim and the retry", || log.len() == 6);
    let seen = log.all();
    assert_eq!(
        seen[..5].iter().map(|s| s.id).collect::<Vec<_>>(),
        ids,
        "claimed in delivery order"
    );
    assert!(
        seen.iter().all(|s| s.origin == Origin::Reclaimed),
        "{seen:?}"
    );
    assert!(seen[..5].iter().all(|s| s.attempts == 2), "{seen:?}");
    assert_eq!(
        (seen[5].id, seen[5].attempts),
        (ids[0], 3),
        "NACKed, then read again"
    );
    wait_until("the acks", || b.metrics().acked == 5);
    let metrics = b.stop().unwrap();
    assert_eq!(
        (
            metrics.reclaimed,
            metrics.acked,
            metrics.failed,
            metrics.nacked,
            metrics.pending
        ),
        (6, 5, 1, 1, 0)
    );
    assert_eq!(metrics.claim_path, ClaimPath::ReadClaim);
}

fn reclaim_in_real_time(target: &Target) {
    const IDLE_MS: u64 = 300;
    // Taken before the dead peer's read: an entry's idle time runs from its delivery (in
    // whole milliseconds on the server), which comes after this instant.
    let held_at = Instant::now();
    let ids = dead_peer_holds_five(target);
    let log = Log::default();
    let b = start_b(
        target,
        ConsumerSettings {
            claim_idle_ms: IDLE_MS,
            beat_interval_ms: 25,
            block_ms: 25,
            ..ConsumerSettings::default()
        },
        &log,
    );
    assert_eq!(b.claim_path(), target.claim_path(), "{target}");
    wait_until("the reclaim", || log.len() >= 5);
    assert!(
        held_at.elapsed() >= Duration::from_millis(IDLE_MS),
        "{target}: reclaimed before the idle threshold"
    );
    let seen = log.all();
    assert_eq!(seen[..5].iter().map(|s| s.id).collect::<Vec<_>>(), ids);
    assert!(
        seen[..5].iter().all(|s| s.attempts == 2),
        "{target}: {seen:?}"
    );
    wait_until("the retry", || log.len() == 6);
    assert_eq!((log.all()[5].id, log.all()[5].attempts), (ids[0], 3));
    wait_until("the last ack", || b.metrics().acked == 5);
    let metrics = b.stop().unwrap();
    let nacked = match target.claim_path() {
        ClaimPath::ReadClaim => 1,
        ClaimPath::AutoClaim => 0,
    };
    assert_eq!(
        (metrics.claim_path, metrics.nacked, metrics.reclaimed),
        (target.claim_path(), nacked, 6),
        "{target}"
    );
}

#[test]
fn a_second_consumer_reclaims_a_dead_peers_entries_on_servers() {
    let mut targets = vec![Target::serve()];
    targets.extend(Target::redis());
    targets.extend(Target::redis8());
    targets.extend(Target::valkey());
    targets.extend(Target::cluster());
    for target in targets {
        reclaim_in_real_time(&target);
    }
}

/// XAUTOCLAIM does not report delivery counts: a server backend looks them up with XPENDING,
/// page by page, over a span where the claimer holds fresh entries of its own in between.
fn claim_counts_among_own_entries(target: &Target) {
    const IDLE_WAIT_MS: u64 = 700;
    const CLAIM_IDLE_MS: u64 = 500;
    let key = stream_key("cm", "counts");
    let backend = target.backend();
    backend
        .create_group(&key, "notify", GroupStart::Beginning)
        .unwrap();
    append(&target.feed(), "counts", 0, 300);
    for i in 0..300 {
        let who = if i % 2 == 0 { "a" } else { "b" };
        let read = backend
            .read_group(&key, "notify", who, ReadFrom::New, 1, None)
            .unwrap();
        assert_eq!(read.len(), 1);
    }
    // a's entries are idle for IDLE_WAIT_MS, b's re-read ones for far less than
    // CLAIM_IDLE_MS even on a loaded machine: only a's entries are claimable.
    match target {
        Target::Embedded { .. } => target.advance_ms(IDLE_WAIT_MS),
        _ => std::thread::sleep(Duration::from_millis(IDLE_WAIT_MS)),
    }
    // b touches its own entries again: they are fresh, with count 2.
    let own = backend
        .read_group(
            &key,
            "notify",
            "b",
            ReadFrom::Pending(echomq::engine::StreamId::MIN),
            1_000,
            None,
        )
        .unwrap();
    assert_eq!(own.len(), 150);
    assert!(own.iter().all(|e| e.delivery_count == 2), "{target}");
    let claimed = backend
        .auto_claim(
            &key,
            "notify",
            "b",
            CLAIM_IDLE_MS,
            echomq::engine::StreamId::MIN,
            1_000,
        )
        .unwrap();
    assert_eq!(
        claimed.entries.len(),
        150,
        "{target}: only a's idle entries"
    );
    assert!(
        claimed.entries.iter().all(|e| e.delivery_count == 2),
        "{target}: {:?}",
        claimed
            .entries
            .iter()
            .filter(|e| e.delivery_count != 2)
            .map(|e| (e.id, e.delivery_count))
            .collect::<Vec<_>>()
    );
    assert_eq!(backend.pending_count(&key, "notify", "b").unwrap(), 300);
    assert_eq!(backend.pending_count(&key, "notify", "a").unwrap(), 0);
}

#[test]
fn claims_report_delivery_counts_even_among_the_claimers_own_entries() {
    for target in super::every_target(Target::embedded()) {
        claim_counts_among_own_entries(&target);
    }
}
