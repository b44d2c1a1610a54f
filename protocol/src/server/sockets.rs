//! Opening the plain and TLS ports on the `bind` addresses, at start and when CONFIG SET
//! changes `port`, `bind` or `tls-port` (Redis's `updatePort`, `applyBind`, `applyTLSPort`).
//!
//! A change opens what the new values need first ([`prepare`]: the listeners on addresses
//! that stay are kept as they are, the others are bound; a TLS port being opened gets its
//! configuration built), and only when everything opened does [`commit`] put the new sets in
//! place and close the listeners no longer wanted; otherwise ([`abandon`]) the reply is
//! Redis's error and nothing changed. Connections already accepted are never touched. `port 0`
//! closes the plain port, `tls-port 0` the TLS one. As in Redis, the TLS configuration is
//! built when a TLS port first opens and kept after `tls-port 0`: opening one again reuses it
//! (the `tls-*` parameters rebuild it only while a TLS port is open).
//!
//! A new address the kernel sees as overlapping a current one on the same port (`*` while
//! `127.0.0.1` is bound) cannot be bound beside it: then the port is changed as Redis changes
//! every port, closing its listeners first and binding the old addresses again when the new
//! ones fail (or when the command is refused later).

use std::net::{SocketAddr, ToSocketAddrs};

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::error::{ConfigRefusal, ConfigWhy};
use crate::state::sockets::{PortKind, Slot};
use crate::state::{ServerState, Settings};

/// Redis's reply when a port cannot be opened.
const PORT_FAILED: &str = "Unable to listen on this port. Check server logs.";
/// Redis's reply when the `bind` addresses cannot be bound.
const BIND_FAILED: &str = "Failed to bind to specified addresses.";
/// Redis's reply when the TLS configuration cannot be built.
const TLS_FAILED: &str = "Unable to update TLS configuration. Check server logs.";

/// What a CONFIG SET of `port`, `bind` or `tls-port` opened, to put in place with [`commit`]
/// once every other parameter of the command was accepted (dropping it closes what it opened).
pub(crate) struct Plan {
    plain: Option<Vec<Slot>>,
    tls: Option<Vec<Slot>>,
    /// The TLS configuration of a TLS port being opened.
    acceptor: Option<TlsAcceptor>,
    /// Ports whose listeners were closed before binding (an overlapping address), with the
    /// `bind` and port to open again if the command is refused.
    closed: Vec<(PortKind, String, u16)>,
}

/// The words of `bind` (Redis's default, every address, when there are none).
fn bind_words(bind: &str) -> Vec<&str> {
    let words: Vec<&str> = bind.split_whitespace().collect();
    if words.is_empty() {
        vec!["*", "-::*"]
    } else {
        words
    }
}

/// Opens `port` on every address of `bind` (words, as Redis's `bind`: `*` is every IPv4
/// address, `::*` every IPv6 one, and a leading `-` makes an address optional: one that
/// cannot be bound is skipped with a warning). A listener of `current` already on an address
/// is kept rather than bound again. With port 0, every address gets the port the first one
/// got (a free one). A required address that fails ends it with an error naming
/// `host:port`, for the caller to log once it gives up.
pub(crate) fn open_set(
    bind: &str,
    port: u16,
    backlog: u32,
    current: &[SocketAddr],
) -> std::io::Result<Vec<Slot>> {
    let mut slots = Vec::new();
    let mut port = port;
    for word in bind_words(bind) {
        let (optional, host) = match word.strip_prefix('-') {
            Some(host) => (true, host),
            None => (false, word),
        };
        let host = match host {
            "*" => "0.0.0.0",
            "::*" => "::",
            other => other,
        };
        let opened = (host, port)
            .to_socket_addrs()
            .map(|addrs| addrs.collect::<Vec<_>>())
            .and_then(|addrs| match current.iter().find(|a| addrs.contains(a)) {
                Some(kept) => Ok(Slot::Keep(*kept)),
                None => listen(&addrs, backlog).map(Slot::Fresh),
            });
        match opened {
            Ok(slot) => {
                if let Slot::Fresh(listener) = &slot {
                    port = listener.local_addr()?.port();
                }
                slots.push(slot);
            }
            Err(e) => {
                let text = crate::persist::aof::failure::os_error_text(&e);
                let failed = format!("{host}:{port}: {text}");
                if !optional {
                    return Err(std::io::Error::new(e.kind(), failed));
                }
                tracing::warn!("Could not create server TCP listening socket {failed}");
            }
        }
    }
    if slots.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "no address to bind",
        ));
    }
    Ok(slots)
}

