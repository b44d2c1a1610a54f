//! Protected mode: Redis 8.8's default `protected-mode yes` answers a
//! client that is not on loopback with its `-DENIED ...` text while no password is set.
//!
//! Nothing here leaves the machine: the servers listen on all interfaces and the test
//! connects to one of this machine's own non-loopback addresses (the kernel delivers that
//! locally), found on a local interface; without one, the server-path checks are skipped and
//! only the unit tests of the loopback decision (`protected::is_loopback`) speak.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::process::Command;

use super::{replies, until_closed};
use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::{self, echomq};

/// An IPv4 address of a local interface other than loopback, proven local by binding it.
pub(super) fn local_non_loopback() -> Option<IpAddr> {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr", "show"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let cidr = line
                .split_whitespace()
                .skip_while(|w| *w != "inet")
                .nth(1)?;
            cidr.split('/').next()?.parse::<IpAddr>().ok()
        })
        .find(|ip| !ip.is_loopback() && TcpListener::bind((*ip, 0)).is_ok())
}

/// Redis's text, which the test also checks Redis 8.8 sends.
fn denied() -> Vec<u8> {
    echomq::protocol::server::protected::DENIED
        .as_bytes()
        .to_vec()
}

#[test]
fn without_a_password_a_client_off_loopback_is_denied_with_redis_text() {
    let Some(ip) = local_non_loopback() else {
        eprintln!("SKIPPED: no non-loopback address on a local interface");
        return;
    };
    let (_running, addr) = process::serve(echomq(), &["--bind", "0.0.0.0"]);
    let redis = Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            args: vec!["--bind".into(), "0.0.0.0".into()],
            ..Launch::default()
        },
    );
    let mut targets = vec![("echomq", addr.port())];
    if let Some(redis) = &redis {
        targets.push(("redis 8.8", redis.addr().port()));
    }
    for (name, port) in targets {
        let loopback = SocketAddr::from(([127, 0, 0, 1], port));
        let other_loopback = SocketAddr::from(([127, 0, 0, 2], port));
        let outside = SocketAddr::new(ip, port);
        assert_eq!(
            replies(loopback, b"CONFIG GET protected-mode\r\n", 1),
            b"*2\r\n$14\r\nprotected-mode\r\n$3\r\nyes\r\n",
            "{name}"
        );
        assert_eq!(until_closed(outside, b"PING\r\n"), denied(), "{name}");
        assert_eq!(
            replies(other_loopback, b"PING\r\n", 1),
            b"+PONG\r\n",
            "{name}"
        );
        assert_eq!(
            replies(loopback, b"CONFIG SET protected-mode maybe\r\n", 1),
            b"-ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'\r\n",
            "{name}"
        );
        // A password lifts it: the client may connect, and must AUTH.
        assert_eq!(
            replies(loopback, b"CONFIG SET requirepass pw\r\n", 1),
            b"+OK\r\n"
        );
        assert_eq!(
            replies(outside, b"PING\r\n", 1),
            b"-NOAUTH Authentication required.\r\n",
            "{name}"
        );
        assert_eq!(
            replies(loopback, b"AUTH pw\r\nCONFIG SET requirepass \"\"\r\n", 2),
            b"+OK\r\n+OK\r\n"
        );
        assert_eq!(until_closed(outside, b"PING\r\n"), denied(), "{name}");
        // So does turning it off, from loopback.
        assert_eq!(
            replies(loopback, b"CONFIG SET protected-mode no\r\n", 1),
            b"+OK\r\n"
        );
        assert_eq!(replies(outside, b"PING\r\n", 1), b"+PONG\r\n", "{name}");
    }
    // And starting with --protected-mode no.
    let (_open, addr) = process::serve(echomq(), &["--bind", "0.0.0.0", "--protected-mode", "no"]);
    assert_eq!(
        replies(SocketAddr::new(ip, addr.port()), b"PING\r\n", 1),
        b"+PONG\r\n"
    );
}
