//! The string type: a binary-safe byte string, held as a [`StringValue`] (`value.rs`: inline,
//! integer or heap, with Redis's `int`/`embstr`/`raw` encoding). Its commands (SET, GET,
//! INCR, STRLEN...) are in `commands/`, one file per command or family; the bitmap commands in
//! `bitmap/`, the HyperLogLog ones and their format in [`hyperloglog`]. The engine counts it
//! in INFO keysizes (`db/values.rs`) and accounts its memory here. Its RDB and DUMP forms are
//! in [`crate::rdb`]; `docs/reference/strings.md` sums up the encodings and the HLL format.

pub(crate) mod bitmap;
pub(crate) mod commands;
pub mod hyperloglog;
pub(crate) mod long_double;
mod value;

pub use value::{EMBSTR_BYTES_MAX, Encoding, INLINE_BYTES, StringValue, exact_i64};

/// The bytes a string value holds on the heap (the [`StringValue`] itself is part of the
/// [`Value`](super::Value)).
pub fn memory_bytes(value: &StringValue) -> usize {
    value.heap_bytes()
}
