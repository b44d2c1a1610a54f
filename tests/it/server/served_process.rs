//! `echomq serve` as redis-server runs: CONFIG SET `port`, `bind` and `tls-port` open the new
//! listeners (existing connections stay; a port that cannot be opened gets Redis 8.8's error
//! and changes nothing), `dir` is the process's working directory (relative `include`,
//! `logfile`, `pidfile` and `--archive` follow it, and CONFIG SET dir changes it), and the log's
//! times are local.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use super::tls::{Certs, redis_rs_tls, serve_with};
use crate::aof::free_port;
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{echomq, serve};

/// How long a condition may take to show (a log line written).
const WAIT: Duration = Duration::from_secs(20);

/// One connection speaking raw RESP2, replies read back as text: a status or error line as
/// it is (`-ERR …`), a bulk as its bytes, an array as its elements joined by newlines.
struct Raw {
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_read_timeout(Some(WAIT)).unwrap();
        Raw {
            reader: BufReader::new(stream),
        }
    }

    fn call(&mut self, argv: &[&str]) -> String {
        let mut out = format!("*{}\r\n", argv.len());
        for arg in argv {
            out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        self.reader.get_mut().write_all(out.as_bytes()).unwrap();
        self.read()
    }

    fn read(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let line = line.trim_end().to_string();
        match line.as_bytes().first() {
            Some(b'$') if line != "$-1" => {
                let len: usize = line[1..].parse().unwrap();
                let mut bulk = vec![0; len + 2];
                self.reader.read_exact(&mut bulk).unwrap();
                bulk.truncate(len);
                String::from_utf8(bulk).unwrap()
            }
            Some(b'*') => {
                let n: usize = line[1..].parse().unwrap();
                (0..n).map(|_| self.read()).collect::<Vec<_>>().join("\n")
            }
            _ => line,
        }
    }
}

fn addr(host: &str, port: u16) -> SocketAddr {
    format!("{host}:{port}").parse().unwrap()
}

/// Whether nothing accepts on `addr` (the connection is refused).
fn refused(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
}

