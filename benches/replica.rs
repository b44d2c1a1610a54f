//! Replication throughput and commit latency against a local moto server (a bench program,
//! not criterion: one run is tens of seconds of I/O against a Python server, and the figures
//! wanted are a rate and latency percentiles).
//!
//! `cargo bench --bench replica` starts `moto_server` (from `ECHOMQ_MOTO_SERVER`, as
//! `scripts/install-peers` sets it) on a free loopback port, or uses `ECHOMQ_S3_ENDPOINT` if
//! set, and measures:
//! 1. drain: 200,000 folded records (1,000 per fold, ~70-byte entries) replicated from
//!    scratch: records/s, segment size, commits;
//! 2. keep-up: folding as fast as the disk allows while the replicator thread runs; the rate
//!    at which records reach the bucket, and how far behind it is when folding stops;
//! 3. latency: 200 rounds of one 1,000-record fold each (segment PUT + commit PUT): median
//!    and p99.

// A bench program: a failed setup step should stop it loudly, not be handled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use echomq_archive::replica::{Replicator, S3Config, S3Store, WriterOptions};
use echomq_archive::{ARCHIVE_BASE, Archive};
use echomq_engine::{Entry, StreamId};

const FOLD_ENTRIES: u64 = 1_000;
const DRAIN_RECORDS: u64 = 200_000;
const KEEP_UP_RECORDS: u64 = 200_000;
const LATENCY_ROUNDS: usize = 200;

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn endpoint() -> (Option<Moto>, String) {
    if let Ok(endpoint) = std::env::var("ECHOMQ_S3_ENDPOINT") {
        return (None, endpoint);
    }
    let binary = std::env::var("ECHOMQ_MOTO_SERVER").unwrap_or_else(|_| "moto_server".into());
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = Command::new(&binary)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {binary} (set ECHOMQ_MOTO_SERVER): {e}"));
    let moto = Moto(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        assert!(Instant::now() < deadline, "moto did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Some(moto), format!("http://127.0.0.1:{port}"))
}

fn store(endpoint: &str, bucket: &str) -> S3Store {
    S3Store::new(S3Config {
        bucket: bucket.into(),
        endpoint: Some(endpoint.into()),
        region: "eu-west-1".into(),
        access_key: "testing".into(),
        secret_key: "testing".into(),
        session_token: None,
        tigris: false,
        request_timeout: Duration::from_secs(60),
    })
    .expect("store")
}

fn fold(archive: &Archive, next_ms: &mut u64, n: u64) {
    let entries: Vec<Entry> = (0..n)
        .map(|i| {
            let ms = *next_ms + i;
            Entry {
                id: StreamId::new(ms, 0),
                fields: vec![
                    (
                        Bytes::from_static(b"id"),
                        Bytes::from(format!("EVT_{ms:013}")),
                    ),
                    (
                        Bytes::from_static(b"kind"),
                        Bytes::from_static(b"guess.scored"),
                    ),
                    (
                        Bytes::from_static(b"room"),
                        Bytes::from_static(b"RMM_01J9ZQ3V5K8W2"),
                    ),
                ],
            }
        })
        .collect();
    *next_ms += n;
    archive
        .fold(b"emq:{cm}:stream:events", &entries)
        .expect("fold");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    // `cargo test --benches` runs bench targets with no arguments but `--bench`-less; only
    // measure under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (_moto, endpoint) = endpoint();
    let dir = tempfile::tempdir().expect("tempdir");
    println!("replication bench against {endpoint}");

    // 1. Drain a backlog.
    let bucket = store(&endpoint, "bench-drain");
    bucket.create_bucket().expect("bucket");
    let archive = Arc::new(Archive::open(dir.path().join("drain.redb")).expect("archive"));
    let mut ms = 1;
    for _ in 0..DRAIN_RECORDS / FOLD_ENTRIES {
        fold(&archive, &mut ms, FOLD_ENTRIES);
    }
    let mut replicator = Replicator::open(
        Arc::clone(&archive),
        bucket.clone(),
        "drain",
        WriterOptions::default(),
    )
    .expect("replicator");
    let start = Instant::now();
    let mut commits = 0;
    let mut segment_bytes = 0;
    let mut segments = 0;
    while let Some(receipt) = replicator.round().expect("round") {
        commits += 1;
        segment_bytes += receipt.segment_bytes;
        segments += receipt.segments;
    }
    let elapsed = start.elapsed();
    println!(
        "drain: {DRAIN_RECORDS} records in {elapsed:.2?} = {:.0} records/s; {commits} commits, {segments} segments, mean segment {:.2} MiB, {:.1} MB/s",
        DRAIN_RECORDS as f64 / elapsed.as_secs_f64(),
        segment_bytes as f64 / segments.max(1) as f64 / (1 << 20) as f64,
        segment_bytes as f64 / elapsed.as_secs_f64() / 1e6,
    );

    // 2. Keep up with folding.
    let bucket = store(&endpoint, "bench-keepup");
    bucket.create_bucket().expect("bucket");
    let archive = Arc::new(Archive::open(dir.path().join("keepup.redb")).expect("archive"));
    let handle = Replicator::open(
        Arc::clone(&archive),
        bucket,
        "keepup",
        WriterOptions::default(),
    )
    .expect("replicator")
    .spawn();
    let mut ms = 1;
    let start = Instant::now();
    for _ in 0..KEEP_UP_RECORDS / FOLD_ENTRIES {
        fold(&archive, &mut ms, FOLD_ENTRIES);
        handle.notify();
    }
    let folded = start.elapsed();
    let last = ARCHIVE_BASE + KEEP_UP_RECORDS - 1;
    let status = handle.wait_for_page(last, Duration::from_secs(600));
    let replicated = start.elapsed();
    let status = {
        assert_eq!(
            status.head.and_then(|h| h.last_page),
            Some(last),
            "{status:?}"
        );
        handle.stop()
    };
    println!(
        "keep-up: folded {KEEP_UP_RECORDS} records in {folded:.2?} ({:.0}/s); all replicated after {replicated:.2?} ({:.0} records/s end to end, {:.2?} behind at the end); {} commits, mean {:.0} records per commit",
        KEEP_UP_RECORDS as f64 / folded.as_secs_f64(),
        KEEP_UP_RECORDS as f64 / replicated.as_secs_f64(),
        replicated - folded,
        status.commits,
        KEEP_UP_RECORDS as f64 / status.commits.max(1) as f64,
    );

    // 3. Per-commit latency, one fold per round.
    let bucket = store(&endpoint, "bench-latency");
    bucket.create_bucket().expect("bucket");
    let archive = Arc::new(Archive::open(dir.path().join("latency.redb")).expect("archive"));
    let mut replicator = Replicator::open(
        Arc::clone(&archive),
        bucket,
        "latency",
        WriterOptions::default(),
    )
    .expect("replicator");
    let mut ms = 1;
    let mut rounds = Vec::with_capacity(LATENCY_ROUNDS);
    let mut size = 0;
    for _ in 0..LATENCY_ROUNDS {
        fold(&archive, &mut ms, FOLD_ENTRIES);
        let start = Instant::now();
        let receipt = replicator.round().expect("round").expect("a commit");
        rounds.push(start.elapsed());
        size = receipt.segment_bytes;
    }
    rounds.sort();
    println!(
        "latency: {LATENCY_ROUNDS} rounds of one {FOLD_ENTRIES}-record fold ({:.1} KiB segment): median {:.2?}, p99 {:.2?}",
        size as f64 / 1024.0,
        percentile(&rounds, 0.5),
        percentile(&rounds, 0.99),
    );
}
