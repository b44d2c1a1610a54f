//! The TCP ports a server listens on, plain (`port`, one listener per `bind` address) and TLS
//! (`tls-port`, on the same addresses), shared by the accept loop and CONFIG SET, which may
//! replace either set while the server runs (as Redis's `changeListener`).
//!
//! Invariants: the accept loop is the only task that accepts ([`Sockets::poll_accept`]), and
//! it is woken whenever a set is replaced, so it never waits on a listener that was closed
//! while missing a new one. A listener is closed when it leaves its set (at the replacement,
//! before CONFIG SET replies), and connections it accepted stay open. Once the server stops,
//! both sets are empty ([`Sockets::close_all`]) and stay so.

use std::net::SocketAddr;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};

/// Which port a connection came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PortKind {
    /// `port`.
    Plain,
    /// `tls-port`.
    Tls,
}

/// The listeners of both ports (see the module docs).
#[derive(Default)]
pub(crate) struct Sockets {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    plain: Vec<TcpListener>,
    tls: Vec<TcpListener>,
    /// The accept loop's waker, woken when a set changes.
    waker: Option<Waker>,
    /// Which port the next poll tries first, so that neither starves the other.
    tls_first: bool,
    /// The runtime the accept loop runs on: new listeners register with it.
    runtime: Option<tokio::runtime::Handle>,
    /// Set once the server stops: nothing opens again.
    closed: bool,
}

impl std::fmt::Debug for Sockets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sockets")
            .field("plain", &self.addrs(PortKind::Plain))
            .field("tls", &self.addrs(PortKind::Tls))
            .finish()
    }
}

impl Sockets {
    /// The local addresses of one port's listeners, in `bind` order.
    pub(crate) fn addrs(&self, kind: PortKind) -> Vec<SocketAddr> {
        let inner = self.inner.lock();
        inner
            .set(kind)
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// Replaces one port's listeners with `order` (current listeners kept by their address,
    /// fresh ones as opened), closes the current ones it does not keep, and wakes the accept
    /// loop.
    pub(crate) fn replace(&self, kind: PortKind, order: Vec<Slot>) {
        let mut inner = self.inner.lock();
        if inner.closed {
            return;
        }
        let mut old = std::mem::take(inner.set_mut(kind));
        let mut new = Vec::with_capacity(order.len());
        for slot in order {
            match slot {
                Slot::Keep(addr) => {
                    let at = old
                        .iter()
                        .position(|l| l.local_addr().is_ok_and(|a| a == addr));
                    if let Some(at) = at {
                        new.push(old.swap_remove(at));
                    }
                }
                Slot::Fresh(listener) => new.push(listener),
            }
        }
        *inner.set_mut(kind) = new;
        if let Some(waker) = inner.waker.take() {
            waker.wake();
        }
        drop(inner);
        // Closed here, before CONFIG SET replies: a client connecting after the reply is refused.
        drop(old);
    }

    /// Records the runtime the accept loop runs on (new listeners register with it).
    pub(crate) fn set_runtime(&self, runtime: tokio::runtime::Handle) {
        self.inner.lock().runtime = Some(runtime);
    }

    /// The runtime new listeners register with: the caller's, else the accept loop's.
    pub(crate) fn runtime(&self) -> Option<tokio::runtime::Handle> {
        tokio::runtime::Handle::try_current()
            .ok()
            .or_else(|| self.inner.lock().runtime.clone())
    }

    /// Whether the server stopped (its ports closed for good).
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().closed
    }

    /// Whether the accept loop runs (the ports are then the server's to change only through
    /// CONFIG SET).
    pub(crate) fn is_serving(&self) -> bool {
        let inner = self.inner.lock();
        inner.runtime.is_some() && !inner.closed
    }

    /// Closes both ports for good (the server stopped).
    pub(crate) fn close_all(&self) {
        let mut inner = self.inner.lock();
        inner.closed = true;
        let plain = std::mem::take(&mut inner.plain);
        let tls = std::mem::take(&mut inner.tls);
        inner.waker = None;
        drop(inner);
        drop((plain, tls));
    }

    /// The next connection on either port (the accept loop's; one caller only).
    pub(crate) fn poll_accept(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<(std::io::Result<(TcpStream, SocketAddr)>, PortKind)> {
        let mut inner = self.inner.lock();
        match &inner.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => inner.waker = Some(cx.waker().clone()),
        }
        inner.tls_first = !inner.tls_first;
        let order = if inner.tls_first {
            [PortKind::Tls, PortKind::Plain]
        } else {
            [PortKind::Plain, PortKind::Tls]
        };
        for kind in order {
            for listener in inner.set(kind) {
                if let Poll::Ready(accepted) = listener.poll_accept(cx) {
                    return Poll::Ready((accepted, kind));
                }
            }
        }
        Poll::Pending
    }
}

impl Inner {
    fn set(&self, kind: PortKind) -> &Vec<TcpListener> {
        match kind {
            PortKind::Plain => &self.plain,
            PortKind::Tls => &self.tls,
        }
    }

    fn set_mut(&mut self, kind: PortKind) -> &mut Vec<TcpListener> {
        match kind {
            PortKind::Plain => &mut self.plain,
            PortKind::Tls => &mut self.tls,
        }
    }
}

/// One place in a port's new set of listeners (see [`Sockets::replace`]).
#[derive(Debug)]
pub(crate) enum Slot {
    /// The current listener on this local address, kept open.
    Keep(SocketAddr),
    /// A listener just opened.
    Fresh(TcpListener),
}
