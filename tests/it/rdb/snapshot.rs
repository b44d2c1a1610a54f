//! Background saves write the keyspace as it was when they started, while writers go on: a
//! BGSAVE or BGREWRITEAOF forks, and the child writes from its image of the server's memory.
//! Several connections write every value type while another saves again and again, with a
//! marker written before each save and one right after its reply; each saved file, loaded
//! into a fresh server, holds the marker before and not the one after, and each writer's
//! writes up to one point of its sequence. A killed child leaves the previous `dump.rdb`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::serve_rdb;
use crate::aof::{Conn, serve_aof};

/// Writer connections, and save rounds (BGSAVE and BGREWRITEAOF in turn).
const WRITERS: usize = 3;
const ROUNDS: usize = 6;

/// One step of writer `w`'s sequence: step `n` writes type `n % 6` with the number `n / 6`.
fn step(c: &mut Conn, w: usize, n: usize) {
    let i = (n / 6).to_string();
    let _ = match n % 6 {
        0 => c.ok(&[
            "XADD",
            &format!("s:{w}"),
            &format!("{}-1", n / 6 + 1),
            "i",
            &i,
        ]),
        1 => c.ok(&["SET", &format!("str:{w}:{i}"), &i]),
        2 => c.ok(&["HSET", &format!("h:{w}"), &format!("f{i}"), &i]),
        3 => c.ok(&["ZADD", &format!("z:{w}"), &i, &format!("m{i}")]),
        4 => c.ok(&["LPUSH", &format!("l:{w}"), &i]),
        _ => c.ok(&["SADD", &format!("set:{w}"), &format!("m{i}")]),
    };
}

/// The writes of writer `w` a loaded server holds: checks they are its first `n` steps for
/// some `n`, and returns it.
fn steps_held(c: &mut Conn, w: usize) -> usize {
    let count = |c: &mut Conn, args: &[&str]| -> usize { c.ok(args).parse().unwrap() };
    let counts = [
        count(c, &["XLEN", &format!("s:{w}")]),
        c.ok(&["KEYS", &format!("str:{w}:*")])
            .matches("str:")
            .count(),
        count(c, &["HLEN", &format!("h:{w}")]),
        count(c, &["ZCARD", &format!("z:{w}")]),
        count(c, &["LLEN", &format!("l:{w}")]),
        count(c, &["SCARD", &format!("set:{w}")]),
    ];
    // A prefix of the sequence: each type holds as many numbers as the one before it, or one
    // fewer, and at most one drop along the way.
    let n: usize = counts.iter().sum();
    let expected: Vec<usize> = (0..6).map(|t| (n + 5 - t) / 6).collect();
    assert_eq!(counts.to_vec(), expected, "writer {w}: not a prefix");
    let k = counts[0];
    if k > 0 {
        let last = (k - 1).to_string();
        let tail = c.ok(&["XREVRANGE", &format!("s:{w}"), "+", "-", "COUNT", "1"]);
        assert!(tail.contains(&format!("{k}-1")), "writer {w}: {tail}");
        assert!(tail.contains(&last), "writer {w}: {tail}");
    }
    for (t, &held) in counts.iter().enumerate().skip(1) {
        if held == 0 {
            continue;
        }
        let last = (held - 1).to_string();
        let found = match t {
            1 => c.ok(&["GET", &format!("str:{w}:{last}")]) == last,
            2 => c.ok(&["HGET", &format!("h:{w}"), &format!("f{last}")]) == last,
            3 => c.ok(&["ZSCORE", &format!("z:{w}"), &format!("m{last}")]) == last,
            4 => c.ok(&["LINDEX", &format!("l:{w}"), "0"]) == last,
            _ => c.ok(&["SISMEMBER", &format!("set:{w}"), &format!("m{last}")]) == "1",
        };
        assert!(found, "writer {w}: type {t} lacks {last}");
    }
    n
}

