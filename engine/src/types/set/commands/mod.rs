//! The set commands, one file per command or close family, each a struct named after the
//! command with its grammar, errors and effects in its doc. They are registered in the one
//! command table ([`crate::command`]).
//!
//! - `sadd`: SADD, SREM; `sismember`: SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SSCAN;
//! - `spop`: SPOP, SRANDMEMBER; `smove`: SMOVE;
//! - `algebra`: SINTER, SINTERSTORE, SINTERCARD, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE.
//!
//! Replies that Redis sends as sets (SMEMBERS, SINTER, SUNION, SDIFF, SPOP with a count) are
//! RESP3 sets; the others arrays.

pub(crate) mod algebra;
pub(crate) mod sadd;
pub(crate) mod sismember;
pub(crate) mod smove;
pub(crate) mod spop;

#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::keyspace::Db;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::set::Set;

/// The set under `key`: `Ok(None)` if the key is missing, WRONGTYPE if it holds another type.
pub(crate) fn read_set<'a>(db: &'a Db, key: &[u8]) -> Result<Option<&'a Set>> {
    match db.get(key) {
        None => Ok(None),
        Some(Value::Set(s)) => Ok(Some(s)),
        Some(_) => Err(Error::WrongType),
    }
}

/// The set under `key`, mutably (raw: the caller produces the effects).
pub(crate) fn set_mut<'a>(db: &'a mut Db, key: &[u8]) -> Result<Option<&'a mut Set>> {
    match db.value_mut(key) {
        None => Ok(None),
        Some(Value::Set(s)) => Ok(Some(s)),
        Some(_) => Err(Error::WrongType),
    }
}

/// Members as a RESP3 set reply.
pub(crate) fn set_reply(members: Vec<bytes::Bytes>) -> Reply {
    Reply::Set(members.into_iter().map(Reply::Bulk).collect())
}