/// The listeners of `slots` that were opened (at start, when nothing is kept).
pub(crate) fn fresh(slots: Vec<Slot>) -> Vec<TcpListener> {
    slots
        .into_iter()
        .filter_map(|slot| match slot {
            Slot::Fresh(listener) => Some(listener),
            Slot::Keep(_) => None,
        })
        .collect()
}

/// Binds the first of `addrs` that binds and listens with `backlog` (on the current runtime).
fn listen(addrs: &[SocketAddr], backlog: u32) -> std::io::Result<TcpListener> {
    let mut last = None;
    for addr in addrs {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        match socket.bind(*addr).and_then(|()| socket.listen(backlog)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, "no address to bind")
    }))
}

/// The parameter of `candidates` a CONFIG SET named first (Redis applies them in that order,
/// and its error names the one whose apply failed), with its error text.
fn culprit(named: &[&str], candidates: &[&'static str]) -> (String, &'static str) {
    let name = named
        .iter()
        .find(|n| candidates.iter().any(|c| c.eq_ignore_ascii_case(n)))
        .copied()
        .unwrap_or(candidates[0]);
    let text = if name.eq_ignore_ascii_case("bind") {
        BIND_FAILED
    } else {
        PORT_FAILED
    };
    (name.to_string(), text)
}

fn refusal(name: String, text: &str) -> ConfigRefusal {
    ConfigRefusal::new(&name, ConfigWhy::Other(text.into()))
}

/// Opens what `after`'s `port`, `bind` and `tls-port` need beyond `before`'s (`named`: the
/// parameters of the CONFIG SET, in its order): `None` when they did not change.
pub(crate) fn prepare(
    state: &ServerState,
    named: &[&str],
    before: &Settings,
    after: &Settings,
) -> Result<Option<Plan>, ConfigRefusal> {
    let bind_changed = before.bind != after.bind;
    let plain_changed = bind_changed || before.port != after.port;
    let tls_port = after.listeners.tls_port;
    let tls_changed = before.listeners.tls_port != tls_port || (bind_changed && tls_port != 0);
    if !plain_changed && !tls_changed {
        return Ok(None);
    }
    let sockets = state.sockets();
    let Some(runtime) = sockets.runtime().filter(|_| !sockets.is_closed()) else {
        let (name, text) = culprit(named, &["port", "bind", "tls-port"]);
        return Err(refusal(name, text));
    };
    let _entered = runtime.enter();
    let backlog = after.tcp_backlog;
    let mut plan = Plan {
        plain: None,
        tls: None,
        acceptor: None,
        closed: Vec::new(),
    };
    if plain_changed {
        let opened = if after.port == 0 {
            Ok(Vec::new())
        } else {
            let was = (before.bind.as_str(), before.port);
            let wanted = (after.bind.as_str(), after.port);
            open_port(state, PortKind::Plain, was, wanted, backlog, &mut plan)
        };
        match opened {
            Ok(slots) => plan.plain = Some(slots),
            Err(e) => {
                tracing::warn!("Could not create server TCP listening socket {e}");
                abandon(state, plan);
                let (name, text) = culprit(named, &["port", "bind"]);
                return Err(refusal(name, text));
            }
        }
    }
    if tls_changed {
        if tls_port != 0 && state.tls_acceptor().is_none() {
            match super::tls::acceptor(&after.listeners) {
                Ok(acceptor) => plan.acceptor = Some(acceptor),
                Err(e) => {
                    tracing::warn!("{e}");
                    abandon(state, plan);
                    return Err(refusal("tls-port".into(), TLS_FAILED));
                }
            }
        }
        let opened = if tls_port == 0 {
            Ok(Vec::new())
        } else {
            let was = (before.bind.as_str(), before.listeners.tls_port);
            let wanted = (after.bind.as_str(), tls_port);
            open_port(state, PortKind::Tls, was, wanted, backlog, &mut plan)
        };
        match opened {
            Ok(slots) => plan.tls = Some(slots),
            Err(e) => {
                tracing::warn!("Could not create server TCP listening socket {e}");
                abandon(state, plan);
                let (name, text) = culprit(named, &["tls-port", "bind"]);
                return Err(refusal(name, text));
            }
        }
    }
    Ok(Some(plan))
}

/// Opens one port's new set beside the current one; when a new address overlaps a current
/// one on the same port, closes the current listeners first, as Redis does (recorded in
/// `plan`, and bound again right away if the new set fails).
fn open_port(
    state: &ServerState,
    kind: PortKind,
    was: (&str, u16),
    wanted: (&str, u16),
    backlog: u32,
    plan: &mut Plan,
) -> std::io::Result<Vec<Slot>> {
    let sockets = state.sockets();
    let current = sockets.addrs(kind);
    match open_set(wanted.0, wanted.1, backlog, &current) {
        Err(e)
            if e.kind() == std::io::ErrorKind::AddrInUse
                && current.iter().any(|a| a.port() == wanted.1) =>
        {
            sockets.replace(kind, Vec::new());
            match open_set(wanted.0, wanted.1, backlog, &[]) {
                Ok(slots) => {
                    plan.closed.push((kind, was.0.to_string(), was.1));
                    Ok(slots)
                }
                Err(e) => {
                    reopen(state, kind, was.0, was.1, backlog);
                    Err(e)
                }
            }
        }
        opened => opened,
    }
}

/// Binds `bind` and `port` again for `kind` (a change closed them, then failed).
fn reopen(state: &ServerState, kind: PortKind, bind: &str, port: u16, backlog: u32) {
    match open_set(bind, port, backlog, &[]) {
        Ok(slots) => state.sockets().replace(kind, slots),
        Err(e) => tracing::warn!("Failed to bind the previous addresses again (port {port}): {e}"),
    }
}

/// Drops what [`prepare`] opened (the command was refused) and binds again what it closed.
pub(crate) fn abandon(state: &ServerState, plan: Plan) {
    let Plan {
        plain, tls, closed, ..
    } = plan;
    drop((plain, tls));
    let Some(runtime) = state.sockets().runtime() else {
        return;
    };
    let _entered = runtime.enter();
    let backlog = state.settings().tcp_backlog;
    for (kind, bind, port) in closed {
        reopen(state, kind, &bind, port, backlog);
    }
}

/// Puts what [`prepare`] opened in place, closes the listeners no longer wanted, and logs
/// what the server now listens on.
pub(crate) fn commit(state: &ServerState, plan: Plan) {
    let sockets = state.sockets();
    if let Some(acceptor) = plan.acceptor {
        state.set_tls_acceptor(acceptor);
    }
    if let Some(plain) = plan.plain {
        sockets.replace(PortKind::Plain, plain);
        log_listening(
            &sockets.addrs(PortKind::Plain),
            "",
            "port 0: no plain TCP port",
        );
    }
    if let Some(tls) = plan.tls {
        sockets.replace(PortKind::Tls, tls);
        log_listening(
            &sockets.addrs(PortKind::Tls),
            " (tls)",
            "tls-port 0: no TLS port",
        );
    }
}

fn log_listening(addrs: &[SocketAddr], kind: &str, none: &str) {
    if addrs.is_empty() {
        tracing::info!("{none}");
    }
    for addr in addrs {
        tracing::info!("Listening on {addr}{kind}");
    }
}
