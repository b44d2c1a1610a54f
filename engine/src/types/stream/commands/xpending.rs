//! `XPENDING key group [[IDLE min-idle] start end count [consumer]]`
//!
//! argc must be 3 or 6 to 9. The range form's arguments (count first, then the bounds) are
//! parsed before the key is looked up. The summary's per-consumer counts are bulk strings.
//!
//! Effects: a read lookup of the key once the arguments parse.

use crate::error::{Error, Result, shown};
use crate::group::PendingQuery;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::args::{is, parse_i64};

/// XPENDING.
#[derive(Debug)]
pub struct XPending;

impl XPending {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let argc = argv.len();
        if argc != 3 && !(6..=9).contains(&argc) {
            return Err(Error::Syntax);
        }
        let range = if argc >= 6 {
            Some(Self::parse_range(argv)?)
        } else {
            None
        };
        let (key, group) = (argv[1], argv[2]);
        let no_group = || Error::NoKeyOrGroup {
            key: shown(key),
            group: shown(group),
        };
        db.count_read(key, false);
        let stream = db.stream(key)?.ok_or_else(no_group)?;
        let Some(range) = range else {
            let summary = stream.pending_summary(group).map_err(|_| no_group())?;
            let Some((first, last)) = summary.bounds else {
                return Ok(Reply::Array(vec![
                    Reply::Int(0),
                    Reply::Null,
                    Reply::Null,
                    Reply::NullArray,
                ]));
            };
            let consumers = summary
                .consumers
                .iter()
                .map(|(name, n)| {
                    Reply::Array(vec![
                        Reply::bulk(name.as_bytes()),
                        Reply::bulk(n.to_string()),
                    ])
                })
                .collect();
            return Ok(Reply::Array(vec![
                Reply::Int(summary.count as i64),
                Reply::id(first),
                Reply::id(last),
                Reply::Array(consumers),
            ]));
        };
        let rows = stream
            .pending_range(group, &range, snapshot.now_ms)
            .map_err(|_| no_group())?;
        Ok(Reply::Array(
            rows.into_iter()
                .map(|row| {
                    Reply::Array(vec![
                        Reply::id(row.id),
                        Reply::bulk(row.consumer.as_ref().map_or(&[][..], |c| c.as_bytes())),
                        Reply::Int(row.idle_ms),
                        Reply::Int(row.delivery_count as i64),
                    ])
                })
                .collect(),
        ))
    }

    fn parse_range<'a>(argv: &[&'a [u8]]) -> Result<PendingQuery<'a>> {
        let mut at = 3;
        let mut min_idle_ms = 0;
        if is(argv[3], "idle") {
            min_idle_ms = parse_i64(argv[4])?;
            if argv.len() < 8 {
                return Err(Error::Syntax);
            }
            at += 2;
        }
        let count = usize::try_from(parse_i64(argv[at + 2])?.max(0)).unwrap_or(usize::MAX);
        let start = StreamId::parse_range_start(argv[at])?;
        let end = StreamId::parse_range_end(argv[at + 1])?;
        let consumer = argv.get(at + 3).copied();
        Ok(PendingQuery {
            start,
            end,
            count,
            min_idle_ms,
            consumer,
        })
    }
}
