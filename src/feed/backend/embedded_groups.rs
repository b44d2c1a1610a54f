//! [`GroupBackend`] for the embedded engine.
//!
//! Reads, acks and claims are typed calls into the stream under the keyspace lock (no argument
//! parsing, no reply encoding): one lock per batch, which is what lets one consumer move over a
//! million entries a second. A read of new entries that finds none and may block registers a
//! real blocked XREADGROUP with the engine, so an XADD wakes it the way it wakes a server
//! client; its deadline follows the keyspace's clock (a manual clock included), checked at
//! least every [`POLL_MS_MAX`].

use std::sync::Arc;
use std::time::Duration;

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

    fn push(&mut self, entry: &EntryRef<'_>, delivery_count: u64) {
        let mut fields = self.builder.start();
        for (f, v) in entry.fields() {
            self.builder.push(&mut fields, f, v);
        }
        self.entries.push(GroupEntry {
            id: entry.id,
            fields: Some(fields),
            delivery_count,
        });
    }

    fn push_deleted(&mut self, id: StreamId) {
        self.entries.push(GroupEntry {
            id,
            fields: None,
            delivery_count: 0,
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
        let (g, c) = (group.as_bytes(), consumer.as_bytes());
        self.keyspace().run(|db, snapshot| {
            let now = snapshot.now_ms;
            let stream = db
                .stream_mut(key.as_bytes())
                .map_err(engine_error)?
                .ok_or_else(|| no_group_read(key, group))?;
            let serve = match from {
                ReadFrom::New => stream
                    .group_has_new(g)
                    .map_err(|_| no_group_read(key, group))?,
                ReadFrom::Pending(_) => true,
            };
            stream
                .touch_consumer(g, c, now)
                .map_err(|_| no_group_read(key, group))?;
            if !serve {
                return Ok(Vec::new());
            }
            let mut out = Collector::with_room(count);
            match from {
                ReadFrom::New => {
                    stream
                        .deliver_new(g, c, count, false, now, &mut |e| out.push(&e, 1))
                        .map_err(|_| no_group_read(key, group))?;
                }
                ReadFrom::Pending(after) => {
                    stream
                        .deliver_history(g, c, after, count, now, &mut |id, e| match e {
                            Some(e) => out.push(&e, 0),
                            None => out.push_deleted(id),
                        })
                        .map_err(|_| no_group_read(key, group))?;
                    if let Some(group) = stream.group(g) {
                        for entry in &mut out.entries {
                            entry.delivery_count =
                                group.nack(entry.id).map_or(0, |n| n.delivery_count);
                        }
                    }
                }
            }
            Ok(out.finish())
        })
    }

    /// Blocks on XREADGROUP `>` through the engine's blocked-reader registry.
    fn read_blocking(
        &self,
        key: &str,
        group: &str,
        consumer: &str,
        count: usize,
        block: Block<'_>,
    ) -> Result<Vec<GroupEntry>, FeedError> {
        let (count_text, block_text) = (count.to_string(), block.ms.max(1).to_string());
        let argv: [&[u8]; 11] = [
            b"XREADGROUP",
            b"GROUP",
            group.as_bytes(),
            consumer.as_bytes(),
            b"COUNT",
            count_text.as_bytes(),
            b"BLOCK",
            block_text.as_bytes(),
            b"STREAMS",
            key.as_bytes(),
            b">",
        ];
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

/// The entries of an XREADGROUP `>` reply (all first deliveries).
fn entries_of(reply: Reply) -> Result<Vec<GroupEntry>, FeedError> {
    let streams = match reply {
        Reply::NullArray | Reply::Null => return Ok(Vec::new()),
        Reply::StreamMap(streams) => streams,
        other => return Err(unexpected(format!("unexpected XREADGROUP reply {other:?}"))),
    };
    let mut out = Vec::new();
    for (_, entries) in streams {
        let Reply::Entries(entries) = entries else {
            return Err(unexpected("unexpected XREADGROUP entries".into()));
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
        match (from, block) {
            (ReadFrom::New, Some(block)) if entries.is_empty() && !block.interrupt.is_raised() => {
                self.read_blocking(key, group, consumer, count, block)
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
        self.keyspace().run(|db, _| {
            let Some(stream) = db.stream_mut(key.as_bytes()).map_err(engine_error)? else {
                return Ok(0);
            };
            // XACK on a missing group replies 0, as Redis does.
            Ok(stream.ack(group.as_bytes(), &newest_first).unwrap_or(0))
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
        self.keyspace().run(|db, snapshot| {
            let stream = db
                .stream_mut(key.as_bytes())
                .map_err(engine_error)?
                .ok_or_else(|| no_group(key, group))?;
            let options = echomq_engine::group::AutoClaimOptions {
                min_idle_ms,
                start,
                count: count.max(1),
                just_id: false,
            };
            let mut out = Collector::with_room(count);
            let claimed = stream
                .auto_claim(
                    g,
                    consumer.as_bytes(),
                    &options,
                    snapshot.now_ms,
                    &mut |e| out.push(&e, 0),
                )
                .map_err(|_| no_group(key, group))?;
            if let Some(group) = stream.group(g) {
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
            let stream = db.stream_or_create(key.as_bytes()).map_err(engine_error)?;
            let id = stream
                .add(AddId::Auto, fields, snapshot.now_ms, snapshot.limits)
                .map_err(engine_error)?;
            db.touch(key.as_bytes());
            db.signal_ready(key.as_bytes());
            Ok(id)
        })
    }

    fn dedicated(&self) -> Result<Embedded, FeedError> {
        Ok(self.clone())
    }

    fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(self.keyspace().clock())
    }
}
