//! `XRANGE key start end [COUNT count]` and `XREVRANGE key end start [COUNT count]`.
//!
//! Bounds may be incomplete (`5` is `5-0` as a start, `5-<max>` as an end), `-`/`+`, or
//! exclusive with `(`. The key is looked up once the arguments parse: a missing key replies an
//! empty array, another type WRONGTYPE. Then a negative COUNT counts as 0, and COUNT 0 replies
//! a null array.
//!
//! Effects: a read lookup of the key once the arguments parse.

use crate::error::{Error, Result};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::{EntryReplies, Reply};

use super::args::{is, parse_i64};

/// XRANGE and XREVRANGE.
#[derive(Debug)]
pub struct XRange;

/// XRANGE's (or XREVRANGE's) parsed arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeArgs {
    /// The lowest id, exclusive bounds resolved.
    pub start: StreamId,
    /// The highest id, exclusive bounds resolved.
    pub end: StreamId,
    /// COUNT, negative counted as 0; `None` without COUNT.
    pub count: Option<usize>,
}

/// Parses `key start end [COUNT n]` (XREVRANGE: `key end start ...`) with Redis's errors,
/// for commands that read ranges the way XRANGE does (the archive's merge-read).
pub fn parse_range(argv: &[&[u8]], reverse: bool) -> Result<RangeArgs> {
    if argv.len() < 4 {
        return Err(Error::WrongArity(
            String::from_utf8_lossy(argv.first().copied().unwrap_or_default()).to_lowercase(),
        ));
    }
    let (start_arg, end_arg) = if reverse {
        (argv[3], argv[2])
    } else {
        (argv[2], argv[3])
    };
    let start = StreamId::parse_range_start(start_arg)?;
    let end = StreamId::parse_range_end(end_arg)?;
    let mut count: Option<usize> = None;
    let mut i = 4;
    while i < argv.len() {
        if is(argv[i], "count") && i + 1 < argv.len() {
            let n = parse_i64(argv[i + 1])?;
            count = Some(usize::try_from(n.max(0)).unwrap_or(usize::MAX));
            i += 2;
        } else {
            return Err(Error::Syntax);
        }
    }
    Ok(RangeArgs { start, end, count })
}

impl XRange {
    /// XRANGE.
    pub fn run_forward(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, argv, false)
    }

    /// XREVRANGE.
    pub fn run_reverse(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Self::run(db, argv, true)
    }

    fn run(db: &mut Db, argv: &[&[u8]], reverse: bool) -> Result<Reply> {
        let RangeArgs { start, end, count } = parse_range(argv, reverse)?;
        db.count_read(argv[1], false);
        let Some(stream) = db.stream(argv[1])? else {
            return Ok(Reply::Array(Vec::new()));
        };
        if count == Some(0) {
            return Ok(Reply::NullArray);
        }
        let limit = count.unwrap_or(usize::MAX);
        let mut entries = EntryReplies::new();
        if reverse {
            stream
                .rev_range(start, end)
                .take(limit)
                .for_each(|e| entries.push(&e));
        } else {
            stream
                .range(start, end)
                .take(limit)
                .for_each(|e| entries.push(&e));
        }
        Ok(entries.into_reply())
    }
}
