//! A full disk, on a small tmpfs of each server's own, compared with Redis 8.8:
//!
//! - SIGTERM whose final save cannot be written keeps the server serving (Redis's log lines),
//!   and once space returns the next SIGTERM saves and exits 0.
//! - An AOF write that fails under `appendfsync everysec`: PING and writes answer Redis's
//!   `-MISCONF` with the system's reason, reads are served, and writes are accepted again
//!   once space returns; the write that hit the full disk is not acknowledged by echomq
//!   (Redis acknowledges it though it is in no file) but is kept and written then.
//! - Under `appendfsync always` both exit with status 1.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::{self, Running, echomq};
use crate::support::tmpfs::Tmpfs;

use super::replies;

/// Each server's tmpfs: room for its files, little more.
const TMPFS_BYTES: u64 = 2 * 1024 * 1024;
/// Longest wait for a server to react to a signal, a full disk or freed space.
const REACT_TIMEOUT: Duration = Duration::from_secs(10);

/// The server under test, echomq's or Redis's, seen the same way.
enum Side {
    Ours {
        running: Running,
        addr: SocketAddr,
        log: std::path::PathBuf,
        _logs: tempfile::TempDir,
    },
    Redis(Peer),
}

impl Side {
    fn ours(dir: &Path, args: &[&str]) -> Side {
        // Not on the tmpfs: the log must not take the room the test fills.
        let logs = tempfile::tempdir().unwrap();
        let log = logs.path().join("echomq.log");
        let mut all = vec!["--dir", dir.to_str().unwrap()];
        all.extend_from_slice(args);
        let (running, addr) =
            process::serve_logging(echomq(), &all, Stdio::from(File::create(&log).unwrap()));
        Side::Ours {
            running,
            addr,
            log,
            _logs: logs,
        }
    }

    fn redis(dir: &Path, args: &[&str]) -> Option<Side> {
        let mut all = vec!["--dir".to_string(), dir.display().to_string()];
        all.extend(args.iter().map(|a| (*a).to_string()));
        let launch = Launch {
            args: all,
            ..Launch::default()
        };
        Peer::start_with(PeerKind::Redis8, &launch).map(Side::Redis)
    }

    fn addr(&self) -> SocketAddr {
        match self {
            Side::Ours { addr, .. } => *addr,
            Side::Redis(peer) => peer.addr(),
        }
    }

    fn log(&self) -> String {
        match self {
            Side::Ours { log, .. } => std::fs::read_to_string(log).unwrap_or_default(),
            Side::Redis(peer) => peer.log_tail(),
        }
    }

