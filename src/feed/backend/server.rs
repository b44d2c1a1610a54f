//! [`Backend`] for every [`Wire`]: the stream commands the feed sends to a Redis-protocol
//! server, written once for one server ([`super::RedisBackend`]) and a cluster
//! ([`super::ClusterBackend`]).
//!
//! Every command checks its key first ([`Wire::check_key`]), so a key a cluster cannot place
//! is refused before anything is sent. An append with [`Replication`] set is followed by
//! `WAIT` on the same connection and acknowledged only when enough replicas hold it.
//!
//! Recorded appends (`XADD` and `XIDMPRECORD` in one MULTI/EXEC, [`Wire::transaction`]) where
//! the server has XIDMPRECORD, asked once (`COMMAND INFO xidmprecord`) and remembered
//! ([`Wire::records`]); never on a wire without transactions (a cluster). With [`Replication`]
//! set, a recorded append that stored the entry, or found it stored by an earlier attempt, is
//! followed by the same `WAIT`. Limit: when the earlier attempt ran on a connection that broke
//! since, `WAIT` on the new one vouches only for that connection's writes.

use echomq_engine::{StreamId, Trim};
use redis::Value;

use super::redis::{bytes, int, malformed, parse_entry, parse_id, server_error};
use super::wire::{Replication, Wire};
use super::{Backend, RawEntry, Recorded, StreamMeta, trim_args};
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
    replicated(wire, key, id)
}

/// With [`Replication`] set, `WAIT` on the key's connection: `id` is returned only when enough
/// replicas hold the connection's writes.
fn replicated<W: Wire + ?Sized>(wire: &W, key: &str, id: StreamId) -> Result<StreamId, FeedError> {
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

    /// Asks once: `COMMAND INFO xidmprecord` names the command on Redis 8.6.2 and later and on
    /// `echomq serve`, and answers nil where it is unknown. An error reply (COMMAND refused by
    /// an ACL, say) counts as no; a transport failure is returned and asked again next time. A
    /// wire without transactions (a cluster) holds `false` from the start.
    fn records_appends(&self) -> Result<bool, FeedError> {
        if let Some(&known) = self.records().get() {
            return Ok(known);
        }
        let mut command = redis::cmd("COMMAND");
        command.arg("INFO").arg("XIDMPRECORD");
        let known = match self.query(&command) {
            Ok(Value::Array(items)) => matches!(items.first(), Some(Value::Array(_))),
            Ok(_) => false,
            Err(e) if e.is_retryable() => return Err(e),
            Err(_) => false,
        };
        Ok(*self.records().get_or_init(|| known))
    }

    /// `MULTI`, `XADD key id fields...`, `XIDMPRECORD key pid iid id`, `EXEC`, written in one
    /// go on the key's connection: the server runs both or neither. Then, with
    /// `Replication` set, `WAIT` as a plain append has it.
    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        let mut xadd = keyed(self, "XADD", key)?;
        let id_text = id.to_string();
        xadd.arg(&id_text);
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
        let replies = match self.transaction(key, &transaction) {
            Some(replies) => replies?,
            None => {
                return Err(FeedError::Backend(
                    "this backend does not record appends (no MULTI/EXEC on one node)".into(),
                ));
            }
        };
        let Value::Array(replies) = replies else {
            return Err(malformed("EXEC of XADD and XIDMPRECORD"));
        };
        let [added, recorded] = replies.as_slice() else {
            return Err(malformed("EXEC of XADD and XIDMPRECORD"));
        };
        let outcome = match added {
            Value::ServerError(e) => match server_error(e.clone().into()) {
                FeedError::IdNotAboveTop(_) => match recorded {
                    Value::ServerError(_) => Recorded::Absent,
                    _ => Recorded::Exists,
                },
                other => return Err(other),
            },
            value => Recorded::Added(parse_id(value)?),
        };
        match outcome {
            Recorded::Added(stored) => replicated(self, key, stored).map(Recorded::Added),
            Recorded::Exists => replicated(self, key, id).map(|_| Recorded::Exists),
            Recorded::Absent => Ok(Recorded::Absent),
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
