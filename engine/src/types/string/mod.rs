//! The string type: a binary-safe byte string. Its commands (SET, GET, INCR, STRLEN) are in
//! `commands/`, one file per command; the engine counts it in INFO keysizes
//! (`db/values.rs`) and accounts its memory here. Its RDB and DUMP forms are in
//! [`crate::rdb`].

pub(crate) mod commands;
pub(crate) mod long_double;

use bytes::Bytes;

/// The bytes a string value holds on the heap: its contents (the `Bytes` handle is part of
/// the [`Value`](super::Value) itself).
pub fn memory_bytes(value: &Bytes) -> usize {
    value.len()
}
