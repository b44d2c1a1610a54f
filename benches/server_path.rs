//! The server's request path in process: decode → execute → encode, as a
//! connection runs a batch of pipelined requests (`echomq_protocol`'s `server::pipeline`,
//! driven through `fuzzing::hot_path::Pipeline`), with no socket, so the per-command cost is
//! tracked without network noise.
//!
//! - `server_path/xadd_p16`: one batch of 16 `XADD s * f1 v1 f2 v2` (a new stream every
//!   [`STREAM_LEN_MAX`] entries, so memory stays bounded);
//! - `server_path/ping_p16`: one batch of 16 `PING`;
//! - `server_path/xlen_p16`: one batch of 16 `XLEN s`;
//! - `server_path/set_p16`: one batch of 16 `SET k v` (the engine's string command);
//! - `server_path/get_p16`: one batch of 16 `GET k`.
//!
//! Before timing, each load's allocation calls per request are printed (the counting
//! allocator of `support`, over 1,000 batches after a warm-up). Throughput is in requests.
//! Under `cargo test --benches` each runs once as a smoke test.

// The support module is shared with the engine benchmarks; this binary uses its allocator.
#[allow(dead_code)]
mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use echomq_protocol::fuzzing::hot_path::Pipeline;
use support::Window;

/// Requests per batch, as `redis-benchmark -P 16` sends them.
const BATCH: usize = 16;
/// Entries after which the stream is deleted and started again.
const STREAM_LEN_MAX: usize = 2_000_000;

/// `argv` as a RESP multibulk request.
fn request(argv: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", argv.len()).into_bytes();
    for arg in argv {
        out.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
    }
    out
}

/// `BATCH` copies of `argv`, one read's worth.
fn batch(argv: &[&str]) -> Vec<u8> {
    request(argv).repeat(BATCH)
}

/// Prints the allocation calls per request of running `requests` (a batch) on `pipeline`.
fn report_allocations(name: &str, pipeline: &mut Pipeline, requests: &[u8]) {
    const BATCHES: u64 = 1_000;
    for _ in 0..BATCHES {
        pipeline.run(requests);
    }
    let window = Window::open();
    for _ in 0..BATCHES {
        black_box(pipeline.run(requests));
    }
    let stats = window.close();
    let per_request = stats.alloc_calls as f64 / (BATCHES * BATCH as u64) as f64;
    println!("server_path/{name}: {per_request:.2} allocation calls per request");
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("server_path");
    group
        .throughput(Throughput::Elements(BATCH as u64))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let Ok(mut pipeline) = Pipeline::new() else {
        panic!("cannot start the in-process server");
    };
    let xadds = batch(&["XADD", "s", "*", "f1", "v1", "f2", "v2"]);
    let pings = batch(&["PING"]);
    let xlens = batch(&["XLEN", "s"]);
    let sets = batch(&["SET", "k", "v"]);
    let gets = batch(&["GET", "k"]);
    report_allocations("xadd_p16", &mut pipeline, &xadds);
    report_allocations("ping_p16", &mut pipeline, &pings);
    report_allocations("xlen_p16", &mut pipeline, &xlens);
    report_allocations("set_p16", &mut pipeline, &sets);
    report_allocations("get_p16", &mut pipeline, &gets);
    let reset = request(&["DEL", "s"]);
    let mut added = 0;
    group.bench_function("xadd_p16", |b| {
        b.iter(|| {
            added += BATCH;
            if added >= STREAM_LEN_MAX {
                added = 0;
                pipeline.run(&reset);
            }
            black_box(pipeline.run(&xadds))
        })
    });
    group.bench_function("ping_p16", |b| b.iter(|| black_box(pipeline.run(&pings))));
    group.bench_function("xlen_p16", |b| b.iter(|| black_box(pipeline.run(&xlens))));
    group.bench_function("set_p16", |b| b.iter(|| black_box(pipeline.run(&sets))));
    group.bench_function("get_p16", |b| b.iter(|| black_box(pipeline.run(&gets))));
    group.finish();
    c.final_summary();
}
