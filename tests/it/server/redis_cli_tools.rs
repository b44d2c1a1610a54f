//! redis-cli's tool modes against the server, asserting on what they print: `--stat` (the
//! keys, clients, blocked and requests columns), `--bigkeys` (the biggest stream and string
//! and the per-type summary), `--memkeys` (sizes equal to MEMORY USAGE), `--keystats` (8.x
//! redis-cli), `--latency` (one `min max avg samples` line, as redis-cli prints it when its
//! output is not a terminal) and `monitor` (Redis's line format for commands others run).
//!
//! Each runs with the Debian redis-cli (7.0) and with Redis 8.8's when installed. The modes
//! that run until stopped (`--stat`, `monitor`) run under `stdbuf -oL` (redis-cli does not
//! flush a pipe) and are killed once the lines asserted on arrived.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use echomq::testing::TestServer;

use super::clients::{redis_cli, run};

/// How long a tool may take to print the lines a test waits for.
const LINES_TIMEOUT: Duration = Duration::from_secs(20);

/// The redis-cli programs to run: the system one and Redis 8.8's, those installed.
fn clis() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = redis_cli().into_iter().collect();
    if let Some(dir) = std::env::var_os("ECHOMQ_REDIS8_DIR") {
        let cli = Path::new(&dir).join("redis-cli");
        if cli.is_file() {
            found.push(cli);
        }
    }
    found
}

