//! Child processes the tests start: a guard that kills one by pid when the test stops early,
//! and `echomq serve` on a free port with the address it prints.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// Kills the child by pid (and reaps it) when dropped, so a failing test leaves no process.
#[derive(Debug)]
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `echomq` binary under test.
pub fn echomq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_echomq"))
}

/// Runs `command serve --port 0 <args>` (`command` being [`echomq`] with its environment and
/// directory set) and waits for the line `echomq serve` prints first, ending in its address.
pub fn serve(mut command: Command, args: &[&str]) -> (Running, SocketAddr) {
    let mut running = Running(
        command
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(running.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("echomq serve printed {line:?}, not its address"));
    (running, addr)
}
