//! `XREAD [COUNT n] [MAXCOUNT n] [MAXSIZE bytes] [BLOCK ms] STREAMS key... id...` and
//! `XREADGROUP GROUP group consumer [COUNT n] [MAXCOUNT n] [MAXSIZE bytes] [BLOCK ms]
//! [CLAIM min-idle] [NOACK] STREAMS key... id...` (options in any order before STREAMS).
//!
//! MAXCOUNT and MAXSIZE (Redis 8.10) cap the whole reply where COUNT caps each stream; the
//! rules are in `read_caps.rs` and `docs/reference/streams-8.md` §6. Their values must be
//! positive, checked as they are parsed; `MAXCOUNT >= COUNT` is checked after the option
//! loop, before STREAMS and GROUP are looked for. A stream the caps never reach is left out
//! of the reply and, for XREADGROUP, untouched (its consumer is not created or marked seen).
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
use crate::reply::{EntryReplies, Reply};
use crate::reply_size::encoded_len;

use super::args::{is, parse_i64};
use super::read_caps::{Budget, Caps};
use super::xreadgroup::{Delivered, GroupFrom, GroupRead};

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
        let mut caps = Caps::default();
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
            } else if is(opt, "maxcount") && more > 0 {
                caps.max_count = Some(Caps::parse_max_count(argv[i + 1])?);
                i += 2;
            } else if is(opt, "maxsize") && more > 0 {
                caps.max_size = Some(Caps::parse_max_size(argv[i + 1])?);
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
        caps.check(count)?;
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
        let budget = Budget::new(caps, snapshot.protocol);
        for (&key, from) in keys.iter().zip(&froms) {
            let Some(count) = budget.open_stream(count) else {
                break;
            };
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
                        serve_group(db, snapshot, key, &read, *from, &mut claim, &budget)?;
                    if let Some(t) = first {
                        first_pending_time = Some(first_pending_time.map_or(t, |m| m.min(t)));
                    }
                    entries
                }
                None => serve_plain(db, key, *from, count, &budget)?,
            };
            if let Some((entries, n)) = entries {
                budget.close_stream(key, n);
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
            protocol: snapshot.protocol,
            key_type: None,
            denied_reply: None,
        }))
    }
}

/// One served stream's entries, and how many.
type Served = (Reply, usize);

/// XREAD's entries for one stream and how many, or `None` if it is not served.
fn serve_plain(
    db: &Db,
    key: &[u8],
    from: From,
    count: usize,
    budget: &Budget,
) -> Result<Option<Served>> {
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
    let protocol = budget.protocol();
    for e in stream.range(start, StreamId::MAX).take(limit) {
        if !budget.may_emit(key) {
            break;
        }
        let before = entries.encoded_len(protocol);
        entries.push(&e);
        budget.emitted(entries.encoded_len(protocol) - before);
    }
    let n = entries.len();
    Ok(Some((entries.into_reply(), n)))
}

/// XREADGROUP's entries for one stream, or `None` if it is not served, and (with CLAIM) the
/// delivery time of the stream's first pending entry that still exists. A history read turns
/// `claim` off for this and every later stream, as Redis does.
fn serve_group(
    db: &mut Db,
    snapshot: &Snapshot,
    key: &[u8],
    read: &GroupRead<'_>,
    from: From,
    claim: &mut Option<u64>,
    budget: &Budget,
) -> Result<(Option<Served>, Option<u64>)> {
    let from = match (from, *claim) {
        (From::After(after), _) => {
            *claim = None;
            GroupFrom::History(after)
        }
        (From::New, Some(min_idle_ms)) => GroupFrom::Claiming { min_idle_ms },
        (From::New, None) => GroupFrom::New,
    };
    let protocol = budget.protocol();
    let more = &mut || budget.may_emit(key);
    let (done, reply, n) = if matches!(from, GroupFrom::Claiming { .. }) {
        // CLAIM's shape: every entry `[id, fields, idle, count]`, new ones `0, 0`.
        let mut entries = Vec::new();
        let done = db.xreadgroup_while(key, read, from, snapshot.now_ms, more, &mut |d| {
            let entry = match d {
                Delivered::Claimed {
                    entry,
                    idle_ms,
                    deliveries_before,
                } => with_delivery(Reply::entry(&entry), idle_ms, deliveries_before as i64),
                Delivered::New(e) | Delivered::History(_, Some(e)) => {
                    with_delivery(Reply::entry(&e), 0, 0)
                }
                Delivered::History(_, None) => return,
            };
            let bytes = if budget.sizing() {
                encoded_len(&entry, protocol)
            } else {
                0
            };
            budget.emitted(bytes);
            entries.push(entry);
        })?;
        let n = entries.len();
        (done, Reply::Array(entries), n)
    } else {
        let mut entries = EntryReplies::new();
        let done = db.xreadgroup_while(key, read, from, snapshot.now_ms, more, &mut |d| {
            let before = entries.encoded_len(protocol);
            match d {
                Delivered::New(e) | Delivered::History(_, Some(e)) => entries.push(&e),
                Delivered::Claimed { entry, .. } => entries.push(&entry),
                Delivered::History(id, None) => entries.push_deleted(id),
            }
            budget.emitted(entries.encoded_len(protocol) - before);
        })?;
        let n = entries.len();
        (done, entries.into_reply(), n)
    };
    Ok((done.served.then_some((reply, n)), done.first_pending_ms))
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
