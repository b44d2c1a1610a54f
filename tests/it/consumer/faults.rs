//! At least once under faults: a handler failing at random 30% of the time over 10,000
//! entries, two consumers reclaiming each other's work. In the end every entry is acked
//! exactly once and none is lost; with the dedup helper each is rendered exactly once. On
//! both claim paths: `XREADGROUP … CLAIM` with `XNACK … FAIL` (the engine, `echomq serve`,
//! Redis 8.8) and the XAUTOCLAIM beat (Redis 7, Valkey, the cluster), each run checking the
//! path its consumers report.

use std::collections::HashMap;
use std::sync::Arc;

use echomq::feed::backend::{GroupBackend, GroupStart};
use echomq::feed::dedup::{Dedup, DedupStore, MemoryDedup, Once, OnceError, RedisDedup};
use echomq::feed::{Branded, ConsumerSettings, Delivery, RedisBackend, StreamConsumer};
use echomq::feed::{Subscription, stream_key};
use parking_lot::Mutex;

use echomq::feed::consumer::ClaimPath;

use super::{Target, wait_until};

/// A small deterministic generator (xorshift64*), one per consumer.
struct Rng(u64);

impl Rng {
    fn chance(&mut self, percent: u64) -> bool {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % 100 < percent
    }
}

type Renders = Arc<Mutex<HashMap<Branded, u32>>>;

fn settings() -> ConsumerSettings {
    ConsumerSettings {
        start: GroupStart::Beginning,
        batch_size: 100,
        block_ms: 10,
        beat_interval_ms: 10,
        claim_idle_ms: 30,
        max_attempts: None,
        ..ConsumerSettings::default()
    }
}

/// Appends `n` entries fast (one XADD each, through the feed).
fn fill(target: &Target, n: u64) -> Vec<Branded> {
    let feed = target.feed();
    (0..n)
        .map(|i| {
            feed.append("cm", "faults", &[("n", &i.to_string())])
                .unwrap()
        })
        .collect()
}

/// Two consumers over `dedup` stores (one per consumer, sharing marks), or without dedup.
fn run<S: DedupStore + 'static>(target: &Target, n: u64, stores: Option<[S; 2]>) -> Renders {
    let ids = fill(target, n);
    let renders: Renders = Arc::default();
    let mut stores = stores.map(|[a, b]| [Some(a), Some(b)]);
    let consumers: Vec<StreamConsumer> = (0..2usize)
        .map(|i| {
            let renders = Arc::clone(&renders);
            let dedup = stores
                .as_mut()
                .and_then(|s| s[i].take())
                .map(|store| Dedup::new(store, "render").with_lease_ms(10_000));
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1));
            StreamConsumer::start(
                &target.backend(),
                Subscription::new("cm", "faults", "notify", &format!("c{i}")),
                settings(),
                move |d: Delivery| {
                    let mut render = || {
                        if rng.chance(30) {
                            return Err("flaky".to_string());
                        }
                        *renders.lock().entry(d.id).or_default() += 1;
                        Ok(())
                    };
                    match &dedup {
                        None => render(),
                        Some(dedup) => match dedup.once(d.id, render) {
                            Ok(Once::Ran(())) | Ok(Once::Skipped) => Ok(()),
                            Err(OnceError::Work(e)) => Err(e),
                            Err(e) => Err(e.to_string()),
                        },
                    }
                },
            )
            .unwrap()
        })
        .collect();
    let probe = target.backend();
    let key = stream_key("cm", "faults");
    wait_until("every entry acked", || {
        consumers.iter().map(|c| c.metrics().acked).sum::<u64>() == n
    });
    for c in &consumers {
        c.request_stop();
    }
    let metrics: Vec<_> = consumers.into_iter().map(|c| c.stop().unwrap()).collect();
    assert_eq!(
        metrics.iter().map(|m| m.acked).sum::<u64>(),
        n,
        "{target}: each entry acked exactly once"
    );
    for c in ["c0", "c1"] {
        assert_eq!(probe.pending_count(&key, "notify", c).unwrap(), 0);
    }
    assert!(
        metrics.iter().map(|m| m.failed).sum::<u64>() > 0
            && metrics.iter().map(|m| m.reclaimed).sum::<u64>() > 0,
        "{target}: failures were retried through reclaims: {metrics:?}"
    );
    for m in &metrics {
        assert_eq!(m.claim_path, target.claim_path(), "{target}");
    }
    let nacked = metrics.iter().map(|m| m.nacked).sum::<u64>();
    match target.claim_path() {
        ClaimPath::ReadClaim => assert!(nacked > 0, "{target}: failures NACKed: {metrics:?}"),
        ClaimPath::AutoClaim => assert_eq!(nacked, 0, "{target}: no XNACK there"),
    }
    let renders_now = renders.lock().clone();
    assert_eq!(renders_now.len() as u64, n, "{target}: no entry lost");
    assert!(ids.iter().all(|id| renders_now.contains_key(id)));
    renders
}

fn exactly_once(renders: &Renders, target: &Target) {
    let renders = renders.lock();
    let twice: Vec<_> = renders.iter().filter(|(_, n)| **n != 1).collect();
    assert!(
        twice.is_empty(),
        "{target}: rendered more than once: {twice:?}"
    );
}

#[test]
fn every_entry_is_acked_once_and_none_is_lost_when_the_handler_fails_30_percent() {
    let target = Target::embedded_wall();
    run::<MemoryDedup>(&target, 10_000, None);
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_embedded() {
    let target = Target::embedded_wall();
    let store = Arc::new(MemoryDedup::new());
    let renders = run(&target, 10_000, Some([store.clone(), store]));
    exactly_once(&renders, &target);
}

/// Entries on a server: every render there costs two round trips (SET NX, SET done), so the
/// server runs keep to half the embedded size to stay within a few seconds.
const SERVER_ENTRIES: u64 = 5_000;

fn exactly_once_on(target: &Target) {
    let stores = match target {
        Target::Cluster(cluster) => {
            let backend = cluster.backend();
            [
                RedisDedup::on_cluster(&backend, "cm").unwrap(),
                RedisDedup::on_cluster(&backend, "cm").unwrap(),
            ]
        }
        _ => {
            let backend = RedisBackend::connect(&target.url().unwrap()).unwrap();
            [
                RedisDedup::new(&backend, "cm").unwrap(),
                RedisDedup::new(&backend, "cm").unwrap(),
            ]
        }
    };
    let renders = run(target, SERVER_ENTRIES, Some(stores));
    exactly_once(&renders, target);
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_on_echomq_serve() {
    exactly_once_on(&Target::serve());
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_on_redis() {
    if let Some(target) = Target::redis() {
        exactly_once_on(&target);
    }
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_on_redis_8_8() {
    if let Some(target) = Target::redis8() {
        exactly_once_on(&target);
    }
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_on_valkey() {
    if let Some(target) = Target::valkey() {
        exactly_once_on(&target);
    }
}

#[test]
fn with_dedup_every_entry_is_rendered_exactly_once_on_a_redis_cluster() {
    if let Some(target) = Target::cluster() {
        exactly_once_on(&target);
    }
}
