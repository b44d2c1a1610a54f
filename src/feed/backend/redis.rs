//! Any Redis-compatible server as a backend (`echomq serve`, Redis 7, Valkey 8), through the
//! `redis` crate's synchronous connection.
//!
//! One connection behind a mutex; a broken connection is reopened on the next call. Keys keep
//! the `emq:{queue}:...` hash tag, so a queue's streams share one Cluster slot.

use bytes::Bytes;
use echomq_engine::{StreamId, Trim};
use parking_lot::Mutex;
use redis::Value;

use super::{Backend, RawEntry, StreamMeta, trim_args};
use crate::feed::error::FeedError;
use crate::feed::fields::Fields;

/// A backend over a Redis-protocol connection.
pub struct RedisBackend {
    client: redis::Client,
    connection: Mutex<Option<redis::Connection>>,
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
    /// Connects to `url` (`redis://host:port/db`).
    pub fn connect(url: &str) -> Result<RedisBackend, FeedError> {
        let client = redis::Client::open(url).map_err(backend)?;
        let connection = client.get_connection().map_err(backend)?;
        Ok(RedisBackend {
            client,
            connection: Mutex::new(Some(connection)),
        })
    }

    /// Another connection to the same server (a consumer's own, for its blocking reads).
    pub(crate) fn fork(&self) -> Result<RedisBackend, FeedError> {
        let connection = self.client.get_connection().map_err(backend)?;
        Ok(RedisBackend {
            client: self.client.clone(),
            connection: Mutex::new(Some(connection)),
        })
    }

    /// Runs one command, reconnecting once if the connection broke.
    pub(crate) fn query(&self, command: &redis::Cmd) -> Result<Value, FeedError> {
        let mut slot = self.connection.lock();
        if slot.is_none() {
            *slot = Some(self.client.get_connection().map_err(backend)?);
        }
        let Some(connection) = slot.as_mut() else {
            return Err(malformed("a connection"));
        };
        match command.query::<Value>(connection) {
            Ok(value) => Ok(value),
            Err(e) => {
                if e.is_io_error() || e.is_connection_dropped() {
                    *slot = None;
                }
                Err(backend(e))
            }
        }
    }
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
            Err(FeedError::Backend(text)) if text.contains("no such key") => return Ok(None),
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
