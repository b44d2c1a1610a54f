//! A low open-files limit: `maxclients` fitted to it, and an accept loop that pauses.
//!
//! Under `ulimit -n 64` that the process cannot raise, Redis 8.8 lowers `maxclients` to
//! 64 - 32 and refuses clients past it with `-ERR max number of clients reached`; echomq must
//! do the same (compared with Redis 8.8 under the same limit). And when `accept` itself runs
//! out of descriptors, the accept loop must pause instead of spinning, warn once instead of
//! millions of times, keep serving the clients it has, and accept the waiting ones once
//! descriptors free up.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::{self, echomq, echomq_with_nofile};
use crate::support::resp::Resp;

/// The limit the server runs under.
const NOFILE: u64 = 64;
/// `maxclients` under it: the limit less Redis's 32 reserved descriptors.
const MAXCLIENTS: u64 = NOFILE - 32;
/// Connections the storm opens.
const CONNECTIONS: usize = 200;
/// A reply slower than this is a hung server.
const REPLY_TIMEOUT: Duration = Duration::from_secs(20);
const REFUSED: &str = "-ERR max number of clients reached\r\n";

/// One line from `stream` (a reply or an error), empty on EOF.
fn read_line(reader: &mut BufReader<TcpStream>) -> String {
    try_read_line(reader).unwrap_or_else(|e| panic!("no reply within {REPLY_TIMEOUT:?}: {e}"))
}

fn try_read_line(reader: &mut BufReader<TcpStream>) -> std::io::Result<String> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    Ok(line)
}

fn connect(addr: SocketAddr) -> (BufReader<TcpStream>, TcpStream) {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).unwrap();
    (BufReader::new(stream.try_clone().unwrap()), stream)
}

/// Opens [`CONNECTIONS`] connections at once, PINGs on each, and reads every first reply,
/// keeping the served ones open. Returns (PONGs, refusals, closed without a readable reply);
/// panics on anything else or a reply that does not come. A refused connection can be reset
/// instead of read: the server closes it with our PING unread, and then the kernel sends a
/// reset that may overtake the refusal.
fn storm(addr: SocketAddr) -> (usize, usize, usize) {
    let mut open: Vec<(BufReader<TcpStream>, TcpStream)> =
        (0..CONNECTIONS).map(|_| connect(addr)).collect();
    for (_, writer) in &mut open {
        // A refused connection may be closed before the PING lands.
        let _ = writer.write_all(b"PING\r\n");
    }
    let (mut pongs, mut refused, mut reset) = (0, 0, 0);
    for (reader, _) in &mut open {
        match try_read_line(reader) {
            Ok(line) if line == "+PONG\r\n" => pongs += 1,
            Ok(line) if line == REFUSED => refused += 1,
            Ok(line) if line.is_empty() => reset += 1,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => reset += 1,
            Ok(other) => panic!("unexpected first reply {other:?}"),
            Err(e) => panic!("no reply within {REPLY_TIMEOUT:?}: {e}"),
        }
    }
    (pongs, refused, reset)
}

fn call(reader: &mut BufReader<TcpStream>, writer: &mut TcpStream, argv: &[&str]) -> Resp {
    crate::support::resp::write_command(writer, argv).unwrap();
    let mut raw = Vec::new();
    Resp::read(reader, &mut raw).unwrap()
}

