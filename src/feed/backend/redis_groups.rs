//! [`GroupBackend`] for every [`Wire`]: any Redis-compatible server (`echomq serve`, Redis 7,
//! Valkey 8) through [`super::RedisBackend`], and a Redis or Valkey Cluster through
//! [`super::ClusterBackend`]. Each command checks its key first ([`Wire::check_key`]).
//!
//! XREADGROUP and XAUTOCLAIM do not report delivery counts, so a history read or a claim is
//! followed by one XPENDING over the ids it returned (new entries are always at count 1). A
//! blocking read holds its connection for the BLOCK time: a consumer reads on
//! [`GroupBackend::dedicated`], a connection of its own, and a shutdown waits at most that
//! long.

use std::collections::HashMap;
use std::sync::Arc;

use echomq_engine::{Clock, StreamId, SystemClock};
use redis::Value;

use super::groups::{Block, Claimed, GroupBackend, GroupEntry, GroupStart, ReadFrom};
use super::redis::{bytes, int, malformed, parse_entry, parse_id};
use super::server::{append, keyed};
use super::wire::Wire;
use crate::feed::error::FeedError;

/// Rows per XPENDING page when looking up delivery counts.
const PENDING_PAGE_MIN: usize = 100;

/// A group entry from an `[id, fields]` pair; nil fields mean the entry was deleted.
/// `delivery_count` is the count to assume until XPENDING says otherwise.
fn group_entry(value: &Value, delivery_count: u64) -> Result<GroupEntry, FeedError> {
    let entry = parse_entry(value)?;
    Ok(GroupEntry {
        id: entry.id,
        fields: (!entry.fields.is_empty()).then_some(entry.fields),
        delivery_count,
    })
}

/// The entries of an XREADGROUP reply for one key (RESP2 array of pairs or RESP3 map).
fn read_reply(reply: Value) -> Result<Vec<GroupEntry>, FeedError> {
    let streams: Vec<Value> = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(pairs) => pairs
            .into_iter()
            .map(|pair| match pair {
                Value::Array(mut kv) if kv.len() == 2 => Ok(kv.swap_remove(1)),
                _ => Err(malformed("XREADGROUP")),
            })
            .collect::<Result<_, _>>()?,
        Value::Map(pairs) => pairs.into_iter().map(|(_, v)| v).collect(),
        _ => return Err(malformed("XREADGROUP")),
    };
    let mut out = Vec::new();
    for entries in streams {
        match entries {
            Value::Array(entries) => {
                for entry in &entries {
                    out.push(group_entry(entry, 1)?);
                }
            }
            Value::Nil => {}
            _ => return Err(malformed("XREADGROUP entries")),
        }
    }
    Ok(out)
}

/// Sets each entry's delivery count from XPENDING over the ids' span for `consumer`, page by
/// page: the consumer may hold other ids inside that span too. An id no longer pending (acked
/// meanwhile by another consumer) keeps the count it was read with.
fn fill_counts<W: Wire>(
    wire: &W,
    key: &str,
    group: &str,
    consumer: &str,
    entries: &mut [GroupEntry],
) -> Result<(), FeedError> {
    let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
        return Ok(());
    };
    let (mut start, end) = (first.id, last.id);
    let page = entries.len().max(PENDING_PAGE_MIN);
    let mut counts = HashMap::with_capacity(entries.len());
    loop {
        let mut command = redis::cmd("XPENDING");
        command
            .arg(key)
            .arg(group)
            .arg(start.to_string())
            .arg(end.to_string())
            .arg(page)
            .arg(consumer);
        let Value::Array(rows) = wire.query(&command)? else {
            return Err(malformed("XPENDING"));
        };
        let mut last_seen = None;
        for row in &rows {
            match row {
                Value::Array(cells) if cells.len() == 4 => {
                    let id = parse_id(&cells[0])?;
                    counts.insert(id, int(&cells[3])?);
                    last_seen = Some(id);
                }
                _ => return Err(malformed("XPENDING row")),
            }
        }
        match last_seen.and_then(StreamId::next) {
            Some(next) if rows.len() == page && next <= end => start = next,
            _ => break,
        }
    }
    for entry in entries {
        if let Some(&count) = counts.get(&entry.id) {
            entry.delivery_count = count;
        }
    }
    Ok(())
}

