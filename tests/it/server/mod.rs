//! The server over a real socket: `echomq::testing::TestServer` driven by raw RESP and by real
//! clients.
//!
//! - `acl`: ACL users end to end: a producer and a consumer limited to their commands and
//!   keys, transactions, channels, ACL LOG, GENPASS and `requirepass` as the default user's.
//! - `wire`: the stream commands' reply shapes over raw RESP2/RESP3, compared byte for byte with
//!   what Redis sends (checked against redis-server 7.0.15; where 7.4 differs, 7.4 is the
//!   target).
//! - `connection`: framing (inline, pipelining, partial frames), protocol errors, MULTI/EXEC,
//!   AUTH, SELECT and the limits Redis names, over raw RESP.
//! - `blocking`: XREAD/XREADGROUP BLOCK over the wire, woken by other connections, timed out
//!   by the manual clock, unregistered when the client goes away.
//! - `clock`: `EMQ.CLOCK` moving a manual clock over RESP (`echomq serve --clock manual`, the
//!   test double): `*` ids, TTLs and BLOCK timeouts follow it; refused on the system clock.
//! - `copy`: COPY, MOVE and SWAPDB carry expiry times (the manual clock shows it).
//! - `memory`: `used_memory` and `maxmemory` as Redis accounts them: freed memory makes room
//!   again, pipelines and MULTI/EXEC are checked per command.
//! - `expiry`: key TTLs run out as the manual clock moves: lazy and active expiry, blocked
//!   readers of an expired stream, transactions and WATCH.
//! - `clients`: redis-cli (including `--pipe`), redis-py (RESP2 and RESP3) and redis-rs.
//! - `redis_cli_tools`: redis-cli's `--stat`, `--bigkeys`, `--memkeys`, `--keystats`,
//!   `--latency` and `monitor` modes, asserting on what they print.
//! - `redis_py_harness`: redis-py's own test suite (pytest) against `echomq serve`: pub/sub,
//!   keyspace notifications, MONITOR, streams, expiry and introspection.
//! - `client_command`: CLIENT REPLY, UNBLOCK, NO-EVICT, SETINFO and CLIENT LIST's counters.
//! - `tracking`: client-side caching: CLIENT TRACKING's modes, invalidation pushes and
//!   messages on writes, flushes, expiry and the table's key limit.
//! - `busy_scripts`: scripts past `busy-reply-threshold` (BUSY, SCRIPT/FUNCTION KILL,
//!   UNKILLABLE, SHUTDOWN NOSAVE) against Redis 8.8 with real timing.
//! - `cluster_mode`: cluster mode (`cluster-enabled yes`) driven by redis-rs `ClusterClient`,
//!   redis-py `RedisCluster` and `redis-cli -c`, and compared with a one-node Redis 8.8 cluster.
//! - `served_process`: `echomq serve` as redis-server runs: CONFIG SET `port`, `bind` and
//!   `tls-port` at run time, `dir` as the working directory, log times in local time.
//! - `tls`, `unix_socket`: `echomq serve` with a TLS port (certificates made by `openssl`,
//!   client certificates required, optional, refused) and a unix socket, driven by redis-cli,
//!   redis-py and redis-rs.
//!
//! Everything here is bounded: a reply that does not come within [`REPLY_TIMEOUT`] fails the
//! test, a condition polled for gives up after [`POLL_TIMEOUT`], and "nothing arrives" is
//! checked over [`QUIET_WINDOW`].

mod acl;
mod blocking;
mod blocking_lists;
mod busy_scripts;
mod client_command;
mod client_memory;
mod clients;
mod clock;
mod cluster_mode;
mod config_file;
mod connection;
mod copy;
mod effects;
mod eviction;
mod expiry;
mod hardening;
mod memory;
mod read_caps;
mod redis_cli_tools;
mod redis_py_harness;
mod served_process;
mod tls;
mod tracking;
mod unix_socket;
mod wire;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use echomq::testing::TestServer;

use crate::support::resp::write_command;

/// A reply slower than this is a hung server: fail instead of hanging the run.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a polled condition (a client blocked, unregistered) may take to hold.
pub const POLL_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between polls.
const POLL_INTERVAL: Duration = Duration::from_millis(2);
/// How long a connection must stay silent for "no reply" (a client still blocked).
pub const QUIET_WINDOW: Duration = Duration::from_millis(150);

