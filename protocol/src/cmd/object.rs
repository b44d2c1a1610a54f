//! OBJECT, and the size and encoding Redis 8.8 gives a key's object (which MEMORY USAGE and
//! `redis-cli --bigkeys`/`--memkeys` report).
//!
//! Sizes follow Redis 8.8's rules (`kvobjComputeSize`): a key's object holds the key itself
//! (16 bytes of header, the key and 3 bytes of sds framing); a string is `int` (an integer of
//! at most 20 characters, held in the object), `embstr` (held in the object when the whole
//! fits a 64-byte cache line) or `raw` (its own allocation); every allocation is rounded up
//! to jemalloc's size class. A stream is the object, Redis's stream header, a radix tree
//! node per node, and each node's size as a Redis listpack
//! ([`echomq_engine::Stream::listpack_bytes`], rounded to its size class); consumer groups
//! are not counted. echomq tracks neither access times nor frequencies: OBJECT IDLETIME is 0 and
//! OBJECT FREQ answers as Redis does without an LFU policy.

use echomq_engine::{Error as EngineError, Reply, Value};

use super::{Ctx, error, help, subcommand_of, unknown_subcommand};

use crate::error::CommandError;

/// Redis's cache line, the most an embedded string's object may take.
const CACHE_LINE_BYTES: usize = 64;
/// An object's header (`sizeof(kvobj)`).
const OBJECT_BYTES: usize = 16;
/// Redis's `stream` struct and its radix tree's header.
const STREAM_HEADER_BYTES: usize = 200;
/// Redis's radix tree per node of a stream (a 128-bit id key).
const RAX_NODE_BYTES: usize = 40;

/// The size jemalloc hands out for a request of `n` bytes (8-byte quantum below 64, 16
/// below 128, then four classes per doubling).
pub(crate) fn size_class(n: usize) -> usize {
    let up = |n: usize, step: usize| n.div_ceil(step) * step;
    match n {
        0..=8 => 8,
        9..=64 => up(n, 8),
        65..=128 => up(n, 16),
        _ => {
            let power = n.next_power_of_two();
            up(n, (power / 8).max(16))
        }
    }
}

/// An sds string's header for `len` bytes.
fn sds_header(len: usize) -> usize {
    match len {
        0..=255 => 3,
        256..=65_535 => 5,
        _ if len as u64 <= u64::from(u32::MAX) => 9,
        _ => 17,
    }
}

/// Whether Redis keeps `value` as an integer: at most 20 characters that `string2l` reads
/// back exactly (no sign but `-`, no leading zeros, no spaces).
fn is_int(value: &[u8]) -> bool {
    value.len() <= 20
        && std::str::from_utf8(value)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .is_some_and(|n| n.to_string().as_bytes() == value)
}

/// A string's encoding under `key`.
fn string_encoding(key: &[u8], value: &[u8]) -> &'static str {
    if is_int(value) {
        "int"
    } else if OBJECT_BYTES + key.len() + 3 + 4 + value.len() <= CACHE_LINE_BYTES {
        "embstr"
    } else {
        "raw"
    }
}

/// MEMORY USAGE of `value` under `key`.
pub(super) fn usage(key: &[u8], value: &Value) -> usize {
    let object = OBJECT_BYTES + key.len() + 3;
    match value {
        Value::String(s) => match string_encoding(key, s) {
            "int" => size_class(object),
            "embstr" => size_class(object + 4 + s.len()),
            _ => size_class(object) + size_class(sds_header(s.len()) + s.len() + 1),
        },
        // Hashes and sets: the object and one allocation of the encoding's bytes, an
        // approximation of Redis's per-encoding figures.
        Value::Hash(h) => size_class(object) + size_class(h.memory_bytes().max(1)),
        Value::Set(set) => size_class(object) + size_class(set.memory_bytes().max(1)),
        Value::Stream(stream) => {
            let listpacks: usize = stream
                .listpack_bytes()
                .map(|bytes| size_class(usize::try_from(bytes).unwrap_or(usize::MAX)))
                .sum();
            size_class(object)
                + STREAM_HEADER_BYTES
                + RAX_NODE_BYTES * stream.node_count() as usize
                + listpacks
        }
    }
}

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Print this help.",
];

/// `OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key`, `OBJECT HELP`.
pub(crate) fn object(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    if sub.name() == "help" {
        return help(OBJECT_HELP);
    }
    let key = argv[2];
    // Redis's OBJECT lookup counts as a read but fires no `keymiss`.
    ctx.db().count_read(key, true);
    let Some(value) = ctx.db().get(key) else {
        return Reply::Null;
    };
    match sub.name() {
        "encoding" => Reply::bulk_static(match value {
            Value::Stream(_) => "stream",
            Value::String(s) => string_encoding(key, s),
            Value::Hash(h) => h.encoding(),
            Value::Set(set) => set.encoding(),
        }),
        "refcount" => Reply::Int(1),
        "idletime" => Reply::Int(0),
        "freq" => CommandError::LfuNotSelected.into(),
        _ => unknown_subcommand(argv),
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    #[test]
    fn strings_are_sized_and_encoded_as_redis8() {
        // Figures read from Redis 8.8's MEMORY USAGE and OBJECT ENCODING.
        let s = |v: &str| Value::String(Bytes::copy_from_slice(v.as_bytes()));
        assert_eq!(usage(b"a", &s("1")), 24);
        assert_eq!(usage(b"abcdefgh", &s("1")), 32);
        assert_eq!(usage(b"c", &s("abc")), 32);
        assert_eq!(usage(b"c2", &s(&"a".repeat(40))), 72);
        assert_eq!(usage(b"c3", &s(&"a".repeat(100))), 136);
        assert_eq!(string_encoding(b"b", b"12345"), "int");
        assert_eq!(string_encoding(b"b", b"012"), "embstr");
        assert_eq!(string_encoding(b"b", b"+1"), "embstr");
        assert_eq!(string_encoding(b"d", &[b'a'; 44]), "raw");
        assert_eq!(size_class(129), 160);
        assert_eq!(size_class(1025), 1280);
    }
}
