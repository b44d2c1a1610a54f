//! `XACK key group id [id ...]`: replies how many ids were pending and are now acknowledged.
//!
//! A missing key or group replies 0 without parsing the ids; otherwise all ids are parsed
//! before any is acknowledged.
//!
//! Effects: a read lookup of the key (counted before the ids are parsed, as Redis's
//! `lookupKeyRead`); when it acknowledged ids, one change per id and the arguments propagated
//! verbatim; no event, no WATCH. [`Db::xack`](crate::Db::xack) is the typed form.

use bytes::Bytes;

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

impl Db {
    /// Acknowledges `ids` in `group` of the stream under `key` as `XACK` does, with its
    /// effects (the acknowledged count as changes, `XACK key group id...` propagated); returns
    /// how many were pending. A missing key or group acknowledges nothing.
    pub fn xack(&mut self, key: &[u8], group: &[u8], ids: &[StreamId]) -> Result<u64> {
        let Some(stream) = self.stream_mut(key)? else {
            return Ok(0);
        };
        let acked = stream.ack(group, ids).unwrap_or(0);
        if acked > 0 {
            self.add_dirty(acked);
            if self.propagating() {
                let mut form = vec![
                    Bytes::from_static(b"XACK"),
                    Bytes::copy_from_slice(key),
                    Bytes::copy_from_slice(group),
                ];
                form.extend(ids.iter().map(|id| Bytes::from(id.to_string())));
                self.propagate(form);
            }
        }
        Ok(acked)
    }
}
