//! `GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]`: GET that also sets or clears the key's
//! time.
//!
//! Checked in Redis's order: the option words ([`Options`], `ERR syntax error`), then the key
//! (nil when missing, WRONGTYPE for another type), then the time (`ERR value is not an
//! integer or out of range`, `ERR invalid expire time in 'getex' command`); nothing changes on
//! an error. The reply is the string as it was.
//!
//! Effects as Redis 8.8's `getexCommand`, after a read lookup:
//! - EXAT or PXAT already past: the key is removed, `del` fires, 1 change, propagated as
//!   `DEL key`;
//! - any other time: the expiry is set, `expire` fires, 1 change, propagated as
//!   `PEXPIREAT key ms`;
//! - PERSIST on a key with a time: it is cleared, `persist` fires, 1 change, propagated as
//!   `PERSIST key`; on a key without one nothing changes.

use bytes::Bytes;

use super::getset_getdel::read_string;
use super::set::{Grammar, Options, Unit, expire_at};
use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::GENERIC;
use crate::reply::Reply;

/// GETEX.
#[derive(Debug)]
pub struct GetEx;

impl GetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let options = Options::parse(argv, 2, Grammar::GetEx)?;
        let key = argv[1];
        let Some(value) = read_string(db, key)? else {
            return Ok(Reply::Null);
        };
        let now_ms = snapshot.now_ms;
        let expire = match options.expire {
            Some((arg, unit)) => Some((expire_at(arg, unit, now_ms, "getex")?, unit)),
            None => None,
        };
        let copy = Bytes::copy_from_slice;
        match expire {
            Some((at, Unit::ExAt | Unit::PxAt)) if at <= now_ms => {
                db.remove(key);
                db.notify(GENERIC, "del", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![Bytes::from_static(b"DEL"), copy(key)]);
                }
            }
            Some((at, _)) => {
                db.set_expiry(key, Some(at));
                db.notify(GENERIC, "expire", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![
                        Bytes::from_static(b"PEXPIREAT"),
                        copy(key),
                        Bytes::from(at.to_string()),
                    ]);
                }
            }
            None if options.persist && db.persist(key) => {
                db.notify(GENERIC, "persist", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![Bytes::from_static(b"PERSIST"), copy(key)]);
                }
            }
            None => {}
        }
        Ok(Reply::Bulk(value))
    }
}
