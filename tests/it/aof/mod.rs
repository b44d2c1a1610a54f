//! The append-only file end to end, through `echomq serve` child processes: restarts load
//! what was acknowledged (across rewrites), a cut tail is cut and a corrupt file refused,
//! an unwritable directory fails as Redis fails; `interchange` loads echomq's AOF into Redis
//! 8.8 and Redis 8.8's into echomq; `crash` SIGKILLs a writing server at random points.

mod crash;
mod forms;
pub(crate) mod interchange;
mod restart;
mod scripts;

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::process::{Running, echomq, serve};

/// A connection to a server, commands as words.
pub(crate) struct Conn(redis::Connection);

impl Conn {
    /// Connects, retrying while the server starts or loads (`-LOADING`).
    pub(crate) fn open(addr: SocketAddr) -> Conn {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            // DBSIZE rather than PING: Redis answers PING while it still loads its files and
            // refuses the commands after it with LOADING.
            let tried = redis::Client::open(format!("redis://{addr}/"))
                .and_then(|c| c.get_connection())
                .and_then(|mut c| redis::cmd("DBSIZE").query::<i64>(&mut c).map(|_| c));
            match tried {
                Ok(c) => return Conn(c),
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => panic!("cannot reach {addr}: {e}"),
            }
        }
    }

    /// Runs a command; its reply.
    pub(crate) fn run(&mut self, args: &[&str]) -> redis::RedisResult<redis::Value> {
        let mut cmd = redis::cmd(args[0]);
        for arg in &args[1..] {
            cmd.arg(*arg);
        }
        cmd.query(&mut self.0)
    }

    /// The connection, for commands with binary arguments.
    pub(crate) fn raw(&mut self) -> &mut redis::Connection {
        &mut self.0
    }

    /// Runs a command that must succeed; its reply as text.
    pub(crate) fn ok(&mut self, args: &[&str]) -> String {
        match self.run(args) {
            Ok(v) => text(&v),
            Err(e) => panic!("{args:?}: {e}"),
        }
    }

    /// One INFO field.
    pub(crate) fn info_field(&mut self, field: &str) -> String {
        let info: String = redis::cmd("INFO")
            .arg("persistence")
            .query(&mut self.0)
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// Waits for a rewrite to finish.
    pub(crate) fn wait_rewrite(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.info_field("aof_rewrite_in_progress") != "0" {
            assert!(Instant::now() < deadline, "rewrite did not finish");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What a load must reproduce of stream `key` and its groups: XRANGE, XINFO STREAM FULL
    /// (consumers' seen and active times, which a load resets, masked) and XPENDING per group.
    pub(crate) fn stream_state(&mut self, key: &str) -> String {
        let mut out = self.ok(&["XRANGE", key, "-", "+"]);
        out.push('\n');
        let full = self.run(&["XINFO", "STREAM", key, "FULL"]).unwrap();
        out.push_str(&text(&mask(&full)));
        if let redis::Value::Array(groups) = self.run(&["XINFO", "GROUPS", key]).unwrap() {
            for group in groups {
                let t = text(&group);
                let name = t.split(',').nth(1).unwrap_or_default().trim().to_string();
                out.push('\n');
                let pending = self
                    .run(&["XPENDING", key, &name, "-", "+", "1000"])
                    .unwrap();
                out.push_str(&format!("{name}: {}", text(&mask_idle(&pending))));
            }
        }
        out
    }
}

/// A reply as compact text.
pub(crate) fn text(v: &redis::Value) -> String {
    match v {
        redis::Value::Nil => "nil".into(),
        redis::Value::Int(n) => n.to_string(),
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        redis::Value::Okay => "OK".into(),
        redis::Value::Array(items) | redis::Value::Set(items) => {
            format!(
                "[{}]",
                items.iter().map(text).collect::<Vec<_>>().join(", ")
            )
        }
        redis::Value::Map(pairs) => format!(
            "{{{}}}",
            pairs
                .iter()
                .map(|(k, v)| format!("{}: {}", text(k), text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => format!("{other:?}"),
    }
}

/// Masks the values a load does not keep: consumers' seen and active times.
fn mask(v: &redis::Value) -> redis::Value {
    match v {
        redis::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            let mut hide = false;
            let mut skip = false;
            for item in items {
                if hide {
                    out.push(redis::Value::SimpleString("*".into()));
                    hide = false;
                    continue;
                }
                // Redis 8.8's XNACK figure, which echomq may not report: left out.
                if matches!(item, redis::Value::BulkString(b) if b == b"nacked-count") {
                    skip = true;
                    continue;
                }
                if skip {
                    skip = false;
                    continue;
                }
                hide = matches!(item, redis::Value::BulkString(b) if b == b"seen-time" || b == b"active-time");
                out.push(mask(item));
            }
            redis::Value::Array(out)
        }
        other => other.clone(),
    }
}

/// XPENDING's idle times change with the clock: masked.
fn mask_idle(v: &redis::Value) -> redis::Value {
    match v {
        redis::Value::Array(rows) => redis::Value::Array(
            rows.iter()
                .map(|row| match row {
                    redis::Value::Array(f) if f.len() == 4 => redis::Value::Array(vec![
                        f[0].clone(),
                        f[1].clone(),
                        redis::Value::SimpleString("*".into()),
                        f[3].clone(),
                    ]),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `echomq serve --appendonly yes --dir DIR <args>`.
pub(crate) fn serve_aof(dir: &Path, args: &[&str]) -> (Running, SocketAddr) {
    let dir = dir.to_str().unwrap();
    let mut all = vec!["--appendonly", "yes", "--dir", dir];
    all.extend_from_slice(args);
    serve(echomq(), &all)
}

/// Runs `echomq serve` expecting it to refuse to start: its exit and its log.
pub(crate) fn serve_fails(dir: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_echomq"))
        .args(crate::support::process::SERVE_ARGS)
        .args(["--appendonly", "yes", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), log)
}

/// A free port on loopback (bound and released).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether something listens at `addr`.
#[allow(dead_code)]
pub(crate) fn listening(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok()
}

/// The workload both interchange directions and the restart test run: entries, an
/// approximate and an exact trim, deletions, a group read, claims and acks, consumers, and
/// a second database.
pub(crate) fn workload(c: &mut Conn) {
    for n in 1..=40 {
        let id = format!("{n}-1");
        let field = format!("v{n}");
        if n % 7 == 0 {
            c.ok(&["XADD", "s", "MAXLEN", "~", "30", &id, "f", &field]);
        } else {
            c.ok(&["XADD", "s", &id, "f", &field, "g", "x"]);
        }
    }
    c.ok(&["XDEL", "s", "35-1", "36-1"]);
    // Trimmed before the groups read: a rewrite carries a pending entry as an XCLAIM, which
    // drops it when the entry is gone (in Redis 8.8 as here), so a PEL entry whose stream
    // entry was trimmed does not survive a rewrite in either server.
    c.ok(&["XTRIM", "s", "MAXLEN", "25"]);
    c.ok(&["XGROUP", "CREATE", "s", "g1", "0"]);
    c.ok(&["XGROUP", "CREATE", "s", "g2", "$"]);
    c.ok(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "5",
        "STREAMS",
        "s",
        ">",
    ]);
    c.ok(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "3",
        "NOACK",
        "STREAMS",
        "s",
        ">",
    ]);
    c.ok(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "carol",
        "COUNT",
        "4",
        "STREAMS",
        "s",
        ">",
    ]);
    c.ok(&["XACK", "s", "g1", "15-1"]);
    c.ok(&["XCLAIM", "s", "g1", "bob", "0", "14-1", "16-1"]);
    c.ok(&["XAUTOCLAIM", "s", "g1", "dave", "0", "0", "COUNT", "1"]);
    c.ok(&["XGROUP", "CREATECONSUMER", "s", "g2", "erin"]);
    c.ok(&["XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "s", "0"]);
    c.ok(&["XDEL", "s", "40-1"]);
    c.ok(&["XADD", "e", "MAXLEN", "0", "5-5", "a", "b"]);
    c.ok(&[
        "XSETID",
        "e",
        "9-9",
        "ENTRIESADDED",
        "12",
        "MAXDELETEDID",
        "7-0",
    ]);
    c.ok(&["SELECT", "3"]);
    c.ok(&["XADD", "s3", "1-1", "a", "b"]);
    c.ok(&["SET", "str", "v"]);
    c.ok(&["SELECT", "0"]);
}

/// The state the workload's keys must have after a load.
pub(crate) fn workload_state(c: &mut Conn) -> String {
    let mut out = c.stream_state("s");
    out.push_str(&c.stream_state("e"));
    c.ok(&["SELECT", "3"]);
    out.push_str(&c.stream_state("s3"));
    out.push_str(&c.ok(&["GET", "str"]));
    c.ok(&["SELECT", "0"]);
    out
}
