//! Key expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT), TTL, PTTL,
//! EXPIRETIME, PEXPIRETIME, PERSIST — on every key kind, with Redis's errors.
//!
//! Times are the command's clock snapshot (so a MULTI/EXEC sees one instant). An expiry at
//! or before now deletes the key at once, as DEL does (blocked XREADGROUP readers of a stream
//! are woken and fail); a later one is kept by the engine's [`echomq_engine::Db`], which
//! deletes the key lazily on access or in the active expiry cycle.
//!
//! Keyspace events as Redis 8.8's `expire.c`: `expire` for a time set, `del` for a key deleted
//! because the time had passed, `persist` for a time removed. The TTL family counts as read
//! lookups.

use echomq_engine::Reply;
use echomq_engine::notify::GENERIC;

use super::{Ctx, int_arg, is};

use crate::error::CommandError;

/// NX, XX, GT, LT.
#[derive(Debug, Default, Clone, Copy)]
struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_conditions(args: &[&[u8]]) -> Result<Conditions, Reply> {
    let mut c = Conditions::default();
    for arg in args {
        if is(arg, "nx") {
            c.nx = true;
        } else if is(arg, "xx") {
            c.xx = true;
        } else if is(arg, "gt") {
            c.gt = true;
        } else if is(arg, "lt") {
            c.lt = true;
        } else {
            return Err(
                CommandError::UnsupportedOption(String::from_utf8_lossy(arg).into_owned()).into(),
            );
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(CommandError::NxWithXxGtLt.into());
    }
    if c.gt && c.lt {
        return Err(CommandError::GtWithLt.into());
    }
    Ok(c)
}

/// Whether the conditions let `when` replace `current` (`None`: no expiry, an infinite TTL).
fn allowed(c: Conditions, current: Option<i64>, when: i64) -> bool {
    match current {
        None => !(c.xx || c.gt),
        Some(current) => !(c.nx || (c.gt && when <= current) || (c.lt && when >= current)),
    }
}

/// The four setters: `seconds` when the argument counts seconds, `relative` when it counts
/// from now.
fn expire_generic(ctx: &mut Ctx<'_>, argv: &[&[u8]], seconds: bool, relative: bool) -> Reply {
    let conditions = match parse_conditions(&argv[3..]) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    let mut when = match int_arg(argv[2]) {
        Ok(n) => n,
        Err(reply) => return reply,
    };
    let invalid = || {
        let name = String::from_utf8_lossy(argv[0]).to_ascii_lowercase();
        CommandError::InvalidExpireTime(name).into()
    };
    if seconds {
        match when.checked_mul(1000) {
            Some(ms) => when = ms,
            None => return invalid(),
        }
    }
    let now = i64::try_from(ctx.snapshot.now_ms).unwrap_or(i64::MAX);
    if relative {
        match when.checked_add(now) {
            Some(at) => when = at,
            None => return invalid(),
        }
    }
    let db = ctx.db();
    if db.get(argv[1]).is_none() {
        return Reply::Int(0);
    }
    let current = db.expiry(argv[1]).map(|at| at as i64);
    if !allowed(conditions, current, when) {
        return Reply::Int(0);
    }
    if when <= now {
        db.remove(argv[1]);
        db.notify(GENERIC, "del", argv[1]);
    } else {
        db.set_expiry(argv[1], Some(when as u64));
        db.notify(GENERIC, "expire", argv[1]);
    }
    Reply::Int(1)
}

/// `EXPIRE key seconds [NX|XX|GT|LT]`.
pub(crate) fn expire(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    expire_generic(ctx, argv, true, true)
}

/// `PEXPIRE key milliseconds [NX|XX|GT|LT]`.
pub(crate) fn pexpire(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    expire_generic(ctx, argv, false, true)
}

/// `EXPIREAT key unix-time-seconds [NX|XX|GT|LT]`.
pub(crate) fn expireat(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    expire_generic(ctx, argv, true, false)
}

/// `PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]`.
pub(crate) fn pexpireat(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    expire_generic(ctx, argv, false, false)
}

/// The four readers: -2 for a missing key, -1 for one without expiry, else the time left
/// (or the time it expires, `absolute`) in ms or rounded seconds.
fn ttl_generic(ctx: &mut Ctx<'_>, argv: &[&[u8]], ms: bool, absolute: bool) -> Reply {
    let now = ctx.snapshot.now_ms;
    let db = ctx.db();
    db.count_read(argv[1], false);
    if db.get(argv[1]).is_none() {
        return Reply::Int(-2);
    }
    let Some(at) = db.expiry(argv[1]) else {
        return Reply::Int(-1);
    };
    let value = if absolute { at } else { at.saturating_sub(now) };
    let value = i64::try_from(value).unwrap_or(i64::MAX);
    Reply::Int(if ms {
        value
    } else {
        value.saturating_add(500) / 1000
    })
}

/// `TTL key`.
pub(crate) fn ttl(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    ttl_generic(ctx, argv, false, false)
}

/// `PTTL key`.
pub(crate) fn pttl(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    ttl_generic(ctx, argv, true, false)
}

/// `EXPIRETIME key`.
pub(crate) fn expiretime(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    ttl_generic(ctx, argv, false, true)
}

/// `PEXPIRETIME key`.
pub(crate) fn pexpiretime(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    ttl_generic(ctx, argv, true, true)
}

/// `PERSIST key`: 1 if it had an expiry and now has none.
pub(crate) fn persist(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let db = ctx.db();
    let removed = db.persist(argv[1]);
    if removed {
        db.notify(GENERIC, "persist", argv[1]);
    }
    Reply::Int(i64::from(removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Conditions, String> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        parse_conditions(&args).map_err(|reply| match reply {
            Reply::Error(text) => text,
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn conditions_are_checked_with_redis_errors() {
        assert!(parsed(&["nx"]).is_ok() && parsed(&["GT", "xx"]).is_ok());
        assert_eq!(
            parsed(&["nx", "xx"]).unwrap_err(),
            "ERR NX and XX, GT or LT options at the same time are not compatible"
        );
        assert_eq!(
            parsed(&["gt", "lt"]).unwrap_err(),
            "ERR GT and LT options at the same time are not compatible"
        );
        assert_eq!(parsed(&["Foo"]).unwrap_err(), "ERR Unsupported option Foo");
    }

    #[test]
    fn no_expiry_counts_as_an_infinite_ttl() {
        let c = |s: &[&str]| parsed(s).unwrap();
        assert!(allowed(c(&["nx"]), None, 5) && !allowed(c(&["nx"]), Some(9), 5));
        assert!(!allowed(c(&["xx"]), None, 5) && allowed(c(&["xx"]), Some(9), 5));
        assert!(!allowed(c(&["gt"]), None, 5) && allowed(c(&["gt"]), Some(4), 5));
        assert!(!allowed(c(&["gt"]), Some(5), 5));
        assert!(allowed(c(&["lt"]), None, 5) && !allowed(c(&["lt"]), Some(5), 5));
        assert!(allowed(c(&["lt"]), Some(6), 5));
    }
}
