//! Consumer-group benchmarks for the "Engine: consumer groups" performance targets.
//!
//! - `memory` (printed first, not timed): bytes per pending entry after XREADGROUP delivered
//!   1,000,000 entries without an ack, from a counting global allocator (group PEL, consumer
//!   PEL and NACKs, and the Redis 8.x indexes: the delivery-time order and the stream's
//!   reference index), beside `Stream::pel_heap_bytes`'s estimate. Target: at most
//!   Redis 8.8's per pending entry (Redis 7.0, without those indexes: 84).
//! - `deliver_ack/typed`, `deliver_ack/argv`: one cycle of XREADGROUP COUNT 100 then XACK of
//!   those 100, on a stream long enough never to run dry. Target: 2M entries/s single-threaded.
//!
//! - `ack_delete/xackdel`, `ack_delete/xack_xdel`: XACKDEL of 100 pending ids against XACK
//!   then XDEL of the same 100 (typed API, KEEPREF), on a 10k-entry stream kept at that size
//!   (each round appends and delivers 100 fresh entries outside the timed part).
//! - `trim_acked/10_groups`: XTRIM MAXLEN = <len> ACKED removing 100 entries from the head of
//!   a 1M-entry stream read by 10 groups, each with 1,000 entries pending near the tail (each
//!   round appends 100 entries and moves every group's window on, outside the timed part).
//! - `claim_read/<pel>`: the claim phase of `XREADGROUP … CLAIM 0 COUNT 100` against a PEL of
//!   1k and of 1M entries (every entry idle enough; a claimed entry moves to the end of the
//!   delivery-time order, so the work per round stays the same). Target: flat in PEL size
//!   (1M within 1.5x of 1k).
//!
//! Under `cargo test --benches` every benchmark runs once with small sizes.

// The support module is shared with the engine benchmarks; this binary uses part of it.
#[allow(dead_code)]
mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use echomq::engine::{
    AddId, DeleteStrategy, Keyspace, NodeLimits, Reply, Stream, StreamId, Trim, TrimStrategy,
};

use support::{FIELDS, KEY, START_MS, Window, build_stream, entry_id, human, keyspace_with};

/// Entries per XREADGROUP (`COUNT 100`) and per XACK.
const BATCH: usize = 100;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let (pending, stream_len) = if full {
        (1_000_000, 20_000_000)
    } else {
        (10_000, 100_000)
    };
    if !args.iter().any(|a| a == "--list") {
        report_pel_memory(pending);
    }
    let (ack_delete_len, trim_len, claim_pels) = if full {
        (10_000, 1_000_000, [1_000, 1_000_000])
    } else {
        (1_000, 10_000, [100, 10_000])
    };
    let mut c = Criterion::default().configure_from_args();
    bench_deliver_ack(&mut c, stream_len);
    bench_ack_delete(&mut c, ack_delete_len);
    bench_trim_acked(&mut c, trim_len);
    bench_claim_read(&mut c, &claim_pels);
    c.final_summary();
}

/// Delivers `n` entries to one consumer without acking and prints the bytes each costs.
fn report_pel_memory(n: u64) {
    let mut stream = build_stream(n);
    assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
    let window = Window::open();
    let delivered = stream.deliver_new(b"g", b"c", 0, false, START_MS, &mut |e| {
        black_box(e.id);
    });
    let stats = window.close();
    assert_eq!(delivered.ok(), Some(n as usize));
    let pel_bytes = stream.pel_heap_bytes();
    println!(
        "memory/pending/{}: {:.2} B per pending entry allocated (requested), {:.2} B as glibc \
         chunks, {:.2} B by Stream::pel_heap_bytes (PELs, time order, reference index)",
        human(n),
        stats.live_bytes as f64 / n as f64,
        stats.live_chunk_bytes as f64 / n as f64,
        pel_bytes as f64 / n as f64,
    );
}