/// A raw connection: bytes out, whole RESP2/RESP3 replies in, exactly as the server sent them.
#[derive(Debug)]
pub struct Wire {
    stream: TcpStream,
    /// Bytes received and not yet handed out as a reply.
    pending: Vec<u8>,
}

impl Wire {
    /// Connects to `server`.
    pub fn connect(server: &TestServer) -> Wire {
        Wire::connect_to(server.addr())
    }

    /// Connects to any server at `addr`.
    pub fn connect_to(addr: std::net::SocketAddr) -> Wire {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Wire {
            stream,
            pending: Vec::new(),
        }
    }

    /// Connects and switches to RESP3 (the HELLO reply is read and dropped).
    pub fn connect_resp3(server: &TestServer) -> Wire {
        let mut wire = Wire::connect(server);
        let hello = wire.call(b"HELLO 3\r\n");
        assert!(
            hello.starts_with(b"%7\r\n"),
            "HELLO 3 gave {}",
            show(&hello)
        );
        wire
    }

    /// Writes raw bytes.
    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Writes a command as a RESP multibulk.
    pub fn send_command(&mut self, argv: &[&str]) {
        write_command(&mut self.stream, argv).unwrap();
    }

    /// Reads one complete reply (its raw bytes); panics after [`REPLY_TIMEOUT`] or on EOF.
    pub fn read_reply(&mut self) -> Vec<u8> {
        match self.read_reply_within(REPLY_TIMEOUT) {
            Some(reply) => reply,
            None => panic!(
                "no complete reply within {REPLY_TIMEOUT:?}; got so far: {}",
                show(&self.pending)
            ),
        }
    }

    /// One complete reply if it arrives within `timeout`; `None` on timeout. Panics on EOF.
    pub fn read_reply_within(&mut self, timeout: Duration) -> Option<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(len) = reply_len(&self.pending) {
                return Some(self.pending.drain(..len).collect());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match self.fill(left) {
                Ok(0) => panic!(
                    "connection closed before a complete reply; got: {}",
                    show(&self.pending)
                ),
                Ok(_) => {}
                Err(e) if is_timeout(&e) => return None,
                Err(e) => panic!("reading a reply: {e}"),
            }
        }
    }

    /// Sends `request` (any number of commands) and reads one reply.
    pub fn call(&mut self, request: &[u8]) -> Vec<u8> {
        self.send(request);
        self.read_reply()
    }

    /// Sends a command as a multibulk and reads its reply.
    pub fn command(&mut self, argv: &[&str]) -> Vec<u8> {
        self.send_command(argv);
        self.read_reply()
    }

    /// Sends `request` and checks that the replies are exactly `expected`: as many replies as
    /// `expected` holds, read one by one, then compared byte for byte.
    pub fn expect(&mut self, request: &[u8], expected: &[u8]) {
        self.send(request);
        self.expect_replies(request, expected);
    }

    /// Reads as many replies as `expected` holds and compares them with it.
    pub fn expect_replies(&mut self, request: &[u8], expected: &[u8]) {
        let mut got = Vec::new();
        for _ in 0..reply_count(expected) {
            match self.read_reply_within(REPLY_TIMEOUT) {
                Some(reply) => got.extend_from_slice(&reply),
                None => break,
            }
        }
        assert!(
            got == expected,
            "request:  {}\nexpected: {}\nactual:   {}",
            show(request),
            show(expected),
            show(&got)
        );
    }

    /// Checks that nothing arrives for [`QUIET_WINDOW`] (a blocked client stays blocked).
    pub fn expect_silence(&mut self) {
        if let Some(reply) = self.read_reply_within(QUIET_WINDOW) {
            panic!("expected no reply, got {}", show(&reply));
        }
        assert!(
            self.pending.is_empty(),
            "expected no reply, got a partial one: {}",
            show(&self.pending)
        );
    }

    /// Reads until the server closes the connection; returns what came before the close.
    pub fn read_until_closed(&mut self) -> Vec<u8> {
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "the server did not close the connection; got: {}",
                show(&self.pending)
            );
            match self.fill(left) {
                Ok(0) => return std::mem::take(&mut self.pending),
                Ok(_) => {}
                // A reset after the reply is as closed as a FIN.
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return std::mem::take(&mut self.pending);
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => panic!("reading until close: {e}"),
            }
        }
    }

    /// The client side's address (how CLIENT LIST shows this connection).
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.stream.local_addr().unwrap()
    }

    /// Another handle on the socket, for writing from a second thread.
    pub fn try_clone_stream(&self) -> TcpStream {
        self.stream.try_clone().unwrap()
    }

    /// Closes the connection.
    pub fn close(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }

    fn fill(&mut self, timeout: Duration) -> std::io::Result<usize> {
        self.stream
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        let mut buf = [0u8; 64 * 1024];
        let n = self.stream.read(&mut buf)?;
        self.pending.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// The length of the complete reply at the front of `buf`, or `None` while it is incomplete;
/// panics on bytes that are not RESP2/RESP3.
///
/// A scanner, not a parser: comparing bytes needs only where each reply ends, and telling
/// "not all here yet" apart from "malformed" without consuming anything lets a read time out
/// and resume, and fails a malformed reply at once, showing it. (`support::resp` reads values
/// off a stream and cannot do either.)
pub fn reply_len(buf: &[u8]) -> Option<usize> {
    let cr = buf.windows(2).position(|w| w == b"\r\n")?;
    let mut end = cr + 2;
    let number = || -> i64 {
        std::str::from_utf8(&buf[1..cr])
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("bad length in {}", show(&buf[..cr])))
    };
    match buf[0] {
        b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => {}
        b'$' | b'=' | b'!' => {
            if let Ok(len) = usize::try_from(number()) {
                end += len + 2;
                if buf.len() < end {
                    return None;
                }
            }
        }
        kind @ (b'*' | b'~' | b'>' | b'%' | b'|') => {
            let pairs = if matches!(kind, b'%' | b'|') { 2 } else { 1 };
            for _ in 0..number().max(0) * pairs {
                end += reply_len(&buf[end..])?;
            }
        }
        other => panic!(
            "not a RESP type byte {:?} in {}",
            char::from(other),
            show(buf)
        ),
    }
    Some(end)
}

