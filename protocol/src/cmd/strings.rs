//! A minimal string type, so keys of another type exist: SET (with its expiry options), GET,
//! INCR, STRLEN (which `redis-cli --bigkeys` asks).
//!
//! Keyspace events as Redis 8.8's `t_string.c`: SET fires `new` or `overwritten` (and
//! `type_changed`), `set`, then `expire` when it set a time; a SET whose time had passed
//! deletes the old key with `del`. INCR fires `new` for a new key and `incrby`. GET and SET's
//! GET count as read lookups.

use bytes::Bytes;
use echomq_engine::notify::{GENERIC, STRING};
use echomq_engine::{Error, Reply, Value};

use super::{Ctx, error, int_arg, is};

use crate::error::CommandError;

fn invalid_expire() -> Reply {
    CommandError::InvalidExpireTime("set".into()).into()
}

/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`.
pub(crate) fn set(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let (mut nx, mut xx, mut get, mut keep_ttl) = (false, false, false, false);
    let mut expires_at: Option<u64> = None;
    let now = ctx.snapshot.now_ms;
    let mut i = 3;
    while i < argv.len() {
        let arg = &argv[i];
        let next = argv.get(i + 1);
        let expiry_given = expires_at.is_some() || keep_ttl;
        if is(arg, "nx") && !xx {
            nx = true;
        } else if is(arg, "xx") && !nx {
            xx = true;
        } else if is(arg, "get") {
            get = true;
        } else if is(arg, "keepttl") && !expiry_given {
            keep_ttl = true;
        } else if (is(arg, "ex") || is(arg, "px") || is(arg, "exat") || is(arg, "pxat"))
            && !expiry_given
            && let Some(value) = next
        {
            let n = match int_arg(value) {
                Ok(n) => n,
                Err(reply) => return reply,
            };
            if n <= 0 {
                return invalid_expire();
            }
            let n = n as u64;
            let at = if is(arg, "ex") {
                n.checked_mul(1000).and_then(|ms| ms.checked_add(now))
            } else if is(arg, "px") {
                n.checked_add(now)
            } else if is(arg, "exat") {
                n.checked_mul(1000)
            } else {
                Some(n)
            };
            let Some(at) = at else {
                return invalid_expire();
            };
            expires_at = Some(at);
            i += 1;
        } else {
            return error(Error::Syntax);
        }
        i += 1;
    }
    let db = ctx.db();
    if get {
        db.count_read(argv[1], false);
    }
    let old = match db.get(argv[1]) {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) if get => return error(Error::WrongType),
        Some(_) => Some(Bytes::new()),
    };
    let old_reply = || {
        if get {
            old.clone().map_or(Reply::Null, Reply::Bulk)
        } else {
            Reply::Null
        }
    };
    if (nx && old.is_some()) || (xx && old.is_none()) {
        return old_reply();
    }
    if expires_at.is_some_and(|at| at <= now) {
        // An EXAT/PXAT in the past: the new value is born expired, so only the old one goes.
        if db.remove(argv[1]).is_some() {
            db.notify(GENERIC, "del", argv[1]);
        }
        return if get { old_reply() } else { Reply::OK };
    }
    let ttl = if keep_ttl {
        db.expiry(argv[1])
    } else {
        expires_at
    };
    db.insert(
        Bytes::copy_from_slice(argv[1]),
        Value::String(Bytes::copy_from_slice(argv[2])),
    );
    db.set_expiry(argv[1], ttl);
    db.notify(STRING, "set", argv[1]);
    if expires_at.is_some() {
        db.notify(GENERIC, "expire", argv[1]);
    }
    if get { old_reply() } else { Reply::OK }
}

/// `GET key`.
pub(crate) fn get(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    db.count_read(argv[1], false);
    match db.get(argv[1]) {
        None => Reply::Null,
        Some(Value::String(s)) => Reply::Bulk(s.clone()),
        Some(_) => error(Error::WrongType),
    }
}

/// `STRLEN key`: the string's length, 0 for a missing key.
pub(crate) fn strlen(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    db.count_read(argv[1], false);
    match db.get(argv[1]) {
        None => Reply::Int(0),
        Some(Value::String(s)) => Reply::Int(s.len() as i64),
        Some(_) => error(Error::WrongType),
    }
}

/// `INCR key`.
pub(crate) fn incr(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    let current = match db.get(argv[1]) {
        None => 0,
        Some(Value::String(s)) => match int_arg(s) {
            Ok(n) => n,
            Err(reply) => return reply,
        },
        Some(_) => return error(Error::WrongType),
    };
    let Some(next) = current.checked_add(1) else {
        return CommandError::IncrOverflow.into();
    };
    db.replace_value(argv[1], Value::String(Bytes::from(next.to_string())));
    db.notify(STRING, "incrby", argv[1]);
    Reply::Int(next)
}
