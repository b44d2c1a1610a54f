//! `XREAD [COUNT n] [BLOCK ms] STREAMS key... id...` and
//! `XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [CLAIM min-idle] [NOACK] STREAMS
//! key... id...`.
//!
//! CLAIM (Redis 8.4): for a stream read with `>`, pending entries idle for at least min-idle
//! are claimed first (the NACK zone first, then oldest delivery), then new entries are read,
//! COUNT capping the total; every entry is `[id, fields, idle, count]` (new ones `0, 0`). A
//! stream with no new entry is still served if its first existing pending entry is idle
//! enough. A history read ignores CLAIM, and (Redis's quirk) so does every later stream of
//! the call. A blocked CLAIM read also wakes when its first pending entry becomes claimable:
//! the request carries that time (`claim_wake_ms`).
//!
//! Options and every key (type, then group, then id, in argument order) are checked before
//! anything is served. XREAD serves a stream whose last live entry is past the given id (`$`
//! is the stream's last id, `+` one before it so only the last entry reads); XREADGROUP `>`
//! serves a stream whose last live entry is past the group's cursor, and an explicit id always
//! serves the consumer's own history. XREADGROUP creates the consumer and marks it seen for
//! every stream it names. If nothing is served and BLOCK was given, the command asks to block
//! (with `$` rewritten to the concrete id so a re-run cannot wait forever); otherwise it
//! replies a null array.

use bytes::Bytes;

use crate::blocking::{BlockRequest, Outcome};
use crate::error::{Error, Result, shown};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::{EntryReplies, Reply};

use super::args::{is, parse_i64};
use super::forms;

/// Where a stream is read from.
#[derive(Debug, Clone, Copy)]
enum From {
    /// Entries after this id (`$` and `+` already resolved).
    After(StreamId),
    /// XREADGROUP `>`: entries after the group's cursor.
    New,
}

/// XREAD and XREADGROUP.
#[derive(Debug)]
pub struct XRead;

impl XRead {
    /// XREAD.
    pub fn run_plain(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        Self::run(db, snapshot, argv, false)
    }