fn wait_for_file(path: &Path, text: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let found = std::fs::read_to_string(path).unwrap_or_default();
        if found.contains(text) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{text:?} not in {path:?}: {found}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

const PORT_REFUSED: &str = "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.";
const BIND_REFUSED: &str = "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.";

#[test]
fn config_set_port_and_bind_open_the_new_listeners_first() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("echomq.conf");
    std::fs::write(&config, "save \"\"\n").unwrap();
    let log = dir.path().join("log");
    let (_running, first) = serve(
        echomq(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--logfile",
            log.to_str().unwrap(),
        ],
    );
    let mut conn = Raw::connect(first);
    let port = free_port();
    assert_eq!(
        conn.call(&["CONFIG", "SET", "port", &port.to_string()]),
        "+OK"
    );
    assert_eq!(
        Raw::connect(addr("127.0.0.1", port)).call(&["PING"]),
        "+PONG"
    );
    assert!(refused(first), "the old port still accepts");
    // The connection made on the old port stays.
    assert_eq!(conn.call(&["PING"]), "+PONG");
    assert!(
        conn.call(&["INFO", "server"])
            .contains(&format!("tcp_port:{port}\r\n"))
    );
    assert_eq!(
        conn.call(&["CONFIG", "GET", "port"]),
        format!("port\n{port}")
    );

    // A port taken by another socket: Redis's error, the current port kept.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port().to_string();
    assert_eq!(
        conn.call(&["CONFIG", "SET", "port", &taken_port]),
        PORT_REFUSED
    );
    assert_eq!(
        conn.call(&["CONFIG", "GET", "port"]),
        format!("port\n{port}")
    );
    assert_eq!(
        Raw::connect(addr("127.0.0.1", port)).call(&["PING"]),
        "+PONG"
    );

    // Other loopback addresses (all of 127/8 is loopback on Linux).
    let set = conn.call(&["CONFIG", "SET", "bind", "127.0.0.2 127.0.0.3"]);
    assert_eq!(set, "+OK");
    for host in ["127.0.0.2", "127.0.0.3"] {
        assert_eq!(Raw::connect(addr(host, port)).call(&["PING"]), "+PONG");
    }
    assert!(refused(addr("127.0.0.1", port)));
    // An address no interface has: refused, nothing changed.
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bind", "192.0.2.1"]),
        BIND_REFUSED
    );
    assert_eq!(
        conn.call(&["CONFIG", "GET", "bind"]),
        "bind\n127.0.0.2 127.0.0.3"
    );
    assert_eq!(
        Raw::connect(addr("127.0.0.2", port)).call(&["PING"]),
        "+PONG"
    );
    // Keeping one address and adding another keeps its listener (and its clients' port).
    let mut kept = Raw::connect(addr("127.0.0.2", port));
    let set = conn.call(&["CONFIG", "SET", "bind", "127.0.0.2 127.0.0.1"]);
    assert_eq!(set, "+OK");
    assert_eq!(kept.call(&["PING"]), "+PONG");
    assert_eq!(
        Raw::connect(addr("127.0.0.1", port)).call(&["PING"]),
        "+PONG"
    );
    assert!(refused(addr("127.0.0.3", port)));

    assert_eq!(conn.call(&["CONFIG", "REWRITE"]), "+OK");
    let rewritten = std::fs::read_to_string(&config).unwrap();
    assert!(
        rewritten.contains(&format!("\nport {port}\n")),
        "{rewritten}"
    );
    assert!(
        rewritten.contains("\nbind 127.0.0.2 127.0.0.1\n"),
        "{rewritten}"
    );
    wait_for_file(&log, &format!("Listening on 127.0.0.2:{port}"));

    // The wildcard overlaps the addresses bound on the same port: they close first, as in
    // Redis, and the clients stay.
    assert_eq!(conn.call(&["CONFIG", "SET", "bind", "*"]), "+OK");
    assert_eq!(
        Raw::connect(addr("127.0.0.3", port)).call(&["PING"]),
        "+PONG"
    );
    assert_eq!(conn.call(&["CONFIG", "SET", "bind", "127.0.0.1"]), "+OK");
    assert!(refused(addr("127.0.0.3", port)));
    assert_eq!(kept.call(&["PING"]), "+PONG");
    assert_eq!(
        Raw::connect(addr("127.0.0.1", port)).call(&["PING"]),
        "+PONG"
    );
    // Closed first, then failing: the old addresses are bound again.
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bind", "* 192.0.2.1"]),
        BIND_REFUSED
    );
    assert_eq!(conn.call(&["CONFIG", "GET", "bind"]), "bind\n127.0.0.1");
    assert_eq!(
        Raw::connect(addr("127.0.0.1", port)).call(&["PING"]),
        "+PONG"
    );
    assert!(refused(addr("127.0.0.3", port)));

    // `port 0` closes the plain port; the connections stay.
    assert_eq!(conn.call(&["CONFIG", "SET", "port", "0"]), "+OK");
    assert!(refused(addr("127.0.0.1", port)));
    assert!(conn.call(&["INFO", "server"]).contains("tcp_port:0\r\n"));
    assert_eq!(kept.call(&["PING"]), "+PONG");
}

#[test]
fn refused_port_and_bind_errors_are_redis_8_8s() {
    let Some(mut redis) = Peer::start(PeerKind::Redis8) else {
        return;
    };
    let (_running, at) = serve(echomq(), &[]);
    let mut ours = Raw::connect(at);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_port = taken.local_addr().unwrap().port().to_string();
    for argv in [
        ["CONFIG", "SET", "port", taken_port.as_str()],
        ["CONFIG", "SET", "bind", "192.0.2.1"],
        [
            "CONFIG",
            "SET",
            "bind",
            "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
        ],
    ] {
        let (_, theirs) = redis.try_call(&argv).unwrap();
        let theirs = String::from_utf8_lossy(&theirs).trim_end().to_string();
        assert_eq!(ours.call(&argv), theirs, "{argv:?}");
    }
    // Both still serve where they did.
    assert!(TcpStream::connect(redis.addr()).is_ok());
    assert_eq!(Raw::connect(at).call(&["PING"]), "+PONG");
}

