//! [`Backend`] for every [`Wire`]: the stream commands the feed sends to a Redis-protocol
//! server, written once for one server ([`super::RedisBackend`]) and a cluster
//! ([`super::ClusterBackend`]).
//!
//! Every command checks its key first ([`Wire::check_key`]), so a key a cluster cannot place
//! is refused before anything is sent. An append with [`Replication`] set is followed by
//! `WAIT` on the same connection and acknowledged only when enough replicas hold it.

use echomq_engine::{StreamId, Trim};
use redis::Value;

use super::redis::{bytes, int, malformed, parse_entry, parse_id};
use super::wire::{Replication, Wire};
use super::{Backend, RawEntry, StreamMeta, trim_args};
use crate::feed::error::FeedError;

/// `name key`, after the wire accepted `key`.
pub(super) fn keyed<W: Wire + ?Sized>(
    wire: &W,
    name: &str,
    key: &str,
) -> Result<redis::Cmd, FeedError> {
    wire.check_key(key)?;
    let mut command = redis::cmd(name);
    command.arg(key);
    Ok(command)
}

/// Runs an XADD and, with [`Replication`] set, `WAIT` on the key's connection: the id is
/// returned only when enough replicas hold the entry.
pub(super) fn append<W: Wire + ?Sized>(
    wire: &W,
    key: &str,
    command: &redis::Cmd,
) -> Result<StreamId, FeedError> {
    let id = parse_id(&wire.query(command)?)?;
    if let Some(Replication { replicas, timeout }) = wire.replication() {
        let mut wait = redis::cmd("WAIT");
        let timeout_ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        wait.arg(replicas).arg(timeout_ms);
        let acked = int(&wire.query_at(key, &wait, timeout_ms)?)?;
        if acked < u64::from(replicas) {
            return Err(FeedError::NotReplicated {
                id,
                acked,
                wanted: replicas,
                timeout_ms,
            });
        }
    }
    Ok(id)
}

impl<W: Wire> Backend for W {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        let mut command = keyed(self, "XADD", key)?;
        command.arg(id.to_string());
        for item in fields {
            command.arg(*item);
        }
        append(self, key, &command)
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        let mut command = keyed(self, if reverse { "XREVRANGE" } else { "XRANGE" }, key)?;
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
        self.check_key(key)?;
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
        let mut command = keyed(self, "XTRIM", key)?;
        for arg in trim_args(trim) {
            command.arg(arg);
        }
        int(&self.query(&command)?)
    }
}
