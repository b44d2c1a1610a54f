//! OBJECT, MEMORY, SLOWLOG, LATENCY and WAIT: what tooling (`redis-cli --bigkeys`,
//! `--memkeys`, `--latency`, monitoring) asks a server about itself.
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

use bytes::Bytes;
use echomq_engine::{Error as EngineError, Reply, Value};

use super::{Ctx, error, int_arg, is, subcommand_of, subcommand_syntax, unknown_subcommand};
use crate::state::slowlog::Entry;

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
fn usage(key: &[u8], value: &Value) -> usize {
    let object = OBJECT_BYTES + key.len() + 3;
    match value {
        Value::String(s) => match string_encoding(key, s) {
            "int" => size_class(object),
            "embstr" => size_class(object + 4 + s.len()),
            _ => size_class(object) + size_class(sds_header(s.len()) + s.len() + 1),
        },
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

fn help(lines: &[&'static str]) -> Reply {
    Reply::Array(lines.iter().map(|l| Reply::Status(l)).collect())
}

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
        }),
        "refcount" => Reply::Int(1),
        "idletime" => Reply::Int(0),
        "freq" => Reply::Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.".into()),
        _ => unknown_subcommand(argv),
    }
}

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Print this help.",
];

/// Redis's answer on a server with too little data to diagnose.
const DOCTOR_EMPTY: &str = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.";

/// `MEMORY USAGE key [SAMPLES n]|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP`.
pub(crate) fn memory(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "help" => help(MEMORY_HELP),
        "usage" => {
            let mut j = 3;
            while j < argv.len() {
                if is(argv[j], "samples") && j + 1 < argv.len() {
                    match int_arg(argv[j + 1]) {
                        Ok(n) if n >= 0 => {}
                        Ok(_) => return error(EngineError::Syntax),
                        Err(reply) => return reply,
                    }
                    j += 2;
                } else {
                    return error(EngineError::Syntax);
                }
            }
            let key = argv[2];
            match ctx.db().get(key) {
                None => Reply::Null,
                Some(value) => Reply::Int(usage(key, value) as i64),
            }
        }
        "doctor" => Reply::Verbatim(Bytes::from_static(DOCTOR_EMPTY.as_bytes())),
        "malloc-stats" => Reply::Verbatim(Bytes::from_static(
            b"Stats not supported for the current allocator",
        )),
        "purge" => Reply::OK,
        "stats" => {
            let used = ctx.state.memory_used() as i64;
            let keys: usize = ctx.dbs.iter().map(|db| db.len()).sum();
            let field = |name: &'static str, n: i64| (Reply::bulk_static(name), Reply::Int(n));
            Reply::Map(vec![
                field("peak.allocated", used),
                field("total.allocated", used),
                field("startup.allocated", 0),
                field("replication.backlog", 0),
                field("clients.slaves", 0),
                field("clients.normal", 0),
                field("aof.buffer", 0),
                field("keys.count", keys as i64),
                field("dataset.bytes", used),
            ])
        }
        _ => subcommand_syntax(argv),
    }
}

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Print this help.",
];

fn slowlog_entry(entry: Entry) -> Reply {
    Reply::Array(vec![
        Reply::Int(entry.id as i64),
        Reply::Int(entry.time_s as i64),
        Reply::Int(entry.usec as i64),
        Reply::Array(entry.argv.into_iter().map(Reply::Bulk).collect()),
        Reply::bulk(entry.peer),
        Reply::Bulk(entry.name),
    ])
}

/// `SLOWLOG GET [count]|LEN|RESET|HELP`.
pub(crate) fn slowlog(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(found) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !found.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(found.full_name.to_string()));
    }
    let log = ctx.state.slowlog();
    let sub = argv[1];
    let argc = argv.len();
    if argc == 2 && is(sub, "help") {
        help(SLOWLOG_HELP)
    } else if argc == 2 && is(sub, "reset") {
        log.reset();
        Reply::OK
    } else if argc == 2 && is(sub, "len") {
        Reply::Int(log.len() as i64)
    } else if (argc == 2 || argc == 3) && is(sub, "get") {
        let count = match argv.get(2).map(|a| int_arg(a)) {
            None => Some(10),
            Some(Ok(-1)) => None,
            Some(Ok(n)) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            Some(Ok(_)) | Some(Err(_)) => {
                return Reply::Error("ERR count should be greater than or equal to -1".into());
            }
        };
        Reply::Array(log.newest(count).into_iter().map(slowlog_entry).collect())
    } else {
        subcommand_syntax(argv)
    }
}

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Print this help.",
];

/// `LATENCY LATEST|HISTORY event|RESET [event ...]|HELP`: echomq's latency monitor is off
/// (`latency-monitor-threshold 0`, Redis's default), so there are no samples.
pub(crate) fn latency(_: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let Some(sub) = subcommand_of(argv) else {
        return unknown_subcommand(argv);
    };
    if !sub.arity_ok(argv.len()) {
        return error(EngineError::WrongArity(sub.full_name.to_string()));
    }
    match sub.name() {
        "help" => help(LATENCY_HELP),
        "latest" | "history" => Reply::Array(vec![]),
        "reset" => Reply::Int(0),
        _ => subcommand_syntax(argv),
    }
}

/// `WAIT numreplicas timeout`: echomq has no replicas, so 0 at once. (Redis with
/// `numreplicas` > 0 waits out the timeout first, forever for 0.)
pub(crate) fn wait(_: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if let Err(reply) = int_arg(argv[1]) {
        return reply;
    }
    match int_arg(argv[2]) {
        Ok(t) if t < 0 => Reply::Error("ERR timeout is negative".into()),
        Ok(_) => Reply::Int(0),
        Err(_) => Reply::Error("ERR timeout is not an integer or out of range".into()),
    }
}

#[cfg(test)]
mod tests {
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
