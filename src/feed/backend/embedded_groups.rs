//! [`GroupBackend`] for the embedded engine.
//!
//! Reads, acks and claims are the engine's typed commands ([`Keyspace`]'s `Db::xreadgroup`,
//! `Db::xack`, `Db::xautoclaim`) under the keyspace lock (no argument parsing, no reply
//! encoding, the commands' effects kept): one lock per batch, which is what lets one consumer move over a
//! million entries a second. A read of new entries that finds none and may block registers a
//! real blocked XREADGROUP with the engine, so an XADD wakes it the way it wakes a server
//! client; its deadline follows the keyspace's clock (a manual clock included), checked at
//! least every [`POLL_MS_MAX`]. A claiming read ([`ReadFrom::Claiming`]) is typed the same
//! way (the claim phase, then new entries, COUNT in all); when it blocks, the engine wakes it
//! when an entry becomes claimable by the keyspace's clock, as it wakes `XREADGROUP … CLAIM`.
//! XNACK goes through [`Keyspace::execute`]: failures are rare, and the command wakes blocked
//! readers as Redis does.

use std::sync::Arc;
use std::time::Duration;

use echomq_engine::types::stream::commands::{Delivered, GroupFrom, GroupRead};
use echomq_engine::{AddId, Clock, EntryRef, Error, Execution, Keyspace, Reply, StreamId};

use super::Embedded;
use super::embedded::engine_error;
use super::groups::{Block, Claimed, GroupBackend, GroupEntry, GroupStart, ReadFrom};
use crate::feed::error::FeedError;
use crate::feed::fields::{Fields, FieldsBuilder};

/// Longest real-time wait between deadline checks of a blocked read: a manual clock can be
/// moved at any moment, and a raised interrupt wakes the wait at once anyway.
const POLL_MS_MAX: u64 = 20;

/// A reply the engine should not have given.
fn unexpected(what: String) -> FeedError {
    FeedError::Backend(what)
}

/// XREADGROUP's error for a missing key or group, as the engine's command gives it.
fn no_group_read(key: &str, group: &str) -> FeedError {
    engine_error(Error::NoKeyOrGroupXreadgroup {
        key: key.to_string(),
        group: group.to_string(),
    })
}

/// XAUTOCLAIM's and XPENDING's error for a missing key or group, as the engine's commands give
/// it.
fn no_group(key: &str, group: &str) -> FeedError {
    engine_error(Error::NoKeyOrGroup {
        key: key.to_string(),
        group: group.to_string(),
    })
}

/// Buffer bytes reserved per entry of a read, so a typical batch fills its buffer without
/// regrowing (a regrow copies everything read so far).
const ENTRY_BYTES_GUESS: usize = 64;
/// Entries of a read to reserve room for at most, whatever COUNT says.
const RESERVE_ENTRIES_MAX: usize = 1_024;

/// Collects entries into one shared [`Fields`] buffer.
#[derive(Default)]
struct Collector {
    builder: FieldsBuilder,
    entries: Vec<GroupEntry>,
}

impl Collector {
    fn with_room(count: usize) -> Collector {
        let entries = count.clamp(1, RESERVE_ENTRIES_MAX);
        Collector {
            builder: FieldsBuilder::with_capacity(entries * ENTRY_BYTES_GUESS),
            entries: Vec::with_capacity(entries),
        }
    }

    fn push(&mut self, entry: &EntryRef<'_>, delivery_count: u64, claimed: bool) {
        let mut fields = self.builder.start();
        for (f, v) in entry.fields() {
            self.builder.push(&mut fields, f, v);
        }
        self.entries.push(GroupEntry {
            id: entry.id,
            fields: Some(fields),
            delivery_count,
            claimed,
        });
    }

    fn push_deleted(&mut self, id: StreamId) {
        self.entries.push(GroupEntry {
            id,
            fields: None,
            delivery_count: 0,
            claimed: false,
        });
    }

