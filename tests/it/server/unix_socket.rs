//! The unix socket (`unixsocket`, `unixsocketperm`): redis-cli `-s` and redis-rs
//! (`redis+unix://`, `unix://`) connect, CLIENT LIST shows `addr=PATH:0` and the flag `U` as Redis does,
//! protected mode counts the socket as local, the file gets the mode asked for, `port 0` leaves
//! the socket alone, and the file is removed when the server stops.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::process::Command;
use std::time::{Duration, Instant};

use super::clients::{redis_cli, run};
use super::tls::{free_port, serve_with};

/// `redis-cli -s PATH args`: what it printed (errors included).
fn cli_unix(path: &str, args: &[&str]) -> String {
    let output = run(
        Command::new(redis_cli().unwrap())
            .args(["-s", path])
            .args(args),
        b"",
    );
    let mut printed = String::from_utf8_lossy(&output.stdout).into_owned();
    printed.push_str(&String::from_utf8_lossy(&output.stderr));
    printed
}

#[test]
fn unix_socket_serves_redis_cli_and_redis_rs_and_is_removed_at_shutdown() {
    let Some(_) = redis_cli() else { return };
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("echomq.sock").display().to_string();
    let port = free_port();
    let config = format!("unixsocket {socket}\nunixsocketperm 700\n");
    let (mut server, lines) = serve_with(dir.path(), port, &config, 2);
    assert_eq!(
        lines[1],
        format!(
            "echomq {} listening on {socket} (unix socket)",
            env!("CARGO_PKG_VERSION")
        )
    );
    let meta = std::fs::metadata(&socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);

    assert_eq!(cli_unix(&socket, &["SET", "k", "v"]), "OK\n");
    let list = cli_unix(&socket, &["CLIENT", "LIST"]);
    assert!(
        list.contains(&format!("addr={socket}:0 laddr={socket}:0 ")),
        "{list}"
    );
    // Redis flags a client on the Unix socket `U`.
    assert!(list.contains(" flags=U "), "{list}");
    assert_eq!(
        cli_unix(&socket, &["CONFIG", "GET", "unixsocket*"]),
        format!("unixsocket\n{socket}\nunixsocketperm\n700\n")
    );
    assert!(
        cli_unix(&socket, &["CONFIG", "SET", "unixsocketperm", "777"])
            .contains("can't set immutable config")
    );
    for scheme in ["redis+unix", "unix"] {
        let client = redis::Client::open(format!("{scheme}://{socket}")).unwrap();
        let mut conn = client.get_connection().unwrap();
        let got: String = redis::cmd("GET").arg("k").query(&mut conn).unwrap();
        assert_eq!(got, "v");
    }
    // The plain port is still there beside it.
    let output = run(
        Command::new(redis_cli().unwrap()).args(["-p", &port.to_string(), "GET", "k"]),
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "v\n");

    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "echomq did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!std::path::Path::new(&socket).exists());
}

#[test]
fn port_zero_serves_the_socket_only_and_protected_mode_lets_it_in() {
    let Some(_) = redis_cli() else { return };
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("only.sock").display().to_string();
    // A stale socket file from an earlier run is replaced.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let config = format!("port 0\nunixsocket {socket}\nprotected-mode yes\n");
    let (_server, lines) = serve_with(dir.path(), 0, &config, 1);
    assert!(lines[0].ends_with("(unix socket)"), "{lines:?}");
    assert_eq!(cli_unix(&socket, &["CONFIG", "GET", "port"]), "port\n0\n");
    assert_eq!(cli_unix(&socket, &["PING"]), "PONG\n");
}
