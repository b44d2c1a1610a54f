//! The string commands, one file per command or close family: each a struct named after the
//! command, its grammar and its effects in its doc. They are registered in the one command
//! table ([`crate::command`]), which checks arity and dispatches.
//!
//! - `set`: SET and its option reader, shared with GETEX; `setnx_setex`: SETNX, SETEX, PSETEX.
//! - `get`, `getset_getdel`, `getex`: GET and the reads that also write.
//! - `mget_mset`: MGET, MSET, MSETNX; `msetex`: MSETEX.
//! - `range`: APPEND, SETRANGE, GETRANGE (SUBSTR); `strlen`: STRLEN.
//! - `incr`: INCR, DECR, INCRBY, DECRBY; `incrbyfloat`: INCRBYFLOAT, computed in
//!   [`long_double`](super::long_double); `increx`: INCREX (both, bounded, with a time).
//! - `lcs`: LCS; `digest_delex`: DIGEST, DELEX and the conditions SET shares with DELEX.

pub(crate) mod digest_delex;
pub(crate) mod get;
pub(crate) mod getex;
pub(crate) mod getset_getdel;
pub(crate) mod incr;
pub(crate) mod incrbyfloat;
pub(crate) mod increx;
pub(crate) mod lcs;
pub(crate) mod mget_mset;
pub(crate) mod msetex;
pub(crate) mod range;
pub(crate) mod set;
pub(crate) mod setnx_setex;
pub(crate) mod strlen;

#[cfg(test)]
mod tests;
