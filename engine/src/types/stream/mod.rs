//! The stream type, all in one folder: the data structure and its commands.
//!
//! - [`id`]: [`StreamId`](id::StreamId) and Redis's exact id parsing for every argument
//!   context.
//! - `node`: the macro node, a compact byte buffer of entries delta-encoded against a master
//!   id, with tombstones; `listpack_size` models the bytes Redis would use so nodes split
//!   where Redis splits them; `varint` is the number encoding inside nodes.
//! - [`log`] (the crate's [`crate::stream`]): one stream (ordered node index plus bookkeeping):
//!   append, range reads, deletion, trimming, XSETID, IDMP, memory accounting
//!   ([`Stream::memory_bytes`](log::Stream::memory_bytes)) and `check_invariants`.
//! - [`group`]: consumer groups: cursor, entries-read and lag, pending entries lists
//!   (`chunk_map` is their compact ordered map), claiming.
//! - [`commands`]: the X* commands with Redis's grammar, errors, replies and effects,
//!   registered in the one command table ([`crate::command`]).
//!
//! The stream's RDB and DUMP encodings live in [`crate::rdb`] (`rdb/stream.rs`, `rdb/nodes.rs`),
//! its AOF form is the commands' propagation.

pub(crate) mod chunk_map;
pub mod commands;
pub mod group;
pub mod id;
pub(crate) mod listpack_size;
pub mod log;
pub(crate) mod node;
pub(crate) mod varint;
