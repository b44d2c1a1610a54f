//! `XNACK key group SILENT|FAIL|FATAL IDS numids id [id ...] [RETRYCOUNT n] [FORCE]` (Redis
//! 8.8): hands pending entries back to the group, unowned, at the end of its NACK zone.
//!
//! Order of checks: WRONGTYPE, then a missing key or group (NOGROUP, which hides every later
//! error), the mode (the token right after the group), the other options in any order (IDS,
//! RETRYCOUNT, FORCE; before or after the IDS block), a missing IDS block, then every id,
//! strictly, before anything changes. Replies how many ids were NACKed. When any was, blocked
//! readers of the key re-run (a CLAIM read can now take them); the key is not touched for
//! WATCH, as Redis only updates its LRM.
//!
//! Effects, when it NACKed ids: the key signalled to blocked readers, one change per id, the
//! arguments propagated verbatim; no event.

use crate::error::{Error, Result, shown};
use crate::group::NackMode;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::args::{is, parse_i64};

/// XNACK.
#[derive(Debug)]
pub struct XNack;

impl XNack {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, group) = (argv[1], argv[2]);
        if db.stream(key)?.is_none_or(|s| s.group(group).is_none()) {
            return Err(Error::NoKeyOrGroup {
                key: shown(key),
                group: shown(group),
            });
        }
        let mode = if is(argv[3], "silent") {
            NackMode::Silent
        } else if is(argv[3], "fail") {
            NackMode::Fail
        } else if is(argv[3], "fatal") {
            NackMode::Fatal
        } else {
            return Err(Error::NackMode);
        };
        let mut ids_args: Option<&[&[u8]]> = None;
        let mut force = false;
        let mut retry_count = None;
        let mut i = 4;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            let opt = argv[i];
            if is(opt, "ids") && more > 0 {
                let n = parse_i64(argv[i + 1]).map_err(|_| Error::NackNumIds)?;
                if !(1..=i64::from(i32::MAX)).contains(&n) {
                    return Err(Error::NackNumIds);
                }
                let from = i + 2;
                let n = n as usize;
                if n > argv.len() - from {
                    return Err(Error::NackNumIdsMismatch);
                }
                ids_args = Some(&argv[from..from + n]);
                i = from + n;
            } else if is(opt, "force") {
                force = true;
                i += 1;
            } else if is(opt, "retrycount") && more > 0 {
                let n = parse_i64(argv[i + 1])?;
                retry_count = Some(u64::try_from(n).map_err(|_| Error::NackRetryCountNegative)?);
                i += 2;
            } else {
                return Err(Error::NackUnrecognized(shown(opt)));
            }
        }
        let ids_args = ids_args.ok_or(Error::NackExpectedIds)?;
        let ids = ids_args
            .iter()
            .map(|a| StreamId::parse_strict(a))
            .collect::<Result<Vec<_>>>()?;
        let Some(stream) = db.stream_mut(key)? else {
            return Ok(Reply::Int(0));
        };
        let nacked = stream
            .nack(group, &ids, mode, retry_count, force)
            .unwrap_or(0);
        if nacked > 0 {
            // Readers blocked with CLAIM may take the entries now; no event, no WATCH touched.
            db.signal_ready(key);
            db.changed(nacked, argv);
        }
        Ok(Reply::Int(nacked as i64))
    }
}
