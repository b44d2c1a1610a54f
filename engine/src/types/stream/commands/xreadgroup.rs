//! XREADGROUP's work on one stream, typed: what XREADGROUP does for each stream it names, and
//! what an embedder reads through [`Db::xreadgroup`] (no argument parsing, no reply encoding),
//! with the same effects either way.
//!
//! The read touches the consumer (created if missing), then serves: `>` the entries after the
//! group's cursor (nothing when there is none); `>` with CLAIM first the pending entries idle
//! at least min-idle (the NACK zone first, then oldest delivery), then new entries, COUNT
//! capping the total, and a stream with no new entry is still served if its first pending
//! entry is idle enough; an explicit id the consumer's own pending entries after it.
//!
//! Effects (Redis's `streamReplyWithRange` and `streamPropagateXCLAIM`): unless NOACK, an
//! XCLAIM form per delivered entry; after a `>` read that delivered, `XGROUP SETID`; a
//! consumer it created (also when nothing is served) fires `xgroup-createconsumer` and, when
//! no form carries it, propagates `XGROUP CREATECONSUMER`; one change for a stream that left
//! a form or created its consumer. The read lookups XREADGROUP counts are the command's.

use crate::error::{Error, Result, shown};
use crate::id::StreamId;
use crate::keyspace::Db;
use crate::node::EntryRef;
use crate::notify::STREAM;

use super::forms;

/// What a group read asks of one stream.
#[derive(Debug, Clone, Copy)]
pub struct GroupRead<'a> {
    /// The group.
    pub group: &'a [u8],
    /// The consumer (created if missing).
    pub consumer: &'a [u8],
    /// The most entries to serve; 0 for all.
    pub count: usize,
    /// NOACK: new entries are not added to the pending entries lists.
    pub noack: bool,
}

/// Where a group read reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupFrom {
    /// `>`: the entries after the group's cursor.
    New,
    /// `>` with `CLAIM min-idle`: idle pending entries first, then new ones.
    Claiming {
        /// The least idle time (ms) of a pending entry to claim.
        min_idle_ms: u64,
    },
    /// An explicit id: the consumer's own pending entries after it.
    History(StreamId),
}

/// One entry a group read serves.
#[derive(Debug)]
pub enum Delivered<'e> {
    /// A new entry (now pending for the consumer, unless NOACK).
    New(EntryRef<'e>),
    /// A pending entry claimed for the consumer.
    Claimed {
        /// The entry.
        entry: EntryRef<'e>,
        /// How long it had been idle (ms).
        idle_ms: i64,
        /// Its delivery count before this claim.
        deliveries_before: u64,
    },
    /// An entry of the consumer's history: `None` when the stream entry was deleted.
    History(StreamId, Option<EntryRef<'e>>),
}

/// What a group read of one stream did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupReadDone {
    /// Whether the stream was served (an explicit id always is; `>` when it had something).
    pub served: bool,
    /// With CLAIM: the delivery time of the stream's first pending entry that still exists
    /// (when a blocked CLAIM read should look again).
    pub first_pending_ms: Option<u64>,
}

/// What one stream's group read did, for its effects.
struct Served {
    /// Whether the ids are kept (only when something records the forms).
    keep_ids: bool,
    /// The consumer was created by this read.
    created: bool,
    /// How many entries were delivered or claimed (deleted history entries not included).
    delivered: usize,
    /// Their ids, when `keep_ids`.
    ids: Vec<StreamId>,
}

impl Served {
    fn delivered(&mut self, id: StreamId) {
        self.delivered += 1;
        if self.keep_ids {
            self.ids.push(id);
        }
    }
}

