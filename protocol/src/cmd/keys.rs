//! DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE, RENAME, RENAMENX, FLUSHDB, FLUSHALL.
//!
//! Deleting, overwriting or flushing a stream wakes XREADGROUP readers blocked on it (they then
//! fail with NOGROUP), as Redis does; the engine's [`echomq_engine::Db`] does the signalling.
//! Keyspace events as Redis 8.8's `db.c`: `del` per deleted key; RENAME fires `new` for the
//! destination (the old one is deleted first), `rename_from`, `rename_to`, then `overwritten`
//! and `type_changed` when it replaced a key. EXISTS and TYPE count as read lookups (INFO's
//! `keyspace_hits`/`keyspace_misses`).

use bytes::Bytes;
use echomq_engine::notify::{GENERIC, OVERWRITTEN, TYPE_CHANGED};
use echomq_engine::{Error, Reply, Value};

use super::{Ctx, error, int_arg, is};
use crate::error::CommandError;
use crate::glob;

/// `DEL key [key ...]` and `UNLINK`: how many existed.
pub(crate) fn del(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    let mut deleted = 0;
    for key in &argv[1..] {
        if db.remove(key).is_some() {
            db.notify(GENERIC, "del", key);
            deleted += 1;
        }
    }
    Reply::Int(deleted)
}

/// `EXISTS key [key ...]`: how many exist, repeats counted.
pub(crate) fn exists(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    let mut found = 0;
    for key in &argv[1..] {
        db.count_read(key, false);
        if db.get(key).is_some() {
            found += 1;
        }
    }
    Reply::Int(found)
}

/// `TYPE key`.
pub(crate) fn type_(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    db.count_read(argv[1], false);
    Reply::Status(db.get(argv[1]).map_or("none", Value::type_name))
}

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

/// `DBSIZE`.
pub(crate) fn dbsize(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    Reply::Int(ctx.db().len() as i64)
}

fn rename_impl(ctx: &mut Ctx<'_>, argv: &[&[u8]], only_if_absent: bool) -> Reply {
    let db = ctx.db();
    if db.get(argv[1]).is_none() {
        return error(Error::NoSuchKey);
    }
    if only_if_absent && db.get(argv[2]).is_some() {
        return Reply::Int(0);
    }
    if argv[1] == argv[2] {
        return if only_if_absent {
            Reply::Int(0)
        } else {
            Reply::OK
        };
    }
    let expiry = db.expiry(argv[1]);
    // As Redis: the destination is deleted first, so adding it fires `new`.
    let replaced = db.remove(argv[2]).map(|v| v.type_name());
    let Some(value) = db.remove(argv[1]) else {
        return error(Error::NoSuchKey);
    };
    let kind = value.type_name();
    db.insert(Bytes::copy_from_slice(argv[2]), value);
    db.set_expiry(argv[2], expiry);
    db.notify(GENERIC, "rename_from", argv[1]);
    db.notify(GENERIC, "rename_to", argv[2]);
    if let Some(was) = replaced {
        db.notify(OVERWRITTEN, "overwritten", argv[2]);
        if was != kind {
            db.notify(TYPE_CHANGED, "type_changed", argv[2]);
        }
    }
    if only_if_absent {
        Reply::Int(1)
    } else {
        Reply::OK
    }
}

/// `RENAME key newkey`.
pub(crate) fn rename(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    rename_impl(ctx, argv, false)
}

/// `RENAMENX key newkey`.
pub(crate) fn renamenx(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    rename_impl(ctx, argv, true)
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
    ctx.db().clear();
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
    Reply::OK
}
