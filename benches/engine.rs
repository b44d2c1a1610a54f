//! Engine benchmarks for the "Engine core" performance targets.
//!
//! - `memory` (printed first, not timed): bytes per entry of a 1M-entry stream built with
//!   `XADD key * f1 v1 f2 v2` through [`Keyspace::execute`], from a counting global allocator
//!   and from [`Stream::memory_bytes`]. Target: at most 18 B/entry (Redis 7.0: 18.3).
//! - `xadd/typed`, `xadd/argv`: one `*` append of `f1 v1 f2 v2`, with the clock moving 1 ms
//!   every [`ADDS_PER_MS`] appends. Target: 5M appends/s (200 ns) single-threaded.
//! - `xrange/*`: 100 entries from the middle (and from scattered positions) of a 10k- and a
//!   10M-entry stream, typed and argv. Target: the 10M read within 1.5x of the 10k read.
//! - `xtrim/*`: `MAXLEN ~` (LIMIT 0, and the default LIMIT) and `MAXLEN =` down to 100k entries,
//!   removing 1M and 100k entries, on a fresh copy of the stream each iteration (the copy is
//!   made and freed outside the measurement). Targets: time proportional to nodes removed;
//!   `~` at least 20x cheaper than `=`.
//! - `xread_maxcount/*`: `XREAD MAXCOUNT 100 STREAMS k1 .. kN 0 ..` over 10 streams of 1M
//!   entries and over 1,000 streams of 10k entries (10M entries either way, so memory stays
//!   near 200 MB). Target: the time follows the 100 entries returned, not the streams' length;
//!   what grows with N is only the per-key checks every XREAD makes before serving (Redis's
//!   too), not any serving of the streams the budget never reaches.
//! - `bitmap_hll/*`: BITCOUNT of a whole 64 MiB bitmap (target: as fast as Redis 8.8, which
//!   counts with vector instructions; `scripts/bench-vs-redis --loads bitcount_64mb` compares
//!   them side by side), and PFCOUNT over a dense HyperLogLog and a sparse one (a union, so no
//!   cached estimate answers; `--loads pfcount_dense`).
//!
//! Under `cargo test --benches` (no `--bench` argument) every benchmark runs once as a smoke
//! test with reduced sizes, so the debug build stays quick.

mod support;

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use echomq::engine::{
    AddId, Keyspace, ManualClock, NodeLimits, Reply, Stream, StreamId, Trim, Value,
};

use support::{
    ADDS_PER_MS, FIELDS, KEY, Rng, START_MS, Window, XADD_ARGV, build_stream, entry_id, human,
    keyspace_with,
};

/// Entries an XRANGE returns (`COUNT 100`).
const RANGE_COUNT: usize = 100;
/// Distinct start positions the scattered XRANGE benchmarks cycle through.
const SCATTERED_STARTS: usize = 1024;
/// The append benchmarks start a new stream past this length, so memory stays bounded
/// (about 150 MB) however many iterations criterion asks for.
const APPEND_STREAM_LEN_MAX: u64 = 10_000_000;
/// Trim iterations criterion should aim for: each needs a fresh copy of the stream, so the
/// measurement time is set from one timed trim rather than fixed.
const TRIM_ITERATIONS: u32 = 300;

/// Stream sizes: the targets' sizes in a benchmark run, small ones in a test run.
#[derive(Debug, Clone, Copy)]
struct Scale {
    memory_entries: u64,
    range_small: u64,
    range_large: u64,
    /// `(stream length, MAXLEN)` of each trim case.
    trims: [(u64, u64); 2],
    /// `(streams, entries each)` of each MAXCOUNT read.
    caps: [(u64, u64); 2],
    /// Bytes of the BITCOUNT bitmap.
    bitmap_bytes: u64,
}

const FULL: Scale = Scale {
    memory_entries: 1_000_000,
    range_small: 10_000,
    range_large: 10_000_000,
    trims: [(1_100_000, 100_000), (200_000, 100_000)],
    caps: [(10, 1_000_000), (1_000, 10_000)],
    bitmap_bytes: 64 << 20,
};

const QUICK: Scale = Scale {
    memory_entries: 10_000,
    range_small: 1_000,
    range_large: 100_000,
    trims: [(11_000, 1_000), (2_000, 1_000)],
    caps: [(10, 1_000), (100, 100)],
    bitmap_bytes: 1 << 20,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let scale = if has("--bench") && !has("--test") && !has("--list") {
        FULL
    } else {
        QUICK
    };
    if !has("--list") {
        report_memory(scale.memory_entries);
    }
    let mut c = Criterion::default().configure_from_args();
    bench_xadd(&mut c);
    bench_xrange(&mut c, scale);
    bench_xtrim(&mut c, scale);
    bench_xread_maxcount(&mut c, scale);
    bench_bitmap_hll(&mut c, scale);
    c.final_summary();
}

