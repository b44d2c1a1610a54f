//! `XDELEX key [KEEPREF|DELREF|ACKED] IDS numids id [id ...]` and
//! `XACKDEL key group [KEEPREF|DELREF|ACKED] IDS numids id [id ...]` (Redis 8.2).
//!
//! Order of checks: WRONGTYPE; the options (the strategy at most once, the IDS block anywhere,
//! options after it too); a missing key (XACKDEL: or group) replies numids times -1 without
//! looking at the ids; then every id is parsed strictly before anything changes. The reply is
//! one integer per id (see [`DeleteResult`]). A deletion touches the key (WATCH); acks alone
//! do not, as in Redis.
//!
//! Effects: XACKDEL's key lookup counts as a read; `xdel` when an id's result is 1; as many
//! changes as ids deleted (XACKDEL: also acknowledged only), the arguments propagated
//! verbatim when there is one.

use crate::error::{Error, Result};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;
use crate::stream::{DeleteResult, DeleteStrategy};

use super::args::{is, parse_i64};
use super::trim_args::delete_strategy;

/// XDELEX and XACKDEL.
#[derive(Debug)]
pub struct XDelEx;

/// The options of XDELEX and XACKDEL, parsed from `argv[start..]`.
struct AckDelArgs<'a> {
    strategy: DeleteStrategy,
    ids: &'a [&'a [u8]],
}

fn parse<'a>(argv: &'a [&'a [u8]], start: usize) -> Result<AckDelArgs<'a>> {
    let mut strategy = None;
    let mut ids = None;
    let mut j = start;
    while j < argv.len() {
        let opt = argv[j];
        if let Some(d) = delete_strategy(opt).filter(|_| strategy.is_none()) {
            strategy = Some(d);
            j += 1;
        } else if is(opt, "ids") && j + 1 < argv.len() {
            let n = parse_i64(argv[j + 1]).map_err(|_| Error::NumIdsNotPositive)?;
            if n < 1 {
                return Err(Error::NumIdsNotPositive);
            }
            let from = j + 2;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if n > argv.len() - from {
                return Err(Error::NumIdsMismatch);
            }
            ids = Some(&argv[from..from + n]);
            j = from + n;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(AckDelArgs {
        strategy: strategy.unwrap_or_default(),
        ids: ids.ok_or(Error::IdsRequired)?,
    })
}

fn all_missing(n: usize) -> Reply {
    Reply::Array(vec![Reply::Int(DeleteResult::Missing.code()); n])
}

fn codes(results: &[DeleteResult]) -> Reply {
    Reply::Array(results.iter().map(|r| Reply::Int(r.code())).collect())
}

fn parse_ids(args: &[&[u8]]) -> Result<Vec<StreamId>> {
    args.iter().map(|a| StreamId::parse_strict(a)).collect()
}

impl XDelEx {
    /// XDELEX: parses and applies.
    pub fn run_delex(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        db.stream(key)?;
        let args = parse(argv, 2)?;
        let Some(stream) = db.stream_mut(key)? else {
            return Ok(all_missing(args.ids.len()));
        };
        let ids = parse_ids(args.ids)?;
        let (results, deleted) = stream.delete_ex(&ids, args.strategy);
        deleted_effects(db, key, argv, &results, deleted, &[1]);
        Ok(codes(&results))
    }

    /// XACKDEL: parses and applies.
    pub fn run_ackdel(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, group) = (argv[1], argv[2]);
        // A read lookup in Redis, counted before the arguments are parsed.
        db.count_read(key, false);
        db.stream(key)?;
        let args = parse(argv, 3)?;
        let Some(stream) = db.stream_mut(key)?.filter(|s| s.group(group).is_some()) else {
            return Ok(all_missing(args.ids.len()));
        };
        let ids = parse_ids(args.ids)?;
        let Some((results, _, deleted)) = stream.ack_delete(group, &ids, args.strategy) else {
            return Ok(all_missing(ids.len()));
        };
        // Acknowledged-and-deleted (1) and acknowledged-only (2) ids are changes.
        deleted_effects(db, key, argv, &results, deleted, &[1, 2]);
        Ok(codes(&results))
    }
}

/// XDELEX's and XACKDEL's effects: `xdel` when an id's result is 1, the key modified when
/// entries were deleted, and the ids whose results are in `changes` counted as changes (the
/// command propagated verbatim when there is one).
fn deleted_effects(
    db: &mut Db,
    key: &[u8],
    argv: &[&[u8]],
    results: &[DeleteResult],
    deleted: u64,
    changes: &[i64],
) {
    if results.contains(&DeleteResult::Deleted) {
        db.notify(STREAM, "xdel", key);
    }
    if deleted > 0 {
        db.touch(key);
    }
    let changed = results
        .iter()
        .filter(|r| changes.contains(&r.code()))
        .count() as u64;
    if changed > 0 {
        db.changed(changed, argv);
    }
}
