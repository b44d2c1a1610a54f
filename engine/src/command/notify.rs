//! What each stream command fires as keyspace events, and which of its keys it looks up for
//! reading (INFO's `keyspace_hits`/`keyspace_misses`, the `keymiss` event), as Redis 8.8's
//! `t_stream.c` does. Derived, like propagation, from the arguments, the reply and what
//! `propagate::before` read before the command ran:
//!
//! - XADD: `xadd` (not for an IDMP duplicate), then `xtrim` when its trim removed entries; a
//!   new stream fired `new` already (the keyspace fires it when the key is added).
//! - XTRIM `xtrim`, XDEL `xdel`, when they removed entries; XDELEX and XACKDEL `xdel` when
//!   they deleted an entry.
//! - XSETID `xsetid`; XGROUP CREATE `xgroup-create`, SETID `xgroup-setid`, DESTROY
//!   `xgroup-destroy` and CREATECONSUMER `xgroup-createconsumer` when they changed something,
//!   DELCONSUMER `xgroup-delconsumer` when the consumer existed.
//! - XREADGROUP (per stream, also when it blocks), XCLAIM and XAUTOCLAIM:
//!   `xgroup-createconsumer` for a consumer they created.
//! - XACK, XNACK, XCFGSET, XIDMPRECORD and the reads fire nothing.
//!
//! Read lookups: XRANGE, XREVRANGE, XLEN, XPENDING and XINFO look their key up once after
//! parsing (so a parse error counts nothing); XACK, XACKDEL, XCLAIM and XAUTOCLAIM once before
//! parsing; XREAD and XREADGROUP twice per stream (the id pass and the serving pass) when they
//! got that far. The other stream commands look up for writing, which Redis does not count.

use crate::blocking::Outcome;
use crate::error::{Error, Result};
use crate::keyspace::Db;
use crate::notify::STREAM;
use crate::reply::Reply;
use crate::stream::Stream;

use super::args::is;
use super::propagate::{Before, consumer_exists, parse_readgroup, stream};

/// Records the events a stream command that ran fires.
#[inline]
pub(super) fn after(
    db: &mut Db,
    name: &str,
    argv: &[&[u8]],
    before: &Before,
    out: &Result<Outcome>,
) {
    count_reads(db, name, argv, out);
    if db.notifying(STREAM) {
        fire(db, name, argv, before, out);
    }
}

/// [`after`] when stream events are wanted.
fn fire(db: &mut Db, name: &str, argv: &[&[u8]], before: &Before, out: &Result<Outcome>) {
    let reply = match out {
        Ok(Outcome::Reply(reply)) => Some(reply),
        Ok(Outcome::Block(_)) => None,
        Err(_) => return,
    };
    let int = match reply {
        Some(Reply::Int(n)) => *n,
        _ => 0,
    };
    let key = argv[1];
    match name {
        "xadd" => {
            if !matches!(reply, Some(Reply::Bulk(_))) {
                return;
            }
            let after = stream(db, key);
            let added = after.map(Stream::entries_added);
            let len_after = after.map_or(0, Stream::len);
            if before.entries_added.is_some() && before.entries_added == added {
                return; // An IDMP duplicate: Redis replies before it notifies.
            }
            db.notify(STREAM, "xadd", key);
            if before.len.unwrap_or(0) + 1 > len_after {
                db.notify(STREAM, "xtrim", key);
            }
        }
        "xtrim" if int > 0 => db.notify(STREAM, "xtrim", key),
        "xdel" if int > 0 => db.notify(STREAM, "xdel", key),
        "xdelex" | "xackdel" => {
            let deleted = matches!(reply, Some(Reply::Array(codes))
                if codes.iter().any(|c| matches!(c, Reply::Int(1))));
            if deleted {
                db.notify(STREAM, "xdel", key);
            }
        }
        "xsetid" if reply.is_some() => db.notify(STREAM, "xsetid", key),
        "xgroup" => {
            let sub = argv.get(1).copied().unwrap_or_default();
            let key = argv.get(2).copied().unwrap_or_default();
            let event = if is(sub, "create") {
                Some("xgroup-create")
            } else if is(sub, "setid") {
                Some("xgroup-setid")
            } else if is(sub, "destroy") && int > 0 {
                Some("xgroup-destroy")
            } else if is(sub, "createconsumer") && int > 0 {
                Some("xgroup-createconsumer")
            } else if is(sub, "delconsumer") && before.consumer_existed.first() == Some(&true) {
                Some("xgroup-delconsumer")
            } else {
                None
            };
            if let Some(event) = event {
                db.notify(STREAM, event, key);
            }
        }
        "xreadgroup" => {
            let Some(read) = parse_readgroup(argv) else {
                return;
            };
            for (k, key) in read.keys.iter().enumerate() {
                let existed = before.consumer_existed.get(k).copied().unwrap_or(true);
                if !existed && consumer_exists(db, key, read.group, read.consumer) {
                    db.notify(STREAM, "xgroup-createconsumer", key);
                }
            }
        }
        "xclaim" | "xautoclaim" => {
            let existed = before.consumer_existed.first().copied().unwrap_or(true);
            if !existed && consumer_exists(db, key, argv[2], argv[3]) {
                db.notify(STREAM, "xgroup-createconsumer", key);
            }
        }
        _ => {}
    }
}

/// Whether an error came after the command's read lookup (the key's type or presence, or its
/// group, was what failed), not from its arguments.
fn after_lookup(e: &Error) -> bool {
    matches!(
        e,
        Error::WrongType
            | Error::NoSuchKey
            | Error::NoGroupForKey { .. }
            | Error::NoKeyOrGroup { .. }
            | Error::NoKeyOrGroupXreadgroup { .. }
    )
}

/// Counts the read lookups of a stream command that ran (hits, misses, `keymiss` events).
fn count_reads(db: &mut Db, name: &str, argv: &[&[u8]], out: &Result<Outcome>) {
    let looked_up = match out {
        Ok(_) => true,
        Err(e) => after_lookup(e),
    };
    match name {
        // The hottest command, which looks nothing up for reading, matched first.
        "xadd" => {}
        "xack" | "xackdel" | "xclaim" | "xautoclaim" => db.count_read(argv[1], false),
        "xrange" | "xrevrange" | "xlen" | "xpending" if looked_up => db.count_read(argv[1], false),
        "xinfo" if looked_up && argv.len() > 2 => db.count_read(argv[2], false),
        "xread" | "xreadgroup" if looked_up => {
            let Some(at) = argv.iter().position(|a| is(a, "streams")) else {
                return;
            };
            let rest = &argv[at + 1..];
            let keys = &rest[..rest.len() / 2];
            // Past the argument checks only on success: then both passes ran.
            let passes = if out.is_ok() { 2 } else { 1 };
            for _ in 0..passes {
                for key in keys {
                    db.count_read(key, false);
                }
            }
        }
        _ => {}
    }
}