#[test]
fn tls_port_opens_and_closes_at_run_time() {
    let Some(certs) = Certs::make() else {
        return;
    };
    let config = format!(
        "tls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients no\n",
        certs.path("server.crt"),
        certs.path("server.key"),
        certs.path("ca.crt"),
    );
    let port = free_port();
    let (_server, lines) = serve_with(certs.dir.path(), port, &config, 1);
    assert!(
        lines[0].ends_with(&format!("127.0.0.1:{port}")),
        "{lines:?}"
    );
    let mut conn = Raw::connect(addr("127.0.0.1", port));
    let tls_port = free_port();
    // Opening it needs the TLS configuration, as Redis's does.
    assert_eq!(conn.call(&["CONFIG", "SET", "tls-cert-file", ""]), "+OK");
    let set = conn.call(&["CONFIG", "SET", "tls-port", &tls_port.to_string()]);
    assert_eq!(
        set,
        "-ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to update TLS configuration. Check server logs."
    );
    assert!(refused(addr("127.0.0.1", tls_port)));
    assert_eq!(conn.call(&["CONFIG", "GET", "tls-port"]), "tls-port\n0");
    let cert = certs.path("server.crt");
    assert_eq!(conn.call(&["CONFIG", "SET", "tls-cert-file", &cert]), "+OK");
    let set = conn.call(&["CONFIG", "SET", "tls-port", &tls_port.to_string()]);
    assert_eq!(set, "+OK");
    assert_eq!(redis_rs_tls(&certs, tls_port, None).unwrap(), "over tls");
    assert_eq!(
        conn.call(&["CONFIG", "GET", "tls-port"]),
        format!("tls-port\n{tls_port}")
    );
    assert!(conn.call(&["INFO", "server"]).contains(&format!(
        "listener2:name=tls,bind=127.0.0.1,port={tls_port}\r\n"
    )));
    // Moved to another port, then closed.
    let moved = free_port();
    let set = conn.call(&["CONFIG", "SET", "tls-port", &moved.to_string()]);
    assert_eq!(set, "+OK");
    assert!(refused(addr("127.0.0.1", tls_port)));
    assert_eq!(redis_rs_tls(&certs, moved, None).unwrap(), "over tls");
    assert_eq!(conn.call(&["CONFIG", "SET", "tls-port", "0"]), "+OK");
    assert!(refused(addr("127.0.0.1", moved)));
    // Closed, the TLS parameters are not checked; opened again, the configuration built
    // before is reused, as in Redis.
    assert_eq!(conn.call(&["CONFIG", "SET", "tls-cert-file", ""]), "+OK");
    let set = conn.call(&["CONFIG", "SET", "tls-port", &moved.to_string()]);
    assert_eq!(set, "+OK");
    assert_eq!(redis_rs_tls(&certs, moved, None).unwrap(), "over tls");
    // The plain port's clients never noticed.
    assert_eq!(conn.call(&["PING"]), "+PONG");
}

