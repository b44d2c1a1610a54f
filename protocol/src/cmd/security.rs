//! Cross-protocol attacks: a web page can make a browser send an HTTP request to a loopback
//! port, and every line of it reaches the server as an inline command (`POST / HTTP/1.1`,
//! `Host: x`, then a body of the attacker's choosing). Redis treats `POST` and `Host:` (any
//! case) as commands that close the connection at once, with nothing more run or answered
//! (replies still pending are dropped too), and logs a warning at most once a minute;
//! [`is_attack`] and [`warn`] are the same; `execute` answers such a request with
//! `Action::Drop`.

use crate::state::addr::ClientAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use echomq_engine::{Clock, SystemClock};

/// Seconds between two warnings at most (Redis's).
const WARN_INTERVAL_S: u64 = 60;

/// The Unix second of the last warning (0: none yet).
static LAST_WARNING_S: AtomicU64 = AtomicU64::new(0);

/// Whether a command named `name` is a cross-protocol attack: `POST` or `Host:`, any case.
pub fn is_attack(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"post") || name.eq_ignore_ascii_case(b"host:")
}

/// Logs Redis's warning for an attack from `peer`, unless one was logged in the last minute.
pub fn warn(peer: &ClientAddr) {
    let now = SystemClock.now_ms() / 1000;
    let last = LAST_WARNING_S.load(Ordering::Relaxed);
    if last != 0 && now.abs_diff(last) <= WARN_INTERVAL_S {
        return;
    }
    if LAST_WARNING_S
        .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
        .is_err()
    {
        return;
    }
    tracing::warn!(
        "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection from {peer} aborted."
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_and_host_in_any_case_are_attacks_and_nothing_else_is() {
        for name in [&b"POST"[..], b"post", b"PoSt", b"Host:", b"HOST:", b"host:"] {
            assert!(is_attack(name), "{:?}", name.escape_ascii().to_string());
        }
        for name in [&b"GET"[..], b"host", b"posts", b"Host", b"PING", b""] {
            assert!(!is_attack(name), "{:?}", name.escape_ascii().to_string());
        }
    }
}