/// Builds a stream with `*` ids through the argv path and prints its bytes per entry.
fn report_memory(entries: u64) {
    let clock = Arc::new(ManualClock::new(START_MS));
    let window = Window::open();
    let keyspace = Keyspace::new(clock.clone());
    for i in 0..entries {
        if i % ADDS_PER_MS == 0 {
            clock.advance(1);
        }
        let reply = keyspace.execute(&XADD_ARGV);
        assert!(
            matches!(reply, Ok(Reply::Bulk(_))),
            "XADD failed: {reply:?}"
        );
    }
    let stats = window.close();
    let (len, nodes, memory_bytes) = keyspace.run(|db, _| match db.stream(KEY) {
        Ok(Some(s)) => (s.len(), s.node_count(), s.memory_bytes()),
        other => panic!("no stream after the XADDs: {other:?}"),
    });
    assert_eq!(len, entries);
    let per_entry = |bytes: f64| bytes / entries as f64;
    println!(
        "memory/xadd_star/{}: {:.2} B/entry allocated (requested), {:.2} B/entry as glibc \
         chunks, {:.2} B/entry by Stream::memory_bytes; {nodes} nodes, {:.2} allocation calls \
         per XADD",
        human(entries),
        per_entry(stats.live_bytes as f64),
        per_entry(stats.live_chunk_bytes as f64),
        per_entry(memory_bytes as f64),
        stats.alloc_calls as f64 / entries as f64,
    );
}

/// A typed-API appender: one stream, a clock that moves every [`ADDS_PER_MS`] appends.
#[derive(Debug)]
struct TypedAppender {
    stream: Stream,
    now_ms: u64,
    adds: u64,
}

impl TypedAppender {
    fn run(&mut self, iters: u64) -> Duration {
        if self.stream.len() + iters > APPEND_STREAM_LEN_MAX {
            self.stream = Stream::new();
        }
        let limits = NodeLimits::default();
        let mut ok = 0u64;
        let start = Instant::now();
        for _ in 0..iters {
            if self.adds % ADDS_PER_MS == 0 {
                self.now_ms += 1;
            }
            self.adds += 1;
            let added = self
                .stream
                .add(AddId::Auto, black_box(&FIELDS), self.now_ms, limits);
            ok += u64::from(black_box(added).is_ok());
        }
        let elapsed = start.elapsed();
        assert_eq!(ok, iters, "some appends failed");
        elapsed
    }
}

/// An argv appender: `XADD bench * f1 v1 f2 v2` through [`Keyspace::execute`].
#[derive(Debug)]
struct ArgvAppender {
    keyspace: Keyspace,
    clock: Arc<ManualClock>,
    len: u64,
}

impl ArgvAppender {
    fn run(&mut self, iters: u64) -> Duration {
        if self.len + iters > APPEND_STREAM_LEN_MAX {
            drop(self.keyspace.run(|db, _| db.remove(KEY)));
            self.len = 0;
        }
        let mut ok = 0u64;
        let start = Instant::now();
        for _ in 0..iters {
            if self.len % ADDS_PER_MS == 0 {
                self.clock.advance(1);
            }
            self.len += 1;
            let reply = self.keyspace.execute(black_box(&XADD_ARGV));
            ok += u64::from(black_box(reply).is_ok());
        }
        let elapsed = start.elapsed();
        assert_eq!(ok, iters, "some XADDs failed");
        elapsed
    }
}

fn bench_xadd(c: &mut Criterion) {
    let mut group = c.benchmark_group("xadd");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));

    let mut typed = TypedAppender {
        stream: Stream::new(),
        now_ms: START_MS,
        adds: 0,
    };
    group.bench_function("typed", |b| b.iter_custom(|iters| typed.run(iters)));

    let clock = Arc::new(ManualClock::new(START_MS));
    let mut argv = ArgvAppender {
        keyspace: Keyspace::new(clock.clone()),
        clock,
        len: 0,
    };
    group.bench_function("argv", |b| b.iter_custom(|iters| argv.run(iters)));
    group.finish();
}

/// Reads 100 entries from `start` on, touching every byte of every field and value.
fn read_range(stream: &Stream, start: StreamId) -> u64 {
    let mut sum = 0u64;
    for entry in stream.range(start, StreamId::MAX).take(RANGE_COUNT) {
        sum = sum.wrapping_add(entry.id.ms ^ entry.id.seq);
        for (field, value) in entry.fields() {
            for &byte in field.iter().chain(value) {
                sum = sum.wrapping_mul(31).wrapping_add(u64::from(byte));
            }
        }
    }
    sum
}

