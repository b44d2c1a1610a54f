//! `XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE count]` (`docs/reference/streams-8.md` §3.3)
//!
//! Checks in Redis's order: the key (`no such key`, WRONGTYPE), then each option in argument
//! order (a missing value or unknown word is a syntax error; a repeat, a non-integer and an
//! out-of-range value each have their error), then that at least one was given. Setting a bound
//! to a different value clears the stream's IDMP history; the same value changes nothing.
//!
//! Effects: one change and the arguments propagated verbatim; no event, no WATCH (Redis 8.8
//! only updates the key's LRM).

use crate::config::{IDMP_DURATION_RANGE, IDMP_MAXSIZE_RANGE};
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

use super::args::{is, parse_i64};

/// XCFGSET.
#[derive(Debug)]
pub struct XCfgSet;

/// A value of `range`, or `out_of_range`.
fn bounded(arg: &[u8], range: &std::ops::RangeInclusive<u64>, out_of_range: Error) -> Result<u64> {
    let n = parse_i64(arg)?;
    u64::try_from(n)
        .ok()
        .filter(|n| range.contains(n))
        .ok_or(out_of_range)
}

impl XCfgSet {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        if db.stream(key)?.is_none() {
            return Err(Error::NoSuchKey);
        }
        let mut duration = None;
        let mut maxsize = None;
        let mut i = 2;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            if is(argv[i], "idmp-duration") && more > 0 {
                if duration.is_some() {
                    return Err(Error::IdmpDurationRepeated);
                }
                duration = Some(bounded(
                    argv[i + 1],
                    &IDMP_DURATION_RANGE,
                    Error::IdmpDurationRange,
                )?);
            } else if is(argv[i], "idmp-maxsize") && more > 0 {
                if maxsize.is_some() {
                    return Err(Error::IdmpMaxsizeRepeated);
                }
                maxsize = Some(bounded(
                    argv[i + 1],
                    &IDMP_MAXSIZE_RANGE,
                    Error::IdmpMaxsizeRange,
                )?);
            } else {
                return Err(Error::Syntax);
            }
            i += 2;
        }
        if duration.is_none() && maxsize.is_none() {
            return Err(Error::XcfgsetNothing);
        }
        let stream = db.stream_mut(key)?.ok_or(Error::NoSuchKey)?;
        // As in Redis 8.8, a change marks the key modified without signalling it: no WATCH of
        // it is touched.
        stream.idmp_mut().configure(duration, maxsize);
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}
