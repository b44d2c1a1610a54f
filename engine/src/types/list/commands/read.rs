//! `LLEN key`, `LINDEX key index`, `LRANGE key start stop`, `LPOS key element [RANK rank]
//! [COUNT num-matches] [MAXLEN len]`: reads, each a read lookup of its key (a hit, or a miss
//! firing `keymiss`). Arguments are checked where Redis checks them: LINDEX's index after
//! the lookup, LRANGE's bounds and LPOS's options before it.

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::list::List;
use crate::types::list::listpack::element_eq;

/// A read lookup of the list under `key`.
fn read<'a>(db: &'a mut Db, key: &[u8]) -> Result<Option<&'a List>> {
    db.count_read(key, false);
    db.list(key)
}

/// LLEN, LINDEX, LRANGE, LPOS.
#[derive(Debug)]
pub struct Read;

impl Read {
    /// LLEN.
    pub fn run_llen(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(Reply::Int(read(db, argv[1])?.map_or(0, List::len) as i64))
    }

    /// LINDEX.
    pub fn run_lindex(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let Some(list) = read(db, argv[1])? else {
            return Ok(Reply::Null);
        };
        let index = parse_i64(argv[2])?;
        Ok(list.get(index).map_or(Reply::Null, Reply::Bulk))
    }

    /// LRANGE.
    pub fn run_lrange(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let start = parse_i64(argv[2])?;
        let end = parse_i64(argv[3])?;
        let Some(list) = read(db, argv[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        Ok(match clamp_range(list.len(), start, end) {
            Some((from, n)) => Reply::Bulks(list.range_bulks(from, n)),
            None => Reply::Array(Vec::new()),
        })
    }

    /// LPOS.
    pub fn run_lpos(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let element = argv[2];
        let mut rank: i64 = 1;
        let mut count: Option<usize> = None;
        let mut maxlen = 0usize;
        let mut at = 3;
        while at < argv.len() {
            let opt = argv[at];
            let more = argv.len() - 1 - at;
            if opt.eq_ignore_ascii_case(b"rank") && more > 0 {
                rank = parse_i64(argv[at + 1])?;
                if rank == i64::MIN {
                    return Err(Error::OutOfLongRange);
                }
                if rank == 0 {
                    return Err(Error::RankZero);
                }
            } else if opt.eq_ignore_ascii_case(b"count") && more > 0 {
                count = Some(non_negative(argv[at + 1], Error::LposCountNegative)?);
            } else if opt.eq_ignore_ascii_case(b"maxlen") && more > 0 {
                maxlen = non_negative(argv[at + 1], Error::LposMaxlenNegative)?;
            } else {
                return Err(Error::Syntax);
            }
            at += 2;
        }
        let reverse = rank < 0;
        let rank = rank.unsigned_abs() as usize;
        let Some(list) = read(db, argv[1])? else {
            return Ok(if count.is_some() {
                Reply::Array(Vec::new())
            } else {
                Reply::Null
            });
        };
        let len = list.len();
        let mut found = Vec::new();
        let mut matches = 0usize;
        let mut index = 0usize;
        if len > 0 {
            let start = if reverse { len - 1 } else { 0 };
            list.walk(start, reverse, |e| {
                if maxlen != 0 && index >= maxlen {
                    return false;
                }
                if element_eq(e, element) {
                    matches += 1;
                    if matches >= rank {
                        found.push(if reverse { len - index - 1 } else { index });
                        match count {
                            None => return false,
                            Some(c) if c != 0 && matches - rank + 1 >= c => return false,
                            Some(_) => {}
                        }
                    }
                }
                index += 1;
                true
            });
        }
        Ok(match count {
            Some(_) => Reply::Array(found.into_iter().map(|i| Reply::Int(i as i64)).collect()),
            None => found.first().map_or(Reply::Null, |&i| Reply::Int(i as i64)),
        })
    }
}

/// A non-negative integer argument, `err` otherwise (not an integer included).
fn non_negative(arg: &[u8], err: Error) -> Result<usize> {
    parse_i64(arg)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(err)
}

/// LRANGE's `start` and `end` (negative: from the end) as an offset and a count, `None` if
/// the range is empty.
pub(crate) fn clamp_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    let end = end.min(len - 1);
    Some((start as usize, (end - start + 1) as usize))
}
