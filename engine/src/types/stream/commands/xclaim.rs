//! `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//! [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`
//!
//! The key and group are checked first. Ids are read up to the first argument that is not an
//! id; everything after must be an option. Replies the claimed entries, or their ids with
//! JUSTID.
//!
//! Effects: a read lookup of the key before anything is parsed; then see `claim_effects`
//! (an XCLAIM form per claimed entry, XACK per pending entry dropped with its deleted entry,
//! CREATECONSUMER or SETID when no XCLAIM carries them).

use crate::error::{Error, Result, shown};
use crate::group::{ClaimOptions, Group};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;
use crate::stream::Stream;

use super::args::{is, parse_i64};
use super::forms;

/// XCLAIM.
#[derive(Debug)]
pub struct XClaim;

impl XClaim {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, group, consumer) = (argv[1], argv[2], argv[3]);
        // A read lookup in Redis, counted before anything is parsed.
        db.count_read(key, false);
        let no_group = || Error::NoKeyOrGroup {
            key: shown(key),
            group: shown(group),
        };
        if db.stream(key)?.and_then(|s| s.group(group)).is_none() {
            return Err(no_group());
        }
        let now = snapshot.now_ms;
        let min_idle = parse_i64(argv[4])
            .map_err(|_| Error::InvalidMinIdle("XCLAIM"))?
            .max(0);
        let mut ids = Vec::new();
        let mut j = 5;
        while j < argv.len() {
            match StreamId::parse_strict(argv[j]) {
                Ok(id) => ids.push(id),
                Err(_) => break,
            }
            j += 1;
        }
        let mut options = ClaimOptions {
            min_idle_ms: min_idle as u64,
            ..ClaimOptions::default()
        };
        let mut delivery_time: Option<i64> = None;
        while j < argv.len() {
            let more = argv.len() - 1 - j;
            let opt = argv[j];
            let value = |name: &'static str| {
                parse_i64(argv[j + 1]).map_err(|_| Error::InvalidClaimOption(name))
            };
            if is(opt, "force") {
                options.force = true;
            } else if is(opt, "justid") {
                options.just_id = true;
            } else if is(opt, "idle") && more > 0 {
                delivery_time = Some((now as i64).wrapping_sub(value("IDLE")?));
                j += 1;
            } else if is(opt, "time") && more > 0 {
                delivery_time = Some(value("TIME")?);
                j += 1;
            } else if is(opt, "retrycount") && more > 0 {
                options.retry_count = u64::try_from(value("RETRYCOUNT")?).ok();
                j += 1;
            } else if is(opt, "lastid") && more > 0 {
                options.last_id = Some(StreamId::parse_strict(argv[j + 1])?);
                j += 1;
            } else {
                return Err(Error::UnrecognizedClaimOption(shown(opt)));
            }
            j += 1;
        }
        // A time in the future or before the epoch is quietly taken as now, as Redis does.
        options.delivery_time = delivery_time.map(|t| {
            if t < 0 || t > now as i64 {
                now
            } else {
                t as u64
            }
        });
        let stream = db.stream_mut(key)?.ok_or_else(no_group)?;
        let before = Before::of(stream, group, consumer, &ids);
        let just_id = options.just_id;
        let mut claimed = Vec::new();
        let mut claimed_ids = Vec::new();
        stream
            .claim(group, consumer, &ids, &options, now, &mut |e| {
                claimed_ids.push(e.id);
                claimed.push(if just_id {
                    Reply::id(e.id)
                } else {
                    Reply::entry(&e)
                })
            })
            .map_err(|_| no_group())?;
        claim_effects(
            db,
            argv,
            &ids,
            &before,
            &claimed_ids,
            options.last_id.is_some(),
        );
        Ok(Reply::Array(claimed))
    }
}

/// What XCLAIM's effects need from before the claim.
struct Before {
    /// Whether the consumer existed.
    consumer_existed: bool,
    /// Per named id, whether it was pending.
    pending: Vec<bool>,
}

impl Before {
    fn of(stream: &Stream, group: &[u8], consumer: &[u8], ids: &[StreamId]) -> Before {
        let group = stream.group(group);
        Before {
            consumer_existed: group.is_some_and(|g| g.consumer(consumer).is_some()),
            pending: ids
                .iter()
                .map(|&id| group.is_some_and(|g| g.nack(id).is_some()))
                .collect(),
        }
    }
}

/// XCLAIM's effects (Redis's `xclaimCommand`): per named id, an XCLAIM form for a claimed
/// entry or an XACK for a pending entry dropped because its entry was deleted, each a change;
/// `XGROUP CREATECONSUMER` (and `xgroup-createconsumer`) for a consumer it created that no
/// XCLAIM form carries; LASTID, when no XCLAIM form carries it, as `XGROUP SETID` (a change).
fn claim_effects(
    db: &mut Db,
    argv: &[&[u8]],
    ids: &[StreamId],
    before: &Before,
    claimed: &[StreamId],
    last_id: bool,
) {
    let (key, group_name, consumer) = (argv[1], argv[2], argv[3]);
    let propagating = db.propagating();
    let Ok(Some(stream)) = db.stream(key) else {
        return;
    };
    let Some(group) = stream.group(group_name) else {
        return;
    };
    let mut out = Vec::new();
    let (mut changes, mut claims) = (0u64, 0u64);
    for (&id, &was_pending) in ids.iter().zip(&before.pending) {
        if claimed.contains(&id) {
            if owned(group, id) {
                if propagating {
                    out.extend(forms::claim(key, group_name, group, id));
                }
                changes += 1;
                claims += 1;
            }
        } else if was_pending && group.nack(id).is_none() {
            if propagating {
                out.push(forms::xack(key, group_name, id));
            }
            changes += 1;
        }
    }
    let created = !before.consumer_existed && group.consumer(consumer).is_some();
    if created && claims == 0 && propagating {
        out.push(forms::create_consumer(key, group_name, consumer));
    }
    if last_id && claims == 0 {
        if propagating {
            out.push(forms::setid(key, group_name, group));
        }
        changes += 1;
    }
    if created {
        db.notify(STREAM, "xgroup-createconsumer", key);
    }
    for form in out {
        db.propagate(form);
    }
    db.add_dirty(changes);
}

/// Whether `id` is pending in `group` with an owner (so it has an XCLAIM form).
pub(super) fn owned(group: &Group, id: StreamId) -> bool {
    group.nack(id).is_some_and(|n| n.owner.is_some())
}