impl<W: Wire> GroupBackend for W {
    fn create_group(&self, key: &str, group: &str, start: GroupStart) -> Result<bool, FeedError> {
        self.check_key(key)?;
        let mut command = redis::cmd("XGROUP");
        command.arg("CREATE").arg(key).arg(group).arg(match start {
            GroupStart::Beginning => "0",
            GroupStart::End => "$",
        });
        command.arg("MKSTREAM");
        match self.query(&command) {
            Ok(_) => Ok(true),
            Err(FeedError::BusyGroup(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn read_group(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        from: ReadFrom,
        count: usize,
        block: Option<Block<'_>>,
    ) -> Result<Vec<GroupEntry>, FeedError> {
        self.check_key(key)?;
        let mut command = redis::cmd("XREADGROUP");
        command
            .arg("GROUP")
            .arg(group)
            .arg(consumer)
            .arg("COUNT")
            .arg(count.max(1));
        let block_ms = match (from, block) {
            (ReadFrom::New, Some(block)) => Some(block.ms.max(1)),
            _ => None,
        };
        if let Some(ms) = block_ms {
            command.arg("BLOCK").arg(ms);
        }
        command.arg("STREAMS").arg(key);
        match from {
            ReadFrom::New => command.arg(">"),
            ReadFrom::Pending(after) => command.arg(after.to_string()),
        };
        let reply = match block_ms {
            Some(ms) => self.query_blocking(&command, ms)?,
            None => self.query(&command)?,
        };
        let mut entries = read_reply(reply)?;
        if let ReadFrom::Pending(_) = from {
            // A history read counts one more delivery at least.
            for entry in &mut entries {
                entry.delivery_count = 2;
            }
            fill_counts(self, key, group, consumer, &mut entries)?;
        }
        Ok(entries)
    }

    fn ack(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut command = keyed(self, "XACK", key)?;
        command.arg(group);
        for id in ids {
            command.arg(id.to_string());
        }
        int(&self.query(&command)?)
    }

    fn auto_claim(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        min_idle_ms: u64,
        start: StreamId,
        count: usize,
    ) -> Result<Claimed, FeedError> {
        let mut command = keyed(self, "XAUTOCLAIM", key)?;
        command
            .arg(group)
            .arg(consumer)
            .arg(min_idle_ms)
            .arg(start.to_string())
            .arg("COUNT")
            .arg(count.max(1));
        let Value::Array(parts) = self.query(&command)? else {
            return Err(malformed("XAUTOCLAIM"));
        };
        let (next, entries, deleted) = match parts.as_slice() {
            [next, entries] => (next, entries, None),
            [next, entries, deleted] => (next, entries, Some(deleted)),
            _ => return Err(malformed("XAUTOCLAIM")),
        };
        let next = parse_id(next)?;
        let Value::Array(entries) = entries else {
            return Err(malformed("XAUTOCLAIM entries"));
        };
        let mut claimed = Vec::with_capacity(entries.len());
        let mut gone = Vec::new();
        for entry in entries {
            // Redis 6.2 lists a deleted entry as [id, nil] instead of in the third element. A
            // claim counts one more delivery at least.
            let entry = group_entry(entry, 2)?;
            if entry.fields.is_some() {
                claimed.push(entry);
            } else {
                gone.push(entry.id);
            }
        }
        if let Some(Value::Array(ids)) = deleted {
            for id in ids {
                gone.push(parse_id(id)?);
            }
        }
        fill_counts(self, key, group, consumer, &mut claimed)?;
        Ok(Claimed {
            next,
            entries: claimed,
            deleted: gone,
        })
    }

    fn pending_count(&self, key: &str, group: &str, consumer: &str) -> Result<u64, FeedError> {
        let mut command = keyed(self, "XPENDING", key)?;
        command.arg(group);
        let Value::Array(summary) = self.query(&command)? else {
            return Err(malformed("XPENDING"));
        };
        let Some(consumers) = summary.get(3) else {
            return Err(malformed("XPENDING"));
        };
        let consumers = match consumers {
            Value::Array(rows) => rows.as_slice(),
            Value::Nil => &[],
            _ => return Err(malformed("XPENDING consumers")),
        };
        for row in consumers {
            let Value::Array(cells) = row else {
                return Err(malformed("XPENDING consumers"));
            };
            let [name, count] = cells.as_slice() else {
                return Err(malformed("XPENDING consumers"));
            };
            if bytes(name)?.as_ref() == consumer.as_bytes() {
                let count = bytes(count)?;
                return std::str::from_utf8(&count)
                    .ok()
                    .and_then(|c| c.parse().ok())
                    .ok_or_else(|| malformed("an XPENDING count"));
            }
        }
        Ok(0)
    }

    fn add_auto(&self, key: &str, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        let mut command = keyed(self, "XADD", key)?;
        command.arg("*");
        for item in fields {
            command.arg(*item);
        }
        append(self, key, &command)
    }

    fn dedicated(&self) -> Result<W, FeedError> {
        self.fork()
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(SystemClock)
    }
}
