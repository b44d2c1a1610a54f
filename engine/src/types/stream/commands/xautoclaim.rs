//! `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`
//!
//! Arguments are parsed before the key and group are looked up. Replies
//! `[next-cursor, claimed entries (or ids), deleted ids]`.
//!
//! Effects: a read lookup of the key before anything is parsed; then see
//! `auto_claim_effects` (an XCLAIM form per claimed entry, XACK per deleted one,
//! CREATECONSUMER when no XCLAIM carries it).

use crate::error::{Error, Result, shown};
use crate::group::{AutoClaimOptions, AutoClaimed};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::node::EntryRef;
use crate::notify::STREAM;
use crate::reply::Reply;

use super::args::{is, parse_i64};
use super::forms;
use super::xclaim::owned;

/// Largest COUNT: Redis's `LONG_MAX / 16`, so that COUNT times the scan factor cannot overflow.
const COUNT_MAX: i64 = i64::MAX / 16;
/// COUNT when none is given.
const COUNT_DEFAULT: usize = 100;

/// XAUTOCLAIM.
#[derive(Debug)]
pub struct XAutoClaim;

impl XAutoClaim {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, group, consumer) = (argv[1], argv[2], argv[3]);
        // A read lookup in Redis, counted before anything is parsed.
        db.count_read(key, false);
        let min_idle = parse_i64(argv[4])
            .map_err(|_| Error::InvalidMinIdle("XAUTOCLAIM"))?
            .max(0);
        let start = StreamId::parse_range_start(argv[5])?;
        let mut count = COUNT_DEFAULT;
        let mut just_id = false;
        let mut j = 6;
        while j < argv.len() {
            let more = argv.len() - 1 - j;
            if is(argv[j], "count") && more > 0 {
                let n = parse_i64(argv[j + 1]).map_err(|_| Error::CountNotPositive)?;
                if !(1..=COUNT_MAX).contains(&n) {
                    return Err(Error::CountNotPositive);
                }
                count = usize::try_from(n).unwrap_or(usize::MAX);
                j += 2;
            } else if is(argv[j], "justid") {
                just_id = true;
                j += 1;
            } else {
                return Err(Error::Syntax);
            }
        }
        let mut claimed = Vec::new();
        let options = AutoClaimOptions {
            min_idle_ms: min_idle as u64,
            start,
            count,
            just_id,
        };
        let outcome = db.xautoclaim(key, group, consumer, &options, snapshot.now_ms, &mut |e| {
            claimed.push(if just_id {
                Reply::id(e.id)
            } else {
                Reply::entry(&e)
            })
        })?;
        Ok(Reply::Array(vec![
            Reply::id(outcome.next),
            Reply::Array(claimed),
            Reply::Array(outcome.deleted.into_iter().map(Reply::id).collect()),
        ]))
    }
}

/// XAUTOCLAIM's effects (Redis's `xautoclaimCommand`): an XCLAIM form per claimed entry and an
/// XACK per pending entry dropped because its entry was deleted, each a change; `XGROUP
/// CREATECONSUMER` (and `xgroup-createconsumer`) for a consumer it created that no XCLAIM form
/// carries.
fn auto_claim_effects(
    db: &mut Db,
    (key, group_name, consumer): (&[u8], &[u8], &[u8]),
    existed: bool,
    claimed: &[StreamId],
    deleted: &[StreamId],
) {
    let propagating = db.propagating();
    let Ok(Some(stream)) = db.stream(key) else {
        return;
    };
    let Some(group) = stream.group(group_name) else {
        return;
    };
    let mut out = Vec::new();
    let mut claims = 0u64;
    for &id in claimed {
        if owned(group, id) {
            if propagating {
                out.extend(forms::claim(key, group_name, group, id));
            }
            claims += 1;
        }
    }
    if propagating {
        out.extend(deleted.iter().map(|&id| forms::xack(key, group_name, id)));
    }
    let created = !existed && group.consumer(consumer).is_some();
    if created && claims == 0 && propagating {
        out.push(forms::create_consumer(key, group_name, consumer));
    }
    if created {
        db.notify(STREAM, "xgroup-createconsumer", key);
    }
    for form in out {
        db.propagate(form);
    }
    db.add_dirty(claims + deleted.len() as u64);
}

impl Db {
    /// Claims for `consumer` the pending entries of `group` idle at least
    /// `options.min_idle_ms`, scanning from `options.start`, as XAUTOCLAIM does, with its
    /// effects; `emit` gets each claimed entry. A missing key or group is XAUTOCLAIM's
    /// NOGROUP error.
    pub fn xautoclaim(
        &mut self,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        options: &AutoClaimOptions,
        now_ms: u64,
        emit: &mut dyn FnMut(EntryRef<'_>),
    ) -> Result<AutoClaimed> {
        let no_group = || Error::NoKeyOrGroup {
            key: shown(key),
            group: shown(group),
        };
        let stream = self.stream_mut(key)?.ok_or_else(no_group)?;
        let existed = stream
            .group(group)
            .is_some_and(|g| g.consumer(consumer).is_some());
        let mut claimed_ids = Vec::new();
        let outcome = stream
            .auto_claim(group, consumer, options, now_ms, &mut |e| {
                claimed_ids.push(e.id);
                emit(e);
            })
            .map_err(|_| no_group())?;
        auto_claim_effects(
            self,
            (key, group, consumer),
            existed,
            &claimed_ids,
            &outcome.deleted,
        );
        Ok(outcome)
    }
}
