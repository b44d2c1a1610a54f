//! Consumer runtime throughput: one
//! `StreamConsumer` reading a pre-filled feed stream end to end (XREADGROUP batches, a no-op
//! handler, one XACK per batch) until every entry is acked.
//!
//! - `consumer/embedded`: on the embedded engine. Target: at least 1,000,000 entries/s.
//! - `consumer/echomq-serve` and `consumer/redis-server`: the same consumer over loopback
//!   against `echomq serve` (this build's binary, release profile) and `redis-server`
//!   (`ECHOMQ_REDIS_SERVER` or `PATH`; skipped with a notice when missing). The medians and
//!   their ratio are printed at the end.
//!
//! Each iteration rewinds the group (XGROUP SETID 0) and starts a fresh consumer, so the
//! fill happens once. Under `cargo test --benches` everything runs once with small sizes.

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use echomq::engine::{Keyspace, ManualClock};
use echomq::feed::backend::{GroupBackend, GroupStart};
use echomq::feed::{
    ConsumerSettings, Delivery, Embedded, Feed, RedisBackend, StreamConsumer, Subscription,
    stream_key,
};

/// 2026-11-30 00:00:00 UTC in ms.
const T: u64 = 1_796_000_000_000;

/// Fills `queue`'s stream `bench` with `n` feed entries.
fn fill<B: echomq::feed::Backend>(feed: &Feed<B>, n: u64) {
    for i in 0..n {
        let ok = feed.append(
            "cm",
            "bench",
            &[("kind", "guess"), ("player", "alex"), ("n", &i.to_string())],
        );
        assert!(ok.is_ok(), "fill: {ok:?}");
    }
}

/// CPU time the consumer's thread has used, from `/proc/self/task/*/schedstat` (Linux), so a
/// figure independent of how loaded the shared machine is can be printed beside the wall-clock
/// one.
fn consumer_cpu() -> Option<Duration> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == "emq-consumer-c" {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            let ns = stat.split_whitespace().next()?.parse().ok()?;
            return Some(Duration::from_nanos(ns));
        }
    }
    None
}

/// Entries per second of the consumer thread's own CPU time, one per run.
static CPU_RATES: std::sync::Mutex<Vec<f64>> = std::sync::Mutex::new(Vec::new());

/// Runs one consumer over the whole stream; returns the time from start to the last ack.
fn consume<B: GroupBackend + 'static>(backend: &B, rewind: &dyn Fn(), n: u64) -> Duration {
    rewind();
    let start = Instant::now();
    let consumer = StreamConsumer::start(
        backend,
        Subscription::new("cm", "bench", "g", "c"),
        ConsumerSettings {
            start: GroupStart::Beginning,
            block_ms: 100,
            ..ConsumerSettings::default()
        },
        |_: Delivery| Ok::<(), Infallible>(()),
    );
    let Ok(consumer) = consumer else {
        panic!("consumer did not start");
    };
    while consumer.metrics().acked < n {
        std::thread::sleep(Duration::from_micros(200));
    }
    let elapsed = start.elapsed();
    if let (Some(cpu), Ok(mut rates)) = (consumer_cpu(), CPU_RATES.lock()) {
        rates.push(n as f64 / cpu.as_secs_f64().max(1e-9));
    }
    assert!(consumer.stop().is_ok());
    elapsed
}

fn embedded(c: &mut Criterion, n: u64) {
    let clock = Arc::new(ManualClock::new(T));
    let keyspace = Arc::new(Keyspace::new(clock.clone()));
    let backend = Embedded::new(keyspace.clone());
    fill(&Feed::with_clock(backend.clone(), clock), n);
    let key = stream_key("cm", "bench");
    assert!(
        backend
            .create_group(&key, "g", GroupStart::Beginning)
            .is_ok()
    );
    let rewind = || {
        assert!(
            keyspace
                .execute(&["XGROUP", "SETID", &key, "g", "0"])
                .is_ok()
        );
    };
    let mut group = c.benchmark_group("consumer");
    group
        .throughput(Throughput::Elements(n))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    if let Ok(mut rates) = CPU_RATES.lock() {
        rates.clear();
    }
    group.bench_function("embedded", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| consume(&backend, &rewind, n)).sum())
    });
    group.finish();
    if let Ok(mut rates) = CPU_RATES.lock() {
        rates.sort_by(f64::total_cmp);
        if let Some(median) = rates.get(rates.len() / 2) {
            println!(
                "consumer/embedded: median {median:.0} entries per second of the consumer \
                 thread's CPU time ({} runs)",
                rates.len()
            );
        }
    }
}

