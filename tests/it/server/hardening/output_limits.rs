//! `client-output-buffer-limit`: clients that ask for a large XRANGE and
//! never read are dropped once their unread reply passes the `normal` class's hard limit (at
//! once) or stays past its soft limit for longer than its seconds, while everyone else keeps
//! being served; the same as Redis 8.8 with the same limits. Dropping them is what bounds
//! the server's memory: their replies go with them. CONFIG's parse errors are Redis's.
//!
//! One difference, by design: echomq runs a client's next request only once its earlier
//! replies are written (backpressure), where Redis runs every pipelined request and buffers
//! all the replies. So a reader that pipelines many requests and never reads holds at most one
//! reply in echomq (and is dropped if that one alone passes a limit), where Redis holds them
//! all until their sum passes the limit.

use std::fs::File;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Stdio;

use super::read_until_closed;
use crate::server::wait_until;
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{self, echomq};
use crate::support::resp::{Resp, write_command};

/// Entries in the big stream, each with a 1 KiB value: an XRANGE of it is about 4 MiB.
const ENTRIES: usize = 4000;
/// Readers that ask and never read, against the hard limit.
const READERS: usize = 10;
/// Readers against the soft limit. Their reply (the `huge` stream, [`HUGE_ENTRIES`] of 8 KiB)
/// is larger than the kernel's socket buffers absorb (several MiB on loopback), or no reply
/// would stay unwritten long enough.
const SOFT_READERS: usize = 3;
const HUGE_ENTRIES: usize = 1500;

struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_read_timeout(Some(super::CLOSE_TIMEOUT)).unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    fn call(&mut self, argv: &[&str]) -> Resp {
        write_command(&mut self.writer, argv).unwrap();
        let mut raw = Vec::new();
        Resp::read(&mut self.reader, &mut raw).unwrap()
    }

    /// A numeric INFO field.
    fn info(&mut self, section: &str, field: &str) -> u64 {
        let Resp::Bulk(info) = self.call(&["INFO", section]) else {
            panic!("INFO is not a bulk string");
        };
        String::from_utf8_lossy(&info)
            .lines()
            .find_map(|l| {
                l.strip_prefix(field)?
                    .strip_prefix(':')?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
    }

    fn connected_clients(&mut self) -> u64 {
        self.info("clients", "connected_clients")
    }
}

/// Fills `key` with `entries` of `value_bytes` through `control`, in one pipeline.
fn fill(control: &mut Conn, key: &str, entries: usize, value_bytes: usize) {
    let value = "v".repeat(value_bytes);
    let mut pipeline = Vec::new();
    for _ in 0..entries {
        write_command(&mut pipeline, &["XADD", key, "*", "f", &value]).unwrap();
    }
    control.writer.write_all(&pipeline).unwrap();
    for _ in 0..entries {
        let mut raw = Vec::new();
        assert!(matches!(
            Resp::read(&mut control.reader, &mut raw).unwrap(),
            Resp::Bulk(_)
        ));
    }
}

/// Sets `limit`, has `readers` connections each send `XRANGE key - +` and never read, and
/// waits until the server has dropped every reader; returns the bytes each got before its
/// close.
fn drop_readers(
    addr: SocketAddr,
    control: &mut Conn,
    limit: &str,
    readers: usize,
    key: &str,
) -> Vec<usize> {
    assert_eq!(
        control.call(&["CONFIG", "SET", "client-output-buffer-limit", limit]),
        Resp::Simple("OK".into())
    );
    let before = control.connected_clients();
    let accepted = control.info("stats", "total_connections_received");
    let mut readers: Vec<TcpStream> = (0..readers)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            write_command(&mut stream, &["XRANGE", key, "-", "+"]).unwrap();
            stream
        })
        .collect();
    // Every reader was accepted (so counted), then every one is dropped.
    wait_until("every reader is accepted", || {
        control.info("stats", "total_connections_received") >= accepted + readers.len() as u64
    });
    wait_until("every reader is dropped", || {
        control.connected_clients() == before
    });
    // Everyone else is served meanwhile and after.
    assert_eq!(control.call(&["XLEN", "big"]), Resp::Int(ENTRIES as i64));
    readers
        .iter_mut()
        .map(|stream| read_until_closed(stream).len())
        .collect()
}

