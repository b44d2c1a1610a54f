//! What a hostile network, a file-descriptor limit and a failing disk do to the server,
//! one module per failure, each compared with Redis 8.8 where Redis defines the
//! reply:
//!
//! - `cross_protocol`: `POST` and `Host:` close the connection (also mid-pipeline, inline or
//!   multibulk) with nothing run or answered, and one warning in the log.
//! - `protected_configs`: `dir` and `dbfilename` refused to clients' CONFIG SET, and DEBUG
//!   refused, unless `enable-protected-configs` / `enable-debug-command` allow the client.
//! - `protected_mode`: without a password, a client not on loopback gets Redis's `-DENIED`.
//! - `descriptors`: `maxclients` lowered to a low `ulimit -n` as Redis does, extra clients
//!   refused with Redis's error, and an accept loop out of descriptors backing off.
//! - `disk_full`: on a small tmpfs, SIGTERM whose final save fails keeps serving; an AOF
//!   write that fails answers `-MISCONF` to writes and PING and serves reads (`everysec`)
//!   until space returns, or exits 1 (`always`).
//! - `output_limits`: `client-output-buffer-limit` drops clients that leave a huge reply
//!   unread, and only them.
//! - `aof_manifest`: a manifest naming a missing file or a path refuses to start, as Redis.
//! - `archive_failure`: a fold fails on a full disk; trims of archived streams answer
//!   `-MISCONF` and change nothing until the archive reopens itself, then fold again.
//! - `watermark`: after a restart with an archive, each archived stream's live last id is its
//!   W (`*` continues above it, an id at or below it gets XADD's "equal or smaller" error).
//! - `smaller`: EXEC before AUTH, XREAD's timeout range, DEBUG SLEEP (enabled), an unknown command's raw
//!   bytes, `tcp-backlog`.

mod aof_manifest;
mod archive_failure;
mod cross_protocol;
mod descriptors;
mod disk_full;
mod output_limits;
mod protected_configs;
mod protected_mode;
mod smaller;
mod watermark;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Longest wait for a server to answer or close.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends `request` on a new connection to `addr` and returns every byte received until the
/// server closes it (a reset counts as a close); panics if it stays open [`CLOSE_TIMEOUT`].
pub fn until_closed(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    // The server may close before reading everything; a failed write is that close.
    let _ = stream.write_all(request);
    read_until_closed(&mut stream)
}

/// Every byte `stream` receives until the server closes it.
pub fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "the server did not close the connection; got {} bytes: {:?}...",
            got.len(),
            got[..got.len().min(200)].escape_ascii().to_string()
        );
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return got,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading until closed: {e}"),
        }
    }
}

/// Sends `request` and reads exactly `replies` RESP lines-or-replies worth of bytes: what a
/// request that leaves the connection open answers. Uses the `server` module's scanner.
pub fn replies(addr: SocketAddr, request: &[u8], replies: usize) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(request).unwrap();
    let deadline = Instant::now() + CLOSE_TIMEOUT;
    let mut got = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let mut at = 0;
        let mut complete = 0;
        while complete < replies {
            match crate::server::reply_len(&got[at..]) {
                Some(len) => {
                    at += len;
                    complete += 1;
                }
                None => break,
            }
        }
        if complete == replies {
            return got;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "no {replies} replies; got {:?}",
            got.escape_ascii().to_string()
        );
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => panic!("closed after {:?}", got.escape_ascii().to_string()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading replies: {e}"),
        }
    }
}

/// Runs `request` (expecting `count` replies) on ours and on Redis 8.8, asserts they agree,
/// and returns ours.
pub fn both(
    ours: SocketAddr,
    redis: Option<&crate::support::peer::Peer>,
    request: &[u8],
    count: usize,
) -> Vec<u8> {
    let got = replies(ours, request, count);
    if let Some(redis) = redis {
        assert_eq!(
            replies(redis.addr(), request, count)
                .escape_ascii()
                .to_string(),
            got.escape_ascii().to_string(),
            "{:?}",
            request.escape_ascii().to_string()
        );
    }
    got
}