#[test]
fn dir_is_the_served_process_working_directory() {
    let root = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    std::fs::create_dir(root_path.join("data")).unwrap();
    std::fs::create_dir(root_path.join("other")).unwrap();
    // Read after `dir data`: relative to it, as Redis reads it.
    std::fs::write(root_path.join("data/extra.conf"), "hz 42\n").unwrap();
    std::fs::write(
        root_path.join("echomq.conf"),
        "dir data\ninclude extra.conf\nenable-protected-configs yes\n",
    )
    .unwrap();
    let mut command = echomq();
    command.current_dir(&root_path);
    let (_running, at) = serve(
        command,
        &[
            "--config",
            "echomq.conf",
            "--logfile",
            "echomq.log",
            "--pidfile",
            "echomq.pid",
            "--archive",
            "archive",
        ],
    );
    let mut conn = Raw::connect(at);
    let data = root_path.join("data");
    assert_eq!(
        conn.call(&["CONFIG", "GET", "dir"]),
        format!("dir\n{}", data.display())
    );
    assert_eq!(conn.call(&["CONFIG", "GET", "hz"]), "hz\n42");
    wait_for_file(&data.join("echomq.log"), "Ready to accept connections");
    assert!(data.join("echomq.pid").is_file());
    assert!(data.join("archive/archive.redb").is_file());

    // CONFIG SET dir changes directory: relative to the current one, answered absolute.
    assert_eq!(conn.call(&["CONFIG", "SET", "dir", "../other"]), "+OK");
    let other = root_path.join("other");
    assert_eq!(
        conn.call(&["CONFIG", "GET", "dir"]),
        format!("dir\n{}", other.display())
    );
    assert_eq!(conn.call(&["SAVE"]), "+OK");
    assert!(other.join("dump.rdb").is_file());
    assert_eq!(
        conn.call(&["CONFIG", "SET", "dir", "nosuch"]),
        "-ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory"
    );
    // The config file is still found (its path was made absolute at start).
    assert_eq!(conn.call(&["CONFIG", "REWRITE"]), "+OK");
    let rewritten = std::fs::read_to_string(root_path.join("echomq.conf")).unwrap();
    assert!(
        rewritten.contains(&format!("dir \"{}\"", other.display())),
        "{rewritten}"
    );
}

#[test]
fn log_times_are_local_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut command = echomq();
    // India's zone from the tz database, or as a POSIX rule where it is not installed.
    let zone = if Path::new("/usr/share/zoneinfo/Asia/Kolkata").is_file() {
        "Asia/Kolkata"
    } else {
        "IST-5:30"
    };
    command.env("TZ", zone);
    let (_running, _) = serve(command, &["--logfile", log.to_str().unwrap()]);
    let text = wait_for_file(&log, "Ready to accept connections");
    let line = text
        .lines()
        .find(|l| l.contains("Ready to accept connections"))
        .unwrap();
    // `pid:M dd Mon yyyy hh:mm:ss.mmm * message`
    let time = line.split_once(' ').unwrap().1;
    let civil = jiff::civil::DateTime::strptime("%d %b %Y %H:%M:%S", &time[..20])
        .unwrap_or_else(|e| panic!("{line}: {e}"));
    let ist = jiff::tz::Offset::from_seconds(5 * 3600 + 30 * 60).unwrap();
    let written = ist.to_timestamp(civil).unwrap();
    let off = (jiff::Timestamp::now().as_second() - written.as_second()).abs();
    assert!(off < 120, "{line} is not India's time (off by {off} s)");
}

/// As Redis opens its log file for each line: a file moved away by log rotation is followed
/// by a new one at the path, and a relative path follows CONFIG SET dir.
#[test]
fn the_log_file_is_opened_for_each_line() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut command = echomq();
    command.current_dir(dir.path());
    let (_running, at) = serve(
        command,
        &["--logfile", "log", "--enable-protected-configs", "yes"],
    );
    wait_for_file(&log, "Ready to accept connections");
    std::fs::rename(&log, dir.path().join("log.1")).unwrap();
    let mut conn = Raw::connect(at);
    assert_eq!(conn.call(&["SAVE"]), "+OK");
    let text = wait_for_file(&log, "DB saved on disk");
    assert!(!text.contains("Ready to accept connections"), "{text}");
    let moved_to = other.path().to_str().unwrap();
    assert_eq!(conn.call(&["CONFIG", "SET", "dir", moved_to]), "+OK");
    assert_eq!(conn.call(&["SAVE"]), "+OK");
    wait_for_file(&other.path().join("log"), "DB saved on disk");
}
