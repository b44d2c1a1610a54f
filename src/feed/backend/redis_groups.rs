//! [`GroupBackend`] for every [`Wire`]: any Redis-compatible server (`echomq serve`, Redis 7,
//! Valkey 8) through [`super::RedisBackend`], and a Redis or Valkey Cluster through
//! [`super::ClusterBackend`]. Each command checks its key first ([`Wire::check_key`]).
//!
//! XREADGROUP and XAUTOCLAIM do not report delivery counts, so a history read or a claim is
//! followed by one XPENDING over the ids it returned (new entries are always at count 1). A
//! claiming read (`XREADGROUP … CLAIM`, Redis 8.4+) does report them: each entry comes as
//! `[id, fields, idle-ms, count-before]`, new ones as `[id, fields, 0, 0]`, so it needs no
//! XPENDING. Whether the server has CLAIM and XNACK is asked with `COMMAND INFO XNACK` (XNACK
//! is Redis 8.8's, which has CLAIM too). A
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
        claimed: false,
    })
}

/// An entry of a claiming read: `[id, fields, idle, count-before]`. A new entry reads
/// `[…, 0, 0]`; a claimed one has an idle time of at least CLAIM's min-idle (at least 1 here),
/// so the two never mix up. A claimed entry's count is one more than it was (saturating as
/// Redis does).
fn claim_entry(value: &Value) -> Result<GroupEntry, FeedError> {
    let Value::Array(items) = value else {
        return Err(malformed("a CLAIM entry"));
    };
    let [id, fields, idle, count] = items.as_slice() else {
        return Err(malformed("a CLAIM entry"));
    };
    let mut entry = group_entry(&Value::Array(vec![id.clone(), fields.clone()]), 1)?;
    let (idle, count) = (int(idle)?, int(count)?);
    if idle != 0 || count != 0 {
        entry.claimed = true;
        entry.delivery_count = count.saturating_add(1).min(i64::MAX as u64);
    }
    Ok(entry)
}

/// The entries of an XREADGROUP reply for one key (RESP2 array of pairs or RESP3 map).
/// `claiming`: the read had CLAIM, so entries carry idle times and counts.
fn read_reply(reply: Value, claiming: bool) -> Result<Vec<GroupEntry>, FeedError> {
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
                    out.push(if claiming {
                        claim_entry(entry)?
                    } else {
                        group_entry(entry, 1)?
                    });
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
            (ReadFrom::New | ReadFrom::Claiming { .. }, Some(block)) => Some(block.ms.max(1)),
            _ => None,
        };
        if let Some(ms) = block_ms {
            command.arg("BLOCK").arg(ms);
        }
        if let ReadFrom::Claiming { min_idle_ms } = from {
            command.arg("CLAIM").arg(min_idle_ms.max(1));
        }
        command.arg("STREAMS").arg(key);
        match from {
            ReadFrom::New | ReadFrom::Claiming { .. } => command.arg(">"),
            ReadFrom::Pending(after) => command.arg(after.to_string()),
        };
        let reply = match block_ms {
            Some(ms) => self.query_blocking(&command, ms)?,
            None => self.query(&command)?,
        };
        let claiming = matches!(from, ReadFrom::Claiming { .. });
        let mut entries = read_reply(reply, claiming)?;
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
            let mut entry = group_entry(entry, 2)?;
            entry.claimed = true;
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

    /// `COMMAND INFO XNACK` on `key`'s node names the command on Redis 8.8 and `echomq
    /// serve`, and answers nil where it is unknown (Redis 7, Valkey 8). An error reply
    /// (COMMAND refused by an ACL, say) counts as no; a transport failure is returned.
    fn claims_on_read(&self, key: &str) -> Result<bool, FeedError> {
        self.check_key(key)?;
        let mut command = redis::cmd("COMMAND");
        command.arg("INFO").arg("XNACK");
        match self.query_at(key, &command, 0) {
            Ok(Value::Array(items)) => Ok(matches!(items.first(), Some(Value::Array(_)))),
            Ok(_) => Ok(false),
            Err(e) if e.is_retryable() => Err(e),
            Err(_) => Ok(false),
        }
    }

    fn nack_fail(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let mut command = keyed(self, "XNACK", key)?;
        command.arg(group).arg("FAIL").arg("IDS").arg(ids.len());
        for id in ids {
            command.arg(id.to_string());
        }
        int(&self.query(&command)?)
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