    /// XREADGROUP.
    pub fn run_group(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Outcome> {
        Self::run(db, snapshot, argv, true)
    }

    fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]], grouped: bool) -> Result<Outcome> {
        let mut count = 0usize;
        let mut block_ms: Option<u64> = None;
        let mut noack = false;
        let mut claim: Option<u64> = None;
        let mut group: Option<(&[u8], &[u8])> = None;
        let mut streams_at = None;
        let mut i = 1;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            let opt = argv[i];
            if is(opt, "claim") && more > 0 {
                if !grouped {
                    return Err(Error::ClaimOnlyInXreadgroup);
                }
                let ms = parse_i64(argv[i + 1]).map_err(|_| Error::ClaimNotInteger)?;
                claim = Some(u64::try_from(ms).map_err(|_| Error::ClaimNegative)?);
                i += 2;
            } else if is(opt, "block") && more > 0 {
                let ms = parse_i64(argv[i + 1]).map_err(|_| Error::TimeoutNotInteger)?;
                block_ms = Some(u64::try_from(ms).map_err(|_| Error::TimeoutNegative)?);
                // Redis adds now to the timeout and refuses a sum past i64::MAX.
                if ms > 0 && ms > i64::MAX - i64::try_from(snapshot.now_ms).unwrap_or(i64::MAX) {
                    return Err(Error::TimeoutOutOfRange);
                }
                i += 2;
            } else if is(opt, "count") && more > 0 {
                count = usize::try_from(parse_i64(argv[i + 1])?.max(0)).unwrap_or(usize::MAX);
                i += 2;
            } else if is(opt, "streams") && more > 0 {
                if (argv.len() - i - 1) % 2 != 0 {
                    return Err(if grouped {
                        Error::UnbalancedXreadgroup
                    } else {
                        Error::UnbalancedXread
                    });
                }
                streams_at = Some(i + 1);
                break;
            } else if is(opt, "group") && more >= 2 {
                if !grouped {
                    return Err(Error::GroupOnlyInXreadgroup);
                }
                group = Some((argv[i + 1], argv[i + 2]));
                i += 3;
            } else if is(opt, "noack") {
                if !grouped {
                    return Err(Error::NoackOnlyInXreadgroup);
                }
                noack = true;
                i += 1;
            } else {
                return Err(Error::Syntax);
            }
        }
        let Some(streams_at) = streams_at else {
            return Err(Error::Syntax);
        };
        if grouped && group.is_none() {
            return Err(Error::MissingGroup);
        }
        let n = (argv.len() - streams_at) / 2;
        let keys = &argv[streams_at..streams_at + n];
        let id_args = &argv[streams_at + n..];

        let mut froms = Vec::with_capacity(n);
        for (&key, &arg) in keys.iter().zip(id_args) {
            // Redis looks every key up for reading twice: here, and when it serves them.
            db.count_read(key, false);
            let stream = db.stream(key)?;
            if let Some((g, _)) = group
                && stream.and_then(|s| s.group(g)).is_none()
            {
                return Err(Error::NoKeyOrGroupXreadgroup {
                    key: shown(key),
                    group: shown(g),
                });
            }
            let last_id = stream.map_or(StreamId::MIN, |s| s.last_id());
            froms.push(match arg {
                b"$" if grouped => return Err(Error::MeaninglessIdInXreadgroup('$')),
                b"+" if grouped => return Err(Error::MeaninglessIdInXreadgroup('+')),
                b"$" => From::After(last_id),
                // Redis 8.8: the last live entry (the last id may be deleted), nothing on an
                // empty or missing stream; a live id is never 0-0, so it has a predecessor.
                b"+" => From::After(
                    stream
                        .and_then(|s| s.last_entry())
                        .and_then(|e| e.id.prev())
                        .unwrap_or(StreamId::MIN),
                ),
                b">" if grouped => From::New,
                b">" => return Err(Error::GtOnlyInXreadgroup),
                // Redis keeps `>` as the id max-max and tells them apart by value alone.
                arg if grouped && StreamId::parse_strict(arg)? == StreamId::MAX => From::New,
                arg => From::After(StreamId::parse_strict(arg)?),
            });
        }

        let mut served = Vec::new();
        let mut first_pending_time: Option<u64> = None;
        for (&key, from) in keys.iter().zip(&froms) {
            db.count_read(key, false);
            let entries = match group {
                Some((g, consumer)) => {
                    let read = GroupRead {
                        group: g,
                        consumer,
                        count,
                        noack,
                    };
                    let (entries, first) =
                        serve_group(db, snapshot, key, &read, *from, &mut claim)?;
                    if let Some(t) = first {
                        first_pending_time = Some(first_pending_time.map_or(t, |m| m.min(t)));
                    }
                    entries
                }
                None => serve_plain(db, key, *from, count)?,
            };
            if let Some(entries) = entries {
                served.push((Reply::bulk(key), entries));
            }
        }
        if !served.is_empty() {
            return Ok(Outcome::Reply(Reply::StreamMap(served)));
        }
        let Some(timeout_ms) = block_ms else {
            return Ok(Outcome::Reply(Reply::NullArray));
        };
        let mut rewritten: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
        for (k, from) in froms.iter().enumerate() {
            if id_args[k] == b"$"
                && let From::After(id) = from
            {
                rewritten[streams_at + n + k] = Bytes::from(id.to_string());
            }
        }
        let mut block_keys: Vec<Bytes> = Vec::with_capacity(n);
        for &key in keys {
            if !block_keys.iter().any(|k| k == key) {
                block_keys.push(Bytes::copy_from_slice(key));
            }
        }
        Ok(Outcome::Block(BlockRequest {
            argv: rewritten,
            keys: block_keys,
            deadline_ms: (timeout_ms > 0).then(|| snapshot.now_ms.saturating_add(timeout_ms)),
            wake_on_delete: grouped,
            claim_wake_ms: claim.map(|min| {
                first_pending_time
                    .unwrap_or(snapshot.now_ms)
                    .saturating_add(min)
            }),
        }))
    }
}

/// XREAD's entries for one stream, or `None` if it is not served.
fn serve_plain(db: &Db, key: &[u8], from: From, count: usize) -> Result<Option<Reply>> {
    let From::After(after) = from else {
        return Ok(None);
    };
    let Some(stream) = db.stream(key)? else {
        return Ok(None);
    };
    if stream.last_entry().is_none_or(|e| e.id <= after) {
        return Ok(None);
    }
    let Some(start) = after.next() else {
        return Ok(None);
    };
    let limit = if count == 0 { usize::MAX } else { count };
    let mut entries = EntryReplies::new();
    stream
        .range(start, StreamId::MAX)
        .take(limit)
        .for_each(|e| entries.push(&e));
    Ok(Some(entries.into_reply()))
}

/// What an XREADGROUP asks of each stream.
struct GroupRead<'a> {
    group: &'a [u8],
    consumer: &'a [u8],
    count: usize,
    noack: bool,
}