/// Runs `iters` deliver + ack cycles on the typed API.
fn typed_cycles(stream: &mut Stream, now: &mut u64, iters: u64) -> Duration {
    let mut ids = Vec::with_capacity(BATCH);
    let start = Instant::now();
    for _ in 0..iters {
        *now += 1;
        ids.clear();
        let delivered = stream.deliver_new(b"g", b"c", BATCH, false, *now, &mut |e| ids.push(e.id));
        assert_eq!(delivered.ok(), Some(BATCH), "the stream ran dry");
        let acked = stream.ack(b"g", &ids);
        black_box(acked.ok());
    }
    start.elapsed()
}

/// Runs `iters` cycles through [`Keyspace::execute`]: the reply's ids feed the XACK.
fn argv_cycles(keyspace: &Keyspace, iters: u64) -> Duration {
    let read: [&[u8]; 9] = [
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c",
        b"COUNT",
        b"100",
        b"STREAMS",
        KEY,
        b">",
    ];
    let mut ack: Vec<Vec<u8>> = Vec::with_capacity(BATCH + 3);
    let start = Instant::now();
    for _ in 0..iters {
        let reply = keyspace.execute(&read);
        ack.clear();
        ack.extend([b"XACK".to_vec(), KEY.to_vec(), b"g".to_vec()]);
        if let Ok(Reply::StreamMap(streams)) = &reply
            && let Some((_, Reply::Entries(entries))) = streams.first()
        {
            ack.extend(entries.iter().map(|e| e.id.to_vec()));
        }
        assert_eq!(ack.len(), BATCH + 3, "the stream ran dry: {reply:?}");
        black_box(keyspace.execute(&ack).ok());
    }
    start.elapsed()
}

fn bench_deliver_ack(c: &mut Criterion, stream_len: u64) {
    let mut group = c.benchmark_group("deliver_ack");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    let mut stream = build_stream(stream_len);
    assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
    let mut now = START_MS;
    group.bench_function("typed", |b| {
        b.iter_custom(|iters| {
            let remaining = stream.len() - stream.group(b"g").map_or(0, |g| g.last_id.ms);
            if remaining < (iters + 1) * BATCH as u64 {
                assert!(stream.set_group_id(b"g", StreamId::MIN, None).is_ok());
            }
            typed_cycles(&mut stream, &mut now, iters)
        })
    });

    let mut argv_stream = build_stream(stream_len);
    assert!(argv_stream.create_group(b"g", StreamId::MIN, None).is_ok());
    let keyspace = keyspace_with(argv_stream);
    group.bench_function("argv", |b| {
        b.iter_custom(|iters| {
            let last = keyspace.run(|db, _| {
                db.stream(KEY)
                    .ok()
                    .flatten()
                    .and_then(|s| s.group(b"g").map(|g| g.last_id.ms))
                    .unwrap_or(0)
            });
            if stream_len - last < (iters + 1) * BATCH as u64 {
                let reset: [&[u8]; 5] = [b"XGROUP", b"SETID", KEY, b"g", b"0"];
                assert!(keyspace.execute(&reset).is_ok());
            }
            argv_cycles(&keyspace, iters)
        })
    });
    group.finish();
}

/// Groups in the ACKED trim benchmark, and entries each holds pending.
const TRIM_GROUPS: usize = 10;
const TRIM_PENDING: u64 = 1_000;

fn group_name(i: usize) -> Vec<u8> {
    format!("g{i}").into_bytes()
}

/// Appends `n` entries after the stream's last; ids follow [`entry_id`]'s pattern.
fn append(stream: &mut Stream, next: &mut u64, n: u64) {
    for _ in 0..n {
        let added = stream.add(
            AddId::Explicit(entry_id(*next)),
            &FIELDS,
            START_MS,
            NodeLimits::default(),
        );
        assert!(added.is_ok(), "appending failed: {added:?}");
        *next += 1;
    }
}