fn wait_field(c: &mut Conn, field: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.info_field(field) != "0" {
        assert!(Instant::now() < deadline, "{field} stayed on");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Copies what a round left to check: `dump.rdb`, or the AOF's base alone (with a manifest
/// naming only it), into `to`.
fn keep(dir: &Path, to: &Path, aof: bool) {
    std::fs::create_dir_all(to).unwrap();
    if !aof {
        std::fs::copy(dir.join("dump.rdb"), to.join("dump.rdb")).unwrap();
        return;
    }
    let aof_dir = dir.join("appendonlydir");
    let manifest = std::fs::read_to_string(aof_dir.join("appendonly.aof.manifest")).unwrap();
    let base = manifest
        .lines()
        .find(|l| l.ends_with("type b"))
        .expect("a base");
    let name = base.split(' ').nth(1).unwrap();
    let kept = to.join("appendonlydir");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::copy(aof_dir.join(name), kept.join(name)).unwrap();
    std::fs::write(kept.join("appendonly.aof.manifest"), format!("{base}\n")).unwrap();
}

#[test]
fn background_saves_under_writes_hold_the_state_at_their_start() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = tempfile::tempdir().unwrap();
    let (server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    wait_field(&mut c, "aof_rewrite_in_progress");
    // Enough data that a save takes a while.
    let mut preload = redis::pipe();
    for n in 0..20_000 {
        preload
            .cmd("XADD")
            .arg("big")
            .arg("*")
            .arg("f")
            .arg("v".repeat(64))
            .ignore();
        preload.cmd("SET").arg(format!("k{n}")).arg(n).ignore();
    }
    preload.query::<()>(c.raw()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut c = Conn::open(addr);
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    step(&mut c, w, n);
                    n += 1;
                }
                n
            })
        })
        .collect();
    // Every writer under way before the first save.
    let deadline = Instant::now() + Duration::from_secs(20);
    while (0..WRITERS).any(|w| c.ok(&["XLEN", &format!("s:{w}")]) == "0") {
        assert!(Instant::now() < deadline, "writers did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    for round in 0..ROUNDS {
        let aof = round % 2 == 1;
        if aof {
            // Both forms of the rewritten base: commands, and an RDB preamble.
            let preamble = if round % 4 == 1 { "no" } else { "yes" };
            c.ok(&["CONFIG", "SET", "aof-use-rdb-preamble", preamble]);
        }
        c.ok(&["SET", &format!("before:{round}"), "1"]);
        if aof {
            c.ok(&["BGREWRITEAOF"]);
        } else {
            c.ok(&["BGSAVE"]);
        }
        c.ok(&["SET", &format!("after:{round}"), "1"]);
        if aof {
            wait_field(&mut c, "aof_rewrite_in_progress");
            assert_eq!(c.info_field("aof_last_bgrewrite_status"), "ok");
        } else {
            wait_field(&mut c, "rdb_bgsave_in_progress");
            assert_eq!(c.info_field("rdb_last_bgsave_status"), "ok");
        }
        keep(dir.path(), &snaps.path().join(round.to_string()), aof);
    }
    stop.store(true, Ordering::Relaxed);
    let written: Vec<usize> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    // The forks are reported (a child is a process of its own) and its copy-on-write size.
    let stats: String = redis::cmd("INFO").arg("stats").query(c.raw()).unwrap();
    let field = |name: &str| -> u64 {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert!(field("latest_fork_usec") > 0);
    assert!(field("total_forks") >= ROUNDS as u64);
    c.info_field("rdb_last_cow_size").parse::<u64>().unwrap();
    c.info_field("aof_last_cow_size").parse::<u64>().unwrap();
    drop(server);

    let mut held_before = [0; WRITERS];
    for round in 0..ROUNDS {
        let at = snaps.path().join(round.to_string());
        let (_server, addr) = if round % 2 == 1 {
            serve_aof(&at, &[])
        } else {
            serve_rdb(&at, &[])
        };
        let mut c = Conn::open(addr);
        for r in 0..ROUNDS {
            let exists = |c: &mut Conn, key: String| c.ok(&["EXISTS", &key]) == "1";
            assert_eq!(exists(&mut c, format!("before:{r}")), r <= round, "{round}");
            assert_eq!(exists(&mut c, format!("after:{r}")), r < round, "{round}");
        }
        assert_eq!(c.ok(&["XLEN", "big"]), "20000");
        for w in 0..WRITERS {
            let held = steps_held(&mut c, w);
            assert!(
                held > 0 && held >= held_before[w] && held <= written[w],
                "{round} {w}"
            );
            held_before[w] = held;
        }
    }
}

/// The pids of `pid`'s children (of any of its threads).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

#[test]
fn a_killed_child_leaves_the_previous_dump_and_flushall_debug_reload_and_shutdown_meet_a_bgsave() {
    let dir = tempfile::tempdir().unwrap();
    let conf = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(conf.path(), "enable-debug-command yes\n").unwrap();
    let (server, addr) = serve_rdb(dir.path(), &["--config", conf.path().to_str().unwrap()]);
    let pid = server.0.id();
    let mut c = Conn::open(addr);
    c.ok(&["SET", "saved", "1"]);
    assert_eq!(c.ok(&["SAVE"]), "OK");
    let saved = std::fs::read(dir.path().join("dump.rdb")).unwrap();
    let mut entries = 0;
    let mut killed = false;
    // A save long enough to catch its child: more data until it is caught.
    for _ in 0..6 {
        let mut load = redis::pipe();
        for _ in 0..20_000 {
            load.cmd("XADD")
                .arg("s")
                .arg("*")
                .arg("f")
                .arg("v".repeat(100))
                .ignore();
        }
        load.query::<()>(c.raw()).unwrap();
        entries += 20_000;
        c.ok(&["BGSAVE"]);
        if let Some(&child) = children(pid).first() {
            let info: String = redis::cmd("INFO")
                .arg("persistence")
                .query(c.raw())
                .unwrap();
            if info.contains("rdb_bgsave_in_progress:1") {
                // The keys at the fork: `saved` and `s`.
                assert!(info.contains("current_save_keys_total:2"), "{info}");
            }
            let _ = std::process::Command::new("kill")
                .args(["-9", &child.to_string()])
                .status();
            wait_field(&mut c, "rdb_bgsave_in_progress");
            if c.info_field("rdb_last_bgsave_status") == "err" {
                killed = true;
                break;
            }
        }
        wait_field(&mut c, "rdb_bgsave_in_progress");
        // It finished first: back to the saved file, and try again with more data.
        std::fs::write(dir.path().join("dump.rdb"), &saved).unwrap();
    }
    assert!(killed, "no child caught with {entries} entries");
    assert_eq!(std::fs::read(dir.path().join("dump.rdb")).unwrap(), saved);
    let temps = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("temp-"))
        .count();
    assert_eq!(temps, 0, "the killed child's temp file is removed");
    assert!(
        c.info_field("rdb_saves_consecutive_failures")
            .parse::<u64>()
            .unwrap()
            >= 1
    );

    // FLUSHALL kills a running child without counting a failure (Redis's killRDBChild).
    c.ok(&["BGSAVE"]);
    c.ok(&["FLUSHALL"]);
    wait_field(&mut c, "rdb_bgsave_in_progress");
    assert!(children(pid).is_empty());

    // SHUTDOWN kills a running child and removes its file before its own save.
    let mut load = redis::pipe();
    for _ in 0..entries {
        load.cmd("XADD")
            .arg("s")
            .arg("*")
            .arg("f")
            .arg("v")
            .ignore();
    }
    load.query::<()>(c.raw()).unwrap();
    // DEBUG RELOAD saves beside a running child, as Redis's does, rather than failing.
    c.ok(&["BGSAVE"]);
    assert_eq!(c.ok(&["DEBUG", "RELOAD"]), "OK");
    assert_eq!(c.ok(&["XLEN", "s"]), entries.to_string());
    wait_field(&mut c, "rdb_bgsave_in_progress");
    c.ok(&["BGSAVE"]);
    let _ = c.run(&["SHUTDOWN", "SAVE"]);
    let mut server = server;
    assert!(server.0.wait().unwrap().success());
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["dump.rdb"]);
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["XLEN", "s"]), entries.to_string());
}
