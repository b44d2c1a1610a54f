//! `HRANDFIELD key [count [WITHVALUES]]`: random fields.
//!
//! Errors, in Redis's order: the count (`ERR value is not an integer or out of range`;
//! `i64::MIN` is `ERR value is out of range, value must between ...`), a third argument other than WITHVALUES (`ERR
//! syntax error`), with WITHVALUES a count beyond ±`i64::MAX / 2` (`ERR value is out of
//! range`), then WRONGTYPE.
//!
//! Without a count: one field, nil for a missing key. With a count `n`: `n >= 0` gives
//! distinct fields, all of them (in the encoding's order) when `n` is at least the size;
//! `n < 0` gives `|n|` fields that may repeat. WITHVALUES adds each value: a flat array in
//! RESP2, `[field, value]` pairs in RESP3.
//!
//! Effects: a read lookup; first, every expired field is deleted (Redis's
//! `hashTypeExpireIfNeeded`), a hash left empty replying as a missing key.

use bytes::Bytes;

use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::reply_size::Protocol;
use crate::types::random;

use super::expiry::expire_fields;
use super::read_hash;

/// Counts the read of `key` and deletes the hash's expired fields; errs on a key of another
/// type.
fn expire_before_read(db: &mut Db, key: &[u8]) -> Result<()> {
    db.count_read(key, false);
    let now = db.now_ms();
    if read_hash(db, key)?.is_some_and(|h| h.min_expiry().is_some_and(|at| at < now)) {
        expire_fields(db, key, usize::MAX);
    }
    Ok(())
}

/// The fields and values of the hash under `key` after its expired fields went; `None` for
/// a missing key (or one the expiry emptied).
fn pairs_after_expiry(db: &mut Db, key: &[u8]) -> Result<Option<Vec<(Bytes, Bytes)>>> {
    expire_before_read(db, key)?;
    Ok(read_hash(db, key)?.map(|h| {
        h.entries()
            .map(|(f, v, _)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
            .collect()
    }))
}

/// The most fields a repeating pick replies: Redis streams a larger reply until the client's
/// output limit closes it; a reply is built whole here, so a huge count must not allocate.
pub(crate) const PICKS_MAX: u64 = 1 << 24;

/// HRANDFIELD.
#[derive(Debug)]
pub struct HRandField;

impl HRandField {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        if argv.len() == 2 {
            expire_before_read(db, key)?;
            return Ok(read_hash(db, key)?
                .and_then(|h| h.random_entry())
                .map_or(Reply::Null, |(f, _, _)| {
                    Reply::Bulk(Bytes::copy_from_slice(f))
                }));
        }
        let n = parse_i64(argv[2])?;
        if n == i64::MIN {
            return Err(Error::OutOfRangeBetween(-i64::MAX, i64::MAX));
        }
        if argv.len() > 4 || (argv.len() == 4 && !is(argv[3], "withvalues")) {
            return Err(Error::Syntax);
        }
        let with_values = argv.len() == 4;
        if with_values && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n) {
            return Err(Error::OutOfRange);
        }
        let Some(pairs) = pairs_after_expiry(db, key)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let size = pairs.len();
        let count = n.unsigned_abs();
        let picked: Vec<usize> = if count == 0 || size == 0 {
            Vec::new()
        } else if n < 0 || count == 1 {
            (0..count.min(PICKS_MAX))
                .map(|_| random::below(size))
                .collect()
        } else if count >= size as u64 {
            (0..size).collect()
        } else {
            random::distinct(size, count as usize)
        };
        let resp3 = snapshot.protocol == Protocol::Resp3;
        let mut out = Vec::with_capacity(picked.len() * if with_values { 2 } else { 1 });
        for i in picked {
            let (f, v) = &pairs[i];
            match (with_values, resp3) {
                (false, _) => out.push(Reply::Bulk(f.clone())),
                (true, false) => {
                    out.push(Reply::Bulk(f.clone()));
                    out.push(Reply::Bulk(v.clone()));
                }
                (true, true) => out.push(Reply::Array(vec![
                    Reply::Bulk(f.clone()),
                    Reply::Bulk(v.clone()),
                ])),
            }
        }
        Ok(Reply::Array(out))
    }
}
