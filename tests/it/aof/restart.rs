//! Restarts of `echomq serve --appendonly yes`: everything acknowledged is loaded again, across
//! rewrites; a cut tail is cut (aof-load-truncated) and a corrupt file refused; an unwritable
//! directory fails BGREWRITEAOF and CONFIG SET appendonly yes as Redis does.

use std::fs;

use super::{Conn, serve_aof, serve_fails, workload, workload_state};

#[test]
fn aof_restart_loads_what_was_acknowledged_across_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_aof(dir.path(), &["--appendfsync", "always"]);
    let mut c = Conn::open(addr);
    assert_eq!(c.info_field("aof_enabled"), "1");
    workload(&mut c);
    let before = workload_state(&mut c);
    drop(server); // SIGKILL: no shutdown step.
    let (server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(workload_state(&mut c), before);
    // A rewrite while writes go on, then more writes: all of it loads.
    c.ok(&["BGREWRITEAOF"]);
    c.ok(&["XADD", "s", "100-1", "f", "late"]);
    c.wait_rewrite();
    assert_eq!(c.info_field("aof_last_bgrewrite_status"), "ok");
    c.ok(&["XREADGROUP", "GROUP", "g2", "erin", "STREAMS", "s", ">"]);
    let before = workload_state(&mut c);
    let manifest =
        fs::read_to_string(dir.path().join("appendonlydir/appendonly.aof.manifest")).unwrap();
    assert!(
        manifest.contains("appendonly.aof.2.base.aof seq 2 type b"),
        "{manifest}"
    );
    drop(server);
    let (_server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(workload_state(&mut c), before);
    let dirty: u64 = c.info_field("rdb_changes_since_last_save").parse().unwrap();
    assert!(dirty > 0, "loading counts its changes");
}

#[test]
fn aof_config_set_appendonly_yes_rewrites_then_appends() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let (server, addr) =
        crate::support::process::serve(crate::support::process::echomq(), &["--dir", path]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "a", "b"]);
    assert_eq!(c.info_field("aof_enabled"), "0");
    c.ok(&["CONFIG", "SET", "appendonly", "yes"]);
    c.wait_rewrite();
    assert_eq!(c.info_field("aof_enabled"), "1");
    c.ok(&["XADD", "s", "2-1", "a", "b"]);
    assert_eq!(
        c.ok(&["CONFIG", "GET", "appendfsync"]),
        "[appendfsync, everysec]"
    );
    let refused = c
        .run(&["CONFIG", "SET", "aof-use-rdb-preamble", "yes"])
        .unwrap_err();
    assert!(
        refused.to_string().contains("aof-use-rdb-preamble"),
        "{refused}"
    );
    c.ok(&["CONFIG", "SET", "appendfsync", "always"]);
    c.ok(&["XADD", "s", "3-1", "a", "b"]);
    let before = c.stream_state("s");
    drop(server);
    let (_server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.stream_state("s"), before);
}

#[test]
fn aof_truncated_tail_is_cut_and_corrupt_file_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, addr) = serve_aof(dir.path(), &["--appendfsync", "always"]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "a", "b"]);
    c.ok(&["XADD", "s", "2-1", "a", "b"]);
    drop(server);
    let incr = dir.path().join("appendonlydir/appendonly.aof.1.incr.aof");
    let whole = fs::read(&incr).unwrap();
    // A cut last command: loaded without it, the file cut back.
    fs::write(&incr, &whole[..whole.len() - 5]).unwrap();
    let (server, addr) = serve_aof(dir.path(), &[]);
    let mut c = Conn::open(addr);
    assert_eq!(c.ok(&["XRANGE", "s", "-", "+"]), "[[1-1, [a, b]]]");
    drop(server);
    assert!(fs::read(&incr).unwrap().len() < whole.len() - 5);
    // Bytes that are not a command: the start is refused, with the file and offset.
    let mut bad = fs::read(&incr).unwrap();
    let good_len = bad.len();
    bad.extend_from_slice(b"+garbage\r\n*1\r\n$4\r\nPING\r\n");
    fs::write(&incr, &bad).unwrap();
    let (started, log) = serve_fails(dir.path());
    assert!(!started, "a corrupt AOF must stop the start: {log}");
    assert!(
        log.contains(&format!("Bad file format reading the append only file appendonly.aof.1.incr.aof at offset {good_len}")),
        "{log}"
    );
}

#[test]
fn aof_unwritable_dir_fails_bgrewriteaof_and_config_set_as_redis() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("blocked");
    fs::create_dir(&blocked).unwrap();
    // A file where the AOF directory should be: creating it fails (even as root).
    fs::write(blocked.join("appendonlydir"), b"not a directory").unwrap();
    let path = blocked.to_str().unwrap();
    let (_server, addr) =
        crate::support::process::serve(crate::support::process::echomq(), &["--dir", path]);
    let mut c = Conn::open(addr);
    let e = c
        .run(&["CONFIG", "SET", "appendonly", "yes"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("Unable to turn on AOF. Check server logs."),
        "{e}"
    );
    assert_eq!(c.info_field("aof_enabled"), "0");
    let e = c.run(&["BGREWRITEAOF"]).unwrap_err().to_string();
    assert!(
        e.contains("Can't execute an AOF background rewriting"),
        "{e}"
    );
    assert_eq!(c.info_field("aof_last_bgrewrite_status"), "err");
    c.ok(&["XADD", "s", "1-1", "a", "b"]);
}

#[test]
fn aof_with_an_archive_logs_the_folding_trims_too() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("archive");
    let archive = archive.to_str().unwrap();
    let args = ["--appendfsync", "always", "--archive", archive];
    let (server, addr) = serve_aof(dir.path(), &args);
    let mut c = Conn::open(addr);
    for n in 1..=20 {
        c.ok(&["XADD", "s", "MAXLEN", "5", &format!("{n}-1"), "f", "v"]);
    }
    c.ok(&["XTRIM", "s", "MAXLEN", "3"]);
    c.ok(&["XADD", "s", "MAXLEN", "~", "2", "*", "f", "v"]);
    let before = c.stream_state("s");
    drop(server);
    let (_server, addr) = serve_aof(dir.path(), &args);
    let mut c = Conn::open(addr);
    assert_eq!(c.stream_state("s"), before);
}

#[test]
fn aof_active_expiry_dels_reach_the_file_without_another_write() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, addr) = serve_aof(dir.path(), &["--appendfsync", "always"]);
    let mut c = Conn::open(addr);
    c.ok(&["SET", "gone", "v", "PX", "30"]);
    let incr = dir.path().join("appendonlydir/appendonly.aof.1.incr.aof");
    // No client writes again: the server cron's active expiry deletes the key and its commit
    // writes the DEL within a tick or two (hz 10).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let aof = fs::read(&incr).unwrap();
        if aof
            .windows(b"DEL\r\n$4\r\ngone".len())
            .any(|w| w == b"DEL\r\n$4\r\ngone")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no DEL in the AOF: {}",
            String::from_utf8_lossy(&aof)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
