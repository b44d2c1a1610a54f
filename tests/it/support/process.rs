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

/// What every test's `echomq serve` starts with: any free port, no save points (Redis's
/// defaults would write `dump.rdb` into the working directory), the log on stderr.
pub const SERVE_ARGS: &[&str] = &[
    "serve",
    "--port",
    "0",
    "--save",
    "",
    "--logfile",
    "/dev/stderr",
];

/// The `echomq` binary under test.
pub fn echomq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_echomq"))
}

/// The `echomq` binary under `ulimit -n nofile` (soft and hard), through `sh`.
pub fn echomq_with_nofile(nofile: u64) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", &format!("ulimit -n {nofile} && exec \"$0\" \"$@\"")])
        .arg(env!("CARGO_BIN_EXE_echomq"));
    command
}

/// Runs `command serve --port 0 <args>` (`command` being [`echomq`] with its environment and
/// directory set) and waits for the line `echomq serve` prints first, ending in its address.
/// Persistence is off unless `args` sets save points (`--save ""` comes first: a test must
/// never write a `dump.rdb` into the repository), and the log goes to stderr, so stdout holds
/// only that line.
pub fn serve(command: Command, args: &[&str]) -> (Running, SocketAddr) {
    serve_logging(command, args, Stdio::null())
}

/// The address in the line a started `echomq serve` (its stdout piped) prints first.
pub fn listening_addr(running: &mut Running) -> SocketAddr {
    let mut line = String::new();
    BufReader::new(running.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("echomq serve printed {line:?}, not its address"))
}

/// [`serve`] with the server's log (stderr) going to `log`.
pub fn serve_logging(mut command: Command, args: &[&str], log: Stdio) -> (Running, SocketAddr) {
    let mut running = Running(
        command
            .args(SERVE_ARGS)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let addr = listening_addr(&mut running);
    (running, addr)
}