#[test]
fn readers_that_never_read_a_huge_reply_are_dropped_as_by_redis() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let (running, addr) =
        process::serve_logging(echomq(), &[], Stdio::from(File::create(&log_path).unwrap()));
    let redis = Peer::start(PeerKind::Redis8);
    let mut targets = vec![("echomq", addr)];
    if let Some(redis) = &redis {
        targets.push(("redis 8.8", redis.addr()));
    }
    let mut results = Vec::new();
    for (name, addr) in targets {
        let mut control = Conn::open(addr);
        // Redis's parse errors, then the default.
        let errors: Vec<Resp> = ["normal 1 2", "master 1 1 1", "normal 10mb 5mb x"]
            .iter()
            .map(|v| control.call(&["CONFIG", "SET", "client-output-buffer-limit", v]))
            .collect();
        let default = control.call(&["CONFIG", "GET", "client-output-buffer-limit"]);
        fill(&mut control, "big", ENTRIES, 1024);
        fill(&mut control, "huge", HUGE_ENTRIES, 8192);
        // The hard limit drops them at once, the soft one after its second.
        let hard = drop_readers(addr, &mut control, "normal 1mb 0 0", READERS, "big");
        let soft = drop_readers(addr, &mut control, "normal 0 1mb 1", SOFT_READERS, "huge");
        let shown = control.call(&["CONFIG", "GET", "client-output-buffer-limit"]);
        let disconnections = control.info("stats", "client_output_buffer_limit_disconnections");
        // Without a limit the reply is sent whole.
        assert_eq!(
            control.call(&[
                "CONFIG",
                "SET",
                "client-output-buffer-limit",
                "normal 0 0 0"
            ]),
            Resp::Simple("OK".into())
        );
        let Resp::Array(all) = control.call(&["XRANGE", "big", "-", "+"]) else {
            panic!("{name}: XRANGE is not an array");
        };
        assert_eq!(all.len(), ENTRIES, "{name}");
        results.push((name, errors, default, shown, hard, soft, disconnections));
    }
    let (_, errors, default, shown, hard, soft, disconnections) = &results[0];
    assert_eq!(*disconnections, (READERS + SOFT_READERS) as u64);
    assert_eq!(
        errors[0],
        Resp::Error("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration.".into())
    );
    assert_eq!(
        *shown,
        Resp::Array(vec![
            Resp::Bulk(b"client-output-buffer-limit".to_vec()),
            Resp::Bulk(
                b"normal 0 1048576 1 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
                    .to_vec()
            )
        ])
    );
    // A dropped reader got nothing: its reply was never written.
    assert!(hard.iter().all(|&n| n == 0), "{hard:?}");
    for (name, errors_peer, default_peer, shown_peer, hard_peer, _, disconnections_peer) in
        &results[1..]
    {
        assert_eq!(
            disconnections_peer, disconnections,
            "{name}: INFO's disconnections"
        );
        assert_eq!(errors_peer, errors, "{name}: CONFIG SET errors");
        assert_eq!(default_peer, default, "{name}: the default");
        assert_eq!(shown_peer, shown, "{name}: CONFIG GET");
        assert_eq!(
            hard_peer, hard,
            "{name}: bytes a reader got before the hard limit dropped it"
        );
    }
    // Under the soft limit a reader may have taken some of the reply first: the kernel's
    // buffers hold part of it before the limit counts anything; never all of it.
    assert!(soft.iter().all(|&n| n < HUGE_ENTRIES * 8192), "{soft:?}");
    drop(running);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(
        log.matches("scheduled to be closed ASAP for overcoming of output buffer limits.")
            .count(),
        READERS,
        "{log}"
    );
    assert_eq!(
        log.matches("closed for overcoming of output buffer limits.")
            .count(),
        SOFT_READERS,
        "{log}"
    );
}