impl Db {
    /// Reads the stream under `key` for a consumer group as XREADGROUP does for one stream,
    /// with its effects (see the module doc); `emit` gets each entry served. A missing key or
    /// group is XREADGROUP's NOGROUP error, another type WRONGTYPE.
    pub fn xreadgroup(
        &mut self,
        key: &[u8],
        read: &GroupRead<'_>,
        from: GroupFrom,
        now_ms: u64,
        emit: &mut dyn FnMut(Delivered<'_>),
    ) -> Result<GroupReadDone> {
        self.xreadgroup_while(key, read, from, now_ms, &mut || true, emit)
    }

    /// [`Db::xreadgroup`], asking `more` before each entry it would serve (XREADGROUP's
    /// MAXCOUNT/MAXSIZE): at the first no it stops, and an entry not served is not delivered,
    /// claimed or re-delivered, so its effects are not there either.
    pub fn xreadgroup_while(
        &mut self,
        key: &[u8],
        read: &GroupRead<'_>,
        from: GroupFrom,
        now_ms: u64,
        more: &mut dyn FnMut() -> bool,
        emit: &mut dyn FnMut(Delivered<'_>),
    ) -> Result<GroupReadDone> {
        let mut served = Served {
            keep_ids: self.propagating(),
            created: false,
            delivered: 0,
            ids: Vec::new(),
        };
        let done = read_stream(self, key, read, from, now_ms, more, emit, &mut served)?;
        read_effects(
            self,
            key,
            read,
            !matches!(from, GroupFrom::History(_)),
            &served,
        );
        Ok(done)
    }
}

#[allow(clippy::too_many_arguments)]
fn read_stream(
    db: &mut Db,
    key: &[u8],
    read: &GroupRead<'_>,
    from: GroupFrom,
    now: u64,
    more: &mut dyn FnMut() -> bool,
    emit: &mut dyn FnMut(Delivered<'_>),
    served: &mut Served,
) -> Result<GroupReadDone> {
    let GroupRead {
        group,
        consumer,
        count,
        noack,
    } = *read;
    let no_group = || Error::NoKeyOrGroupXreadgroup {
        key: shown(key),
        group: shown(group),
    };
    let stream = db.stream_mut(key)?.ok_or_else(no_group)?;
    let (claimable, first_pending_ms) = match from {
        GroupFrom::Claiming { min_idle_ms } => stream
            .group_claimable(group, min_idle_ms, now)
            .map_err(|_| no_group())?,
        _ => (false, None),
    };
    let has_new = match from {
        GroupFrom::History(_) => true,
        _ => stream.group_has_new(group).map_err(|_| no_group())?,
    };
    served.created = stream
        .touch_consumer(group, consumer, now)
        .map_err(|_| no_group())?;
    if !has_new && !claimable {
        return Ok(GroupReadDone {
            served: false,
            first_pending_ms,
        });
    }
    match from {
        GroupFrom::Claiming { min_idle_ms } => {
            let claimed = stream
                .claim_idle_while(
                    group,
                    consumer,
                    min_idle_ms,
                    count,
                    now,
                    more,
                    &mut |e, idle, n| {
                        served.delivered(e.id);
                        emit(Delivered::Claimed {
                            entry: e,
                            idle_ms: idle,
                            deliveries_before: n,
                        });
                    },
                )
                .map_err(|_| no_group())?;
            if has_new && (count == 0 || claimed < count) {
                let rest = if count == 0 { 0 } else { count - claimed };
                stream
                    .deliver_new_while(group, consumer, rest, noack, now, more, &mut |e| {
                        served.delivered(e.id);
                        emit(Delivered::New(e));
                    })
                    .map_err(|_| no_group())?;
            }
        }
        GroupFrom::New => {
            stream
                .deliver_new_while(group, consumer, count, noack, now, more, &mut |e| {
                    served.delivered(e.id);
                    emit(Delivered::New(e));
                })
                .map_err(|_| no_group())?;
        }
        GroupFrom::History(after) => {
            stream
                .deliver_history_while(
                    group,
                    consumer,
                    after,
                    count,
                    now,
                    more,
                    &mut |id, entry| {
                        if entry.is_some() {
                            served.delivered(id);
                        }
                        emit(Delivered::History(id, entry));
                    },
                )
                .map_err(|_| no_group())?;
        }
    }
    Ok(GroupReadDone {
        served: true,
        first_pending_ms,
    })
}

/// The effects of one stream's group read (the module doc); `new` for a `>` read.
fn read_effects(db: &mut Db, key: &[u8], read: &GroupRead<'_>, new: bool, served: &Served) {
    let (group_name, consumer) = (read.group, read.consumer);
    if served.created {
        db.notify(STREAM, "xgroup-createconsumer", key);
    }
    // A delivery is a change when it leaves a form: an XCLAIM (not NOACK) or a SETID (`>`).
    let delivered = served.delivered > 0 && (new || !read.noack);
    if !delivered && !served.created {
        return;
    }
    db.add_dirty(1);
    if !db.propagating() {
        return;
    }
    let Some(group) = db
        .stream(key)
        .ok()
        .flatten()
        .and_then(|s| s.group(group_name))
    else {
        return;
    };
    let mut out = Vec::new();
    if !read.noack {
        out.extend(
            served
                .ids
                .iter()
                .filter_map(|&id| forms::claim(key, group_name, group, id)),
        );
    }
    if new && served.delivered > 0 {
        out.push(forms::setid(key, group_name, group));
    }
    if served.created && (read.noack || out.is_empty()) {
        out.push(forms::create_consumer(key, group_name, consumer));
    }
    for form in out {
        db.propagate(form);
    }
}
