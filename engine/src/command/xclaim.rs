//! `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//! [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`
//!
//! The key and group are checked first. Ids are read up to the first argument that is not an
//! id; everything after must be an option. Replies the claimed entries, or their ids with
//! JUSTID.

use crate::error::{Error, Result, shown};
use crate::group::ClaimOptions;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::args::{is, parse_i64};

/// XCLAIM.
#[derive(Debug)]
pub struct XClaim;

impl XClaim {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, group, consumer) = (argv[1], argv[2], argv[3]);
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
        let just_id = options.just_id;
        let mut claimed = Vec::new();
        stream
            .claim(group, consumer, &ids, &options, now, &mut |e| {
                claimed.push(if just_id {
                    Reply::id(e.id)
                } else {
                    Reply::entry(&e)
                })
            })
            .map_err(|_| no_group())?;
        Ok(Reply::Array(claimed))
    }
}
