//! Consumer-group benchmarks for the "Engine: consumer groups" performance targets.
//!
//! - `memory` (printed first, not timed): bytes per pending entry after XREADGROUP delivered
//!   1,000,000 entries without an ack, from a counting global allocator (group PEL, consumer
//!   PEL and NACKs). Target: at most 84 B per pending entry (Redis 7.0: 84).
//! - `deliver_ack/typed`, `deliver_ack/argv`: one cycle of XREADGROUP COUNT 100 then XACK of
//!   those 100, on a stream long enough never to run dry. Target: 2M entries/s single-threaded.
//!
//! Under `cargo test --benches` every benchmark runs once with small sizes.

// The support module is shared with the engine benchmarks; this binary uses part of it.
#[allow(dead_code)]
mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use echomq::engine::{Keyspace, Reply, Stream, StreamId};

use support::{KEY, START_MS, Window, build_stream, human, keyspace_with};

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
    let mut c = Criterion::default().configure_from_args();
    bench_deliver_ack(&mut c, stream_len);
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
