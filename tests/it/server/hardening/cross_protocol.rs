//! Cross-protocol attacks: an HTTP request that a web page makes a browser
//! send to a loopback port. Redis 8.8 treats `POST` and `Host:` (any case, inline or
//! multibulk, before AUTH, inside MULTI) as commands that close the connection, dropping the
//! replies still pending and running nothing after them, and logs "Possible SECURITY ATTACK
//! detected" at most once a minute. Every case is compared byte for byte with Redis 8.8.

use std::fs::File;
use std::process::Stdio;

use super::{replies, until_closed};
use crate::support::peer::{Peer, PeerKind};
use crate::support::process::{self, echomq};

const CASES: &[&[u8]] = &[
    // A browser's POST whose body is an XADD.
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 31\r\n\r\nXADD pwned * cmd from-browser\r\n",
    // Mid-pipeline: the PINGs before it are not answered either.
    b"PING\r\nPING\r\nPOST / HTTP/1.1\r\nPING\r\n",
    // A multibulk Host:, in any case.
    b"*1\r\n$4\r\nPING\r\n*2\r\n$5\r\nHost:\r\n$1\r\nx\r\n*1\r\n$4\r\nPING\r\n",
    b"host: evil.example\r\nXADD pwned * a b\r\n",
    // Inside a transaction.
    b"MULTI\r\nXADD pwned * a b\r\npost\r\nEXEC\r\n",
    // A GET alone is just an unknown command (Redis answers it and stays open), so is "Host".
    b"GET / HTTP/1.1\r\nHost: x\r\n",
];

#[test]
fn post_and_host_close_the_connection_as_in_redis_with_nothing_run() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("serve.log");
    let (running, addr) =
        process::serve_logging(echomq(), &[], Stdio::from(File::create(&log_path).unwrap()));
    let redis = Peer::start(PeerKind::Redis8);
    for case in CASES {
        let ours = until_closed(addr, case);
        assert!(
            ours.is_empty() || case.starts_with(b"GET"),
            "{:?}: got {:?}",
            case.escape_ascii().to_string(),
            ours.escape_ascii().to_string()
        );
        if let Some(redis) = &redis {
            assert_eq!(
                until_closed(redis.addr(), case).escape_ascii().to_string(),
                ours.escape_ascii().to_string(),
                "{:?}",
                case.escape_ascii().to_string()
            );
        }
    }
    // Nothing after an attack ran.
    let mut targets = vec![addr];
    if let Some(redis) = &redis {
        targets.push(redis.addr());
    }
    for target in targets {
        assert_eq!(replies(target, b"XLEN pwned\r\n", 1), b":0\r\n");
        assert_eq!(replies(target, b"PING\r\n", 1), b"+PONG\r\n");
    }
    drop(running);
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(
        log.matches("Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection from 127.0.0.1:").count(),
        1,
        "one warning a minute; log: {log}"
    );
}
