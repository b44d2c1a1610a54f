//! The forms the key, string and list writes propagate are Redis 8.8's, byte for byte (the
//! blocking pops served at once as LPOP, RPOP, LMOVE, RPOPLPUSH): the same
//! script against `echomq serve` and Redis 8.8, each with `appendonly yes`, leaves the same
//! incremental AOF file. The script uses absolute times only (a relative one becomes a
//! clock-dependent PXAT or PEXPIREAT), and covers each rewrite Redis makes: SET's PXAT form
//! (in place, keeping the name as sent, or whole) and its GET stripping, EXPIRE's PEXPIREAT
//! keeping its condition, a time already past as DEL, RESTORE's verbatim forms, and the
//! calls that change nothing and so propagate nothing; then the server's own multi-database
//! writes (COPY, MOVE, SWAPDB, FLUSHDB, FLUSHALL). Skipped where Redis 8.8 is missing.

use std::path::Path;
use std::process::{Command, Stdio};

use super::interchange::redis8;
use super::{Conn, free_port, serve_aof};
use crate::support::process::Running;

/// The script, before the RESTOREs (which need a payload from DUMP).
const SCRIPT: &[&[&str]] = &[
    &["SET", "a", "1"],
    &["SET", "a", "2", "NX"],
    &["SET", "b", "1", "NX"],
    &["SET", "b", "2", "XX", "GET"],
    &["SET", "b", "3", "KEEPTTL"],
    &["SET", "c", "1", "PXAT", "4000000000000"],
    &["SET", "c", "2", "KEEPTTL", "GET"],
    &["set", "d", "1", "exat", "4000000000"],
    &["set", "e", "1", "exat", "4000000000", "NX"],
    &["SET", "f", "1", "PXAT", "4000000000000", "GET"],
    &["SET", "c", "9", "PXAT", "1"],
    &["SET", "zz", "9", "PXAT", "1"],
    &["INCR", "n"],
    &["incr", "n"],
    &["EXPIREAT", "a", "4000000000"],
    &["EXPIREAT", "a", "4000000001", "GT"],
    &["pexpireat", "a", "4000000002000"],
    &["PEXPIREAT", "a", "4000000003000", "NX"],
    &["EXPIRE", "a", "-1"],
    &["EXPIRE", "missing", "10"],
    &["PERSIST", "b"],
    &["PERSIST", "d"],
    &["RENAME", "b", "b"],
    &["RENAME", "b", "b2"],
    &["RENAMENX", "d", "b2"],
    &["DEL", "b2", "nosuch", "b2"],
    &["UNLINK", "e"],
    &["DEL", "nosuch"],
    &["RPUSH", "l", "a", "b", "c", "d", "e", "f"],
    &["LPUSH", "l", "z"],
    &["LPUSHX", "nosuch", "z"],
    &["LPOP", "l"],
    &["RPOP", "l", "2"],
    &["RPOP", "nosuch", "2"],
    &["LSET", "l", "0", "A"],
    &["LINSERT", "l", "BEFORE", "c", "C"],
    &["LINSERT", "l", "BEFORE", "nosuch", "C"],
    &["LREM", "l", "0", "nosuch"],
    &["LREM", "l", "1", "C"],
    &["LTRIM", "l", "0", "-1"],
    &["LTRIM", "l", "0", "1"],
    &["RPUSH", "m", "1", "2", "3"],
    &["LMPOP", "2", "nosuch", "m", "RIGHT", "COUNT", "9"],
    &["RPUSH", "m", "1", "2", "3", "4"],
    &["LMOVE", "m", "l", "LEFT", "RIGHT"],
    &["RPOPLPUSH", "m", "l"],
    &["BLPOP", "nosuch", "m", "0"],
    &["BRPOP", "m", "0"],
    &["RPUSH", "m", "5", "6", "7"],
    &["BLMOVE", "m", "l", "RIGHT", "LEFT", "0"],
    &["BRPOPLPUSH", "m", "l", "0"],
    &["BLMPOP", "0", "1", "m", "LEFT", "COUNT", "3"],
    &["SELECT", "1"],
    &["SET", "x", "1"],
    &["SELECT", "0"],
];