/// XREADGROUP's entries for one stream, or `None` if it is not served, and (with CLAIM) the
/// delivery time of the stream's first pending entry that still exists. A history read turns
/// `claim` off for this and every later stream, as Redis does.
///
/// Effects, per stream (Redis's `streamReplyWithRange` and `streamPropagateXCLAIM`): unless
/// NOACK, an XCLAIM form per delivered entry; after a `>` read that delivered, `XGROUP SETID`;
/// a consumer it created (also when the read blocks) fires `xgroup-createconsumer` and, when
/// no form carries it, propagates `XGROUP CREATECONSUMER`; one change for a stream that
/// left a form or created its consumer.
fn serve_group(
    db: &mut Db,
    snapshot: &Snapshot,
    key: &[u8],
    read: &GroupRead<'_>,
    from: From,
    claim: &mut Option<u64>,
) -> Result<(Option<Reply>, Option<u64>)> {
    let mut served = Served::default();
    let out = serve_group_entries(db, snapshot, key, read, from, claim, &mut served)?;
    group_read_effects(db, key, read, matches!(from, From::New), &served);
    Ok(out)
}

/// What one stream's group read did, for its effects.
#[derive(Default)]
struct Served {
    /// The consumer was created by this read.
    created: bool,
    /// The ids delivered or claimed (deleted history entries not included).
    delivered: Vec<StreamId>,
}

fn group_read_effects(db: &mut Db, key: &[u8], read: &GroupRead<'_>, new: bool, served: &Served) {
    let (group_name, consumer) = (read.group, read.consumer);
    if served.created {
        db.notify(STREAM, "xgroup-createconsumer", key);
    }
    // A delivery is a change when it leaves a form: an XCLAIM (not NOACK) or a SETID (`>`).
    let delivered = !served.delivered.is_empty() && (new || !read.noack);
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
                .delivered
                .iter()
                .filter_map(|&id| forms::claim(key, group_name, group, id)),
        );
    }
    if new && !served.delivered.is_empty() {
        out.push(forms::setid(key, group_name, group));
    }
    if served.created && (read.noack || out.is_empty()) {
        out.push(forms::create_consumer(key, group_name, consumer));
    }
    for form in out {
        db.propagate(form);
    }
}

#[allow(clippy::too_many_arguments)]
fn serve_group_entries(
    db: &mut Db,
    snapshot: &Snapshot,
    key: &[u8],
    read: &GroupRead<'_>,
    from: From,
    claim: &mut Option<u64>,
    served: &mut Served,
) -> Result<(Option<Reply>, Option<u64>)> {
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
    let now = snapshot.now_ms;
    let (claimable, first_pending) = match *claim {
        Some(min) => stream
            .group_claimable(group, min, now)
            .map_err(|_| no_group())?,
        None => (false, None),
    };
    let mut serve = match from {
        From::After(_) => true,
        From::New => stream.group_has_new(group).map_err(|_| no_group())?,
    };
    served.created = stream
        .touch_consumer(group, consumer, now)
        .map_err(|_| no_group())?;
    let mut claimed_only = false;
    if matches!(from, From::After(_)) {
        *claim = None;
    } else if !serve && claimable {
        serve = true;
        claimed_only = true;
    }
    if !serve {
        return Ok((None, first_pending));
    }
    if let (Some(min), From::New) = (*claim, from) {
        let mut entries = Vec::new();
        let claimed = stream
            .claim_idle(group, consumer, min, count, now, &mut |e, idle, n| {
                served.delivered.push(e.id);
                entries.push(with_delivery(Reply::entry(&e), idle, n as i64));
            })
            .map_err(|_| no_group())?;
        if !claimed_only && (count == 0 || claimed < count) {
            let rest = if count == 0 { 0 } else { count - claimed };
            stream
                .deliver_new(group, consumer, rest, noack, now, &mut |e| {
                    served.delivered.push(e.id);
                    entries.push(with_delivery(Reply::entry(&e), 0, 0));
                })
                .map_err(|_| no_group())?;
        }
        return Ok((Some(Reply::Array(entries)), first_pending));
    }
    let mut entries = EntryReplies::new();
    match from {
        From::New => {
            stream
                .deliver_new(group, consumer, count, noack, now, &mut |e| {
                    served.delivered.push(e.id);
                    entries.push(&e)
                })
                .map_err(|_| no_group())?;
        }
        From::After(after) => {
            stream
                .deliver_history(
                    group,
                    consumer,
                    after,
                    count,
                    now,
                    &mut |id, entry| match entry {
                        Some(e) => {
                            served.delivered.push(id);
                            entries.push(&e)
                        }
                        None => entries.push_deleted(id),
                    },
                )
                .map_err(|_| no_group())?;
        }
    }
    Ok((Some(entries.into_reply()), first_pending))
}

/// `[id, fields]` with CLAIM's idle time and delivery count appended.
fn with_delivery(entry: Reply, idle: i64, count: i64) -> Reply {
    match entry {
        Reply::Array(mut items) => {
            items.push(Reply::Int(idle));
            items.push(Reply::Int(count));
            Reply::Array(items)
        }
        other => other,
    }
}