    fn sigterm(&self) {
        let pid = match self {
            Side::Ours { running, .. } => running.0.id(),
            Side::Redis(peer) => peer.pid(),
        };
        // kill(1) by pid: the child this test started.
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        match self {
            Side::Ours { running, .. } => {
                let deadline = Instant::now() + timeout;
                loop {
                    if let Some(status) = running.0.try_wait().unwrap() {
                        return Some(status);
                    }
                    if Instant::now() > deadline {
                        return None;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            Side::Redis(peer) => peer.wait_exit(timeout),
        }
    }

    /// Waits until the log holds `line`.
    fn wait_log(&self, line: &str) {
        let deadline = Instant::now() + REACT_TIMEOUT;
        while !self.log().contains(line) {
            assert!(
                Instant::now() < deadline,
                "no {line:?} in the log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Sends `request` on a new connection and returns what comes back within a short while
/// (the connection may close instead of answering).
fn answer_or_close(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    let _ = stream.write_all(request);
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut got = vec![0u8; 1024];
    let n = stream.read(&mut got).unwrap_or(0);
    got.truncate(n);
    got
}

/// Sends `request` until it answers `expected` (polled); panics after [`REACT_TIMEOUT`].
fn until_answers(addr: SocketAddr, request: &[u8], expected: &[u8]) {
    let deadline = Instant::now() + REACT_TIMEOUT;
    loop {
        let got = answer_or_close(addr, request);
        if got == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{:?} answers {:?}, not {:?}",
            request.escape_ascii().to_string(),
            got.escape_ascii().to_string(),
            expected.escape_ascii().to_string()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sigterm_with_a_full_disk(mut side: Side, fs: &Tmpfs) -> Vec<u8> {
    let addr = side.addr();
    replies(addr, b"SET a 1\r\nSET b 2\r\n", 2);
    let ballast = fs.fill();
    side.sigterm();
    side.wait_log("Error trying to save the DB, can't exit.");
    side.wait_log("Errors trying to shut down the server. Check the logs for more information.");
    assert!(
        side.wait_exit(Duration::from_millis(300)).is_none(),
        "it exited"
    );
    let served = replies(addr, b"PING\r\nGET a\r\n", 2);
    std::fs::remove_file(ballast).unwrap();
    side.sigterm();
    let status = side
        .wait_exit(REACT_TIMEOUT)
        .expect("exits once the save works");
    assert!(status.success(), "{status}");
    assert!(fs.path().join("dump.rdb").exists());
    served
}

#[test]
fn sigterm_whose_final_save_fails_keeps_serving_as_redis() {
    let save = ["--save", "3600 1"];
    let Some(ours_fs) = Tmpfs::mount(TMPFS_BYTES) else {
        return;
    };
    let ours = sigterm_with_a_full_disk(Side::ours(ours_fs.path(), &save), &ours_fs);
    assert_eq!(ours, b"+PONG\r\n$1\r\n1\r\n");
    let redis_fs = Tmpfs::mount(TMPFS_BYTES).unwrap();
    if let Some(redis) = Side::redis(redis_fs.path(), &save) {
        let theirs = sigterm_with_a_full_disk(redis, &redis_fs);
        assert_eq!(
            theirs.escape_ascii().to_string(),
            ours.escape_ascii().to_string()
        );
    }
}

const MISCONF: &[u8] = b"-MISCONF Errors writing to the AOF file: No space left on device\r\n";

/// Fills the disk under a running AOF, then: what PING, a read and a write answer; then frees
/// it and waits for writes to be accepted again.
fn aof_with_a_full_disk(side: &Side, fs: &Tmpfs) -> Vec<u8> {
    let addr = side.addr();
    // (echomq answers -LOADING while it starts its AOF.)
    until_answers(addr, b"SET keep v\r\n", b"+OK\r\n");
    let ballast = fs.fill();
    let big = format!("SET big {}\r\n", "x".repeat(64 * 1024));
    answer_or_close(addr, big.as_bytes());
    until_answers(addr, b"PING\r\n", MISCONF);
    let got = replies(
        addr,
        b"PING\r\nGET keep\r\nSET other 1\r\nEXISTS keep\r\n",
        4,
    );
    std::fs::remove_file(ballast).unwrap();
    until_answers(addr, b"SET after 1\r\n", b"+OK\r\n");
    assert_eq!(replies(addr, b"STRLEN big\r\n", 1), b":65536\r\n");
    got
}

#[test]
fn aof_disk_full_under_everysec_refuses_writes_and_serves_reads_as_redis() {
    let aof = ["--appendonly", "yes", "--appendfsync", "everysec"];
    let Some(ours_fs) = Tmpfs::mount(TMPFS_BYTES) else {
        return;
    };
    let ours_side = Side::ours(ours_fs.path(), &aof);
    let ours = aof_with_a_full_disk(&ours_side, &ours_fs);
    let expected = [MISCONF, b"$1\r\nv\r\n", MISCONF, b":1\r\n"].concat();
    assert_eq!(
        ours.escape_ascii().to_string(),
        expected.escape_ascii().to_string()
    );
    ours_side.wait_log("AOF write error looks solved, Redis can write again.");
    let redis_fs = Tmpfs::mount(TMPFS_BYTES).unwrap();
    if let Some(redis) = Side::redis(redis_fs.path(), &aof) {
        let theirs = aof_with_a_full_disk(&redis, &redis_fs);
        assert_eq!(
            theirs.escape_ascii().to_string(),
            ours.escape_ascii().to_string()
        );
    }
}

fn always_with_a_full_disk(mut side: Side, fs: &Tmpfs) -> ExitStatus {
    let addr = side.addr();
    // (echomq answers -LOADING while it starts its AOF.)
    until_answers(addr, b"SET keep v\r\n", b"+OK\r\n");
    let _ballast = fs.fill();
    let big = format!("SET big {}\r\n", "x".repeat(64 * 1024));
    answer_or_close(addr, big.as_bytes());
    let status = side.wait_exit(REACT_TIMEOUT).expect("exits");
    side.wait_log(
        "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...",
    );
    status
}

#[test]
fn aof_disk_full_under_always_exits_1_as_redis() {
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let Some(ours_fs) = Tmpfs::mount(TMPFS_BYTES) else {
        return;
    };
    let ours = always_with_a_full_disk(Side::ours(ours_fs.path(), &aof), &ours_fs);
    assert_eq!(ours.code(), Some(1));
    let redis_fs = Tmpfs::mount(TMPFS_BYTES).unwrap();
    if let Some(redis) = Side::redis(redis_fs.path(), &aof) {
        assert_eq!(always_with_a_full_disk(redis, &redis_fs).code(), Some(1));
    }
}
