//! What each stream command propagates, derived from its arguments, its reply and the state
//! it left (plus a little state read before it ran), so the commands themselves stay as they
//! are. The forms follow Redis 8.8's `t_stream.c`:
//!
//! - XADD: the arguments with the id it got in place of `*` (or `ms-*`), and a `~` trim as
//!   `MAXLEN = <length after>` / `MINID = <first id after>` without LIMIT; an IDMP duplicate
//!   verbatim (it replays as the same duplicate).
//! - XTRIM: likewise, when it removed something; XDEL, XACK when they changed something.
//! - XREADGROUP: per delivered entry `XCLAIM key group owner 0 id TIME t RETRYCOUNT n FORCE
//!   JUSTID LASTID last`, then `XGROUP SETID key group last ENTRIESREAD n` for a `>` read that
//!   delivered; a consumer it created that no XCLAIM carries as `XGROUP CREATECONSUMER`.
//! - XCLAIM, XAUTOCLAIM: the same XCLAIM per claimed entry, XACK for pending entries they
//!   dropped because the entry was deleted; XCLAIM's LASTID, when no XCLAIM carries it, as
//!   XGROUP SETID.
//! - XSETID, XGROUP (every subcommand but HELP), XCFGSET, XIDMPRECORD, XNACK, XDELEX,
//!   XACKDEL: verbatim, when they changed something.
//!
//! The dirty counter counts as Redis does: 1 per XADD/XSETID/XGROUP change, the number of
//! entries for XDEL/XACK/XTRIM/XCLAIM, 1 per stream XREADGROUP changed.

use bytes::Bytes;

use crate::blocking::Outcome;
use crate::error::Result;
use crate::id::StreamId;
use crate::keyspace::Db;
use crate::reply::Reply;
use crate::stream::{Stream, TrimStrategy};

use super::args::is;
use super::trim_args;

/// What is read before a command runs (for propagation and for keyspace notifications, see
/// `command/notify.rs`).
#[derive(Debug, Default)]
pub(super) struct Before {
    /// XADD: the stream's entries-added counter (to tell an IDMP duplicate).
    pub(super) entries_added: Option<u64>,
    /// XADD: the stream's length (to tell whether its trim removed entries).
    pub(super) len: Option<u64>,
    /// XREADGROUP: per stream key, whether the consumer existed. XGROUP DELCONSUMER,
    /// XCLAIM, XAUTOCLAIM: one.
    pub(super) consumer_existed: Vec<bool>,
    /// XCLAIM: which of the named ids were pending.
    pending: Vec<(StreamId, bool)>,
}

fn bytes(arg: &[u8]) -> Bytes {
    Bytes::copy_from_slice(arg)
}

fn id_bytes(id: StreamId) -> Bytes {
    Bytes::from(id.to_string())
}

pub(super) fn stream<'d>(db: &'d Db, key: &[u8]) -> Option<&'d Stream> {
    db.stream(key).ok().flatten()
}

pub(super) fn consumer_exists(db: &Db, key: &[u8], group: &[u8], consumer: &[u8]) -> bool {
    stream(db, key)
        .and_then(|s| s.group(group))
        .is_some_and(|g| g.consumer(consumer).is_some())
}

/// XREADGROUP's group, consumer, NOACK, stream keys and ids, if the arguments parse.
pub(super) struct ReadGroup<'a> {
    pub(super) group: &'a [u8],
    pub(super) consumer: &'a [u8],
    noack: bool,
    pub(super) keys: &'a [&'a [u8]],
    ids: &'a [&'a [u8]],
}

