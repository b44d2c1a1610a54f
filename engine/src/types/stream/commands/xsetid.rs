//! `XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]`
//!
//! Options are parsed (and MAXDELETEDID checked against the id) before the key lookup; a
//! missing key is `ERR no such key`.
//!
//! Effects: `xsetid`, one change, the arguments propagated verbatim.

use crate::error::{Error, Result};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;

use super::args::{is, parse_i64};

/// XSETID.
#[derive(Debug)]
pub struct XSetId;

impl XSetId {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let id = StreamId::parse_strict(argv[2])?;
        let mut entries_added = None;
        let mut max_deleted = None;
        let mut i = 3;
        while i < argv.len() {
            let more = argv.len() - 1 - i;
            if is(argv[i], "entriesadded") && more > 0 {
                let n = parse_i64(argv[i + 1])?;
                entries_added = Some(u64::try_from(n).map_err(|_| Error::EntriesAddedNegative)?);
            } else if is(argv[i], "maxdeletedid") && more > 0 {
                let m = StreamId::parse_strict(argv[i + 1])?;
                if id < m {
                    return Err(Error::XsetidBelowGivenMaxDeleted);
                }
                max_deleted = Some(m);
            } else {
                return Err(Error::Syntax);
            }
            i += 2;
        }
        let stream = db.stream_mut(argv[1])?.ok_or(Error::NoSuchKey)?;
        stream.set_id(id, entries_added, max_deleted)?;
        db.notify(STREAM, "xsetid", argv[1]);
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}
