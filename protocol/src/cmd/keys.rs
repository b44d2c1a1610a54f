//! KEYS, SCAN, FLUSHDB, FLUSHALL: the key commands that need the server's glob matcher or
//! every database (the generic ones that need one database are the engine's, in
//! `echomq_engine::command`'s `keys/`).
//!
//! Flushing a stream wakes XREADGROUP readers blocked on it (they then fail with NOGROUP), as
//! Redis does; the engine's [`echomq_engine::Db`] does the signalling.
//!
//! Propagation and dirty: FLUSHDB and FLUSHALL are propagated verbatim (in the client's
//! database), counting 1 change. KEYS and SCAN change nothing.

use echomq_engine::{Error, Reply};

use super::{Ctx, error, int_arg, is};
use crate::error::CommandError;
use crate::glob;

/// `KEYS pattern`.
pub(crate) fn keys(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let pattern = &argv[1];
    let all = pattern == b"*";
    Reply::Array(
        ctx.db()
            .keys()
            .filter(|k| all || glob::matches(pattern, k, false))
            .map(|k| Reply::Bulk(k.clone()))
            .collect(),
    )
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`: one pass returns every match with
/// cursor 0, which SCAN's guarantees allow.
pub(crate) fn scan(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if std::str::from_utf8(argv[1])
        .ok()
        .and_then(|c| c.parse::<u64>().ok())
        .is_none()
    {
        return CommandError::InvalidCursor.into();
    }
    let mut pattern: Option<&[u8]> = None;
    let mut kind: Option<&[u8]> = None;
    let mut i = 2;
    while i < argv.len() {
        if i + 1 >= argv.len() {
            return error(Error::Syntax);
        }
        if is(argv[i], "match") {
            pattern = Some(argv[i + 1]);
        } else if is(argv[i], "count") {
            match int_arg(argv[i + 1]) {
                Ok(n) if n >= 1 => {}
                Ok(_) => return error(Error::Syntax),
                Err(reply) => return reply,
            }
        } else if is(argv[i], "type") {
            kind = Some(argv[i + 1]);
        } else {
            return error(Error::Syntax);
        }
        i += 2;
    }
    let db = ctx.db();
    let keys = db
        .keys()
        .filter(|k| pattern.is_none_or(|p| glob::matches(p, k, false)))
        .filter(|k| {
            kind.is_none_or(|t| {
                db.get(k)
                    .is_some_and(|v| t.eq_ignore_ascii_case(v.type_name().as_bytes()))
            })
        })
        .map(|k| Reply::Bulk(k.clone()))
        .collect();
    Reply::Array(vec![Reply::bulk_static("0"), Reply::Array(keys)])
}

fn flush_mode_ok(argv: &[&[u8]]) -> bool {
    match argv {
        [_] => true,
        [_, mode] => is(mode, "async") || is(mode, "sync"),
        _ => false,
    }
}

/// `FLUSHDB [ASYNC|SYNC]`.
pub(crate) fn flushdb(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if !flush_mode_ok(argv) {
        return error(Error::Syntax);
    }
    let db = ctx.db();
    db.clear();
    db.changed(1, argv);
    Reply::OK
}

/// `FLUSHALL [ASYNC|SYNC]`.
pub(crate) fn flushall(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if !flush_mode_ok(argv) {
        return error(Error::Syntax);
    }
    for db in ctx.dbs.iter_mut() {
        db.clear();
    }
    ctx.db().changed(1, argv);
    Reply::OK
}