pub(super) fn parse_readgroup<'a>(argv: &'a [&'a [u8]]) -> Option<ReadGroup<'a>> {
    let mut i = 1;
    let (mut group, mut noack) = (None, false);
    while i < argv.len() {
        let opt = argv[i];
        if is(opt, "group") && i + 2 < argv.len() {
            group = Some((argv[i + 1], argv[i + 2]));
            i += 3;
        } else if is(opt, "noack") {
            noack = true;
            i += 1;
        } else if is(opt, "streams") {
            let rest = &argv[i + 1..];
            let n = rest.len() / 2;
            let (group, consumer) = group?;
            return Some(ReadGroup {
                group,
                consumer,
                noack,
                keys: &rest[..n],
                ids: &rest[n..],
            });
        } else {
            i += 2;
        }
    }
    None
}

/// XCLAIM's ids (from `argv[5]` to the first option).
fn claim_ids(argv: &[&[u8]]) -> Vec<StreamId> {
    argv.iter()
        .skip(5)
        .map_while(|arg| StreamId::parse_strict(arg).ok())
        .collect()
}

/// Reads what `after` needs from the state before the command: nothing, in one inlined
/// branch, when nothing propagates and no stream event is wanted.
#[inline]
pub(super) fn before(db: &Db, name: &str, argv: &[&[u8]]) -> Before {
    if !db.propagating() && !db.notifying(crate::notify::STREAM) {
        return Before::default();
    }
    before_observed(db, name, argv)
}

fn before_observed(db: &Db, name: &str, argv: &[&[u8]]) -> Before {
    let mut out = Before::default();
    match name {
        "xadd" => {
            out.entries_added = stream(db, argv[1]).map(Stream::entries_added);
            out.len = stream(db, argv[1]).map(Stream::len);
        }
        "xreadgroup" => {
            if let Some(read) = parse_readgroup(argv) {
                out.consumer_existed = read
                    .keys
                    .iter()
                    .map(|key| consumer_exists(db, key, read.group, read.consumer))
                    .collect();
            }
        }
        "xgroup" if argv.len() == 5 && is(argv[1], "delconsumer") => {
            out.consumer_existed = vec![consumer_exists(db, argv[2], argv[3], argv[4])];
        }
        "xautoclaim" => {
            out.consumer_existed = vec![consumer_exists(db, argv[1], argv[2], argv[3])];
        }
        "xclaim" => {
            out.consumer_existed = vec![consumer_exists(db, argv[1], argv[2], argv[3])];
            let group = stream(db, argv[1]).and_then(|s| s.group(argv[2]));
            out.pending = claim_ids(argv)
                .into_iter()
                .map(|id| (id, group.is_some_and(|g| g.nack(id).is_some())))
                .collect();
        }
        _ => {}
    }
    out
}

/// Records what a command that ran propagates, and counts its changes.
#[inline]
pub(super) fn after(
    db: &mut Db,
    name: &str,
    argv: &[&[u8]],
    before: Before,
    out: &Result<Outcome>,
) {
    let reply = match out {
        Ok(Outcome::Reply(reply)) => Some(reply),
        Ok(Outcome::Block(_)) => None,
        Err(_) => return,
    };
    if !db.propagating() {
        // Only the dirty counter: no form is built when nothing records it.
        db.add_dirty(changes(name, reply));
        return;
    }
    after_propagating(db, name, argv, before, reply);
}

/// The integer a command replied, 0 for any other reply.
fn int_of(reply: Option<&Reply>) -> i64 {
    match reply {
        Some(Reply::Int(n)) => *n,
        _ => 0,
    }
}

/// The changes a command that replied `reply` counts in the dirty counter.
fn changes(name: &str, reply: Option<&Reply>) -> u64 {
    let int = int_of(reply);
    // XADD first: the hottest command is matched before the rest.
    match name {
        "xadd" => u64::from(matches!(reply, Some(Reply::Bulk(_)))),
        "xdel" | "xack" | "xtrim" => u64::try_from(int).unwrap_or(0),
        "xsetid" | "xcfgset" | "xidmprecord" | "xgroup" => u64::from(reply.is_some()),
        "xreadgroup" | "xclaim" | "xautoclaim" => {
            u64::from(matches!(reply, Some(Reply::StreamMap(_) | Reply::Array(_))))
        }
        "xnack" => u64::try_from(int).unwrap_or(0),
        "xdelex" | "xackdel" => per_id_changes(name, reply),
        _ => 0,
    }
}

/// [`after`] with a propagation sink installed: the command's deterministic form.
fn after_propagating(
    db: &mut Db,
    name: &str,
    argv: &[&[u8]],
    before: Before,
    reply: Option<&Reply>,
) {
    let int = int_of(reply);
    let verbatim = || argv.iter().map(|a| bytes(a)).collect::<Vec<_>>();
    match name {
        "xadd" => {
            if let Some(Reply::Bulk(id)) = reply {
                xadd(db, argv, id, before.entries_added);
            }
        }
        "xtrim" if int > 0 => {
            let mut form = verbatim();
            exact_trim(db, argv, &mut form, argv.len());
            db.propagate(form);
            db.add_dirty(int as u64);
        }
        "xdel" | "xack" | "xnack" if int > 0 => {
            db.propagate(verbatim());
            db.add_dirty(int as u64);
        }
        "xsetid" | "xcfgset" | "xidmprecord" if reply.is_some() => {
            db.propagate(verbatim());
            db.add_dirty(1);
        }
        "xgroup" => {
            let sub = argv.get(1).copied().unwrap_or_default();
            let changed = if is(sub, "create") || is(sub, "setid") {
                true
            } else if is(sub, "destroy") || is(sub, "createconsumer") {
                int > 0
            } else if is(sub, "delconsumer") {
                before.consumer_existed.first().copied().unwrap_or(false)
            } else {
                false
            };
            if changed {
                db.propagate(verbatim());
                db.add_dirty(1);
            }
        }
        "xdelex" | "xackdel" => {
            // Verbatim when any id changed something, as Redis 8.8 propagates them.
            let changed = per_id_changes(name, reply);
            if changed > 0 {
                db.propagate(verbatim());
                db.add_dirty(changed);
            }
        }
        "xreadgroup" => xreadgroup(db, argv, &before, reply),
        "xclaim" => {
            if let Some(reply) = reply {
                xclaim(db, argv, &before, reply);
            }
        }
        "xautoclaim" => {
            if let Some(Reply::Array(parts)) = reply {
                xautoclaim(db, argv, &before, parts);
            }
        }
        _ => {}
    }
}

/// How many ids XDELEX (code 1: deleted) or XACKDEL (1: acknowledged and deleted, 2:
/// acknowledged only) changed, from its per-id reply codes.
pub(super) fn per_id_changes(name: &str, reply: Option<&Reply>) -> u64 {
    let Some(Reply::Array(codes)) = reply else {
        return 0;
    };
    let changed = |code: i64| code == 1 || (name == "xackdel" && code == 2);
    codes
        .iter()
        .filter(|c| matches!(c, Reply::Int(code) if changed(*code)))
        .count() as u64
}

/// XADD's propagated form.
fn xadd(db: &mut Db, argv: &[&[u8]], id: &Bytes, entries_added_before: Option<u64>) {
    let verbatim: Vec<Bytes> = argv.iter().map(|a| bytes(a)).collect();
    let added_after = stream(db, argv[1]).map(Stream::entries_added);
    db.add_dirty(1);
    if entries_added_before.is_some() && entries_added_before == added_after {
        // An IDMP duplicate: nothing changed but the statistics; it replays as a duplicate.
        db.propagate(verbatim);
        return;
    }
    let Ok(opts) = trim_args::parse(argv, true) else {
        db.propagate(verbatim);
        return;
    };
    let Some((_, fields_at)) = opts.id else {
        db.propagate(verbatim);
        return;
    };
    let id_at = fields_at - 1;
    let mut form = verbatim;
    form[id_at] = id.clone();
    exact_trim(db, argv, &mut form, id_at);
    db.propagate(form);
}

/// Rewrites a `~` trim among `form[2..end]` to its exact effect and drops its LIMIT.
fn exact_trim(db: &Db, argv: &[&[u8]], form: &mut Vec<Bytes>, end: usize) {
    let Ok(opts) =
        trim_args::parse(&argv[..end.max(2)], false).or_else(|_| trim_args::parse(argv, true))
    else {
        return;
    };
    let Some(trim) = opts.trim else { return };
    if !trim.approx {
        return;
    }
    let Some(at) = (2..end).find(|&i| is(argv[i], "maxlen") || is(argv[i], "minid")) else {
        return;
    };
    let Some(s) = stream(db, argv[1]) else { return };
    let threshold = match trim.strategy {
        TrimStrategy::MaxLen(_) => Bytes::from(s.len().to_string()),
        TrimStrategy::MinId(_) if s.is_empty() => {
            // Everything went: a threshold above the last id removes it all again.
            id_bytes(s.last_id().next().unwrap_or(StreamId::MAX))
        }
        TrimStrategy::MinId(_) => id_bytes(s.first_id()),
    };
    form[at + 1] = Bytes::from_static(b"=");
    form[at + 2] = threshold;
    if let Some(limit_at) = (2..end.saturating_sub(1)).find(|&i| is(argv[i], "limit")) {
        form.drain(limit_at..limit_at + 2);
    }
}

/// `XCLAIM key group owner 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last` for a pending
/// entry, as Redis propagates a delivery or a claim; `None` if it is not pending.
fn claim_form(db: &Db, key: &[u8], group: &[u8], id: StreamId) -> Option<Vec<Bytes>> {
    let g = stream(db, key)?.group(group)?;
    let nack = g.nack(id)?;
    // Delivered and claimed entries are owned; an unowned (NACKed) one has no XCLAIM form.
    let owner = nack.owner.as_ref()?;
    Some(vec![
        Bytes::from_static(b"XCLAIM"),
        bytes(key),
        bytes(group),
        bytes(owner.as_bytes()),
        Bytes::from_static(b"0"),
        id_bytes(id),
        Bytes::from_static(b"TIME"),
        Bytes::from(nack.delivery_time.to_string()),
        Bytes::from_static(b"RETRYCOUNT"),
        Bytes::from(nack.delivery_count.to_string()),
        Bytes::from_static(b"FORCE"),
        Bytes::from_static(b"JUSTID"),
        Bytes::from_static(b"LASTID"),
        id_bytes(g.last_id),
    ])
}

/// `XGROUP SETID key group last ENTRIESREAD n`.
fn setid_form(db: &Db, key: &[u8], group: &[u8]) -> Option<Vec<Bytes>> {
    let g = stream(db, key)?.group(group)?;
    Some(vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"SETID"),
        bytes(key),
        bytes(group),
        id_bytes(g.last_id),
        Bytes::from_static(b"ENTRIESREAD"),
        Bytes::from(g.entries_read.unwrap_or(-1).to_string()),
    ])
}

