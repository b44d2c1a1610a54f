//! The `echomq` binary: `echomq serve` starts, prints its address, applies a config file, and
//! answers clients; it stops on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::process::Running;

#[test]
fn serve_prints_its_address_and_applies_a_config_file() {
    let dir = std::env::temp_dir().join(format!("echomq-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("echomq.conf");
    std::fs::write(
        &config,
        "# test settings\nstream-node-max-entries 7\nmaxclients 50\nnotify-keyspace-events \"Ex$\"\n",
    )
    .unwrap();
    let mut running = Running(
        Command::new(env!("CARGO_BIN_EXE_echomq"))
            .args(crate::support::process::SERVE_ARGS)
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let child = &mut running.0;
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let addr = first_line.trim().rsplit(' ').next().unwrap().to_string();
    assert!(
        first_line.contains("listening on 127.0.0.1:"),
        "{first_line}"
    );

    let mut client = TcpStream::connect(&addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    client
        .write_all(b"CONFIG GET stream-node-max-entries\r\n")
        .unwrap();
    let expected = b"*2\r\n$23\r\nstream-node-max-entries\r\n$1\r\n7\r\n";
    let mut reply = vec![0u8; expected.len()];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(reply, expected);
    // The notification classes, shown in Redis's letter order.
    client
        .write_all(b"CONFIG GET notify-keyspace-events\r\n")
        .unwrap();
    let expected = b"*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\n$xE\r\n";
    let mut reply = vec![0u8; expected.len()];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(reply, expected);

    // SIGTERM stops it cleanly.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(dir);
}
