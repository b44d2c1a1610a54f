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
//! are not counted. OBJECT IDLETIME and FREQ read the key's access metadata (see the engine's
//! `db/access.rs`), each refused with Redis's text under the policies that do not track it.

use echomq_engine::access::AccessMode;
use echomq_engine::{Error as EngineError, Reply, StringEncoding, StringValue, Value};

use super::{Ctx, error, help, subcommand_of, unknown_subcommand};

use crate::error::CommandError;

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

/// A string's encoding as Redis 8.8 reports it: the value keeps the encoding its history gave
/// it (settled against its key when stored), see [`StringValue`].
fn string_encoding(value: &StringValue) -> &'static str {
    value.encoding().name()
}

/// OBJECT ENCODING of `value` under `key`.
pub(super) fn encoding(value: &Value) -> &'static str {
    match value {
        Value::Stream(_) => "stream",
        Value::String(s) => string_encoding(s),
        Value::List(list) => list.encoding(),
        Value::Hash(hash) => hash.encoding(),
        Value::Set(set) => set.encoding(),
        Value::ZSet(z) => z.encoding(),
    }
}

/// MEMORY USAGE of `value` under `key`.
pub(super) fn usage(key: &[u8], value: &Value) -> usize {
    let object = OBJECT_BYTES + key.len() + 3;
    match value {
        Value::String(s) => match s.encoding() {
            StringEncoding::Int => size_class(object),
            StringEncoding::Embstr => size_class(object + 4 + s.len()),
            StringEncoding::Raw => {
                size_class(object) + size_class(sds_header(s.len()) + s.len() + 1)
            }
        },
        // Hashes, sets and sorted sets: the object and one allocation of the encoding's bytes, an
        // approximation of Redis's per-encoding figures.
        Value::Hash(h) => size_class(object) + size_class(h.memory_bytes().max(1)),
        Value::Set(set) => size_class(object) + size_class(set.memory_bytes().max(1)),
        Value::ZSet(z) => size_class(object) + size_class(z.memory_bytes().max(1)),
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
        Value::List(list) => {
            // Redis: a listpack is one allocation; a quicklist its 40-byte struct and a
            // 32-byte node per listpack.
            let nodes = list.node_bytes();
            let buffers: usize = nodes.iter().map(|&b| size_class(b)).sum();
            if list.encoding() == "listpack" {
                size_class(object) + buffers
            } else {
                size_class(object) + 40 + 32 * nodes.len() + buffers
            }
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
        "encoding" => Reply::bulk_static(encoding(value)),
        "refcount" => Reply::Int(1),
        "idletime" => {
            let db = ctx.db();
            if db.access().mode == AccessMode::Lfu {
                return CommandError::LruNotSelected.into();
            }
            Reply::Int((db.idle_ms(key).unwrap_or(0) / 1000) as i64)
        }
        "freq" => {
            let db = ctx.db();
            if db.access().mode != AccessMode::Lfu {
                return CommandError::LfuNotSelected.into();
            }
            Reply::Int(i64::from(db.frequency(key).unwrap_or(0)))
        }
        _ => unknown_subcommand(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_sized_and_encoded_as_redis8() {
        // Figures read from Redis 8.8's MEMORY USAGE and OBJECT ENCODING.
        let s = |v: &str| {
            let mut value = StringValue::from_arg(v.as_bytes());
            value.settle(2);
            Value::String(value)
        };
        let encoding = |key: &[u8], v: &[u8]| {
            let mut value = StringValue::from_arg(v);
            value.settle(key.len());
            string_encoding(&value)
        };
        assert_eq!(usage(b"a", &s("1")), 24);
        assert_eq!(usage(b"abcdefgh", &s("1")), 32);
        assert_eq!(usage(b"c", &s("abc")), 32);
        assert_eq!(usage(b"c2", &s(&"a".repeat(40))), 72);
        assert_eq!(usage(b"c3", &s(&"a".repeat(100))), 136);
        assert_eq!(encoding(b"b", b"12345"), "int");
        assert_eq!(encoding(b"b", b"012"), "embstr");
        assert_eq!(encoding(b"b", b"+1"), "embstr");
        assert_eq!(encoding(b"d", &[b'a'; 44]), "raw");
        assert_eq!(size_class(129), 160);
        assert_eq!(size_class(1025), 1280);
    }
}
