//! The connection the two server backends keep: one connection (to a server, or a cluster
//! connection that holds one per node) behind a mutex, its timeouts, and the one place a failed
//! connect or call becomes a feed error.
//!
//! Invariants: a call runs with the socket's read timeout at least `response_timeout` plus the
//! call's BLOCK time (raised once and left raised: a blocking reader's connection is its own);
//! a connection that timed out or broke is dropped before the error is returned (a late reply
//! would answer the next command), and the next call opens a new one.

use std::sync::OnceLock;
use std::time::Duration;

use parking_lot::Mutex;
use redis::Value;

use super::redis::server_error;
use super::wire::Replication;
use crate::feed::error::FeedError;

/// What a [`Link`] needs of its connection.
pub(super) trait Socket: Send {
    /// Sets the read timeout of the connection's socket(s).
    fn set_read_timeout(&self, timeout: Duration) -> redis::RedisResult<()>;
}

impl Socket for redis::Connection {
    fn set_read_timeout(&self, timeout: Duration) -> redis::RedisResult<()> {
        redis::Connection::set_read_timeout(self, Some(timeout))
    }
}

impl Socket for redis::cluster::ClusterConnection {
    fn set_read_timeout(&self, timeout: Duration) -> redis::RedisResult<()> {
        redis::cluster::ClusterConnection::set_read_timeout(self, Some(timeout))
    }
}

/// An open connection and the read timeout its socket has now.
struct Live<C> {
    connection: C,
    /// `response_timeout`, or more after a blocking read raised it.
    read_timeout: Duration,
}

/// A backend's connection and settings.
pub(super) struct Link<C> {
    live: Mutex<Option<Live<C>>>,
    /// The TCP connect and the handshake, together.
    pub(super) connect_timeout: Duration,
    /// A reply, after any BLOCK time the command asked for.
    pub(super) response_timeout: Duration,
    /// The opt-in replicated append.
    pub(super) replication: Option<Replication>,
    /// Whether the server has XIDMPRECORD, once asked (`Backend::records_appends`); a fork
    /// inherits the answer.
    pub(super) records: OnceLock<bool>,
}

impl<C: Socket> Link<C> {
    /// No connection yet; a zero timeout is taken as one millisecond, since the socket layer
    /// cannot wait zero.
    pub(super) fn new(connect_timeout: Duration, response_timeout: Duration) -> Link<C> {
        let least = Duration::from_millis(1);
        Link {
            live: Mutex::new(None),
            connect_timeout: connect_timeout.max(least),
            response_timeout: response_timeout.max(least),
            replication: None,
            records: OnceLock::new(),
        }
    }

    /// The same settings, no connection yet (for a fork).
    pub(super) fn settings(&self) -> Link<C> {
        Link {
            live: Mutex::new(None),
            connect_timeout: self.connect_timeout,
            response_timeout: self.response_timeout,
            replication: self.replication,
            records: self.records.clone(),
        }
    }

    /// Opts in to replicated appends (at least one replica).
    pub(super) fn replicate(&mut self, replicas: u32, timeout: Duration) {
        self.replication = Some(Replication {
            replicas: replicas.max(1),
            timeout,
        });
    }

    /// Uses `connection`, just opened with its read timeout at `response_timeout`.
    pub(super) fn install(&self, connection: C) {
        *self.live.lock() = Some(Live {
            connection,
            read_timeout: self.response_timeout,
        });
    }

    /// Runs `call` on the connection, opening one with `open` if the last call dropped it, with
    /// the read timeout raised to cover `block`. `server` names the server in errors.
    pub(super) fn run(
        &self,
        block: Duration,
        open: impl FnOnce() -> Result<C, FeedError>,
        server: impl FnOnce() -> String,
        call: impl FnOnce(&mut C) -> redis::RedisResult<Value>,
    ) -> Result<Value, FeedError> {
        let mut slot = self.live.lock();
        let live = match slot.take() {
            Some(live) => slot.insert(live),
            None => slot.insert(Live {
                connection: open()?,
                read_timeout: self.response_timeout,
            }),
        };
        let needed = self.response_timeout.saturating_add(block);
        if needed > live.read_timeout {
            if let Err(e) = live.connection.set_read_timeout(needed) {
                *slot = None;
                return Err(FeedError::Backend(e.to_string()));
            }
            live.read_timeout = needed;
        }
        let waited = live.read_timeout;
        call(&mut live.connection).map_err(|e| {
            let (broken, error) = failure(e, server, waited);
            if broken {
                *slot = None;
            }
            error
        })
    }
}

/// The mapping from a failed connect (with the handshake) to the feed's error: a timeout
/// ([`FeedError::ConnectTimeout`]), a refused or broken connection
/// ([`FeedError::ConnectFailed`]: no command was sent), or what the server answered the
/// handshake.
pub(super) fn connect_failure(
    e: redis::RedisError,
    server: impl FnOnce() -> String,
    timeout: Duration,
) -> FeedError {
    if e.is_timeout() {
        FeedError::ConnectTimeout {
            server: server(),
            after_ms: millis(timeout),
        }
    } else if e.code().is_none()
        && (e.is_io_error() || e.is_connection_refusal() || e.is_connection_dropped())
    {
        FeedError::ConnectFailed {
            server: server(),
            reason: e.to_string(),
        }
    } else {
        server_error(e)
    }
}

/// The one mapping from a failed call to the feed's error, for one server and a cluster
/// alike, and whether the connection is broken (timed out, lost, refused, or a cluster node
/// not found): the caller drops a broken one. `waited` is the timeout that ran out. A broken
/// connection is [`FeedError::ConnectionLost`] (the command may have run), never
/// [`FeedError::ConnectFailed`], which only a failed connect (before any command) returns.
fn failure(
    e: redis::RedisError,
    server: impl FnOnce() -> String,
    waited: Duration,
) -> (bool, FeedError) {
    let broken = e.is_timeout()
        || e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.kind() == redis::ErrorKind::ClusterConnectionNotFound;
    let error = if e.is_timeout() {
        FeedError::ReplyTimeout {
            server: server(),
            after_ms: millis(waited),
        }
    } else if broken && e.code().is_none() {
        // Conservatively "may have run": a cluster call that ends on a refused or missing node
        // may have reached another node before the library's retries.
        FeedError::ConnectionLost {
            server: server(),
            reason: e.to_string(),
        }
    } else {
        server_error(e)
    };
    (broken, error)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
