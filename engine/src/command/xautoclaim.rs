//! `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`
//!
//! Arguments are parsed before the key and group are looked up. Replies
//! `[next-cursor, claimed entries (or ids), deleted ids]`.

use crate::error::{Error, Result, shown};
use crate::group::AutoClaimOptions;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::args::{is, parse_i64};

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
        let no_group = || Error::NoKeyOrGroup {
            key: shown(key),
            group: shown(group),
        };
        let stream = db.stream_mut(key)?.ok_or_else(no_group)?;
        let mut claimed = Vec::new();
        let options = AutoClaimOptions {
            min_idle_ms: min_idle as u64,
            start,
            count,
            just_id,
        };
        let outcome = stream
            .auto_claim(group, consumer, &options, snapshot.now_ms, &mut |e| {
                claimed.push(if just_id {
                    Reply::id(e.id)
                } else {
                    Reply::entry(&e)
                })
            })
            .map_err(|_| no_group())?;
        Ok(Reply::Array(vec![
            Reply::id(outcome.next),
            Reply::Array(claimed),
            Reply::Array(outcome.deleted.into_iter().map(Reply::id).collect()),
        ]))
    }
}
