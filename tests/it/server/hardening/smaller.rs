//! Smaller hardening differences, each compared with Redis 8.8:
//! EXEC before AUTH answers `-EXECABORT ...`; `XREAD BLOCK` with a timeout whose deadline
//! overflows answers `ERR timeout is out of range`; DEBUG SLEEP sleeps; an unknown command's
//! name and arguments are echoed with their raw bytes; `tcp-backlog` is 511 and is the listen
//! backlog.

use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use super::both;
use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::{self, echomq};

#[test]
fn exec_before_auth_aborts_with_the_reason_as_redis() {
    let (_running, addr) = process::serve(echomq(), &["--requirepass", "pw"]);
    // The peer's own connection stays authenticated for its checks.
    let mut redis = Peer::start(PeerKind::Redis8);
    if let Some(redis) = redis.as_mut() {
        assert_eq!(
            redis.call(&["CONFIG", "SET", "requirepass", "pw"]),
            crate::support::resp::Resp::Simple("OK".into())
        );
    }
    let got = both(
        addr,
        redis.as_ref(),
        b"EXEC\r\nMULTI\r\nPING\r\nEXEC\r\nDISCARD\r\nAUTH pw\r\nMULTI\r\nEXEC\r\n",
        8,
    );
    assert_eq!(
        got,
        b"-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n\
          -NOAUTH Authentication required.\r\n-NOAUTH Authentication required.\r\n\
          -EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n\
          -NOAUTH Authentication required.\r\n+OK\r\n+OK\r\n*0\r\n"
    );
}

#[test]
fn timeouts_unknown_commands_and_backlog_as_redis() {
    let (_running, addr) = process::serve(echomq(), &["--enable-debug-command", "yes"]);
    let redis = Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            args: vec!["--enable-debug-command".into(), "yes".into()],
            ..Launch::default()
        },
    );
    let redis = redis.as_ref();
    let timeouts = both(
        addr,
        redis,
        b"XREAD BLOCK 9223372036854775807 STREAMS s $\r\n\
          XREAD BLOCK 9223372036854775806 STREAMS s $\r\n\
          XREADGROUP GROUP g c BLOCK 9223372036854775807 STREAMS s >\r\n\
          XREAD BLOCK -1 STREAMS s $\r\n\
          XREAD BLOCK 9223372036854775808 STREAMS s $\r\n",
        5,
    );
    assert_eq!(
        timeouts,
        b"-ERR timeout is out of range\r\n-ERR timeout is out of range\r\n\
          -ERR timeout is out of range\r\n-ERR timeout is negative\r\n\
          -ERR timeout is not an integer or out of range\r\n"
    );
    // An unknown command's name and arguments come back as sent, invalid UTF-8 included.
    let unknown = both(
        addr,
        redis,
        b"\xff\xfeabc x y\r\n*2\r\n$3\r\n\xc3\x28z\r\n$2\r\na\x80\r\n",
        2,
    );
    assert_eq!(
        unknown,
        b"-ERR unknown command '\xff\xfeabc', with args beginning with: 'x' 'y' \r\n\
          -ERR unknown command '\xc3(z', with args beginning with: 'a\x80' \r\n"
    );
    // DEBUG SLEEP sleeps, and its syntax errors are Redis's.
    let started = Instant::now();
    let sleep = both(
        addr,
        redis,
        b"DEBUG SLEEP 0.2\r\nDEBUG SLEEP\r\nDEBUG sleep 0.1x\r\n",
        3,
    );
    assert_eq!(
        sleep,
        b"+OK\r\n-ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.\r\n+OK\r\n"
    );
    let slept = started.elapsed();
    assert!(
        slept >= Duration::from_millis(300) * if redis.is_some() { 2 } else { 1 },
        "slept {slept:?}"
    );
    // tcp-backlog: 511, immutable, and the backlog the socket listens with.
    let backlog = both(
        addr,
        redis,
        b"CONFIG GET tcp-backlog\r\nCONFIG SET tcp-backlog 5\r\n",
        2,
    );
    assert_eq!(
        backlog,
        b"*2\r\n$11\r\ntcp-backlog\r\n$3\r\n511\r\n-ERR CONFIG SET failed (possibly related to argument 'tcp-backlog') - can't set immutable config\r\n"
    );
    if let Some(listen) = listen_backlog(addr) {
        let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(511);
        assert_eq!(listen, 511.min(somaxconn));
    }
    let _ = TcpStream::connect(addr).unwrap();
}

/// The listen backlog of the socket listening on `addr`, as `ss` shows it (the Send-Q of a
/// listening socket); `None` without `ss`.
fn listen_backlog(addr: SocketAddr) -> Option<u32> {
    let out = Command::new("ss")
        .args(["-Hltn", &format!("sport = :{}", addr.port())])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?;
    line.split_whitespace().nth(2)?.parse().ok()
}
