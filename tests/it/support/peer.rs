//! Real Redis-compatible servers ("peers") for differential tests.
//!
//! [`Peer::start`] finds the server binary, starts it on a free loopback port with persistence
//! off, waits until it answers PING (and checks it is our process answering), and kills it when
//! dropped. A missing binary skips the test with a printed notice, except under `CI=true`, where
//! it fails: CI must never pass by skipping the comparison.
//!
//! Binary lookup, first hit wins: the environment variable (`ECHOMQ_REDIS_SERVER`,
//! `ECHOMQ_VALKEY_SERVER`, `ECHOMQ_REDIS8_SERVER`, written by `scripts/install-peers` into the env
//! file `scripts/test` sources), then `PATH`, then `${ECHOMQ_PEERS:-~/.cache/echomq/peers}/bin`.
//! Redis 8.8 is never looked up on `PATH` (that `redis-server` is Debian's 7.0): only the
//! variable or its build under the peers directory (`redis-8.8.0-<checksum>/bin`).

use std::io::{BufReader, Read};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use std::{env, fmt, thread};

use super::resp::{Resp, write_command};

/// How long a server may take to answer its first PING.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause between readiness probes.
const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// Fresh ports to try when the chosen one was taken between probing and binding.
const START_ATTEMPTS_MAX: usize = 5;
/// A reply slower than this means the server hung; fail instead of hanging the test run.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// How a handshake says that the server answering is not the one we started.
const NOT_OURS: &str = "another process answers on this port";
/// Server output kept for error messages (the tail).
const LOG_BYTES_MAX: usize = 16 * 1024;

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// `redis-server` (Debian's 7.0.15 here).
    Redis,
    /// `valkey-server` (8.1, a fork of Redis 7.2.4).
    Valkey,
    /// `redis-server` 8.8.0, built by `scripts/install-peers` from `shared/peers`.
    Redis8,
}

impl PeerKind {
    fn binary(self) -> &'static str {
        match self {
            PeerKind::Redis | PeerKind::Redis8 => "redis-server",
            PeerKind::Valkey => "valkey-server",
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            PeerKind::Redis => "ECHOMQ_REDIS_SERVER",
            PeerKind::Valkey => "ECHOMQ_VALKEY_SERVER",
            PeerKind::Redis8 => "ECHOMQ_REDIS8_SERVER",
        }
    }
}

impl fmt::Display for PeerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PeerKind::Redis => "redis",
            PeerKind::Valkey => "valkey",
            PeerKind::Redis8 => "redis8",
        })
    }
}

/// How to start a peer beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Extra command-line arguments (`--protected-mode`, `--client-output-buffer-limit`, ...).
    pub args: Vec<String>,
    /// Run under `ulimit -n` of this (through `sh`).
    pub nofile: Option<u64>,
}

/// What a test may ask about the running server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerInfo {
    /// The kind.
    pub kind: PeerKind,
    /// The server's own version (`valkey_version` for Valkey, `redis_version` for Redis).
    pub version: (u32, u32, u32),
}

impl PeerInfo {
    /// Redis older than `major.minor`; always false for Valkey.
    pub fn is_redis_before(&self, major: u32, minor: u32) -> bool {
        matches!(self.kind, PeerKind::Redis | PeerKind::Redis8) && self.version < (major, minor, 0)
    }
}

impl fmt::Display for PeerInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b, c) = self.version;
        write!(f, "{} {a}.{b}.{c}", self.kind)
    }
}

/// A running server and one connection to it.
#[derive(Debug)]
pub struct Peer {
    info: PeerInfo,
    /// Where it listens (for more connections).
    addr: SocketAddr,
    child: Child,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// The tail of the server's stdout and stderr (a crash report lands here).
    log: Arc<Mutex<Vec<u8>>>,
}

impl Peer {
    /// Starts a server of `kind`, or returns `None` (after printing why) if its binary is not
    /// installed. Under `CI=true` a missing binary panics instead.
    pub fn start(kind: PeerKind) -> Option<Peer> {
        Peer::start_with(kind, &Launch::default())
    }

