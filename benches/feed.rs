//! Feed-layer benchmarks: append throughput on the embedded backend,
//! a five-minute window read out of ten million entries, and a cached projection against
//! re-folding the same window.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use echomq::engine::{Keyspace, ManualClock};
use echomq::feed::{CachedProjection, Embedded, Feed, Record, Window};
use time::OffsetDateTime;

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;
/// Entries in the big stream.
const ENTRIES: u64 = 10_000_000;
/// One entry every 100 ms: five minutes hold 3,000 entries.
const STEP_MS: u64 = 100;

fn at(ms: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

fn feed() -> (Feed<Embedded>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    (
        Feed::with_clock(Embedded::new(keyspace), clock.clone()),
        clock,
    )
}

fn append(c: &mut Criterion) {
    let (feed, clock) = feed();
    let mut group = c.benchmark_group("feed");
    group.throughput(criterion::Throughput::Elements(1));
    let mut n = 0u64;
    group.bench_function("append", |b| {
        b.iter(|| {
            n += 1;
            if n % 1000 == 0 {
                clock.advance(1);
            }
            black_box(
                feed.append("cm", "events", &[("kind", "guess"), ("player", "alex")])
                    .ok(),
            )
        })
    });
    group.finish();
}

fn window(c: &mut Criterion) {
    let (feed, clock) = feed();
    for i in 0..ENTRIES {
        clock.set(T + i * STEP_MS);
        let _ = feed.append("cm", "events", &[("kind", "guess"), ("player", "alex")]);
    }
    let end = T + (ENTRIES - 1) * STEP_MS;
    let (t0, t1) = (at(end - 5 * 60 * 1000 + 1), at(end));
    assert_eq!(
        feed.read_window("cm", "events", t0, t1, None)
            .map(|w| w.len())
            .ok(),
        Some(3000)
    );
    let mut group = c.benchmark_group("feed");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("read_window_5min_of_10M", |b| {
        b.iter(|| {
            black_box(
                feed.read_window("cm", "events", t0, t1, None)
                    .map(|w| w.len())
                    .ok(),
            )
        })
    });
    let step = |acc: &mut u64, r: &Record| *acc += r.fields.len() as u64;
    group.bench_function("refold_5min_window", |b| {
        b.iter(|| {
            let records = feed
                .read_window("cm", "events", t0, t1, None)
                .unwrap_or_default();
            black_box(records.iter().fold(0u64, |mut acc, r| {
                step(&mut acc, r);
                acc
            }))
        })
    });
    let mut cached = CachedProjection::new("cm", "events", Window::Closed(t0, t1), 0u64, step);
    let _ = cached.get(&feed);
    group.bench_function("cached_projection_5min_window", |b| {
        b.iter(|| black_box(cached.get(&feed).ok().copied()))
    });
    group.finish();
}

criterion_group!(benches, append, window);
criterion_main!(benches);
