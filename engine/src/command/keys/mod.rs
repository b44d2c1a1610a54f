//! The generic key commands that need one database only, one file per command or close
//! family: DEL and UNLINK, EXISTS and TYPE, DBSIZE, KEYS, SCAN, FLUSHDB, RENAME and RENAMENX,
//! the EXPIRE family, the TTL family, PERSIST, TOUCH and RANDOMKEY. Each is a struct named after the command, its grammar and its
//! effects in its doc, registered in the one command table ([`crate::command`]).
//!
//! The key commands that need several databases or the server's state (MOVE, COPY, SWAPDB,
//! FLUSHALL, SELECT, DUMP with its `rdbcompression` setting and RESTORE beside it) are the
//! server's.
//!
//! Deleting, overwriting or renaming a stream wakes XREADGROUP readers blocked on it (they
//! then fail with NOGROUP), as Redis does: the [`Db`](crate::Db)'s `remove` and `insert`
//! signal it, and touch WATCHed keys.

pub(crate) mod dbsize;
pub(crate) mod del;
pub(crate) mod exists;
pub(crate) mod expire;
pub(crate) mod flushdb;
pub(crate) mod keys_command;
pub(crate) mod persist;
pub(crate) mod rename;
pub(crate) mod scan;
pub(crate) mod touch;
pub(crate) mod ttl;

#[cfg(test)]
mod tests;
