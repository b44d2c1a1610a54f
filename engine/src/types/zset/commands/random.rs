//! `ZRANDMEMBER key [count [WITHSCORES]]`.
//!
//! Checks as Redis's `zrandmemberCommand`: the count (the integer error; `i64::MIN` is `ERR
//! value is out of range, value must between ...`), then more than 4 arguments or a fourth
//! that is not WITHSCORES (`ERR syntax error`), then with WITHSCORES a count past half the
//! range (`ERR value is out of range`), then WRONGTYPE. Without a count: one random member
//! (nil for a missing key). With a count `n`: `n >= 0` distinct members, the whole set from
//! the highest entry down when `n` is at least its size; `n < 0` gives `|n|` members that may repeat; with
//! scores flat in RESP2 and as pairs in RESP3.
//!
//! Effects: a read lookup of the key.

use bytes::Bytes;

use crate::command::args::{is, parse_i64};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::types::hash::commands::hrandfield::PICKS_MAX;
use crate::types::random;

use super::{entries_reply, read_zset, resp3};

/// ZRANDMEMBER.
#[derive(Debug)]
pub struct ZRandMember;

impl ZRandMember {
    /// Parses and applies.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        if argv.len() == 2 {
            db.count_read(key, false);
            return Ok(match read_zset(db, key)? {
                Some(z) => z.random().map_or(Reply::Null, |e| {
                    Reply::Bulk(Bytes::copy_from_slice(e.member))
                }),
                _ => Reply::Null,
            });
        }
        let n = parse_i64(argv[2])?;
        if n == i64::MIN {
            return Err(Error::OutOfRangeBetween(-i64::MAX, i64::MAX));
        }
        if argv.len() > 4 || (argv.len() == 4 && !is(argv[3], "withscores")) {
            return Err(Error::Syntax);
        }
        let withscores = argv.len() == 4;
        if withscores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n) {
            return Err(Error::OutOfRange);
        }
        db.count_read(key, false);
        let Some(z) = read_zset(db, key)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let size = z.len();
        let count = n.unsigned_abs();
        if count == 0 || size == 0 {
            return Ok(Reply::Array(Vec::new()));
        }
        let picked: Vec<usize> = if n < 0 {
            (0..count.min(PICKS_MAX))
                .map(|_| random::below(size))
                .collect()
        } else if count >= size as u64 {
            // Redis's set iterator walks from the highest entry down.
            (0..size).rev().collect()
        } else {
            random::distinct(size, count as usize)
        };
        let entries = picked
            .into_iter()
            .filter_map(|i| z.order().get(i).map(|e| e.to_entry()))
            .collect();
        Ok(entries_reply(entries, withscores, resp3(snap)))
    }
}
