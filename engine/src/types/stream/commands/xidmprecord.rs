//! `XIDMPRECORD key pid iid stream-id` (`docs/reference/streams-8.md` §3.4): records that `pid`'s
//! `iid` produced the existing entry `stream-id`, as AOF rewrite replays it.
//!
//! Checks in Redis's order: the id parses strictly, the pid and then the iid are non-empty,
//! the key exists and is a stream, the entry exists. A pair already mapped to the same id
//! replies OK and changes nothing; mapped to another id, it is an error. Otherwise the iid is
//! inserted as the producer's newest (evicting beyond `idmp-maxsize`) and counted in
//! `iids-added`; as in Redis 8.8, that does not touch a WATCH of the key.
//!
//! Effects, on success: one change and the arguments propagated verbatim; no event.

use crate::error::{Error, Result};
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// XIDMPRECORD.
#[derive(Debug)]
pub struct XIdmpRecord;

impl XIdmpRecord {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, pid, iid) = (argv[1], argv[2], argv[3]);
        let id = StreamId::parse_strict(argv[4])?;
        if pid.is_empty() {
            return Err(Error::XidmprecordEmptyPid);
        }
        if iid.is_empty() {
            return Err(Error::XidmprecordEmptyIid);
        }
        let stream = db.stream_mut(key)?.ok_or(Error::NoSuchKey)?;
        if stream.get(id).is_none() {
            return Err(Error::NoSuchMessage);
        }
        let now = snapshot.now_ms;
        match stream.idmp_mut().lookup(pid, iid, now) {
            Some(existing) if existing == id => {}
            Some(_) => return Err(Error::IidConflict),
            None => {
                stream.idmp_mut().insert(pid, iid, id, now);
                // Redis marks the key dirty but not modified: a WATCH of it is not touched.
                db.track_idmp(key);
            }
        }
        // Propagated whenever it succeeds: a replay of an existing record is a no-op too.
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}
