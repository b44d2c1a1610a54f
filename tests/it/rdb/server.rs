//! SAVE, BGSAVE, LASTSAVE and INFO's `rdb_*` fields; `dump.rdb` loaded at start (and not when
//! the AOF is on, which wins as in Redis); a failed background save and `-MISCONF`.

use std::time::{Duration, Instant};

use super::serve_rdb;
use crate::aof::{Conn, serve_aof};

#[test]
fn save_and_bgsave_write_a_file_the_next_start_loads() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    let started: u64 = c.ok(&["LASTSAVE"]).parse().unwrap();
    assert_eq!(c.info_field("rdb_saves"), "0");
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    c.ok(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.ok(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]);
    c.ok(&["SET", "k", "v", "PX", "1000000"]);
    assert_ne!(c.info_field("rdb_changes_since_last_save"), "0");
    assert_eq!(c.ok(&["SAVE"]), "OK");
    assert_eq!(c.info_field("rdb_changes_since_last_save"), "0");
    assert_eq!(c.info_field("rdb_saves"), "1");
    assert!(dir.path().join("dump.rdb").exists());
    c.ok(&["XADD", "s", "2-1", "f", "w"]);
    assert_eq!(c.info_field("rdb_changes_since_last_save"), "1");
    assert_eq!(c.ok(&["BGSAVE"]), "Background saving started");
    c.wait_bgsave();
    assert_eq!(c.info_field("rdb_last_bgsave_status"), "ok");
    assert_eq!(c.info_field("rdb_saves"), "2");
    assert_ne!(c.info_field("rdb_last_bgsave_time_sec"), "-1");
    assert_eq!(c.info_field("rdb_changes_since_last_save"), "0");
    let last: u64 = c.ok(&["LASTSAVE"]).parse().unwrap();
    assert!(last >= started);
    let before = c.stream_state("s");
    drop(server);
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.stream_state("s"), before);
    assert_eq!(c.ok(&["GET", "k"]), "v");
    let pttl: i64 = c.ok(&["PTTL", "k"]).parse().unwrap();
    assert!(pttl > 0 && pttl <= 1_000_000, "{pttl}");
    assert_eq!(c.info_field("rdb_last_load_keys_loaded"), "2");
    assert_eq!(c.info_field("loading"), "0");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, vec!["dump.rdb".to_string()], "no temp file left");
}

#[test]
fn a_save_point_saves_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_rdb(dir.path(), &["--save", "1 1"]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["CONFIG", "GET", "save"]), "[save, 1 1]");
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.info_field("rdb_saves") == "0" {
        assert!(Instant::now() < deadline, "no automatic save");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(dir.path().join("dump.rdb").exists());
}

#[test]
fn the_aof_wins_over_dump_rdb_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    c.ok(&["SET", "from", "rdb"]);
    c.ok(&["SAVE"]);
    drop(server);
    let (server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    // A fresh AOF: the RDB file is not read.
    assert_eq!(c.ok(&["EXISTS", "from"]), "0");
    c.ok(&["SET", "from", "aof"]);
    drop(server);
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["GET", "from"]), "rdb");
}

#[test]
fn a_failed_bgsave_refuses_writes_with_misconf() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let (_server, addr) = serve_rdb(&dir, &["--save", "3600 1"]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    std::fs::remove_dir(&dir).unwrap();
    assert_eq!(c.ok(&["BGSAVE"]), "Background saving started");
    c.wait_bgsave();
    assert_eq!(c.info_field("rdb_last_bgsave_status"), "err");
    assert_eq!(c.info_field("rdb_saves_consecutive_failures"), "1");
    let misconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.";
    for argv in [
        &["XADD", "s", "2-1", "f", "v"][..],
        &["PING"],
        &["SET", "a", "b"],
    ] {
        let e = c.run(argv).expect_err("refused");
        assert!(e.to_string().contains(&misconf[8..]), "{argv:?}: {e}");
        assert_eq!(e.code(), Some("MISCONF"));
    }
    assert_eq!(c.ok(&["XLEN", "s"]), "1");
    assert_eq!(c.run(&["SAVE"]).expect_err("no dir").code(), Some("ERR"));
    c.ok(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]);
    c.ok(&["XADD", "s", "2-1", "f", "v"]);
    c.ok(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"]);
    assert!(c.run(&["XADD", "s", "3-1", "f", "v"]).is_err());
    std::fs::create_dir(&dir).unwrap();
    assert_eq!(c.ok(&["SAVE"]), "OK");
    c.ok(&["XADD", "s", "3-1", "f", "v"]);
    assert_eq!(c.info_field("rdb_last_bgsave_status"), "ok");
}

#[test]
fn sigterm_saves_when_save_points_are_configured() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve_rdb(dir.path(), &["--save", "3600 1000"]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    assert!(
        !dir.path().join("dump.rdb").exists(),
        "no save point is due"
    );
    let term = std::process::Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let exit = server.0.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["XRANGE", "s", "-", "+"]), "[[1-1, [f, v]]]");
}
