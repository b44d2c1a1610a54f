//! A script's writes reach the AOF as Redis 8.8 writes them (effects replication): the
//! commands the script ran, wrapped in MULTI/EXEC when there are several, a single one bare,
//! none for a script that wrote nothing, the writes made before a script failed, SELECTs
//! inside a script, a script inside MULTI/EXEC joining the transaction, and
//! `redis.set_repl` keeping commands out of the AOF. The same calls
//! against `echomq serve` and Redis 8.8, each with `appendonly yes`, leave the same
//! incremental AOF file; FUNCTION LOAD/DELETE/FLUSH verbatim and a function's writes as a
//! script's, and libraries loaded again from the AOF's commands and from rewritten bases.
//! Skipped where Redis 8.8 is missing.

use std::path::Path;

use super::interchange::redis8;
use super::{Conn, serve_aof};

const CALLS: &[&[&str]] = &[
    &[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1]); redis.call('incr', 'n'); return 1",
        "1",
        "k",
        "v",
    ],
    &["EVAL", "return redis.call('set', 'one', '1')", "0"],
    &["EVAL", "return redis.call('get', 'one')", "0"],
    &[
        "EVAL",
        "redis.call('set', 'e', 'x'); return redis.call('incr', 'e')",
        "0",
    ],
    &[
        "EVAL",
        "redis.call('select', 1); redis.call('set', 'x', '1'); \
         redis.call('select', 0); return redis.call('set', 'y', '2')",
        "0",
    ],
    &[
        "EVAL",
        "redis.call('rpush', 'l', 'a', 'b'); return redis.call('blpop', 'l', 0)",
        "0",
    ],
    &[
        "SCRIPT",
        "LOAD",
        "return redis.call('incrby', KEYS[1], ARGV[1])",
    ],
    &[
        "EVALSHA",
        "7b4a7d6a4a03c5e3a7a7e8b2f8f8a3bb8fa8e0c1",
        "1",
        "n",
        "5",
    ],
    &["MULTI"],
    &[
        "EVAL",
        "redis.call('set', 'm1', '1'); return redis.call('set', 'm2', '2')",
        "0",
    ],
    &["SET", "m3", "3"],
    &["EXEC"],
    &[
        "EVAL",
        "redis.call('del', 'one'); return redis.call('del', 'nokey')",
        "0",
    ],
    &[
        "EVAL",
        "redis.set_repl(redis.REPL_NONE); redis.call('set', 'r1', '1'); \
         redis.set_repl(redis.REPL_ALL); redis.call('set', 'r2', '2'); \
         return redis.call('set', 'r3', '3')",
        "0",
    ],
    &[
        "EVAL",
        "redis.set_repl(redis.REPL_REPLICA); return redis.call('set', 'r4', '4')",
        "0",
    ],
    &[
        "EVAL",
        "redis.set_repl(redis.REPL_AOF); return redis.call('set', 'r5', '5')",
        "0",
    ],
];

/// Runs the calls; returns the incremental AOF's bytes.
fn run_calls(c: &mut Conn, dir: &Path) -> Vec<u8> {
    // EVALSHA of the loaded script by its real digest (the table's is a placeholder).
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return redis.call('incrby', KEYS[1], ARGV[1])")
        .query(c.raw())
        .unwrap();
    for args in CALLS {
        if args[0] == "EVALSHA" {
            let _ = c.run(&["EVALSHA", &sha, args[2], args[3], args[4]]);
        } else {
            let _ = c.run(args);
        }
    }
    super::forms::incremental_aof(dir)
}

#[test]
fn scripts_leave_redis8s_aof_bytes() {
    let Some(redis) = redis8() else { return };
    let ours_dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_aof(ours_dir.path(), &["--appendfsync", "always"]);
    let ours = run_calls(&mut Conn::open(addr), ours_dir.path());

    let theirs_dir = tempfile::tempdir().unwrap();
    let (_redis, addr) = super::forms::redis_with_aof(&redis, theirs_dir.path());
    let theirs = run_calls(&mut Conn::open(addr), theirs_dir.path());
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
    // Effects, not scripts: no EVAL in the file, and the script's commands wrapped.
    let text = String::from_utf8_lossy(&ours);
    assert!(!text.contains("EVAL"), "{text}");
    assert!(
        text.contains("*1\r\n$5\r\nMULTI\r\n$3\r\nSET\r\n$1\r\nk\r\n")
            || text.contains("*1\r\n$5\r\nMULTI\r\n*2\r\n$6\r\nSELECT\r\n"),
        "{text}"
    );
    let lower = text.to_lowercase();
    for form in ["multi", "exec", "incr", "incrby", "rpush", "lpop", "select"] {
        assert!(lower.contains(form), "{form} missing from {text}");
    }
}

/// Function calls: the library's FUNCTION LOAD, DELETE, FLUSH and RESTORE verbatim, a call's
/// writes as a script's.
const FUNCTION_CALLS: &[&[&str]] = &[
    &[
        "FUNCTION",
        "LOAD",
        "#!lua name=lib\nredis.register_function('two', function(keys, args) \
         redis.call('set', keys[1], args[1]); return redis.call('incr', 'n') end)",
    ],
    &["FCALL", "two", "1", "k", "v"],
    &[
        "FUNCTION",
        "LOAD",
        "REPLACE",
        "#!lua name=lib\nredis.register_function('one', function(keys) \
         return redis.call('del', keys[1]) end)",
    ],
    &["FCALL", "one", "1", "k"],
    &["FCALL", "one", "1", "nokey"],
    &["FUNCTION", "DELETE", "nosuch"],
    &["FUNCTION", "DELETE", "lib"],
    &["FUNCTION", "FLUSH"],
];

#[test]
fn functions_leave_redis8s_aof_bytes_and_reload() {
    let Some(redis) = redis8() else { return };
    let run = |c: &mut Conn, dir: &Path| {
        for args in FUNCTION_CALLS {
            let _ = c.run(args);
        }
        super::forms::incremental_aof(dir)
    };
    let ours_dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_aof(ours_dir.path(), &["--appendfsync", "always"]);
    let ours = run(&mut Conn::open(addr), ours_dir.path());
    let theirs_dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = super::forms::redis_with_aof(&redis, theirs_dir.path());
    let theirs = run(&mut Conn::open(raddr), theirs_dir.path());
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );

    // A library loaded again from the AOF's commands, then from a rewritten base (RDB
    // preamble and command base alike).
    let mut c = Conn::open(addr);
    c.ok(&["FUNCTION", "LOAD", FUNCTION_CALLS[0][2]]);
    drop(server);
    for (preamble, n) in [("yes", "2"), ("no", "3")] {
        let (server, addr) = serve_aof(
            ours_dir.path(),
            &[
                "--appendfsync",
                "always",
                "--aof-use-rdb-preamble",
                preamble,
            ],
        );
        let mut c = Conn::open(addr);
        assert_eq!(c.ok(&["FCALL", "two", "1", "k", "v"]), n);
        c.ok(&["BGREWRITEAOF"]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while c.info_field("aof_rewrite_in_progress") != "0" {
            assert!(
                std::time::Instant::now() < deadline,
                "rewrite did not finish"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(server);
    }
    let (_server, addr) = serve_aof(ours_dir.path(), &["--appendfsync", "always"]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["FCALL", "two", "1", "k", "v"]), "4");
}
