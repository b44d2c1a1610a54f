//! A client's address as CLIENT LIST, MONITOR and the slow log show it, and whether it counts
//! as local for protected mode.
//!
//! A TCP client (plain or TLS) is `ip:port`, local when on loopback ([`is_loopback`]). A unix
//! socket client is the socket's path with port 0 (`/run/echomq.sock:0`, both `addr` and
//! `laddr`, as Redis shows it) and is always local (Redis's `connUnixIsLocal`).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use super::protected::is_loopback;

/// Where a client connected from (or to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientAddr {
    /// A TCP connection, plain or TLS.
    Tcp(SocketAddr),
    /// A unix socket connection: the socket's path.
    Unix(Arc<str>),
}

impl ClientAddr {
    /// The IP address, for a TCP connection.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            ClientAddr::Tcp(addr) => Some(addr.ip()),
            ClientAddr::Unix(_) => None,
        }
    }
}

impl From<SocketAddr> for ClientAddr {
    fn from(addr: SocketAddr) -> Self {
        ClientAddr::Tcp(addr)
    }
}

impl std::str::FromStr for ClientAddr {
    type Err = std::net::AddrParseError;

    /// A TCP address (`ip:port`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse().map(ClientAddr::Tcp)
    }
}

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientAddr::Tcp(addr) => addr.fmt(f),
            ClientAddr::Unix(path) => write!(f, "{path}:0"),
        }
    }
}

/// A peer that protected mode and the `local` setting values judge (Redis's `connIsLocal`).
pub trait Peer {
    /// Whether the peer counts as local.
    fn is_local(&self) -> bool;
}

impl Peer for SocketAddr {
    fn is_local(&self) -> bool {
        is_loopback(self)
    }
}

impl Peer for ClientAddr {
    fn is_local(&self) -> bool {
        match self {
            ClientAddr::Tcp(addr) => is_loopback(addr),
            ClientAddr::Unix(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_clients_are_local_and_shown_with_port_zero() {
        let unix = ClientAddr::Unix("/tmp/echomq.sock".into());
        assert!(unix.is_local());
        assert_eq!(unix.to_string(), "/tmp/echomq.sock:0");
        assert_eq!(unix.ip(), None);
        let tcp = ClientAddr::from("10.0.0.1:7".parse::<SocketAddr>().unwrap());
        assert!(!tcp.is_local());
        assert_eq!(tcp.to_string(), "10.0.0.1:7");
    }
}
