//! One background child at a time, as Redis 8.8: BGSAVE and BGREWRITEAOF while the other's
//! child runs (or inside EXEC) are refused or scheduled with Redis's texts, a scheduled one
//! starts once the running child ended, a save point due meanwhile waits too (and so does
//! the AOF turned on), and never are both children running. The same script runs on echomq
//! and Redis 8.8, both made slow by `rdb-key-save-delay` (a pause after each key a child
//! writes), and their transcripts must be equal.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::{serve_rdb, start_redis};
use crate::aof::interchange::redis8;
use crate::aof::{Conn, text};

/// Keys written, and the pause after each (µs): each child runs about a second and a half.
const KEYS: usize = 60;
const DELAY_US: &str = "25000";

/// A reply as text, an error as `-` and its text.
fn reply(c: &mut Conn, args: &[&str]) -> String {
    match c.run(args) {
        Ok(v) => text(&v),
        Err(e) => format!(
            "-{} {}",
            e.code().unwrap_or_default(),
            e.detail().unwrap_or_default()
        ),
    }
}

/// `rdb_bgsave_in_progress`, `aof_rewrite_in_progress`, `aof_rewrite_scheduled`, from one
/// INFO; never both children at once.
fn children(c: &mut Conn) -> (bool, bool, bool) {
    let info = c.ok(&["INFO", "persistence"]);
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .is_some_and(|v| v.trim() == "1")
    };
    let state = (
        field("rdb_bgsave_in_progress"),
        field("aof_rewrite_in_progress"),
        field("aof_rewrite_scheduled"),
    );
    assert!(!(state.0 && state.1), "two children at once");
    state
}