#[test]
fn under_a_low_ulimit_maxclients_is_lowered_as_redis_and_extra_clients_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let (_running, addr) = process::serve_logging(
        echomq_with_nofile(NOFILE),
        &[],
        Stdio::from(File::create(&log_path).unwrap()),
    );
    let redis = Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            nofile: Some(NOFILE),
            ..Launch::default()
        },
    );
    let mut targets = vec![("echomq", addr)];
    if let Some(redis) = &redis {
        targets.push(("redis 8.8", redis.addr()));
    }
    let mut replies = Vec::new();
    for (name, addr) in targets {
        let (mut reader, mut writer) = connect(addr);
        let maxclients = call(&mut reader, &mut writer, &["CONFIG", "GET", "maxclients"]);
        let set = call(
            &mut reader,
            &mut writer,
            &["CONFIG", "SET", "maxclients", "100"],
        );
        // The peer holds one connection of its own; ours holds none besides this one.
        let held = usize::from(name != "echomq");
        let (pongs, refused, reset) = storm(addr);
        assert_eq!(
            pongs + 1 + held,
            MAXCLIENTS as usize,
            "{name}: clients served until maxclients"
        );
        assert_eq!(pongs + refused + reset, CONNECTIONS, "{name}");
        assert!(refused > 0, "{name}: no refusal was readable");
        // Everyone served is still served.
        assert_eq!(
            call(&mut reader, &mut writer, &["PING"]),
            Resp::Simple("PONG".into())
        );
        replies.push((name, maxclients, set));
    }
    let (_, maxclients, set) = &replies[0];
    assert_eq!(
        *maxclients,
        Resp::Array(vec![
            Resp::Bulk(b"maxclients".to_vec()),
            Resp::Bulk(MAXCLIENTS.to_string().into_bytes())
        ])
    );
    assert_eq!(
        *set,
        Resp::Error(format!(
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating system is not able to handle the specified number of clients, try with {MAXCLIENTS}"
        ))
    );
    for (name, maxclients_peer, set_peer) in &replies[1..] {
        assert_eq!(maxclients_peer, maxclients, "{name}: CONFIG GET maxclients");
        assert_eq!(set_peer, set, "{name}: CONFIG SET maxclients 100");
    }
    drop(_running);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.contains(&format!("Current maximum open files is {NOFILE}. maxclients has been reduced to {MAXCLIENTS} to compensate for low ulimit.")),
        "log: {log}"
    );
}

/// The soft open-files limit of process `pid`, set with `prlimit`.
fn set_soft_nofile(pid: u32, soft: u64) -> bool {
    Command::new("prlimit")
        .args(["--pid", &pid.to_string(), &format!("--nofile={soft}:")])
        .status()
        .is_ok_and(|s| s.success())
}

fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64)
}

#[test]
fn an_accept_loop_out_of_descriptors_pauses_warns_once_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let (running, addr) =
        process::serve_logging(echomq(), &[], Stdio::from(File::create(&log_path).unwrap()));
    let pid = running.0.id();
    let (mut reader, mut writer) = connect(addr);
    assert_eq!(
        call(&mut reader, &mut writer, &["PING"]),
        Resp::Simple("PONG".into())
    );
    let soft = soft_nofile(pid);
    // No descriptor left: every accept fails with EMFILE from here on.
    if !set_soft_nofile(pid, open_fds(pid)) {
        eprintln!("SKIPPED: prlimit cannot change the server's limit");
        return;
    }
    let mut waiting: Vec<(BufReader<TcpStream>, TcpStream)> =
        (0..20).map(|_| connect(addr)).collect();
    for (_, writer) in &mut waiting {
        writer.write_all(b"PING\r\n").unwrap();
    }
    // The connected client is served throughout, while the accept loop keeps failing.
    for _ in 0..20 {
        assert_eq!(
            call(&mut reader, &mut writer, &["PING"]),
            Resp::Simple("PONG".into())
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(set_soft_nofile(pid, soft));
    for (reader, _) in &mut waiting {
        assert_eq!(read_line(reader), "+PONG\r\n");
    }
    drop(running);
    let log = std::fs::read_to_string(&log_path).unwrap();
    let warnings = log.matches("accepting client connection failed").count();
    assert_eq!(
        warnings, 1,
        "one warning, however many failures; log: {log}"
    );
}

/// The server's current soft limit, read from `/proc/PID/limits`.
fn soft_nofile(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .unwrap()
}
