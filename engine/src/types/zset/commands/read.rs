//! `ZCARD key`, `ZSCORE key member`, `ZMSCORE key member [member ...]`,
//! `ZRANK|ZREVRANK key member [WITHSCORE]`, `ZCOUNT key min max`, `ZLEXCOUNT key min max`
//! and `ZSCAN key cursor [MATCH pattern] [COUNT count]`.
//!
//! WRONGTYPE for another type; a missing key reads as an empty set (ZRANK's nil is a null
//! array with WITHSCORE). ZRANK checks its arity (more than 4 arguments) and then the
//! WITHSCORE word (`ERR syntax error`) before the key; ZCOUNT and ZLEXCOUNT parse the range
//! first. ZSCAN checks and pages as HSCAN does (`ZSet::scan`), member then score as
//! bulk strings.
//!
//! Effects: a read lookup of the key.

use bytes::Bytes;

use crate::command::keys::scan::{parse_cursor, scan_reply};
use crate::error::{Error, Result};
use crate::glob;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::hash::commands::hgetall::scan_options;
use crate::types::zset::score;

use super::{LexRange, ScoreRange, read_zset};

/// ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, ZSCAN.
#[derive(Debug)]
pub struct ZRead;

impl ZRead {
    /// ZCARD.
    pub fn run_zcard(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        Ok(Reply::Int(
            read_zset(db, argv[1])?.map_or(0, |z| z.len()) as i64
        ))
    }

    /// ZSCORE.
    pub fn run_zscore(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        Ok(read_zset(db, argv[1])?
            .and_then(|z| z.score(argv[2]))
            .map_or(Reply::Null, score::reply))
    }

    /// ZMSCORE.
    pub fn run_zmscore(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        db.count_read(argv[1], false);
        let z = read_zset(db, argv[1])?;
        Ok(Reply::Array(
            argv[2..]
                .iter()
                .map(|m| z.and_then(|z| z.score(m)).map_or(Reply::Null, score::reply))
                .collect(),
        ))
    }

    /// ZRANK.
    pub fn run_zrank(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRead::rank(db, argv, false)
    }

    /// ZREVRANK.
    pub fn run_zrevrank(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        ZRead::rank(db, argv, true)
    }

    fn rank(db: &mut Db, argv: &[&[u8]], reverse: bool) -> Result<Reply> {
        if argv.len() > 4 {
            let name = String::from_utf8_lossy(argv[0]).to_ascii_lowercase();
            return Err(Error::WrongArity(name));
        }
        let withscore = argv.len() == 4;
        if withscore && !crate::command::args::is(argv[3], "withscore") {
            return Err(Error::Syntax);
        }
        db.count_read(argv[1], false);
        let nil = if withscore {
            Reply::NullArray
        } else {
            Reply::Null
        };
        let Some(z) = read_zset(db, argv[1])? else {
            return Ok(nil);
        };
        let Some((rank, s)) = z.rank(argv[2]) else {
            return Ok(nil);
        };
        let rank = if reverse { z.len() - 1 - rank } else { rank };
        Ok(if withscore {
            Reply::Array(vec![Reply::Int(rank as i64), score::reply(s)])
        } else {
            Reply::Int(rank as i64)
        })
    }

    /// ZCOUNT.
    pub fn run_zcount(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let range = ScoreRange::parse(argv[2], argv[3])?;
        db.count_read(argv[1], false);
        Ok(Reply::Int(read_zset(db, argv[1])?.map_or(0, |z| {
            let (a, b) = range.ranks(z);
            b - a
        }) as i64))
    }

    /// ZLEXCOUNT.
    pub fn run_zlexcount(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let range = LexRange::parse(argv[2], argv[3])?;
        db.count_read(argv[1], false);
        Ok(Reply::Int(read_zset(db, argv[1])?.map_or(0, |z| {
            let (a, b) = range.ranks(z);
            b - a
        }) as i64))
    }

    /// ZSCAN.
    pub fn run_zscan(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let cursor = parse_cursor(argv[2])?;
        db.count_read(argv[1], false);
        let Some(z) = read_zset(db, argv[1])? else {
            return Ok(scan_reply(0, Reply::Array(Vec::new())));
        };
        let options = scan_options(argv, false)?;
        let mut items = Vec::new();
        let next = z.scan(cursor, options.count, |member, score| {
            if options
                .pattern
                .is_none_or(|p| glob::matches(p, member, false))
            {
                items.push(Reply::Bulk(Bytes::copy_from_slice(member)));
                items.push(score::bulk(score));
            }
        });
        Ok(scan_reply(next, Reply::Array(items)))
    }
}