    fn finish(self) -> Vec<GroupEntry> {
        let data = self.builder.finish();
        let mut entries = self.entries;
        for entry in &mut entries {
            if let Some(fields) = entry.fields.as_mut() {
                FieldsBuilder::attach(fields, &data);
            }
        }
        entries
    }
}

impl Embedded {
    /// One non-blocking group read under the lock.
    fn read_now(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        from: ReadFrom,
        count: usize,
    ) -> Result<Vec<GroupEntry>, FeedError> {
        let (from, read_count) = match from {
            ReadFrom::New => (GroupFrom::New, count),
            // At least one entry, idle at least 1 ms: a claim of nothing idle is no claim.
            ReadFrom::Claiming { min_idle_ms } => (
                GroupFrom::Claiming {
                    min_idle_ms: min_idle_ms.max(1),
                },
                count.max(1),
            ),
            ReadFrom::Pending(after) => (GroupFrom::History(after), count),
        };
        let read = GroupRead {
            group: group.as_bytes(),
            consumer: consumer.as_bytes(),
            count: read_count,
            noack: false,
        };
        // Through the engine's typed XREADGROUP, so the read has its effects (the AOF's
        // XCLAIM and SETID forms, a created consumer's event).
        self.keyspace().run(|db, snapshot| {
            let mut out = Collector::with_room(count);
            db.xreadgroup(
                key.as_bytes(),
                &read,
                from,
                snapshot.now_ms,
                &mut |d| match d {
                    Delivered::New(e) => out.push(&e, 1, false),
                    Delivered::Claimed {
                        entry,
                        deliveries_before,
                        ..
                    } => out.push(&entry, one_more(deliveries_before), true),
                    Delivered::History(_, Some(e)) => out.push(&e, 0, false),
                    Delivered::History(id, None) => out.push_deleted(id),
                },
            )
            .map_err(|e| match e {
                Error::NoKeyOrGroupXreadgroup { .. } => no_group_read(key, group),
                e => engine_error(e),
            })?;
            // A history read reports each entry's delivery count after this delivery.
            if matches!(from, GroupFrom::History(_))
                && let Ok(Some(stream)) = db.stream(key.as_bytes())
                && let Some(group) = stream.group(read.group)
            {
                for entry in &mut out.entries {
                    entry.delivery_count = group.nack(entry.id).map_or(0, |n| n.delivery_count);
                }
            }
            Ok(out.finish())
        })
    }

    /// Blocks on XREADGROUP `>` (with `CLAIM min-idle` when `claim` is given) through the
    /// engine's blocked-reader registry.
    fn read_blocking(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        count: usize,
        claim: Option<u64>,
        block: Block<'_>,
    ) -> Result<Vec<GroupEntry>, FeedError> {
        let (count_text, block_text) = (count.to_string(), block.ms.max(1).to_string());
        let claim_text = claim.map(|ms| ms.max(1).to_string());
        let mut argv: Vec<&[u8]> = vec![
            b"XREADGROUP",
            b"GROUP",
            group.as_bytes(),
            consumer.as_bytes(),
            b"COUNT",
            count_text.as_bytes(),
            b"BLOCK",
            block_text.as_bytes(),
        ];
        if let Some(text) = &claim_text {
            argv.extend([b"CLAIM".as_slice(), text.as_bytes()]);
        }
        argv.extend([b"STREAMS".as_slice(), key.as_bytes(), b">"]);
        let keyspace: &Arc<Keyspace> = self.keyspace();
        let parker = Arc::clone(block.interrupt.parker());
        let handle = match keyspace.execute_blocking(&argv, parker.clone()) {
            Execution::Done(result) => return entries_of(result.map_err(engine_error)?),
            Execution::Blocked(handle) => handle,
        };
        loop {
            if let Some(result) = handle.try_take() {
                return entries_of(result.map_err(engine_error)?);
            }
            if block.interrupt.is_raised() {
                return Ok(Vec::new());
            }
            let now = keyspace.clock().now_ms();
            let wait_ms = match handle.deadline_ms() {
                Some(deadline) if deadline <= now => {
                    keyspace.expire_blocked();
                    continue;
                }
                Some(deadline) => (deadline - now).min(POLL_MS_MAX),
                None => POLL_MS_MAX,
            };
            parker.park_timeout(Duration::from_millis(wait_ms));
        }
    }
}

