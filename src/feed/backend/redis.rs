//! Any Redis-compatible server as a backend (`echomq serve`, Redis 7, Valkey 8), through the
//! `redis` crate's synchronous connection.
//!
//! One connection behind a mutex; a broken connection is reopened on the next call. Keys keep
//! the `emq:{queue}:...` hash tag, so a queue's streams share one Cluster slot.
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
//! Appends are recorded in the stream's IDMP map (XIDMPRECORD in one MULTI/EXEC with the XADD)
//! when the server has XIDMPRECORD, asked once per backend (and shared by its forks).

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use echomq_engine::{StreamId, Trim};
use parking_lot::Mutex;
use redis::Value;

use super::{Backend, RawEntry, Recorded, StreamMeta, trim_args};
use crate::feed::error::FeedError;
use crate::feed::fields::Fields;

/// A backend over a Redis-protocol connection.
pub struct RedisBackend {
    client: redis::Client,
    connection: Mutex<Option<Live>>,
    /// The TCP connect and the handshake, together.
    connect_timeout: Duration,
    /// A reply, after any BLOCK time the command asked for.
    response_timeout: Duration,
    /// Whether the server has XIDMPRECORD, once asked ([`Backend::records_appends`]).
    records: OnceLock<bool>,
}

/// An open connection and the read timeout its socket has now.
struct Live {
    connection: redis::Connection,
    /// `response_timeout`, or more after a blocking read raised it.
    read_timeout: Duration,
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

/// The one mapping from a failed command's error to the feed's: a server error reply is told
/// apart by its code (`NOGROUP`, `BUSYGROUP`, `WRONGTYPE`) or, for the generic `ERR` code, by
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
        let least = Duration::from_millis(1);
        let client = redis::Client::open(url).map_err(backend)?;
        let backend = RedisBackend {
            client,
            connection: Mutex::new(None),
            connect_timeout: connect_timeout.max(least),
            response_timeout: response_timeout.max(least),
            records: OnceLock::new(),
        };
        let live = backend.open()?;
        *backend.connection.lock() = Some(live);
        Ok(backend)
    }

    /// Another connection to the same server with the same timeouts (a consumer's own, for
    /// its blocking reads).
    pub(crate) fn fork(&self) -> Result<RedisBackend, FeedError> {
        let forked = RedisBackend {
            client: self.client.clone(),
            connection: Mutex::new(None),
            connect_timeout: self.connect_timeout,
            response_timeout: self.response_timeout,
            records: self.records.clone(),
        };
        let live = forked.open()?;
        *forked.connection.lock() = Some(live);
        Ok(forked)
    }

    /// The server's address, for errors.
    fn server(&self) -> String {
        self.client.get_connection_info().addr().to_string()
    }

    fn open(&self) -> Result<Live, FeedError> {
        let connection = self
            .client
            .get_connection_with_timeout(self.connect_timeout)
            .map_err(|e| {
                if e.is_timeout() {
                    FeedError::ConnectTimeout {
                        server: self.server(),
                        after_ms: millis(self.connect_timeout),
                    }
                } else if e.is_io_error() || e.is_connection_refusal() || e.is_connection_dropped()
                {
                    FeedError::ConnectFailed {
                        server: self.server(),
                        reason: e.to_string(),
                    }
                } else {
                    backend(e)
                }
            })?;
        connection
            .set_read_timeout(Some(self.response_timeout))
            .and_then(|()| connection.set_write_timeout(Some(self.response_timeout)))
            .map_err(backend)?;
        Ok(Live {
            connection,
            read_timeout: self.response_timeout,
        })
    }

    /// Runs one command, reconnecting once if the connection broke.
    pub(crate) fn query(&self, command: &redis::Cmd) -> Result<Value, FeedError> {
        self.query_within(command, Duration::ZERO)
    }

    /// Runs a command that may block for `block_ms` before the server answers
    /// (`XREADGROUP ... BLOCK block_ms`): its reply may take `response_timeout` longer.
    pub(crate) fn query_blocking(
        &self,
        command: &redis::Cmd,
        block_ms: u64,
    ) -> Result<Value, FeedError> {
        self.query_within(command, Duration::from_millis(block_ms))
    }

    fn query_within(&self, command: &redis::Cmd, block: Duration) -> Result<Value, FeedError> {
        self.on_connection(block, |connection| command.query::<Value>(connection))
    }

    /// Runs `call` on the connection (opened if there is none), its replies allowed
    /// `response_timeout + block`; maps a failure once: a timeout to
    /// [`FeedError::ReplyTimeout`], a broken connection to [`FeedError::ConnectionLost`] (both
    /// drop the connection), an error reply through [`server_error`].
    fn on_connection<T>(
        &self,
        block: Duration,
        call: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, FeedError> {
        let mut slot = self.connection.lock();
        if slot.is_none() {
            *slot = Some(self.open()?);
        }
        let Some(live) = slot.as_mut() else {
            return Err(malformed("a connection"));
        };
        let needed = self.response_timeout.saturating_add(block);
        if needed > live.read_timeout {
            if let Err(e) = live.connection.set_read_timeout(Some(needed)) {
                *slot = None;
                return Err(backend(e));
            }
            live.read_timeout = needed;
        }
        let waited = live.read_timeout;
        match call(&mut live.connection) {
            Ok(value) => Ok(value),
            Err(e) => {
                let broken = e.is_io_error() || e.is_connection_dropped();
                if e.is_timeout() || broken {
                    // A late reply would answer the next command: never reuse this one.
                    *slot = None;
                }
                if e.is_timeout() {
                    Err(FeedError::ReplyTimeout {
                        server: self.server(),
                        after_ms: millis(waited),
                    })
                } else if broken {
                    Err(FeedError::ConnectionLost {
                        server: self.server(),
                        reason: e.to_string(),
                    })
                } else {
                    Err(server_error(e))
                }
            }
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Backend for RedisBackend {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        let mut command = redis::cmd("XADD");
        command.arg(key).arg(id.to_string());
        for item in fields {
            command.arg(*item);
        }
        parse_id(&self.query(&command)?)
    }

    /// Asks once: `COMMAND INFO xidmprecord` names the command on Redis 8.6.2 and later and on
    /// `echomq serve`, and answers nil where it is unknown. An error reply (COMMAND refused by
    /// an ACL, say) counts as no; a transport failure is returned and asked again next time.
    fn records_appends(&self) -> Result<bool, FeedError> {
        if let Some(&known) = self.records.get() {
            return Ok(known);
        }
        let mut command = redis::cmd("COMMAND");
        command.arg("INFO").arg("XIDMPRECORD");
        let known = match self.query(&command) {
            Ok(Value::Array(items)) => matches!(items.first(), Some(Value::Array(_))),
            Ok(_) => false,
            Err(e) if e.is_transient() => return Err(e),
            Err(_) => false,
        };
        Ok(*self.records.get_or_init(|| known))
    }

    /// `MULTI`, `XADD key id fields...`, `XIDMPRECORD key pid iid id`, `EXEC`, written in one
    /// go: the server runs both or neither.
    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        let id_text = id.to_string();
        let mut xadd = redis::cmd("XADD");
        xadd.arg(key).arg(&id_text);
        for item in fields {
            xadd.arg(*item);
        }
        let mut record = redis::cmd("XIDMPRECORD");
        record.arg(key).arg(pid).arg(iid).arg(&id_text);
        let mut transaction = redis::pipe();
        transaction
            .atomic()
            .ignore_errors()
            .add_command(xadd)
            .add_command(record);
        let replies: Vec<Value> =
            self.on_connection(Duration::ZERO, |connection| transaction.query(connection))?;
        let [added, recorded] = replies.as_slice() else {
            return Err(malformed("EXEC of XADD and XIDMPRECORD"));
        };
        match added {
            Value::ServerError(e) => match server_error(e.clone().into()) {
                FeedError::IdNotAboveTop(_) => Ok(match recorded {
                    Value::ServerError(_) => Recorded::Absent,
                    _ => Recorded::Exists,
                }),
                other => Err(other),
            },
            value => Ok(Recorded::Added(parse_id(value)?)),
        }
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        let mut command = redis::cmd(if reverse { "XREVRANGE" } else { "XRANGE" });
        command.arg(key);
        if reverse {
            command.arg(end.to_string()).arg(start.to_string());
        } else {
            command.arg(start.to_string()).arg(end.to_string());
        }
        if let Some(n) = count {
            if n == 0 {
                return Ok(Vec::new());
            }
            command.arg("COUNT").arg(n);
        }
        match self.query(&command)? {
            Value::Array(entries) => entries.iter().map(parse_entry).collect(),
            Value::Nil => Ok(Vec::new()),
            _ => Err(malformed("XRANGE")),
        }
    }

    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        let mut command = redis::cmd("XINFO");
        command.arg("STREAM").arg(key);
        let reply = match self.query(&command) {
            Ok(reply) => reply,
            Err(FeedError::NoSuchKey(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let pairs: Vec<(String, Value)> = match reply {
            Value::Map(pairs) => pairs
                .into_iter()
                .filter_map(|(k, v)| {
                    bytes(&k)
                        .ok()
                        .map(|k| (String::from_utf8_lossy(&k).into_owned(), v))
                })
                .collect(),
            Value::Array(flat) => flat
                .chunks(2)
                .filter_map(|kv| match kv {
                    [k, v] => bytes(k)
                        .ok()
                        .map(|k| (String::from_utf8_lossy(&k).into_owned(), v.clone())),
                    _ => None,
                })
                .collect(),
            _ => return Err(malformed("XINFO STREAM")),
        };
        let field = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v)
                .ok_or_else(|| malformed(name))
        };
        Ok(Some(StreamMeta {
            length: int(field("length")?)?,
            last_id: parse_id(field("last-generated-id")?)?,
            first_id: parse_id(field("recorded-first-entry-id")?)?,
            max_deleted_id: parse_id(field("max-deleted-entry-id")?)?,
            entries_added: int(field("entries-added")?)?,
        }))
    }

    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        let mut command = redis::cmd("XTRIM");
        command.arg(key);
        for arg in trim_args(trim) {
            command.arg(arg);
        }
        int(&self.query(&command)?)
    }
}
