//! `XACK key group id [id ...]`: replies how many ids were pending and are now acknowledged.
//!
//! A missing key or group replies 0 without parsing the ids; otherwise all ids are parsed
//! before any is acknowledged.

use crate::error::Result;
use crate::id::StreamId;
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;

/// XACK.
#[derive(Debug)]
pub struct XAck;

impl XAck {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        // A read lookup in Redis, counted before the ids are parsed.
        db.count_read(argv[1], false);
        let Some(stream) = db.stream_mut(argv[1])? else {
            return Ok(Reply::Int(0));
        };
        if stream.group(argv[2]).is_none() {
            return Ok(Reply::Int(0));
        }
        // One id (the common call) needs no vector.
        let acked = if let [one] = &argv[3..] {
            let id = StreamId::parse_strict(one)?;
            stream.ack(argv[2], std::slice::from_ref(&id))
        } else {
            let ids = argv[3..]
                .iter()
                .map(|a| StreamId::parse_strict(a))
                .collect::<Result<Vec<_>>>()?;
            stream.ack(argv[2], &ids)
        };
        let acked = acked.unwrap_or(0);
        if acked > 0 {
            // No event and no WATCH touched, as in Redis.
            db.changed(acked, argv);
        }
        Ok(Reply::Int(acked as i64))
    }
}
