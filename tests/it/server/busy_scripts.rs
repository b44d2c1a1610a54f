//! A script running past `busy-reply-threshold`, with real timing, against `echomq serve` and
//! Redis 8.8 alike: other clients get `-BUSY` (the EVAL and the FUNCTION texts), SCRIPT KILL
//! and FUNCTION KILL stop a script that has not written (each only its own kind), one that
//! wrote is `-UNKILLABLE`, FUNCTION STATS names the running function, and SHUTDOWN NOSAVE
//! stops the server. The thresholds are short (50 ms) to keep the test lean; echomq runs
//! with two worker threads (the script occupies one).

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use crate::aof::interchange::redis8;
use crate::aof::{Conn, text};
use crate::support::process::{echomq, serve};

const LIB: &str = "#!lua name=spin\n\
    redis.register_function('spin', function() local i = 0 while true do i = i + 1 end end)";

fn reply(c: &mut Conn, args: &[&str]) -> String {
    match c.run(args) {
        Ok(v) => text(&v),
        Err(e) => format!("error: {e}"),
    }
}

/// Starts `args` on its own connection; waits until the script is past the threshold.
fn spin(addr: SocketAddr, args: &'static [&'static str]) -> thread::JoinHandle<String> {
    let handle = thread::spawn(move || reply(&mut Conn::open(addr), args));
    thread::sleep(Duration::from_millis(300));
    handle
}

/// The scenario's replies (durations left out).
fn scenario(addr: SocketAddr) -> Vec<String> {
    let mut c = Conn::open(addr);
    let mut out = Vec::new();
    c.ok(&["CONFIG", "SET", "busy-reply-threshold", "50"]);
    out.push(reply(&mut c, &["CONFIG", "GET", "lua-time-limit"]));
    out.push(reply(&mut c, &["FUNCTION", "LOAD", LIB]));

    // An EVAL that never writes.
    let running = spin(
        addr,
        &["EVAL", "local i = 0 while true do i = i + 1 end", "0"],
    );
    out.push(reply(&mut c, &["PING"]));
    out.push(reply(&mut c, &["GET", "x"]));
    out.push(reply(&mut c, &["FUNCTION", "KILL"]));
    out.push(reply(&mut c, &["FUNCTION", "STATS"]));
    out.push(reply(&mut c, &["SHUTDOWN"]));
    out.push(reply(&mut c, &["SCRIPT", "KILL"]));
    out.push(running.join().unwrap());
    out.push(reply(&mut c, &["SCRIPT", "KILL"]));
    out.push(reply(&mut c, &["PING"]));

    // A function.
    let running = spin(addr, &["FCALL", "spin", "0"]);
    out.push(reply(&mut c, &["PING"]));
    out.push(reply(&mut c, &["SCRIPT", "KILL"]));
    let stats = reply(&mut c, &["FUNCTION", "STATS"]);
    out.push(
        stats
            .split("duration_ms")
            .next()
            .unwrap_or_default()
            .to_string(),
    );
    out.push(reply(&mut c, &["FUNCTION", "KILL"]));
    out.push(running.join().unwrap());

    // A script that wrote: only SHUTDOWN NOSAVE ends it.
    let running = spin(
        addr,
        &["EVAL", "redis.call('set', 'x', '1') while true do end", "0"],
    );
    out.push(reply(&mut c, &["SCRIPT", "KILL"]));
    out.push(
        reply(&mut c, &["SHUTDOWN", "NOSAVE"])
            .contains("error")
            .to_string(),
    );
    out.push(running.join().unwrap().contains("error").to_string());
    out
}

#[test]
fn busy_scripts_are_answered_and_killed_as_redis8_does() {
    let Some(redis) = redis8() else { return };
    // One worker runs the script; the answers need another.
    let (_server, addr) = serve(echomq(), &["--threads", "2"]);
    let ours = scenario(addr);
    let dir = tempfile::tempdir().unwrap();
    let (_redis, raddr) = crate::rdb::start_redis(&redis, dir.path());
    let theirs = scenario(raddr);
    assert_eq!(ours, theirs);
    assert!(
        ours[2].contains("You can only call SCRIPT KILL"),
        "{ours:?}"
    );
}