/// The data of one XRANGE stream size, built on first use so a filtered run skips it.
#[derive(Debug)]
struct RangeFixture {
    keyspace: Keyspace,
    middle: StreamId,
    scattered: Vec<StreamId>,
}

impl RangeFixture {
    fn build(len: u64) -> RangeFixture {
        let middle = entry_id(len / 2);
        let mut rng = Rng::new(len);
        let scattered: Vec<StreamId> = (0..SCATTERED_STARTS)
            .map(|_| entry_id(rng.below(len - RANGE_COUNT as u64)))
            .collect();
        let stream = build_stream(len);
        for &start in scattered.iter().chain([&middle]) {
            assert_eq!(
                stream.range(start, StreamId::MAX).take(RANGE_COUNT).count(),
                RANGE_COUNT
            );
        }
        RangeFixture {
            keyspace: keyspace_with(stream),
            middle,
            scattered,
        }
    }

    /// Runs `f` on the stream, under the keyspace lock.
    fn with_stream<R>(&self, f: impl FnOnce(&Stream) -> R) -> R {
        self.keyspace.run(|db, _| match db.get(KEY) {
            Some(Value::Stream(stream)) => f(stream),
            other => panic!("no benchmark stream: {other:?}"),
        })
    }
}

/// `XRANGE bench <start> + COUNT 100`.
fn xrange_argv(start: StreamId) -> Vec<Vec<u8>> {
    let start = start.to_string();
    let count = RANGE_COUNT.to_string();
    let argv: [&[u8]; 6] = [
        b"XRANGE",
        KEY,
        start.as_bytes(),
        b"+",
        b"COUNT",
        count.as_bytes(),
    ];
    argv.iter().map(|a| a.to_vec()).collect()
}

fn run_xrange(keyspace: &Keyspace, argv: &[Vec<u8>]) -> Reply {
    let reply = keyspace.execute(argv);
    match reply {
        Ok(reply) => reply,
        Err(e) => panic!("XRANGE failed: {e}"),
    }
}

/// Entries in an XRANGE reply, whichever form the engine replies them in.
fn entry_count(reply: &Reply) -> Option<usize> {
    match reply {
        Reply::Array(entries) => Some(entries.len()),
        Reply::Entries(entries) => Some(entries.len()),
        _ => None,
    }
}

fn bench_xrange(c: &mut Criterion, scale: Scale) {
    let mut group = c.benchmark_group("xrange");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for len in [scale.range_small, scale.range_large] {
        let fixture = OnceCell::new();
        let fixture = || fixture.get_or_init(|| RangeFixture::build(len));
        let size = human(len);

        group.bench_function(BenchmarkId::new("typed_middle", &size), |b| {
            let f = fixture();
            f.with_stream(|s| b.iter(|| read_range(s, black_box(f.middle))));
        });
        group.bench_function(BenchmarkId::new("typed_scattered", &size), |b| {
            let f = fixture();
            let mut starts = f.scattered.iter().cycle();
            f.with_stream(|s| {
                b.iter(|| read_range(s, black_box(*starts.next().unwrap_or(&f.middle))));
            });
        });
        group.bench_function(BenchmarkId::new("argv_middle", &size), |b| {
            let f = fixture();
            let argv = xrange_argv(f.middle);
            assert_eq!(
                entry_count(&run_xrange(&f.keyspace, &argv)),
                Some(RANGE_COUNT)
            );
            b.iter(|| run_xrange(&f.keyspace, black_box(&argv)));
        });
        group.bench_function(BenchmarkId::new("argv_scattered", &size), |b| {
            let f = fixture();
            let argvs: Vec<_> = f.scattered.iter().map(|&s| xrange_argv(s)).collect();
            let mut argvs = argvs.iter().cycle();
            b.iter(|| {
                let argv = argvs.next().map_or(&[][..], Vec::as_slice);
                run_xrange(&f.keyspace, black_box(argv))
            });
        });
    }
    group.finish();
}

/// One timed trim of a copy of `base`: the time, entries removed and whole nodes removed.
fn trim_once(base: &Stream, trim: &Trim) -> (Duration, u64, u64) {
    let mut stream = base.clone();
    let start = Instant::now();
    let removed = stream.trim(trim, NodeLimits::default());
    let elapsed = start.elapsed();
    (elapsed, removed, base.node_count() - stream.node_count())
}