/// Polls until `want` holds of [`children`]'s state.
fn wait_for(c: &mut Conn, what: &str, want: impl Fn((bool, bool, bool)) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !want(children(c)) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The script; its transcript.
fn script(addr: SocketAddr) -> Vec<String> {
    let mut c = Conn::open(addr);
    let mut out = Vec::new();
    for i in 0..KEYS {
        c.ok(&["SET", &format!("k{i}"), "v"]);
    }
    c.ok(&["CONFIG", "SET", "rdb-key-save-delay", DELAY_US]);

    // A BGSAVE runs: another is refused, even with SCHEDULE; a rewrite waits for it.
    for args in [
        &["BGSAVE"][..],
        &["BGSAVE"],
        &["BGSAVE", "SCHEDULE"],
        &["BGREWRITEAOF"],
        &["BGREWRITEAOF"],
    ] {
        out.push(reply(&mut c, args));
    }
    out.push(format!("{:?}", children(&mut c)));
    c.ok(&["MULTI"]);
    c.ok(&["BGSAVE"]);
    out.push(reply(&mut c, &["EXEC"]));
    wait_for(&mut c, "the scheduled rewrite", |(_, aof, _)| aof);
    out.push(format!("{:?}", children(&mut c)));

    // A rewrite runs: BGSAVE is refused, or scheduled with SCHEDULE.
    for args in [
        &["BGREWRITEAOF"][..],
        &["BGSAVE"],
        &["BGSAVE", "SCHEDULE"],
        &["BGSAVE", "SCHEDULE"],
    ] {
        out.push(reply(&mut c, args));
    }
    wait_for(&mut c, "the scheduled BGSAVE", |(rdb, _, _)| rdb);
    wait_for(&mut c, "its end", |(rdb, _, _)| !rdb);
    out.push(format!("{:?}", children(&mut c)));

    // Inside EXEC both are scheduled; the rewrite starts first, then the save.
    c.ok(&["MULTI"]);
    c.ok(&["BGREWRITEAOF"]);
    c.ok(&["BGSAVE"]);
    out.push(reply(&mut c, &["EXEC"]));
    wait_for(&mut c, "the rewrite from EXEC", |(_, aof, _)| aof);
    wait_for(&mut c, "the BGSAVE from EXEC", |(rdb, _, _)| rdb);
    wait_for(&mut c, "its end", |(rdb, _, _)| !rdb);

    // A save point due while a rewrite runs waits for it to end.
    c.ok(&["CONFIG", "SET", "save", "1 1"]);
    c.ok(&["SET", "dirty", "1"]);
    out.push(reply(&mut c, &["BGREWRITEAOF"]));
    wait_for(&mut c, "the rewrite's end", |(_, aof, _)| !aof);
    wait_for(&mut c, "the save point's BGSAVE", |(rdb, _, _)| rdb);
    c.ok(&["CONFIG", "SET", "save", ""]);
    wait_for(&mut c, "its end", |(rdb, _, _)| !rdb);

    // The AOF turned on while a BGSAVE runs starts with a rewrite once the save ended.
    out.push(reply(&mut c, &["BGSAVE"]));
    out.push(reply(&mut c, &["CONFIG", "SET", "appendonly", "yes"]));
    out.push(format!("{:?}", children(&mut c)));
    wait_for(&mut c, "the AOF's first rewrite", |(_, aof, _)| aof);
    wait_for(&mut c, "its end", |(_, aof, _)| !aof);
    out.push(c.info_field("aof_enabled"));
    out.push(
        reply(&mut c, &["INFO", "persistence"])
            .lines()
            .filter(|l| {
                l.starts_with("rdb_last_bgsave_status")
                    || l.starts_with("aof_last_bgrewrite_status")
            })
            .collect::<Vec<_>>()
            .join(" "),
    );
    out
}

/// Runs `script` on echomq and, at once, on Redis 8.8 (when present): both transcripts.
fn on_both(script: fn(SocketAddr) -> Vec<String>) -> (Vec<String>, Option<Vec<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_rdb(dir.path(), &["--save", ""]);
    let redis = redis8();
    let redis_dir = tempfile::tempdir().unwrap();
    let peer = redis
        .as_ref()
        .map(|binary| start_redis(binary, redis_dir.path()));
    std::thread::scope(|s| {
        let theirs = peer.as_ref().map(|(_, raddr)| {
            let raddr = *raddr;
            s.spawn(move || script(raddr))
        });
        let ours = script(addr);
        (ours, theirs.map(|t| t.join().unwrap()))
    })
}

#[test]
fn bgsave_and_bgrewriteaof_run_one_child_at_a_time_as_redis8() {
    let (ours, theirs) = on_both(script);
    let expected = [
        "Background saving started",
        "-ERR Background save already in progress",
        "-ERR Background save already in progress",
        "Background append only file rewriting scheduled",
        "Background append only file rewriting scheduled",
        "(true, false, true)",
    ];
    assert_eq!(ours[..6], expected);
    assert!(
        ours[6].contains("Background save already in progress"),
        "{}",
        ours[6]
    );
    assert_eq!(
        ours[7..12],
        [
            "(false, true, false)",
            "-ERR Background append only file rewriting already in progress",
            "-ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.",
            "Background saving scheduled",
            "Background saving scheduled",
        ]
    );
    assert_eq!(
        ours[13],
        "[Background append only file rewriting scheduled, Background saving scheduled]"
    );
    assert_eq!(ours[14], "Background append only file rewriting started");
    assert_eq!(
        ours[15..19],
        [
            "Background saving started",
            "OK",
            "(true, false, true)",
            "1"
        ]
    );
    if let Some(theirs) = theirs {
        assert_eq!(ours, theirs);
    }
}

/// The LFU counters of `k0` and `k1` after the script's steps; its transcript.
fn access_script(addr: SocketAddr) -> Vec<String> {
    let mut c = Conn::open(addr);
    let mut out = Vec::new();
    // No decay: a first read takes a new key's counter from 5 to 6 with probability 1.
    c.ok(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
    c.ok(&["CONFIG", "SET", "lfu-decay-time", "0"]);
    for i in 0..KEYS {
        c.ok(&["SET", &format!("k{i}"), "v"]);
    }
    let freqs = |c: &mut Conn, out: &mut Vec<String>| {
        let k0 = reply(c, &["OBJECT", "FREQ", "k0"]);
        let k1 = reply(c, &["OBJECT", "FREQ", "k1"]);
        out.push(format!("{k0} {k1}"));
    };
    reply(&mut c, &["GET", "k0"]);
    freqs(&mut c, &mut out);
    c.ok(&["CONFIG", "SET", "rdb-key-save-delay", DELAY_US]);
    out.push(reply(&mut c, &["BGSAVE"]));
    // While the child saves, reads and TOUCH leave the counters alone.
    for args in [
        &["GET", "k1"][..],
        &["GET", "k0"],
        &["TOUCH", "k1"],
        &["EXISTS", "k1"],
    ] {
        out.push(reply(&mut c, args));
    }
    out.push(format!("{:?}", children(&mut c)));
    freqs(&mut c, &mut out);
    wait_for(&mut c, "the BGSAVE's end", |(rdb, _, _)| !rdb);
    reply(&mut c, &["GET", "k1"]);
    freqs(&mut c, &mut out);
    out
}

#[test]
fn lookups_leave_access_counters_alone_while_a_child_saves_as_redis8() {
    let (ours, theirs) = on_both(access_script);
    assert_eq!(
        ours,
        [
            "6 5",
            "Background saving started",
            "v",
            "v",
            "1",
            "1",
            "(true, false, false)",
            "6 5",
            "6 6",
        ]
    );
    if let Some(theirs) = theirs {
        assert_eq!(ours, theirs);
    }
}
