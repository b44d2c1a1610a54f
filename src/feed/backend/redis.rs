//! Any Redis-compatible server as a backend (`echomq serve`, Redis 7, Valkey 8), through the
//! `redis` crate's synchronous connection.
//!
//! One connection behind a mutex (`link.rs`, shared with the cluster backend); a broken
//! connection is reopened on the next call. Keys keep the `emq:{queue}:...` hash tag, so a
//! queue's streams share one Cluster slot.
//!
//! Timeouts: connecting (the TCP connect and the client's handshake together) may take
//! `connect_timeout`, and every reply `response_timeout`, so a server that stops answering
//! fails a call with [`FeedError::ConnectTimeout`] or [`FeedError::ReplyTimeout`] instead of
//! hanging it. A blocking read (`XREADGROUP ... BLOCK ms`) legitimately waits its BLOCK time
//! first, so its reply may take `response_timeout + BLOCK`; the socket's read timeout is raised
//! to that and stays raised on that connection (a consumer's own, in practice), which saves two
//! system calls per read and still bounds every wait. A timed-out connection is dropped (a late
//! reply would answer the wrong command) and the next call reconnects. A connection that breaks
//! mid-command fails the call with [`FeedError::ConnectionLost`] and is dropped the same way;
//! one that cannot be opened fails it with [`FeedError::ConnectFailed`].
//!
//! Appends are recorded in the stream's IDMP map (XIDMPRECORD in one MULTI/EXEC with the XADD,
//! `server.rs`) when the server has XIDMPRECORD, asked once per backend (and shared by its
//! forks).

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use echomq_engine::StreamId;
use redis::Value;

use super::RawEntry;
use super::link::{Link, connect_failure};
use super::wire::{Replication, Wire};
use crate::feed::error::FeedError;
use crate::feed::fields::Fields;

/// A backend over a Redis-protocol connection.
pub struct RedisBackend {
    client: redis::Client,
    link: Link<redis::Connection>,
}

impl std::fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBackend")
            .field("server", &self.client.get_connection_info())
            .finish()
    }
}

pub(super) fn backend(e: impl std::fmt::Display) -> FeedError {
    FeedError::Backend(e.to_string())
}

/// The one mapping from a server's error reply to the feed's: a server error reply is told
/// apart by its code (`NOGROUP`, `BUSYGROUP`, `WRONGTYPE`, and a cluster's `CLUSTERDOWN`,
/// `MOVED`/`ASK`/`TRYAGAIN` once the client's redirects ran out, `CROSSSLOT`) or, for the generic `ERR` code, by
/// the start of Redis's message; anything else keeps its text as [`FeedError::Backend`].
pub(super) fn server_error(e: redis::RedisError) -> FeedError {
    /// Redis's XINFO STREAM (and other commands') message for a missing key, after `ERR`.
    const NO_SUCH_KEY: &str = "no such key";
    /// Redis's XADD message for an id at or below the top, after `ERR`.
    const ID_NOT_ABOVE_TOP: &str = "The ID specified in XADD is equal or smaller";
    let text = e.to_string();
    let detail = e.detail().unwrap_or_default();
    match e.code() {
        Some("NOGROUP") => FeedError::NoGroup(text),
        Some("CLUSTERDOWN") => FeedError::ClusterDown(text),
        Some("MOVED" | "ASK" | "TRYAGAIN") => FeedError::SlotMoved(text),
        Some("CROSSSLOT") => FeedError::CrossSlot(text),
        Some("BUSYGROUP") => FeedError::BusyGroup(text),
        Some("WRONGTYPE") => FeedError::WrongType(text),
        Some("ERR") if detail.starts_with(NO_SUCH_KEY) => FeedError::NoSuchKey(text),
        Some("ERR") if detail.starts_with(ID_NOT_ABOVE_TOP) => FeedError::IdNotAboveTop(text),
        _ => FeedError::Backend(text),
    }
}

pub(super) fn malformed(what: &str) -> FeedError {
    FeedError::Backend(format!("unexpected reply shape for {what}"))
}

pub(super) fn parse_id(value: &Value) -> Result<StreamId, FeedError> {
    match value {
        Value::BulkString(b) => StreamId::parse_strict(b).map_err(backend),
        Value::SimpleString(s) => StreamId::parse_strict(s.as_bytes()).map_err(backend),
        _ => Err(malformed("a stream id")),
    }
}

pub(super) fn bytes(value: &Value) -> Result<Bytes, FeedError> {
    match value {
        Value::BulkString(b) => Ok(Bytes::copy_from_slice(b)),
        Value::SimpleString(s) => Ok(Bytes::copy_from_slice(s.as_bytes())),
        _ => Err(malformed("a field")),
    }
}

