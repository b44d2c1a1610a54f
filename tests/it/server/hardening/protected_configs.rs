//! Protected configs and the DEBUG command, compared with Redis 8.8 byte for byte: by default
//! a client's CONFIG SET of `dir` or `dbfilename` is refused (so no client can make SAVE write
//! a file where it likes), DEBUG is refused, and the switches themselves are immutable; the
//! names are checked before any value. Started with `yes`, both work; with `local`, only for
//! clients on loopback (one of this machine's own non-loopback addresses is the outside).

use crate::support::peer::{Launch, Peer, PeerKind};
use crate::support::process::{self, echomq};

use super::both;

fn redis(args: &[&str]) -> Option<Peer> {
    let args = args.iter().map(|a| (*a).to_string()).collect();
    Peer::start_with(
        PeerKind::Redis8,
        &Launch {
            args,
            ..Launch::default()
        },
    )
}

#[test]
fn dir_dbfilename_and_debug_are_refused_by_default_as_redis() {
    let (_running, addr) = process::serve(echomq(), &[]);
    let redis = redis(&[]);
    let got = both(
        addr,
        redis.as_ref(),
        b"CONFIG SET dir /tmp\r\n\
          CONFIG SET dbfilename authorized_keys\r\n\
          CONFIG SET hz notanumber dir /tmp\r\n\
          CONFIG SET hz 20 DBFILENAME x\r\n\
          CONFIG SET enable-protected-configs yes\r\n\
          CONFIG SET enable-debug-command yes\r\n\
          CONFIG SET appenddirname elsewhere\r\n\
          DEBUG SLEEP 0\r\n\
          DEBUG\r\n\
          CONFIG GET hz\r\n\
          CONFIG GET enable-protected-configs\r\n\
          CONFIG GET enable-debug-command\r\n\
          CONFIG GET enable-module-command\r\n\
          CONFIG GET dbfilename\r\n",
        14,
    );
    let protected = |name: &str| {
        format!(
            "-ERR CONFIG SET failed (possibly related to argument '{name}') - can't set protected config\r\n"
        )
    };
    let immutable = |name: &str| {
        format!(
            "-ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config\r\n"
        )
    };
    let debug = "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n";
    let expected = [
        protected("dir"),
        protected("dbfilename"),
        protected("dir"),
        protected("DBFILENAME"),
        immutable("enable-protected-configs"),
        immutable("enable-debug-command"),
        immutable("appenddirname"),
        debug.to_string(),
        "-ERR wrong number of arguments for 'debug' command\r\n".to_string(),
        "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n".to_string(),
        "*2\r\n$24\r\nenable-protected-configs\r\n$2\r\nno\r\n".to_string(),
        "*2\r\n$20\r\nenable-debug-command\r\n$2\r\nno\r\n".to_string(),
        "*2\r\n$21\r\nenable-module-command\r\n$2\r\nno\r\n".to_string(),
        "*2\r\n$10\r\ndbfilename\r\n$8\r\ndump.rdb\r\n".to_string(),
    ]
    .concat();
    assert_eq!(
        got.escape_ascii().to_string(),
        expected.as_bytes().escape_ascii().to_string()
    );
}

#[test]
fn enabled_switches_allow_dir_and_debug_as_redis() {
    let dir = tempfile::tempdir().unwrap();
    let enable = [
        "--enable-protected-configs",
        "yes",
        "--enable-debug-command",
        "local",
    ];
    let (_running, addr) = process::serve(echomq(), &enable);
    let redis = redis(&enable);
    let set_dir = format!(
        "CONFIG SET dir {}\r\nCONFIG SET dbfilename other.rdb\r\nDEBUG SLEEP 0\r\n\
         DEBUG NO-SUCH-THING\r\nCONFIG GET enable-debug-command\r\n",
        dir.path().display()
    );
    let got = both(addr, redis.as_ref(), set_dir.as_bytes(), 5);
    assert_eq!(
        got.escape_ascii().to_string(),
        b"+OK\r\n+OK\r\n+OK\r\n\
          -ERR unknown subcommand or wrong number of arguments for 'NO-SUCH-THING'. Try DEBUG HELP.\r\n\
          *2\r\n$20\r\nenable-debug-command\r\n$5\r\nlocal\r\n"
            .escape_ascii()
            .to_string()
    );
}

#[test]
fn local_allows_loopback_clients_only_as_redis() {
    // A client off loopback: one of this machine's own non-loopback addresses.
    let Some(ip) = super::protected_mode::local_non_loopback() else {
        eprintln!("SKIPPED: no local non-loopback IPv4 address");
        return;
    };
    let args = [
        "--bind",
        "0.0.0.0",
        "--protected-mode",
        "no",
        "--enable-protected-configs",
        "local",
        "--enable-debug-command",
        "local",
    ];
    let (_running, addr) = process::serve(echomq(), &args);
    let redis = redis(&args);
    let outside = |addr: std::net::SocketAddr| std::net::SocketAddr::new(ip, addr.port());
    let request = b"CONFIG SET dbfilename elsewhere.rdb\r\nDEBUG SLEEP 0\r\n";
    let refused = super::replies(outside(addr), request, 2);
    if let Some(redis) = &redis {
        let theirs = super::replies(outside(redis.addr()), request, 2);
        assert_eq!(
            theirs.escape_ascii().to_string(),
            refused.escape_ascii().to_string()
        );
    }
    assert!(
        refused.starts_with(
            b"-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n-ERR DEBUG command not allowed."
        ),
        "{}",
        refused.escape_ascii()
    );
    let allowed = both(addr, redis.as_ref(), request, 2);
    assert_eq!(allowed, b"+OK\r\n+OK\r\n");
}
