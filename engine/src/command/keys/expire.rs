//! `EXPIRE key seconds [NX|XX|GT|LT]`, `PEXPIRE key ms [...]`, `EXPIREAT key unix-s [...]`,
//! `PEXPIREAT key unix-ms [...]`: sets when the key expires; 1 if set (or the key deleted),
//! 0 if the key is missing or a condition refused.
//!
//! Checking order as Redis 8.8's `expireGenericCommand`: the conditions (`ERR Unsupported
//! option`, then NX with XX/GT/LT, then GT with LT), the time (`ERR value is not an integer
//! or out of range`, then `ERR invalid expire time in '<command>' command` when the ms or the
//! sum with now overflow), then the key. No expiry counts as an infinite TTL for GT and LT.
//! Times are the command's clock snapshot (so a MULTI/EXEC sees one instant).
//!
//! Effects: a time at or before now deletes the key at once (WATCH touched, blocked
//! XREADGROUP readers of a stream woken to fail, `del` fired, 1 change) and is propagated as
//! `DEL key`; a later one is kept (WATCH touched, `expire` fired, 1 change) and propagated as
//! `PEXPIREAT key ms [conditions]`: the name rewritten (PEXPIREAT's own kept as sent), the
//! time absolute ms (PEXPIREAT's own argument kept as sent), the conditions kept, as Redis
//! rewrites its argv. A reply of 0 changes nothing.

use bytes::Bytes;

use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::GENERIC;
use crate::reply::Reply;

/// NX, XX, GT, LT.
#[derive(Debug, Default, Clone, Copy)]
struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Conditions {
    fn parse(args: &[&[u8]]) -> Result<Conditions> {
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
                return Err(Error::UnsupportedOption(
                    String::from_utf8_lossy(arg).into_owned(),
                ));
            }
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(Error::NxWithXxGtLt);
        }
        if c.gt && c.lt {
            return Err(Error::GtWithLt);
        }
        Ok(c)
    }

    /// Whether the conditions let `when` replace `current` (`None`: no expiry, an infinite
    /// TTL).
    fn allow(self, current: Option<i64>, when: i64) -> bool {
        match current {
            None => !(self.xx || self.gt),
            Some(current) => {
                !(self.nx || (self.gt && when <= current) || (self.lt && when >= current))
            }
        }
    }
}

/// One of the four setters.
#[derive(Debug, Clone, Copy)]
pub struct Expire {
    /// The command's name, lower case, as its errors show it.
    name: &'static str,
    /// The argument counts seconds (EXPIRE, EXPIREAT), else ms.
    seconds: bool,
    /// The argument counts from now (EXPIRE, PEXPIRE), else from the Unix epoch.
    relative: bool,
}

impl Expire {
    const EXPIRE: Expire = Expire {
        name: "expire",
        seconds: true,
        relative: true,
    };
    const PEXPIRE: Expire = Expire {
        name: "pexpire",
        seconds: false,
        relative: true,
    };
    const EXPIREAT: Expire = Expire {
        name: "expireat",
        seconds: true,
        relative: false,
    };
    const PEXPIREAT: Expire = Expire {
        name: "pexpireat",
        seconds: false,
        relative: false,
    };

    /// EXPIRE.
    pub fn run_expire(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Expire::EXPIRE.apply(db, snapshot.now_ms, argv)
    }

    /// PEXPIRE.
    pub fn run_pexpire(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Expire::PEXPIRE.apply(db, snapshot.now_ms, argv)
    }

    /// EXPIREAT.
    pub fn run_expireat(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Expire::EXPIREAT.apply(db, snapshot.now_ms, argv)
    }

    /// PEXPIREAT.
    pub fn run_pexpireat(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Expire::PEXPIREAT.apply(db, snapshot.now_ms, argv)
    }

    /// The time `argv` asks for, absolute ms, at time `now_ms`.
    fn when(&self, argv: &[&[u8]], now_ms: u64) -> Result<i64> {
        let invalid = || Error::InvalidExpireTime(self.name);
        let mut when = parse_i64(argv[2])?;
        if self.seconds {
            when = when.checked_mul(1000).ok_or_else(invalid)?;
        }
        if self.relative {
            let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
            when = when.checked_add(now).ok_or_else(invalid)?;
        }
        Ok(when)
    }

    /// Parses and applies at time `now_ms`.
    pub fn apply(&self, db: &mut Db, now_ms: u64, argv: &[&[u8]]) -> Result<Reply> {
        let conditions = Conditions::parse(&argv[3..])?;
        let when = self.when(argv, now_ms)?;
        let key = argv[1];
        if db.get(key).is_none() {
            return Ok(Reply::Int(0));
        }
        let current = db
            .expiry(key)
            .map(|at| i64::try_from(at).unwrap_or(i64::MAX));
        if !conditions.allow(current, when) {
            return Ok(Reply::Int(0));
        }
        match u64::try_from(when).ok().filter(|&at| at > now_ms) {
            None => {
                db.remove(key);
                db.notify(GENERIC, "del", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![
                        Bytes::from_static(b"DEL"),
                        Bytes::copy_from_slice(key),
                    ]);
                }
            }
            Some(at) => {
                db.set_expiry(key, Some(at));
                db.notify(GENERIC, "expire", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(self.form(argv, at));
                }
            }
        }
        Ok(Reply::Int(1))
    }

    /// What a setter that set `at` propagates (see the module doc).
    fn form(&self, argv: &[&[u8]], at: u64) -> Vec<Bytes> {
        let rewritten = self.seconds || self.relative;
        argv.iter()
            .enumerate()
            .map(|(i, arg)| match i {
                0 if !is(arg, "pexpireat") => Bytes::from_static(b"PEXPIREAT"),
                2 if rewritten => Bytes::from(at.to_string()),
                _ => Bytes::copy_from_slice(arg),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> std::result::Result<Conditions, String> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        Conditions::parse(&args).map_err(|e| e.to_string())
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
        assert!(c(&["nx"]).allow(None, 5) && !c(&["nx"]).allow(Some(9), 5));
        assert!(!c(&["xx"]).allow(None, 5) && c(&["xx"]).allow(Some(9), 5));
        assert!(!c(&["gt"]).allow(None, 5) && c(&["gt"]).allow(Some(4), 5));
        assert!(!c(&["gt"]).allow(Some(5), 5));
        assert!(c(&["lt"]).allow(None, 5) && !c(&["lt"]).allow(Some(5), 5));
        assert!(c(&["lt"]).allow(Some(6), 5));
    }
}