pub(super) fn parse_entry(value: &Value) -> Result<RawEntry, FeedError> {
    let Value::Array(pair) = value else {
        return Err(malformed("an entry"));
    };
    let [id, fields] = pair.as_slice() else {
        return Err(malformed("an entry"));
    };
    let id = parse_id(id)?;
    let fields = match fields {
        Value::Array(items) => {
            let pairs = items
                .chunks(2)
                .map(|kv| match kv {
                    [k, v] => Ok((bytes(k)?, bytes(v)?)),
                    _ => Err(malformed("entry fields")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Fields::from_pairs(pairs.iter().map(|(k, v)| (k.as_ref(), v.as_ref())))
        }
        Value::Nil => Fields::default(),
        _ => return Err(malformed("entry fields")),
    };
    Ok(RawEntry { id, fields })
}

pub(super) fn int(value: &Value) -> Result<u64, FeedError> {
    match value {
        Value::Int(n) => u64::try_from(*n).map_err(|_| malformed("a count")),
        _ => Err(malformed("a count")),
    }
}

impl RedisBackend {
    /// The default connect timeout: a TCP connect and the handshake take milliseconds on a
    /// healthy network, so five seconds means the address is wrong or the server is down.
    pub const CONNECT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(5);
    /// The default reply timeout: generous for a slow command on a busy server (the feed's
    /// reads and trims take milliseconds), short enough that a hung server is noticed.
    pub const RESPONSE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);

    /// Connects to `url` (`redis://host:port/db`) with the default timeouts
    /// ([`RedisBackend::CONNECT_TIMEOUT_DEFAULT`], [`RedisBackend::RESPONSE_TIMEOUT_DEFAULT`]).
    pub fn connect(url: &str) -> Result<RedisBackend, FeedError> {
        RedisBackend::connect_with(
            url,
            RedisBackend::CONNECT_TIMEOUT_DEFAULT,
            RedisBackend::RESPONSE_TIMEOUT_DEFAULT,
        )
    }

    /// Connects to `url` with these timeouts: `connect_timeout` for the TCP connect and the
    /// handshake, `response_timeout` for each reply (after a blocking read's BLOCK time). A
    /// zero timeout is taken as one millisecond, since the socket layer cannot wait zero.
    pub fn connect_with(
        url: &str,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> Result<RedisBackend, FeedError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let backend = RedisBackend {
            client,
            link: Link::new(connect_timeout, response_timeout),
        };
        backend.link.install(backend.open()?);
        Ok(backend)
    }

    /// Opts in to replicated appends: after each XADD the backend sends `WAIT replicas
    /// timeout` and acknowledges the append only when `replicas` replicas hold it, returning
    /// [`FeedError::NotReplicated`] otherwise (the entry is on the master, maybe not beyond).
    /// Redis replicates asynchronously; without this a failover can lose acknowledged appends.
    pub fn with_replicated_append(mut self, replicas: u32, timeout: Duration) -> RedisBackend {
        self.link.replicate(replicas, timeout);
        self
    }

    /// The server's address, for errors.
    fn server(&self) -> String {
        self.client.get_connection_info().addr().to_string()
    }

    fn open(&self) -> Result<redis::Connection, FeedError> {
        let timeout = self.link.connect_timeout;
        let connection = self
            .client
            .get_connection_with_timeout(timeout)
            .map_err(|e| connect_failure(e, || self.server(), timeout))?;
        let response_timeout = Some(self.link.response_timeout);
        connection
            .set_read_timeout(response_timeout)
            .and_then(|()| connection.set_write_timeout(response_timeout))
            .map_err(backend)?;
        Ok(connection)
    }

    fn query_within(&self, command: &redis::Cmd, block: Duration) -> Result<Value, FeedError> {
        self.link.run(
            block,
            || self.open(),
            || self.server(),
            |c| command.query::<Value>(c),
        )
    }
}

impl Wire for RedisBackend {
    /// Runs one command, reconnecting first if the last call broke the connection.
    fn query(&self, command: &redis::Cmd) -> Result<Value, FeedError> {
        self.query_within(command, Duration::ZERO)
    }

    fn query_blocking(&self, command: &redis::Cmd, block_ms: u64) -> Result<Value, FeedError> {
        self.query_within(command, Duration::from_millis(block_ms))
    }

    /// One server, one connection: every command already runs where the key lives.
    fn query_at(
        &self,
        _key: &str,
        command: &redis::Cmd,
        block_ms: u64,
    ) -> Result<Value, FeedError> {
        self.query_within(command, Duration::from_millis(block_ms))
    }

    fn replication(&self) -> Option<Replication> {
        self.link.replication
    }

    /// On the one connection, under its lock: nothing else is sent between MULTI and EXEC.
    fn transaction(
        &self,
        _key: &str,
        transaction: &redis::Pipeline,
    ) -> Option<Result<Value, FeedError>> {
        Some(self.link.run(
            Duration::ZERO,
            || self.open(),
            || self.server(),
            |c| transaction.query::<Value>(c),
        ))
    }

    fn records(&self) -> &OnceLock<bool> {
        &self.link.records
    }

    /// Another connection to the same server with the same settings.
    fn fork(&self) -> Result<RedisBackend, FeedError> {
        let forked = RedisBackend {
            client: self.client.clone(),
            link: self.link.settings(),
        };
        forked.link.install(forked.open()?);
        Ok(forked)
    }
}