fn xack_form(key: &[u8], group: &[u8], id: StreamId) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XACK"),
        bytes(key),
        bytes(group),
        id_bytes(id),
    ]
}

/// The ids of a reply of entries or ids (deleted entries, a null, skipped).
fn reply_ids(reply: &Reply) -> Vec<StreamId> {
    match reply {
        Reply::Entries(entries) => entries
            .iter()
            .filter(|e| e.items.is_some())
            .filter_map(|e| StreamId::parse_strict(e.id).ok())
            .collect(),
        Reply::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Reply::Bulk(id) => StreamId::parse_strict(id).ok(),
                Reply::Array(pair) => match pair.first() {
                    Some(Reply::Bulk(id)) if !matches!(pair.get(1), Some(Reply::NullArray)) => {
                        StreamId::parse_strict(id).ok()
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn xreadgroup(db: &mut Db, argv: &[&[u8]], before: &Before, reply: Option<&Reply>) {
    let Some(read) = parse_readgroup(argv) else {
        return;
    };
    let served: &[(Reply, Reply)] = match reply {
        Some(Reply::StreamMap(served)) => served,
        _ => &[],
    };
    for (k, key) in read.keys.iter().enumerate() {
        let entries = served.iter().find_map(|(name, entries)| match name {
            Reply::Bulk(name) if name.as_ref() == *key => Some(entries),
            _ => None,
        });
        let mut forms = 0;
        if let Some(entries) = entries {
            if !read.noack {
                for id in reply_ids(entries) {
                    if let Some(form) = claim_form(db, key, read.group, id) {
                        db.propagate(form);
                        forms += 1;
                    }
                }
            }
            let new = read.ids.get(k).is_some_and(|id| *id == b">");
            if new && !reply_ids(entries).is_empty() {
                if let Some(form) = setid_form(db, key, read.group) {
                    db.propagate(form);
                    forms += 1;
                }
            }
        }
        let existed = before.consumer_existed.get(k).copied().unwrap_or(true);
        let created = !existed && consumer_exists(db, key, read.group, read.consumer);
        if created && (read.noack || forms == 0) {
            db.propagate(vec![
                Bytes::from_static(b"XGROUP"),
                Bytes::from_static(b"CREATECONSUMER"),
                bytes(key),
                bytes(read.group),
                bytes(read.consumer),
            ]);
        }
        if forms > 0 || created {
            db.add_dirty(1);
        }
    }
}

fn xclaim(db: &mut Db, argv: &[&[u8]], before: &Before, reply: &Reply) {
    let (key, group) = (argv[1], argv[2]);
    let claimed = reply_ids(reply);
    let mut forms = 0;
    let mut claims = 0;
    for (id, was_pending) in &before.pending {
        if claimed.contains(id) {
            if let Some(form) = claim_form(db, key, group, *id) {
                db.propagate(form);
                forms += 1;
                claims += 1;
            }
        } else if *was_pending
            && stream(db, key)
                .and_then(|s| s.group(group))
                .is_some_and(|g| g.nack(*id).is_none())
        {
            db.propagate(xack_form(key, group, *id));
            forms += 1;
        }
    }
    consumer_created(db, argv, before, claims);
    let lastid = argv.iter().skip(5).any(|a| is(a, "lastid"));
    if lastid && claims == 0 {
        if let Some(form) = setid_form(db, key, group) {
            db.propagate(form);
            forms += 1;
        }
    }
    db.add_dirty(forms);
}

fn xautoclaim(db: &mut Db, argv: &[&[u8]], before: &Before, parts: &[Reply]) {
    let (key, group) = (argv[1], argv[2]);
    let mut forms = 0;
    if let Some(claimed) = parts.get(1) {
        for id in reply_ids(claimed) {
            if let Some(form) = claim_form(db, key, group, id) {
                db.propagate(form);
                forms += 1;
            }
        }
    }
    let claims = forms;
    if let Some(deleted) = parts.get(2) {
        for id in reply_ids(deleted) {
            db.propagate(xack_form(key, group, id));
            forms += 1;
        }
    }
    consumer_created(db, argv, before, claims);
    db.add_dirty(forms);
}

/// XCLAIM/XAUTOCLAIM created their consumer but no XCLAIM form carries it (`claims` counts
/// the XCLAIM forms; an XACK carries no consumer).
fn consumer_created(db: &mut Db, argv: &[&[u8]], before: &Before, claims: u64) {
    let existed = before.consumer_existed.first().copied().unwrap_or(true);
    if claims == 0 && !existed && consumer_exists(db, argv[1], argv[2], argv[3]) {
        db.propagate(vec![
            Bytes::from_static(b"XGROUP"),
            Bytes::from_static(b"CREATECONSUMER"),
            bytes(argv[1]),
            bytes(argv[2]),
            bytes(argv[3]),
        ]);
    }
}