/// XACKDEL against XACK + XDEL of the same 100 freshly delivered ids.
fn bench_ack_delete(c: &mut Criterion, len: u64) {
    let mut group = c.benchmark_group("ack_delete");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for combined in [true, false] {
        let mut stream = build_stream(len);
        assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
        let (mut next, mut now) = (len, START_MS);
        let name = if combined { "xackdel" } else { "xack_xdel" };
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                let mut ids = Vec::with_capacity(BATCH);
                for _ in 0..iters {
                    append(&mut stream, &mut next, BATCH as u64);
                    now += 1;
                    ids.clear();
                    let delivered =
                        stream.deliver_new(b"g", b"c", BATCH, false, now, &mut |e| ids.push(e.id));
                    assert_eq!(delivered.ok(), Some(BATCH));
                    let start = Instant::now();
                    if combined {
                        black_box(stream.ack_delete(b"g", &ids, DeleteStrategy::KeepRef));
                    } else {
                        black_box(stream.ack(b"g", &ids).ok());
                        black_box(stream.delete(&ids));
                    }
                    timed += start.elapsed();
                }
                timed
            })
        });
    }
    group.finish();
}

/// XTRIM MAXLEN = len ACKED, 100 entries off the head per round, with 10 groups.
fn bench_trim_acked(c: &mut Criterion, len: u64) {
    let mut group = c.benchmark_group("trim_acked");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut stream = build_stream(len);
    let window_start = entry_id(len - TRIM_PENDING - 1);
    for g in 0..TRIM_GROUPS {
        assert!(
            stream
                .create_group(&group_name(g), window_start, None)
                .is_ok()
        );
        let delivered = stream.deliver_new(&group_name(g), b"c", 0, false, START_MS, &mut |e| {
            black_box(e.id);
        });
        assert_eq!(delivered.ok(), Some(TRIM_PENDING as usize));
    }
    let trim = Trim {
        delete: DeleteStrategy::Acked,
        strategy: TrimStrategy::MaxLen(len),
        approx: false,
        limit: None,
    };
    let mut next = len;
    group.bench_function(format!("{TRIM_GROUPS}_groups_{}", human(len)), |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut oldest = Vec::with_capacity(BATCH);
            for _ in 0..iters {
                // Move every group's window on: 100 new entries delivered, its 100 oldest
                // pending acked, so the head stays unreferenced and the PELs keep their size.
                let first_new = next;
                append(&mut stream, &mut next, BATCH as u64);
                for g in 0..TRIM_GROUPS {
                    let name = group_name(g);
                    let delivered =
                        stream.deliver_new(&name, b"c", BATCH, false, START_MS, &mut |e| {
                            black_box(e.id);
                        });
                    assert_eq!(delivered.ok(), Some(BATCH));
                    oldest.clear();
                    let from = first_new - TRIM_PENDING;
                    oldest.extend((from..from + BATCH as u64).map(entry_id));
                    black_box(stream.ack(&name, &oldest).ok());
                }
                let start = Instant::now();
                let removed = stream.trim(&trim, NodeLimits::default());
                timed += start.elapsed();
                assert_eq!(removed, BATCH as u64, "the ACKED trim removed the head");
            }
            timed
        })
    });
    group.finish();
}

/// The claim phase of XREADGROUP CLAIM 0 COUNT 100 against PELs of each size.
fn bench_claim_read(c: &mut Criterion, pels: &[u64]) {
    let mut group = c.benchmark_group("claim_read");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for &pel in pels {
        let mut stream = build_stream(pel);
        assert!(stream.create_group(b"g", StreamId::MIN, None).is_ok());
        let delivered = stream.deliver_new(b"g", b"c", 0, false, START_MS, &mut |e| {
            black_box(e.id);
        });
        assert_eq!(delivered.ok(), Some(pel as usize));
        let mut now = START_MS;
        group.bench_function(human(pel), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    now += 1;
                    let claimed =
                        stream.claim_idle(b"g", b"c2", 0, BATCH, now, &mut |e, idle, n| {
                            black_box((e.id, idle, n));
                        });
                    assert_eq!(claimed.ok(), Some(BATCH.min(pel as usize)));
                }
                start.elapsed()
            })
        });
    }
    group.finish();
}
