//! The `echomq` command line.
//!
//! Only `serve`, `--version` and `help` exist; `serve` says plainly that the server is not built
//! yet instead of pretending to listen.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Exit status for a command that exists in the interface but has no implementation yet.
const EXIT_NOT_BUILT: u8 = 2;
/// Exit status for a command line we do not understand (`EX_USAGE` from sysexits.h).
const EXIT_USAGE: u8 = 64;

const USAGE: &str = "\
echomq: a pure-Rust stream engine that speaks Redis Streams natively

Usage:
  echomq serve [ARGS...]   run the Redis-protocol server on the embedded engine
  echomq --version         print the version
  echomq help              print this help
";

fn main() -> ExitCode {
    // `args_os`, not `args`: a non-UTF-8 argument must be an error message, not a panic.
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let Some(command) = args.first() else {
        return out(USAGE, ExitCode::SUCCESS);
    };
    match command.to_str() {
        Some("help" | "--help" | "-h") => out(USAGE, ExitCode::SUCCESS),
        Some("--version" | "-V" | "version") => {
            out(&format!("echomq {VERSION}\n"), ExitCode::SUCCESS)
        }
        Some("serve") => err(
            "echomq serve: the Redis-protocol server is not built yet.\n\
             When it is, it will listen on 127.0.0.1:6379 and serve the embedded engine \
             (see the issue \"Server\").\n",
            ExitCode::from(EXIT_NOT_BUILT),
        ),
        _ => err(
            &format!(
                "echomq: unknown command '{}'\n\n{USAGE}",
                command.to_string_lossy()
            ),
            ExitCode::from(EXIT_USAGE),
        ),
    }
}

/// Writes to stdout and returns `code`. A closed stdout (`echomq help | true`) is not worth a
/// panic, which is what `print!` would do.
fn out(text: &str, code: ExitCode) -> ExitCode {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    code
}

/// Writes to stderr and returns `code`.
fn err(text: &str, code: ExitCode) -> ExitCode {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
    code
}
