//! Interchange with Redis 8.8: an AOF directory echomq wrote (incremental commands and a
//! rewritten base) loads into `redis-server --appendonly yes --dir …` with the same XRANGE,
//! XINFO STREAM FULL and XPENDING, and one Redis 8.8 wrote loads into echomq the same way,
//! each with the base written as commands and as RDB (`aof-use-rdb-preamble` no and yes).
//! Skipped (with a note) where Redis 8.8 is not installed.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{Conn, free_port, serve_aof, workload, workload_state};
use crate::support::process::Running;

pub(crate) fn redis8() -> Option<PathBuf> {
    match std::env::var("ECHOMQ_REDIS8_SERVER") {
        Ok(path) if Path::new(&path).exists() => Some(PathBuf::from(path)),
        _ => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires Redis 8.8 (ECHOMQ_REDIS8_SERVER)");
            }
            eprintln!("SKIPPED: Redis 8.8 not found (set ECHOMQ_REDIS8_SERVER)");
            None
        }
    }
}

/// Redis 8.8 with its AOF in `dir`, its base written with `aof-use-rdb-preamble` `preamble`.
fn start_redis(binary: &Path, dir: &Path, preamble: &str) -> (Running, SocketAddr) {
    super::forms::redis_with_aof_and(binary, dir, &["--aof-use-rdb-preamble", preamble])
}

#[test]
fn aof_written_by_echomq_loads_into_redis8() {
    let Some(redis) = redis8() else { return };
    for preamble in ["no", "yes"] {
        echomq_to_redis(&redis, preamble);
    }
}

#[test]
fn aof_written_by_redis8_loads_into_echomq() {
    let Some(redis) = redis8() else { return };
    for preamble in ["no", "yes"] {
        redis_to_echomq(&redis, preamble);
    }
}

/// echomq writes (base as `preamble` says), Redis 8.8 loads.
fn echomq_to_redis(redis: &Path, preamble: &str) {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--appendfsync",
        "always",
        "--aof-use-rdb-preamble",
        preamble,
    ];
    let (server, addr) = serve_aof(dir.path(), &args);
    let mut c = Conn::open(addr);
    workload(&mut c);
    c.ok(&["BGREWRITEAOF"]);
    c.wait_rewrite();
    // After the rewrite: more of everything, into the new incremental file.
    c.ok(&["XADD", "s", "MAXLEN", "~", "10", "50-1", "f", "after"]);
    c.ok(&[
        "XREADGROUP",
        "GROUP",
        "g2",
        "erin",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ]);
    c.ok(&["XCLAIM", "s", "g1", "frank", "0", "17-1", "JUSTID"]);
    let ours = workload_state(&mut c);
    drop(server);
    let (_redis, addr) = start_redis(redis, dir.path(), preamble);
    let mut r = Conn::open(addr);
    assert_eq!(workload_state(&mut r), ours, "preamble {preamble}");
}

/// Redis 8.8 writes (base as `preamble` says), echomq loads.
fn redis_to_echomq(redis: &Path, preamble: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = start_redis(redis, dir.path(), preamble);
    let mut r = Conn::open(addr);
    workload(&mut r);
    r.ok(&["BGREWRITEAOF"]);
    r.wait_rewrite();
    r.ok(&["XADD", "s", "MAXLEN", "~", "10", "50-1", "f", "after"]);
    r.ok(&[
        "XREADGROUP",
        "GROUP",
        "g2",
        "erin",
        "COUNT",
        "2",
        "STREAMS",
        "s",
        ">",
    ]);
    r.ok(&["XCLAIM", "s", "g1", "frank", "0", "17-1", "JUSTID"]);
    let theirs = workload_state(&mut r);
    drop(server);
    let (_server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(workload_state(&mut c), theirs, "preamble {preamble}");
}

/// WAITAOF's replies on a server with its AOF in `dir` under `appendfsync`, after writes.
fn waitaof_replies(addr: SocketAddr) -> Vec<String> {
    let mut c = Conn::open(addr);
    let mut replies = Vec::new();
    for line in [
        "SET k v",
        "WAITAOF 1 0 0",
        "WAITAOF 0 0 0",
        "XADD s 1-1 f v",
        "WAITAOF 1 0 0",
        "WAITAOF 1 1 100",
        "WAITAOF 0 0 -1",
    ] {
        let argv: Vec<&str> = line.split_whitespace().collect();
        let reply = match c.run(&argv) {
            Ok(v) => super::text(&v),
            Err(e) => format!("error: {e}"),
        };
        if argv[0] == "WAITAOF" {
            replies.push(format!("{line} -> {reply}"));
        }
    }
    replies
}

#[test]
fn waitaof_acknowledges_the_local_fsync_like_redis8() {
    let Some(redis) = redis8() else { return };
    for fsync in ["always", "everysec"] {
        let dir = tempfile::tempdir().unwrap();
        let (server, addr) = serve_aof(dir.path(), &["--appendfsync", fsync]);
        let ours = waitaof_replies(addr);
        drop(server);
        let theirs_dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(&redis)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "yes", "--appendfsync", fsync])
            .args([
                "--dir",
                theirs_dir.path().to_str().unwrap(),
                "--daemonize",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let running = Running(child);
        let theirs = waitaof_replies(SocketAddr::from(([127, 0, 0, 1], port)));
        drop(running);
        assert_eq!(ours, theirs, "appendfsync {fsync}: echomq, then redis 8.8");
        // The local fsync is acknowledged, and replicas never are (there are none).
        assert_eq!(ours[0], "WAITAOF 1 0 0 -> [1, 0]", "{ours:?}");
    }
}