/// `redis-cli -p PORT args...` run to its end: its standard output.
fn tool(cli: &Path, server: &TestServer, args: &[&str]) -> String {
    let output = run(
        Command::new(cli)
            .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
            .args(args),
        b"",
    );
    assert!(
        output.status.success(),
        "{} {args:?}: {}\n{}",
        cli.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A redis-cli mode that runs until stopped, its output line-buffered; killed on drop.
struct Streaming {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Streaming {
    fn start(cli: &Path, server: &TestServer, args: &[&str]) -> Streaming {
        let mut child = Command::new("stdbuf")
            .arg("-oL")
            .arg(cli)
            .args(["-h", "127.0.0.1", "-p", &server.port().to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning stdbuf {}: {e}", cli.display()));
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Streaming { child, lines }
    }

    /// The next `n` lines.
    fn take(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + LINES_TIMEOUT;
        (0..n)
            .map(|i| {
                let left = deadline.saturating_duration_since(Instant::now());
                self.lines
                    .recv_timeout(left)
                    .unwrap_or_else(|e| panic!("line {} of {n} did not come: {e}", i + 1))
            })
            .collect()
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three keys: two streams (3 and 1 entries) and a 5-byte string.
fn populated() -> TestServer {
    let server = TestServer::start().expect("echomq's test server starts");
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_connection().unwrap();
    for id in ["1-1", "2-1", "3-1"] {
        let _: String = redis::cmd("XADD")
            .arg("big")
            .arg(id)
            .arg("field")
            .arg("a longer value than the other stream's")
            .query(&mut c)
            .unwrap();
    }
    let _: String = redis::cmd("XADD")
        .arg("small")
        .arg("1-1")
        .arg("f")
        .arg("v")
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("word")
        .arg("hello")
        .query(&mut c)
        .unwrap();
    server
}

fn memory_usage(server: &TestServer, key: &str) -> i64 {
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_connection().unwrap();
    redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .query(&mut c)
        .unwrap()
}

#[test]
fn redis_cli_bigkeys_reports_the_biggest_stream_and_string() {
    let server = populated();
    for cli in clis() {
        let out = tool(&cli, &server, &["--bigkeys"]);
        let has = |text: &str| {
            assert!(
                out.contains(text),
                "{}: no {text:?} in:\n{out}",
                cli.display()
            )
        };
        // 7.0 quotes key names twice ('"big"'), 8.x once.
        assert!(
            out.contains("Biggest stream found '\"big\"' has 3 entries")
                || out.contains("Biggest stream found \"big\" has 3 entries"),
            "{}:\n{out}",
            cli.display()
        );
        assert!(
            out.contains("Biggest string found '\"word\"' has 5 bytes")
                || out.contains("Biggest string found \"word\" has 5 bytes"),
            "{}:\n{out}",
            cli.display()
        );
        has("Sampled 3 keys in the keyspace!");
        has("Total key length in bytes is 12 (avg len 4.00)");
        has("2 streams with 4 entries (66.67% of keys, avg size 2.00)");
        has("1 strings with 5 bytes (33.33% of keys, avg size 5.00)");
        assert!(!out.contains("Warning"), "{}:\n{out}", cli.display());
    }
}

#[test]
fn redis_cli_memkeys_reports_memory_usage_of_each_biggest_key() {
    let server = populated();
    let (big, word) = (memory_usage(&server, "big"), memory_usage(&server, "word"));
    let small = memory_usage(&server, "small");
    assert!(
        big > small && small > 0,
        "MEMORY USAGE big {big}, small {small}"
    );
    for cli in clis() {
        let out = tool(&cli, &server, &["--memkeys"]);
        let has = |text: String| {
            assert!(
                out.contains(&text),
                "{}: no {text:?} in:\n{out}",
                cli.display()
            )
        };
        let quoted = |key: &str| {
            if out.contains(&format!("'\"{key}\"'")) {
                format!("'\"{key}\"'")
            } else {
                format!("\"{key}\"")
            }
        };
        has(format!(
            "Biggest stream found {} has {big} bytes",
            quoted("big")
        ));
        has(format!(
            "Biggest string found {} has {word} bytes",
            quoted("word")
        ));
        has(format!(
            "2 streams with {} bytes (66.67% of keys, avg size {:.2})",
            big + small,
            (big + small) as f64 / 2.0
        ));
        has(format!(
            "1 strings with {word} bytes (33.33% of keys, avg size {word}.00)"
        ));
    }
}

#[test]
fn redis_cli_keystats_lists_the_top_keys_by_size() {
    let server = populated();
    let big = memory_usage(&server, "big");
    for cli in clis() {
        let version = tool(&cli, &server, &["--version"]);
        if version.starts_with("redis-cli 7.") {
            continue; // --keystats came with redis-cli 7.4.
        }
        let out = tool(&cli, &server, &["--keystats"]);
        assert!(out.contains("Keys sampled: 3"), "{out}");
        let first = out
            .lines()
            .skip_while(|l| !l.starts_with("--- Top 10 key sizes ---"))
            .nth(1)
            .unwrap_or_default();
        assert!(
            first.contains("stream")
                && first.contains("\"big\"")
                && first.contains(&format!("{big}B")),
            "the top key is not the big stream of {big} bytes: {first:?}\n{out}"
        );
        assert!(out.contains("stream     \"big\" has 3 entries"), "{out}");
        assert!(out.contains("string     \"word\" has 5B"), "{out}");
        assert!(
            out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "stream",
                    "2",
                    "66.67%",
                    &format!("{}B", big + memory_usage(&server, "small")),
                    &format!("{}B", (big + memory_usage(&server, "small")) / 2),
                    "4",
                    "entries",
                    "2.00"
                ]),
            "the per-type line of streams:\n{out}"
        );
    }
}

#[test]
fn redis_cli_stat_shows_keys_clients_and_requests() {
    let server = populated();
    for cli in clis() {
        let stat = Streaming::start(&cli, &server, &["--stat", "-i", "0.05"]);
        let lines = stat.take(4);
        drop(stat);
        assert!(
            lines[0].starts_with("------- data ------ --------------------- load"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("keys       mem      clients blocked requests"),
            "{lines:?}"
        );
        for (row, line) in lines[2..].iter().enumerate() {
            let columns: Vec<&str> = line.split_whitespace().collect();
            // keys, mem, clients, blocked, requests, (+delta), connections
            assert_eq!(columns.len(), 7, "{line:?}");
            assert_eq!(columns[0], "3", "keys: {line:?}");
            assert!(columns[1].ends_with(['B', 'K', 'M', 'G']), "mem: {line:?}");
            assert_eq!(columns[3], "0", "blocked: {line:?}");
            assert!(
                columns[4].parse::<u64>().is_ok_and(|n| n >= 5),
                "requests: {line:?}"
            );
            // The first row has no delta yet; then one INFO ran since the last row.
            let delta = if row == 0 { "(+0)" } else { "(+1)" };
            assert_eq!(columns[5], delta, "{line:?}");
        }
    }
}

#[test]
fn redis_cli_latency_prints_min_max_avg_and_samples() {
    let server = TestServer::start().expect("echomq's test server starts");
    for cli in clis() {
        let out = tool(&cli, &server, &["--latency", "-i", "0.2"]);
        let fields: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "{}: {out:?}", cli.display());
        let (min, max): (u64, u64) = (fields[0].parse().unwrap(), fields[1].parse().unwrap());
        let avg: f64 = fields[2].parse().unwrap();
        let samples: u64 = fields[3].parse().unwrap();
        assert!(samples >= 1 && min <= max, "{out:?}");
        assert!(avg >= min as f64 && avg <= max as f64, "{out:?}");
    }
}

#[test]
fn redis_cli_monitor_shows_what_other_clients_run() {
    let server = TestServer::start().expect("echomq's test server starts");
    let client = redis::Client::open(server.url()).unwrap();
    let mut c = client.get_connection().unwrap();
    for cli in clis() {
        let monitor = Streaming::start(&cli, &server, &["monitor"]);
        assert_eq!(monitor.take(1), ["OK"], "{}", cli.display());
        let _: String = redis::cmd("XADD")
            .arg("s")
            .arg("*")
            .arg("f")
            .arg("a value")
            .query(&mut c)
            .unwrap();
        let _: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
        let lines = monitor.take(2);
        for (line, shown) in lines.iter().zip([
            "] \"XADD\" \"s\" \"*\" \"f\" \"a value\"",
            "] \"GET\" \"k\"",
        ]) {
            // `<unix seconds>.<microseconds> [<db> <addr>] "ARG" ...`
            let (time, rest) = line.split_once(' ').unwrap_or_default();
            let (secs, micros) = time.split_once('.').unwrap_or_default();
            assert!(
                secs.parse::<u64>().is_ok() && micros.len() == 6,
                "{}: {line:?}",
                cli.display()
            );
            assert!(rest.starts_with("[0 127.0.0.1:"), "{line:?}");
            assert!(rest.ends_with(shown), "{line:?}");
        }
    }
}
