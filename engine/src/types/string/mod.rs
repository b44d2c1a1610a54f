//! The string type: a binary-safe byte string. Its commands are the server's (GET, SET,
//! INCR, ...); the engine holds the value, counts it in INFO keysizes (`db/values.rs`) and
//! accounts its memory here. Its RDB and DUMP forms are in [`crate::rdb`].

use bytes::Bytes;

/// The bytes a string value holds on the heap: its contents (the `Bytes` handle is part of
/// the [`Value`](super::Value) itself).
pub fn memory_bytes(value: &Bytes) -> usize {
    value.len()
}
