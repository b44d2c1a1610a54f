//! SHUTDOWN as Redis 8.8 answers it: the server saves (with save points, or `SAVE`) and exits
//! with status 0 without replying; `NOSAVE` exits without saving; a failed save keeps it
//! running and answers Redis's error, unless `FORCE`; `ABORT` and illegal combinations are
//! refused.

use std::path::Path;
use std::time::{Duration, Instant};

use super::serve_rdb;
use crate::aof::Conn;
use crate::support::process::Running;

/// Waits (10 s at most) for the server to exit; its exit status.
fn exit_status(server: &mut Running) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SHUTDOWN with `args`: the connection closes with no reply.
fn shut_down(c: &mut Conn, args: &[&str]) {
    let words: Vec<&str> = std::iter::once("SHUTDOWN")
        .chain(args.iter().copied())
        .collect();
    let answer = c.run(&words);
    assert!(
        answer
            .as_ref()
            .is_err_and(|e| e.is_io_error() || e.is_connection_dropped()),
        "SHUTDOWN {args:?} answered {answer:?}"
    );
}

fn dump(dir: &Path) -> std::path::PathBuf {
    dir.join("dump.rdb")
}

#[test]
fn shutdown_saves_with_save_points_and_the_restart_loads_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve_rdb(dir.path(), &["--save", "3600 1"]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    shut_down(&mut c, &[]);
    assert!(exit_status(&mut server).success());
    assert!(dump(dir.path()).exists());
    let (_server, addr) = serve_rdb(dir.path(), &[]);
    assert_eq!(Conn::open(addr).ok(&["XLEN", "s"]), "1");
}

#[test]
fn nosave_exits_without_saving_and_save_saves_without_save_points() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve_rdb(dir.path(), &["--save", "3600 1"]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    shut_down(&mut c, &["NOSAVE", "NOW"]);
    assert!(exit_status(&mut server).success());
    assert!(
        !dump(dir.path()).exists(),
        "NOSAVE (and the stop after it) saved"
    );

    let (mut server, addr) = serve_rdb(dir.path(), &["--save", ""]);
    let mut c = Conn::open(addr);
    c.ok(&["XADD", "s", "1-1", "f", "v"]);
    shut_down(&mut c, &["save"]);
    assert!(exit_status(&mut server).success());
    assert!(dump(dir.path()).exists());
}

#[test]
fn refused_shutdowns_leave_the_server_running() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = serve_rdb(
        dir.path(),
        &["--save", "", "--enable-protected-configs", "yes"],
    );
    let mut c = Conn::open(addr);
    let error = |c: &mut Conn, args: &[&str]| -> String {
        match c.run(args) {
            Err(e) => e.to_string(),
            Ok(v) => panic!("{args:?} answered {v:?}"),
        }
    };
    assert!(error(&mut c, &["SHUTDOWN", "ABORT"]).contains("No shutdown in progress."));
    assert!(error(&mut c, &["SHUTDOWN", "SAVE", "NOSAVE"]).contains("syntax error"));
    assert!(error(&mut c, &["SHUTDOWN", "NOW", "ABORT"]).contains("syntax error"));
    assert!(error(&mut c, &["SHUTDOWN", "SOON"]).contains("syntax error"));
    // Not inside MULTI (Redis's NO_MULTI), and the transaction then fails.
    c.ok(&["MULTI"]);
    assert!(error(&mut c, &["SHUTDOWN"]).contains("Command not allowed inside a transaction"));
    assert!(error(&mut c, &["EXEC"]).contains("Transaction discarded"));
    // A save that cannot be written: Redis's error, and the server goes on.
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    c.ok(&["CONFIG", "SET", "dir", gone.to_str().unwrap()]);
    std::fs::remove_dir(&gone).unwrap();
    assert!(
        error(&mut c, &["SHUTDOWN", "SAVE"]).contains("Errors trying to SHUTDOWN. Check logs.")
    );
    assert_eq!(c.ok(&["PING"]), "PONG");
    assert!(server.0.try_wait().unwrap().is_none());
    // FORCE: it stops anyway.
    shut_down(&mut c, &["SAVE", "FORCE"]);
    assert!(exit_status(&mut server).success());
}