/// The server's own writes (several databases): verbatim when they changed something.
const TAIL: &[&[&str]] = &[
    &["COPY", "n", "n2"],
    &["COPY", "n", "n2"],
    &["COPY", "n", "n3", "DB", "1", "REPLACE"],
    &["MOVE", "n2", "1"],
    &["MOVE", "n2", "1"],
    &["SWAPDB", "0", "1"],
    &["SWAPDB", "1", "1"],
    &["FLUSHDB"],
    &["SELECT", "1"],
    &["FLUSHALL"],
];

/// Runs the script, then RESTOREs of `n`'s DUMP; returns the incremental AOF's bytes.
fn run_script(c: &mut Conn, dir: &Path) -> Vec<u8> {
    for args in SCRIPT {
        let _ = c.run(args);
    }
    let payload: Vec<u8> = redis::cmd("DUMP").arg("n").query(c.raw()).unwrap();
    let restores: &[&[&str]] = &[
        &["r", "0"],
        &["r", "0", "REPLACE"],
        &["r3", "4000000000000", "ABSTTL"],
        &["r", "1", "REPLACE", "ABSTTL"],
        &["r9", "1", "ABSTTL"],
    ];
    for args in restores {
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(args[0]).arg(args[1]).arg(&payload[..]);
        for option in &args[2..] {
            cmd.arg(*option);
        }
        let _: redis::RedisResult<redis::Value> = cmd.query(c.raw());
    }
    // The server's own writes, after the RESTOREs (they move `n`).
    for args in TAIL {
        let _ = c.run(args);
    }
    incremental_aof(dir)
}

/// Redis 8.8 (`redis`) with `appendonly yes` and `appendfsync always` in `dir`, no save points.
pub(super) fn redis_with_aof(redis: &Path, dir: &Path) -> (Running, std::net::SocketAddr) {
    redis_with_aof_and(redis, dir, &[])
}

/// [`redis_with_aof`] with more arguments (`--name value`).
pub(super) fn redis_with_aof_and(
    redis: &Path,
    dir: &Path,
    more: &[&str],
) -> (Running, std::net::SocketAddr) {
    let port = free_port();
    let child = Command::new(redis)
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .args(["--appendonly", "yes", "--appendfsync", "always"])
        .args(more)
        .args(["--dir", dir.to_str().unwrap(), "--daemonize", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (
        Running(child),
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
    )
}

/// The one incremental file under `dir`'s AOF directory.
pub(super) fn incremental_aof(dir: &Path) -> Vec<u8> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir.join("appendonlydir")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".incr.aof") {
            found.push(path);
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    std::fs::read(&found[0]).unwrap()
}

#[test]
fn key_and_string_writes_leave_redis8s_aof_bytes() {
    let Some(redis) = redis8() else { return };
    let ours_dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_aof(ours_dir.path(), &["--appendfsync", "always"]);
    let ours = run_script(&mut Conn::open(addr), ours_dir.path());

    let theirs_dir = tempfile::tempdir().unwrap();
    let (_redis, addr) = redis_with_aof(&redis, theirs_dir.path());
    let theirs = run_script(&mut Conn::open(addr), theirs_dir.path());
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    // The script's every kind of form is there (the file is not, say, empty on both sides).
    let text = String::from_utf8_lossy(&ours);
    for form in [
        "PXAT",
        "PEXPIREAT",
        "KEEPTTL",
        "RESTORE",
        "UNLINK",
        "SELECT",
        "SWAPDB",
        "FLUSHALL",
    ] {
        assert!(text.contains(form), "{form} missing from {text}");
    }
}
