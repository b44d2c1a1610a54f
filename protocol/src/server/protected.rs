//! Protected mode (Redis's `protected-mode yes`, the default): while the default user has no
//! password (`nopass`, as without `requirepass`), a client that does not connect from the
//! loopback interface gets [`DENIED`] and is closed, counted in `rejected_connections`.
//! Whether a peer is local is Redis's own test ([`is_loopback`]): an IPv4 address starting
//! `127.` or the IPv6 `::1`.

/// Redis's reply to a refused client, word for word.
pub const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Set up an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

pub use crate::state::addr::{ClientAddr, Peer};
pub use crate::state::protected::is_loopback;

/// What the server logs at start when no password is set (Redis's warnings): whether anyone
/// on the network, on the bound interface, or only local clients can connect. `None` with a
/// password.
pub fn startup_warning(
    protected_mode: bool,
    requirepass: &str,
    bind: &str,
) -> Option<&'static str> {
    if !requirepass.is_empty() {
        return None;
    }
    let all_interfaces = bind
        .split_whitespace()
        .map(|a| a.trim_start_matches('-'))
        .any(|a| matches!(a, "*" | "0.0.0.0" | "::" | "::*"));
    Some(match (protected_mode, all_interfaces) {
        (false, true) => {
            "WARNING: echomq does not require authentication and is not protected by network restrictions. It will accept connections from any IP address on any network interface."
        }
        (false, false) => {
            "WARNING: echomq does not require authentication. It will accept connections from any IP address on the configured network interface."
        }
        (true, _) => {
            "WARNING: echomq does not require authentication. It will accept connections from any local client."
        }
    })
}

/// Whether a client from `peer` is refused: protected mode on, no password for the default
/// user (`nopass`), not loopback.
pub fn refuses(protected_mode: bool, default_nopass: bool, peer: &impl Peer) -> bool {
    protected_mode && default_nopass && !peer.is_local()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn loopback_is_127_slash_8_and_ipv6_one_as_redis_decides() {
        for local in ["127.0.0.1:1", "127.0.0.2:1", "127.255.255.255:1", "[::1]:1"] {
            assert!(is_loopback(&addr(local)), "{local}");
        }
        for remote in [
            "10.0.0.1:1",
            "192.168.1.2:1",
            "0.0.0.0:1",
            "128.0.0.1:1",
            "[::2]:1",
            "[::ffff:127.0.0.1]:1",
            "[fe80::1]:1",
        ] {
            assert!(!is_loopback(&addr(remote)), "{remote}");
        }
    }

    #[test]
    fn only_a_remote_peer_without_a_password_in_protected_mode_is_refused() {
        let remote = addr("10.1.2.3:5");
        let local = addr("127.0.0.1:5");
        assert!(refuses(true, true, &remote));
        assert!(!refuses(true, false, &remote));
        assert!(!refuses(false, true, &remote));
        assert!(!refuses(true, true, &local));
        assert!(DENIED.starts_with("-DENIED ") && DENIED.ends_with(".\r\n"));
        assert!(startup_warning(true, "pw", "0.0.0.0").is_none());
        assert!(
            startup_warning(false, "", "0.0.0.0")
                .unwrap()
                .contains("any network interface")
        );
        assert!(
            startup_warning(false, "", "10.0.0.1")
                .unwrap()
                .contains("configured")
        );
        assert!(
            startup_warning(true, "", "0.0.0.0")
                .unwrap()
                .contains("local client")
        );
    }
}