/// An entry of an `XREADGROUP … CLAIM` reply: `[id, fields, idle, count-before]`; new
/// entries read `[…, 0, 0]` (a claimed one is idle at least CLAIM's min-idle, at least 1).
fn claim_entry_of(reply: &Reply) -> Result<GroupEntry, FeedError> {
    let bad = || unexpected(format!("unexpected XREADGROUP CLAIM entry {reply:?}"));
    let Reply::Array(items) = reply else {
        return Err(bad());
    };
    let [Reply::Bulk(id), fields, Reply::Int(idle), Reply::Int(count)] = items.as_slice() else {
        return Err(bad());
    };
    let id = StreamId::parse_strict(id).map_err(engine_error)?;
    let fields = match fields {
        Reply::Array(items) => Some(Fields::from_pairs(items.chunks(2).filter_map(
            |kv| match kv {
                [Reply::Bulk(f), Reply::Bulk(v)] => Some((f.as_ref(), v.as_ref())),
                _ => None,
            },
        ))),
        Reply::Null | Reply::NullArray => None,
        _ => return Err(bad()),
    };
    let claimed = *idle != 0 || *count != 0;
    Ok(GroupEntry {
        id,
        fields,
        delivery_count: if claimed {
            one_more(u64::try_from(*count).unwrap_or(0))
        } else {
            1
        },
        claimed,
    })
}

/// A delivery count after one more delivery, saturating at LLONG_MAX as Redis does.
fn one_more(count: u64) -> u64 {
    count.saturating_add(1).min(i64::MAX as u64)
}

/// The entries of an XREADGROUP `>` reply (all first deliveries), or of an `XREADGROUP …
/// CLAIM` reply (claimed entries, then first deliveries).
fn entries_of(reply: Reply) -> Result<Vec<GroupEntry>, FeedError> {
    let streams = match reply {
        Reply::NullArray | Reply::Null => return Ok(Vec::new()),
        Reply::StreamMap(streams) => streams,
        other => return Err(unexpected(format!("unexpected XREADGROUP reply {other:?}"))),
    };
    let mut out = Vec::new();
    for (_, entries) in streams {
        let entries = match entries {
            Reply::Entries(entries) => entries,
            Reply::Array(items) => {
                for item in &items {
                    out.push(claim_entry_of(item)?);
                }
                continue;
            }
            _ => return Err(unexpected("unexpected XREADGROUP entries".into())),
        };
        for view in entries.iter() {
            let id = StreamId::parse_strict(view.id).map_err(engine_error)?;
            let fields = view.items.map(|items| {
                Fields::from_pairs(items.chunks(2).filter_map(|kv| match kv {
                    [f, v] => Some((view.bytes(*f), view.bytes(*v))),
                    _ => None,
                }))
            });
            out.push(GroupEntry {
                id,
                fields,
                delivery_count: 1,
                claimed: false,
            });
        }
    }
    Ok(out)
}