/// How many complete replies `bytes` holds, back to back.
pub fn reply_count(bytes: &[u8]) -> usize {
    let (mut at, mut count) = (0, 0);
    while at < bytes.len() {
        at += reply_len(&bytes[at..])
            .unwrap_or_else(|| panic!("incomplete expected reply: {}", show(&bytes[at..])));
        count += 1;
    }
    count
}

/// Bytes as an escaped string, CRLFs visible.
pub fn show(bytes: &[u8]) -> String {
    format!("\"{}\"", bytes.escape_ascii())
}

/// A RESP multibulk request for `argv`.
pub fn request(argv: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    write_command(&mut out, argv).unwrap();
    out
}

/// The HELLO reply for a client with this id: RESP2 flat array or RESP3 map.
pub fn hello_reply(id: i64, resp3: bool) -> Vec<u8> {
    let head: &[u8] = if resp3 { b"%7\r\n" } else { b"*14\r\n" };
    let proto: &[u8] = if resp3 { b":3\r\n" } else { b":2\r\n" };
    [
        head,
        b"$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n8.8.0\r\n$5\r\nproto\r\n",
        proto,
        format!("$2\r\nid\r\n:{id}\r\n").as_bytes(),
        b"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
    ]
    .concat()
}

/// Polls `condition` every few milliseconds until it holds; panics after [`POLL_TIMEOUT`]
/// with `what`.
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + POLL_TIMEOUT;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {POLL_TIMEOUT:?} waiting until {what}"
        );
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// The value of `field` in an INFO reply read over `wire`.
pub fn info_field(wire: &mut Wire, section: &str, field: &str) -> String {
    let reply = wire.command(&["INFO", section]);
    let text = String::from_utf8_lossy(&reply).into_owned();
    text.split("\r\n")
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}: {text}"))
        .to_string()
}

/// Waits until the server counts exactly `n` blocked clients (polled over `wire`).
pub fn wait_blocked_clients(wire: &mut Wire, n: usize) {
    let want = n.to_string();
    wait_until(&format!("blocked_clients is {n}"), || {
        info_field(wire, "clients", "blocked_clients") == want
    });
}
