//! MONITOR: the clients that see every command the server runs, as Redis prints it
//! (`+<seconds>.<micros> [<db> <ip:port>] "arg" "arg"...`, arguments quoted and escaped as
//! `sdscatrepr` does).
//!
//! A command's line goes to each monitor's mailbox (the one pub/sub uses, so it never waits
//! for a slow monitor and counts toward its `normal` output limit: Redis counts a monitor as
//! a normal client). With no monitor, feeding costs one atomic load.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::client::ClientInfo;
use super::pubsub::{Limits, deliver};

/// The monitoring clients.
#[derive(Debug, Default)]
pub(crate) struct Monitors {
    clients: Mutex<Vec<Arc<ClientInfo>>>,
    count: AtomicUsize,
}

/// Appends `arg` as `sdscatrepr` writes it.
fn put_repr(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'"');
    for &b in arg {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b' '..=b'~' => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// The line a monitor receives for `argv`, run at `now_us` (Unix microseconds) in `db` by
/// the client at `peer`.
pub(crate) fn line(now_us: u64, db: usize, peer: &str, argv: &[&[u8]]) -> Vec<u8> {
    let mut out = format!(
        "+{}.{:06} [{db} {peer}]",
        now_us / 1_000_000,
        now_us % 1_000_000
    )
    .into_bytes();
    for arg in argv {
        out.push(b' ');
        put_repr(&mut out, arg);
    }
    out.extend_from_slice(b"\r\n");
    out
}

impl Monitors {
    /// Whether anyone monitors.
    pub(crate) fn any(&self) -> bool {
        self.count.load(Ordering::Relaxed) > 0
    }

    /// `client` starts monitoring (once).
    pub(crate) fn add(&self, client: &Arc<ClientInfo>) {
        let mut clients = self.clients.lock();
        if !clients.iter().any(|c| c.id == client.id) {
            client.pubsub.set_monitoring(true);
            clients.push(Arc::clone(client));
            self.count.store(clients.len(), Ordering::Relaxed);
        }
    }

    /// `client` stops monitoring (RESET, disconnect).
    pub(crate) fn remove(&self, id: u64) {
        let mut clients = self.clients.lock();
        clients.retain(|c| {
            if c.id == id {
                c.pubsub.set_monitoring(false);
            }
            c.id != id
        });
        self.count.store(clients.len(), Ordering::Relaxed);
    }

    /// Sends `line` to every monitor but `from` (Redis does not show a monitor its own
    /// commands only because it runs none; echomq follows that by skipping it).
    pub(crate) fn feed(&self, from: u64, line: &[u8], limits: &Limits<'_>) {
        for client in self.clients.lock().iter().filter(|c| c.id != from) {
            deliver(client, line, limits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_quoted_and_escaped_like_sdscatrepr() {
        let argv: &[&[u8]] = &[b"SET", b"k", b"a \"b\"\\\n\x01"];
        assert_eq!(
            line(1_339_518_083_107_412, 0, "127.0.0.1:60866", argv),
            b"+1339518083.107412 [0 127.0.0.1:60866] \"SET\" \"k\" \"a \\\"b\\\"\\\\\\n\\x01\"\r\n"
        );
    }
}