    /// [`Peer::start`] with extra arguments, and optionally under a shell `ulimit -n`.
    pub fn start_with(kind: PeerKind, launch: &Launch) -> Option<Peer> {
        let Some(binary) = find_binary(kind) else {
            let why = format!(
                "{} not found (set {} or run scripts/install-peers)",
                kind.binary(),
                kind.env_var()
            );
            if env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires the {kind} peer: {why}");
            }
            eprintln!("SKIPPED: {why}");
            return None;
        };
        let mut failures = Vec::new();
        for _ in 0..START_ATTEMPTS_MAX {
            match Peer::try_start(kind, &binary, launch) {
                Ok(peer) => return Some(peer),
                Err(Start::PortTaken(why)) => failures.push(why),
                Err(Start::Failed(why)) => panic!("starting {}: {why}", binary.display()),
            }
        }
        panic!(
            "starting {}: no free port after {START_ATTEMPTS_MAX} attempts: {failures:?}",
            binary.display()
        );
    }

    fn try_start(kind: PeerKind, binary: &Path, launch: &Launch) -> Result<Peer, Start> {
        let port = free_port().map_err(|e| Start::Failed(format!("probing a free port: {e}")))?;
        let mut command = match launch.nofile {
            None => Command::new(binary),
            Some(n) => {
                let mut shell = Command::new("sh");
                shell
                    .args(["-c", &format!("ulimit -n {n} && exec \"$0\" \"$@\"")])
                    .arg(binary);
                shell
            }
        };
        let mut child = command
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .args(&launch.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Start::Failed(format!("spawn: {e}")))?;
        let log = drain_output(&mut child);
        let classify = |why: String| {
            let log = String::from_utf8_lossy(&log.lock().unwrap_or_else(|e| e.into_inner()))
                .into_owned();
            if log.contains("Address already in use") || why.contains(NOT_OURS) {
                Start::PortTaken(format!("port {port}: {why}"))
            } else {
                Start::Failed(format!("port {port}: {why}; server output:\n{log}"))
            }
        };
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let deadline = Instant::now() + START_TIMEOUT;
        let stream = loop {
            if let Ok(Some(status)) = child.try_wait() {
                // Give the drain threads a moment to collect the last words.
                thread::sleep(POLL_INTERVAL * 4);
                return Err(classify(format!("exited early with {status}")));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(classify(format!("not listening within {START_TIMEOUT:?}")));
            }
            match TcpStream::connect_timeout(&addr, POLL_INTERVAL * 20) {
                Ok(stream) => break stream,
                Err(_) => thread::sleep(POLL_INTERVAL),
            }
        };
        let configured = stream
            .set_nodelay(true)
            .and_then(|()| stream.set_read_timeout(Some(REPLY_TIMEOUT)))
            .and_then(|()| stream.try_clone());
        let writer = match configured {
            Ok(writer) => writer,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Start::Failed(format!("configuring the socket: {e}")));
            }
        };
        let mut peer = Peer {
            info: PeerInfo {
                kind,
                version: (0, 0, 0),
            },
            addr,
            child,
            reader: BufReader::new(stream),
            writer,
            log: Arc::clone(&log),
        };
        match peer.handshake() {
            Ok(()) => Ok(peer),
            Err(why) => {
                drop(peer); // kills the child
                Err(classify(why))
            }
        }
    }

    /// PING until PONG (a freshly bound server may still be loading), then make sure the
    /// server answering is the child we started, and read its version.
    fn handshake(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.try_call(&["PING"]) {
                Ok((Resp::Simple(pong), _)) if pong == "PONG" => break,
                Ok((reply, _)) if Instant::now() > deadline => {
                    return Err(format!("PING answered {reply}"));
                }
                Ok(_) => thread::sleep(POLL_INTERVAL),
                Err(e) => return Err(format!("PING: {e}")),
            }
        }
        let info = match self.try_call(&["INFO", "server"]) {
            Ok((Resp::Bulk(text), _)) => String::from_utf8_lossy(&text).into_owned(),
            Ok((other, _)) => return Err(format!("INFO server answered {other}")),
            Err(e) => return Err(format!("INFO server: {e}")),
        };
        let field = |name: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let pid = field("process_id").and_then(|p| p.parse::<u32>().ok());
        if pid != Some(self.child.id()) {
            return Err(format!(
                "{NOT_OURS} (process_id {pid:?}, ours {})",
                self.child.id()
            ));
        }
        let version = match self.info.kind {
            PeerKind::Valkey => field("valkey_version").or_else(|| field("redis_version")),
            PeerKind::Redis | PeerKind::Redis8 => field("redis_version"),
        }
        .ok_or("INFO server has no version")?;
        let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        self.info.version = (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        );
        Ok(())
    }

    /// Kind and version.
    pub fn info(&self) -> PeerInfo {
        self.info
    }

    /// The address it listens on, for connections of a test's own.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The server's process id (for a test that signals it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (up to `timeout`) for the server to exit; its exit status, `None` if it runs on.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    /// The last lines the server printed (its crash report, if it crashed).
    pub fn log_tail(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// Sends one command and reads its reply, with the reply's raw bytes. I/O errors are
    /// returned (a server that closed the connection is a failed test, not a skipped one).
    pub fn try_call<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> std::io::Result<(Resp, Vec<u8>)> {
        write_command(&mut self.writer, argv)?;
        let mut raw = Vec::new();
        let reply = Resp::read(&mut self.reader, &mut raw)?;
        Ok((reply, raw))
    }

    /// Sends one command and returns its reply; panics on an I/O error.
    pub fn call<A: AsRef<[u8]>>(&mut self, argv: &[A]) -> Resp {
        match self.try_call(argv) {
            Ok((reply, _)) => reply,
            Err(e) => panic!(
                "{}: I/O error on {}: {e}",
                self.info,
                super::resp::show_argv(argv)
            ),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why one start attempt failed.
enum Start {
    /// Someone else has the port: try another.
    PortTaken(String),
    /// Anything else: give up.
    Failed(String),
}

/// A port the kernel just handed out as free. It is released before the server binds it, so
/// another process may take it in between; [`Peer::start`] retries on that.
fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// Reads the child's stdout and stderr on background threads (a full pipe would stall the
/// server), keeping the tail for error messages. The threads end when the child dies.
fn drain_output(child: &mut Child) -> Arc<Mutex<Vec<u8>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let outputs: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    ];
    for mut output in outputs.into_iter().flatten() {
        let log = Arc::clone(&log);
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = output.read(&mut buf) {
                let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
                log.extend_from_slice(&buf[..n]);
                let excess = log.len().saturating_sub(LOG_BYTES_MAX);
                log.drain(..excess);
            }
        });
    }
    log
}

fn find_binary(kind: PeerKind) -> Option<PathBuf> {
    if let Some(path) = env::var_os(kind.env_var()).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let peers = env::var_os("ECHOMQ_PEERS")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cache/echomq/peers")));
    if kind == PeerKind::Redis8 {
        let builds = std::fs::read_dir(peers?).ok()?;
        return builds
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("redis-8.8.0-"))
            .map(|e| e.path().join("bin").join(kind.binary()))
            .find(|p| p.is_file());
    }
    let on_path = env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join(kind.binary()))
        .find(|p| p.is_file());
    on_path.or_else(|| {
        let path = peers?.join("bin").join(kind.binary());
        path.is_file().then_some(path)
    })
}
