//! `XDEL key id [id ...]`: tombstones entries; replies how many live entries it deleted.
//!
//! A missing key replies 0 without looking at the ids. Otherwise every id is parsed (strictly)
//! before anything is deleted, so one bad id deletes nothing.
//!
//! Effects, when it deleted entries: the key modified, `xdel`, one change per entry, the
//! arguments propagated verbatim.

use crate::error::Result;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;

/// XDEL.
#[derive(Debug)]
pub struct XDel;

impl XDel {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let Some(stream) = db.stream_mut(argv[1])? else {
            return Ok(Reply::Int(0));
        };
        let ids = argv[2..]
            .iter()
            .map(|arg| StreamId::parse_strict(arg))
            .collect::<Result<Vec<_>>>()?;
        let deleted = stream.delete(&ids);
        if deleted > 0 {
            db.wrote(argv[1], STREAM, "xdel", deleted, argv);
        }
        Ok(Reply::Int(deleted as i64))
    }
}