fn bench_xtrim(c: &mut Criterion, scale: Scale) {
    let mut group = c.benchmark_group("xtrim");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    for (len, keep) in scale.trims {
        let base = build_stream(len);
        let removing = human(len - keep);
        let cases = [
            ("approx_nolimit", Trim::maxlen_approx(keep).with_limit(0)),
            ("approx_default_limit", Trim::maxlen_approx(keep)),
            ("exact", Trim::maxlen(keep)),
        ];
        for (name, trim) in cases {
            // The fastest of a few runs sets the budget; the first run also warms the caches.
            let (one, removed, nodes) = (0..3)
                .map(|_| trim_once(&base, &trim))
                .min_by_key(|&(t, _, _)| t)
                .unwrap_or_default();
            println!(
                "xtrim/{name}/remove_{removing}: MAXLEN {keep} on {len} entries removes \
                 {removed} entries, {nodes} whole nodes"
            );
            group
                .throughput(Throughput::Elements(removed))
                .warm_up_time((one * TRIM_ITERATIONS / 6).max(Duration::from_millis(1)))
                .measurement_time((one * TRIM_ITERATIONS).max(Duration::from_millis(1)));
            group.bench_function(BenchmarkId::new(name, format!("remove_{removing}")), |b| {
                b.iter_batched(
                    || base.clone(),
                    |mut stream| {
                        stream.trim(black_box(&trim), NodeLimits::default());
                        stream
                    },
                    BatchSize::PerIteration,
                );
            });
        }
    }
    group.finish();
}

/// Entries `XREAD MAXCOUNT` returns.
const MAXCOUNT_READ: usize = 100;

fn bench_xread_maxcount(c: &mut Criterion, scale: Scale) {
    let mut group = c.benchmark_group("xread_maxcount");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for (streams, len) in scale.caps {
        let keyspace = Keyspace::new(Arc::new(ManualClock::new(START_MS)));
        let stream = build_stream(len);
        let keys: Vec<String> = (0..streams).map(|i| format!("cap{i}")).collect();
        keyspace.run(|db, _| {
            for key in &keys {
                db.insert(key.as_bytes(), Value::Stream(Box::new(stream.clone())));
            }
        });
        drop(stream);
        let maxcount = MAXCOUNT_READ.to_string();
        let mut argv: Vec<&[u8]> = vec![b"XREAD", b"MAXCOUNT", maxcount.as_bytes(), b"STREAMS"];
        argv.extend(keys.iter().map(|k| k.as_bytes()));
        argv.extend(keys.iter().map(|_| &b"0"[..]));
        let total = |reply: &Reply| match reply {
            Reply::StreamMap(pairs) => pairs.iter().filter_map(|(_, e)| entry_count(e)).sum(),
            _ => 0,
        };
        let reply = keyspace.execute(&argv).unwrap_or(Reply::NullArray);
        assert_eq!(total(&reply), MAXCOUNT_READ);
        group.throughput(Throughput::Elements(MAXCOUNT_READ as u64));
        let name = format!("{streams}_streams_of_{}", human(len));
        group.bench_function(BenchmarkId::new("read_100", name), |b| {
            b.iter(|| black_box(keyspace.execute(&argv)))
        });
    }
    group.finish();
}

fn bench_bitmap_hll(c: &mut Criterion, scale: Scale) {
    let mut group = c.benchmark_group("bitmap_hll");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    let keyspace = Keyspace::new(Arc::new(ManualClock::new(START_MS)));
    let last = (scale.bitmap_bytes - 1).to_string();
    let sized = keyspace.execute(&[&b"SETRANGE"[..], b"bitmap", last.as_bytes(), b"x"]);
    assert_eq!(sized, Ok(Reply::Int(scale.bitmap_bytes as i64)));
    for i in (0..scale.bitmap_bytes * 8).step_by(4099 * 8) {
        let offset = i.to_string();
        let _ = keyspace.execute(&[&b"SETBIT"[..], b"bitmap", offset.as_bytes(), b"1"]);
    }
    group.throughput(Throughput::Bytes(scale.bitmap_bytes));
    group.bench_function(
        BenchmarkId::new("bitcount", human(scale.bitmap_bytes)),
        |b| b.iter(|| black_box(keyspace.execute(&[&b"BITCOUNT"[..], b"bitmap"]))),
    );
    for i in 0..1000 {
        let elements: Vec<String> = (0..100).map(|j| format!("e{i}-{j}")).collect();
        let mut argv: Vec<&[u8]> = vec![b"PFADD", b"dense"];
        argv.extend(elements.iter().map(|e| e.as_bytes()));
        let _ = keyspace.execute(&argv);
    }
    let _ = keyspace.execute(&[&b"PFADD"[..], b"sparse", b"a", b"b", b"c"]);
    group.throughput(Throughput::Elements(1));
    group.bench_function("pfcount_dense_and_sparse", |b| {
        b.iter(|| black_box(keyspace.execute(&[&b"PFCOUNT"[..], b"dense", b"sparse"])))
    });
    group.finish();
}