impl GroupBackend for Embedded {
    fn create_group(&self, key: &str, group: &str, start: GroupStart) -> Result<bool, FeedError> {
        let start = match start {
            GroupStart::Beginning => "0",
            GroupStart::End => "$",
        };
        match self
            .keyspace()
            .execute(&["XGROUP", "CREATE", key, group, start, "MKSTREAM"])
        {
            Ok(_) => Ok(true),
            Err(e) => match engine_error(e) {
                FeedError::BusyGroup(_) => Ok(false),
                e => Err(e),
            },
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
        let entries = self.read_now(key, group, consumer, from, count)?;
        let claim = match from {
            ReadFrom::New => None,
            ReadFrom::Claiming { min_idle_ms } => Some(min_idle_ms),
            ReadFrom::Pending(_) => return Ok(entries),
        };
        match block {
            Some(block) if entries.is_empty() && !block.interrupt.is_raised() => {
                self.read_blocking(key, group, consumer, count, claim, block)
            }
            _ => Ok(entries),
        }
    }

    fn ack(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        if ids.is_empty() {
            return Ok(0);
        }
        // Newest first: a PEL chunk then loses its last slot each time, where dropping its
        // first shifts the rest and re-indexes the chunk (about 2x the cost of a whole batch).
        let mut newest_first = ids.to_vec();
        newest_first.sort_unstable_by(|a, b| b.cmp(a));
        // XACK's effects: dirty, the AOF. A missing group acknowledges nothing, as in Redis.
        self.keyspace().run(|db, _| {
            db.xack(key.as_bytes(), group.as_bytes(), &newest_first)
                .map_err(engine_error)
        })
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
        let g = group.as_bytes();
        // Through the engine's typed XAUTOCLAIM, so the claim has its effects.
        self.keyspace().run(|db, snapshot| {
            let options = echomq_engine::group::AutoClaimOptions {
                min_idle_ms,
                start,
                count: count.max(1),
                just_id: false,
            };
            let mut out = Collector::with_room(count);
            let claimed = db
                .xautoclaim(
                    key.as_bytes(),
                    g,
                    consumer.as_bytes(),
                    &options,
                    snapshot.now_ms,
                    &mut |e| out.push(&e, 0, true),
                )
                .map_err(|e| match e {
                    Error::NoKeyOrGroup { .. } => no_group(key, group),
                    e => engine_error(e),
                })?;
            if let Ok(Some(stream)) = db.stream(key.as_bytes())
                && let Some(group) = stream.group(g)
            {
                for entry in &mut out.entries {
                    entry.delivery_count = group.nack(entry.id).map_or(0, |n| n.delivery_count);
                }
            }
            Ok(Claimed {
                next: claimed.next,
                entries: out.finish(),
                deleted: claimed.deleted,
            })
        })
    }

    fn claims_on_read(&self, _key: &str) -> Result<bool, FeedError> {
        Ok(true)
    }

    fn nack_fail(&self, key: &str, group: &str, ids: &[StreamId]) -> Result<u64, FeedError> {
        if ids.is_empty() {
            return Ok(0);
        }
        let n = ids.len().to_string();
        let ids: Vec<String> = ids.iter().map(StreamId::to_string).collect();
        let mut argv: Vec<&str> = vec!["XNACK", key, group, "FAIL", "IDS", &n];
        argv.extend(ids.iter().map(String::as_str));
        match self.keyspace().execute(&argv).map_err(engine_error)? {
            Reply::Int(n) => Ok(u64::try_from(n).unwrap_or(0)),
            other => Err(unexpected(format!("unexpected XNACK reply {other:?}"))),
        }
    }

    fn pending_count(&self, key: &str, group: &str, consumer: &str) -> Result<u64, FeedError> {
        self.keyspace().run(|db, _| {
            let stream = db
                .stream(key.as_bytes())
                .map_err(engine_error)?
                .ok_or_else(|| no_group(key, group))?;
            let group = stream
                .group(group.as_bytes())
                .ok_or_else(|| no_group(key, group))?;
            Ok(group
                .consumer(consumer.as_bytes())
                .map_or(0, |c| c.pending_count() as u64))
        })
    }

    fn add_auto(&self, key: &str, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        self.keyspace().run(|db, snapshot| {
            db.xadd(key.as_bytes(), AddId::Auto, fields, snapshot)
                .map_err(engine_error)
        })
    }

    fn dedicated(&self) -> Result<Embedded, FeedError> {
        Ok(self.clone())
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(self.keyspace().clock())
    }
}
