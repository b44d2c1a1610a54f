//! RDB snapshots end to end, through `echomq serve` child processes and Redis 8.8:
//! `interchange` moves `dump.rdb` files and DUMP payloads both ways (and checks echomq's
//! payloads byte for byte against Redis 8.8's, and its files with `redis-check-rdb`); `server`
//! covers SAVE, BGSAVE, LASTSAVE, INFO, the load at start, `-MISCONF` and RESTORE's errors;
//! `shutdown` the SHUTDOWN command's saves, exits and refusals; `crash` SIGKILLs a saving
//! server and checks `dump.rdb` is never damaged; `snapshot` checks background saves hold the
//! state at their start while writers go on, and a killed save's child.
//! server and checks `dump.rdb` is never damaged; `functions` moves function libraries both
//! ways in files and FUNCTION DUMP payloads.

mod children;
mod collections;
mod crash;
mod functions;
mod interchange;
mod older;
mod server;
mod shutdown;
mod snapshot;
mod zsets;

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::aof::{Conn, free_port};
use crate::support::process::{Running, echomq, serve};

/// How a test shows one key of a value type: its type, encoding and contents.
pub(crate) type Contents = fn(&mut Conn, &str) -> String;

/// Each of `keys`, built the same on echomq (`c`) and Redis 8.8 (`r`), reads the same on both,
/// and each side's DUMP restores on the other to what the first side holds.
pub(crate) fn restore_both_ways(c: &mut Conn, r: &mut Conn, keys: &[&str], contents: Contents) {
    for &key in keys {
        assert_eq!(contents(c, key), contents(r, key), "{key}");
        let theirs = r.dump(key);
        let ours = c.dump(key);
        let copy = format!("{key}-copy");
        assert_eq!(c.restore(&copy, "0", &theirs, &[]), "OK");
        assert_eq!(r.restore(&copy, "0", &ours, &[]), "OK");
        assert_eq!(
            contents(c, &copy),
            contents(r, key),
            "Redis's {key} in echomq"
        );
        assert_eq!(
            contents(r, &copy),
            contents(c, key),
            "echomq's {key} in Redis"
        );
    }
}

/// A `dump.rdb` echomq saved after `build` passes `redis-check-rdb` and loads into Redis 8.8
/// (`redis`) with `keys` reading as they read in echomq.
pub(crate) fn saved_rdb_loads_into_redis8(
    redis: &Path,
    build: fn(&mut Conn),
    keys: &[&str],
    contents: Contents,
) {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    build(&mut c);
    assert_eq!(c.ok(&["SAVE"]), "OK");
    let ours: Vec<String> = keys.iter().map(|k| contents(&mut c, k)).collect();
    drop(server);
    redis_check_rdb(redis, &dir.path().join("dump.rdb"));
    let (_redis, raddr) = start_redis(redis, dir.path());
    let mut r = Conn::open(raddr);
    let theirs: Vec<String> = keys.iter().map(|k| contents(&mut r, k)).collect();
    assert_eq!(theirs, ours);
}

/// `echomq serve --dir DIR <args>` (no AOF: `dump.rdb` is loaded at start if present).
pub(crate) fn serve_rdb(dir: &Path, args: &[&str]) -> (Running, SocketAddr) {
    let mut all = vec!["--dir", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    serve(echomq(), &all)
}

/// Redis 8.8 without an AOF, its `dump.rdb` in `dir` (loaded at start), no save points.
pub(crate) fn start_redis(binary: &Path, dir: &Path) -> (Running, SocketAddr) {
    let port = free_port();
    let child = Command::new(binary)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .args(["--dir", dir.to_str().unwrap(), "--daemonize", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (Running(child), SocketAddr::from(([127, 0, 0, 1], port)))
}

/// `stream_state` without `radix-tree-nodes`, which echomq estimates from its node count
/// (Redis's rax layout depends on its insertion history, so a loaded stream may differ).
pub(crate) fn state(c: &mut Conn, key: &str) -> String {
    let s = c.stream_state(key);
    let Some(at) = s.find("radix-tree-nodes, ") else {
        return s;
    };
    let start = at + "radix-tree-nodes, ".len();
    let end = s[start..].find(',').map_or(s.len(), |e| start + e);
    format!("{}*{}", &s[..start], &s[end..])
}

/// What a load must reproduce of the interchange tests' keys: the AOF tests' workload (`s`,
/// `e`, `s3` and `str` in database 3), the deterministic stream `d` and the IDMP stream `i`.
pub(crate) fn all_state(c: &mut Conn) -> String {
    let mut out = String::new();
    for key in ["s", "e", "d", "i"] {
        out.push_str(&state(c, key));
        out.push('\n');
    }
    c.ok(&["SELECT", "3"]);
    out.push_str(&state(c, "s3"));
    out.push_str(&c.ok(&["GET", "str"]));
    c.ok(&["SELECT", "0"]);
    out
}

impl Conn {
    /// DUMP `key`'s payload.
    pub(crate) fn dump(&mut self, key: &str) -> Vec<u8> {
        redis::cmd("DUMP")
            .arg(key)
            .query(self.raw())
            .unwrap_or_else(|e| panic!("DUMP {key}: {e}"))
    }

    /// RESTORE `key` from `payload` with more arguments; the reply, errors as text.
    pub(crate) fn restore(
        &mut self,
        key: &str,
        ttl: &str,
        payload: &[u8],
        more: &[&str],
    ) -> String {
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(key).arg(ttl).arg(payload);
        for arg in more {
            cmd.arg(*arg);
        }
        match cmd.query::<redis::Value>(self.raw()) {
            Ok(v) => crate::aof::text(&v),
            Err(e) => format!("error: {e}"),
        }
    }

    /// Waits for a background save to finish.
    pub(crate) fn wait_bgsave(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.info_field("rdb_bgsave_in_progress") != "0" {
            assert!(Instant::now() < deadline, "BGSAVE did not finish");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Redis 8.8's `redis-check-rdb` (beside `redis`, its server) over `file`, which it must accept;
/// its report.
pub(super) fn redis_check_rdb(redis: &Path, file: &Path) -> String {
    let checker = redis.with_file_name("redis-check-rdb");
    let out = Command::new(&checker).arg(file).output().unwrap();
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "redis-check-rdb refused {}:\n{log}",
        file.display()
    );
    log
}