/// A server process, killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn echomq_serve() -> Server {
    let child = Command::new(env!("CARGO_BIN_EXE_echomq"))
        .args([
            "serve",
            "--port",
            "0",
            "--save",
            "",
            "--logfile",
            "/dev/stderr",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        panic!("echomq serve did not start");
    };
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    Server {
        child,
        url: format!("redis://{addr}/"),
    }
}

fn redis_server() -> Option<Server> {
    let binary = std::env::var("ECHOMQ_REDIS_SERVER")
        .ok()
        .filter(|p| std::path::Path::new(p).is_file())
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("redis-server"))
                    .find(|p| p.is_file())
                    .map(|p| p.display().to_string())
            })
        });
    let Some(binary) = binary else {
        eprintln!("SKIPPED consumer/redis-server: redis-server not found");
        return None;
    };
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .ok()?;
    let child = Command::new(binary)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    Some(Server {
        child,
        url: format!("redis://127.0.0.1:{port}/"),
    })
}

fn connect(url: &str) -> RedisBackend {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match RedisBackend::connect(url) {
            Ok(backend) => return backend,
            Err(e) if Instant::now() > deadline => panic!("{url}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn servers(c: &mut Criterion, n: u64) {
    let mut running = vec![("echomq-serve", echomq_serve())];
    running.extend(redis_server().map(|s| ("redis-server", s)));
    let mut group = c.benchmark_group("consumer");
    group
        .throughput(Throughput::Elements(n))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut medians = Vec::new();
    for (name, server) in &running {
        let backend = connect(&server.url);
        fill(&Feed::new(connect(&server.url)), n);
        let key = stream_key("cm", "bench");
        assert!(
            backend
                .create_group(&key, "g", GroupStart::Beginning)
                .is_ok()
        );
        let rewind = || {
            let done = redis::Client::open(server.url.as_str())
                .and_then(|c| c.get_connection())
                .and_then(|mut conn| {
                    redis::cmd("XGROUP")
                        .arg("SETID")
                        .arg(&key)
                        .arg("g")
                        .arg("0")
                        .query::<redis::Value>(&mut conn)
                });
            assert!(done.is_ok(), "SETID: {done:?}");
        };
        let mut rates = Vec::new();
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let took = consume(&backend, &rewind, n);
                        rates.push(n as f64 / took.as_secs_f64());
                        took
                    })
                    .sum()
            })
        });
        rates.sort_by(f64::total_cmp);
        medians.push((*name, rates.get(rates.len() / 2).copied().unwrap_or(0.0)));
    }
    group.finish();
    for (name, rate) in &medians {
        println!("consumer/{name}: median {rate:.0} entries/s end to end");
    }
    if let [(_, ours), (_, redis)] = medians.as_slice() {
        println!(
            "consumer echomq-serve / redis-server: {:.2}x",
            ours / redis.max(1.0)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let mut c = Criterion::default().configure_from_args();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    // A name filter that cannot match the server benchmarks skips starting the servers.
    let takes_value = |a: &str| {
        a.starts_with("--") && !matches!(a, "--bench" | "--test" | "--list" | "--exact" | "--quiet")
    };
    let filter = args
        .iter()
        .enumerate()
        .skip(1)
        .find(|(i, a)| !a.starts_with('-') && !takes_value(&args[i - 1]))
        .map(|(_, a)| a);
    let wants = |name: &str| filter.is_none_or(|f| name.contains(f.as_str()));
    if wants("consumer/embedded") {
        embedded(&mut c, if full { 200_000 } else { 2_000 });
    }
    if wants("consumer/echomq-serve") || wants("consumer/redis-server") {
        servers(&mut c, if full { 50_000 } else { 500 });
    }
    c.final_summary();
}
