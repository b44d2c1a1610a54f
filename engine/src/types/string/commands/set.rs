//! `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`: stores the string,
//! replying OK (nil when NX or XX refused), or with GET the old string (nil for none).
//!
//! Options are read left to right as Redis's `parseExtendedStringArgumentsOrReply` does: NX
//! and XX exclude each other, as do the expiry options; a repeated expiry option, one without
//! its value, or anything else is `ERR syntax error`; a non-integer time is `ERR value is not
//! an integer or out of range`, a time at or below 0 or one whose ms overflow is `ERR invalid
//! expire time in 'set' command`. Then, with GET, the key is read (WRONGTYPE for another
//! type). Nothing changes on an error.
//!
//! Effects as Redis 8.8's `setGenericCommand`:
//! - stored: `new` or `overwritten` (and `type_changed`) as any key stored, `set`, then
//!   `expire` when a time was given; WATCH touched; 1 change; propagated as
//!   `SET key value PXAT ms` when EX, PX or EXAT gave the time (in place, keeping the name as
//!   sent, when the call was exactly `SET key value EX|PX|EXAT n`), else verbatim without its
//!   GET arguments (verbatim with them after PXAT, as Redis);
//! - an EXAT or PXAT already past: the new value is born expired, so only an old key goes,
//!   firing `del`, counting 1 and propagated as `DEL key`; with no old key nothing changes;
//! - NX or XX refused: nothing.
//!
//! GET counts as a read lookup.

use bytes::Bytes;

use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;

/// How SET's time was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// EX: seconds from now.
    Ex,
    /// PX: ms from now.
    Px,
    /// EXAT: Unix seconds.
    ExAt,
    /// PXAT: Unix ms.
    PxAt,
}

/// A parsed SET.
#[derive(Debug, Default)]
pub struct Set {
    /// NX: only if the key is missing.
    nx: bool,
    /// XX: only if the key exists.
    xx: bool,
    /// GET: reply the old string.
    get: bool,
    /// KEEPTTL: keep the key's time.
    keep_ttl: bool,
    /// The time the value expires (Unix ms), and how it was given.
    expires_at: Option<(u64, Unit)>,
}

impl Set {
    /// Parses the options (`argv[3..]`) at time `now_ms`.
    pub fn parse(argv: &[&[u8]], now_ms: u64) -> Result<Set> {
        let mut set = Set::default();
        let mut i = 3;
        while i < argv.len() {
            let arg = argv[i];
            let expiry_given = set.expires_at.is_some() || set.keep_ttl;
            let unit = if is(arg, "ex") {
                Some(Unit::Ex)
            } else if is(arg, "px") {
                Some(Unit::Px)
            } else if is(arg, "exat") {
                Some(Unit::ExAt)
            } else if is(arg, "pxat") {
                Some(Unit::PxAt)
            } else {
                None
            };
            if is(arg, "nx") && !set.xx {
                set.nx = true;
            } else if is(arg, "xx") && !set.nx {
                set.xx = true;
            } else if is(arg, "get") {
                set.get = true;
            } else if is(arg, "keepttl") && !expiry_given {
                set.keep_ttl = true;
            } else if let Some(unit) = unit
                && !expiry_given
                && let Some(value) = argv.get(i + 1)
            {
                let n = parse_i64(value)?;
                let invalid = || Error::InvalidExpireTime("set");
                let n = u64::try_from(n)
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(invalid)?;
                let at = match unit {
                    Unit::Ex => n.checked_mul(1000).and_then(|ms| ms.checked_add(now_ms)),
                    Unit::Px => n.checked_add(now_ms),
                    Unit::ExAt => n.checked_mul(1000),
                    Unit::PxAt => Some(n),
                };
                set.expires_at = Some((at.ok_or_else(invalid)?, unit));
                i += 1;
            } else {
                return Err(Error::Syntax);
            }
            i += 1;
        }
        Ok(set)
    }

    /// Applies the parsed SET of `argv` to `db` at time `now_ms`.
    pub fn apply(&self, db: &mut Db, argv: &[&[u8]], now_ms: u64) -> Result<Reply> {
        let (key, value) = (argv[1], argv[2]);
        if self.get {
            db.count_read(key, false);
        }
        // The old string matters only to GET's reply; another type is only "there".
        let old = match db.get(key) {
            None => None,
            Some(Value::String(s)) if self.get => Some(Some(s.clone())),
            Some(Value::String(_)) => Some(None),
            Some(_) if self.get => return Err(Error::WrongType),
            Some(_) => Some(None),
        };
        let reply = |old: Option<Option<Bytes>>| match (self.get, old) {
            (true, Some(Some(s))) => Reply::Bulk(s),
            (true, _) => Reply::Null,
            (false, _) => Reply::OK,
        };
        if (self.nx && old.is_some()) || (self.xx && old.is_none()) {
            return Ok(if self.get { reply(old) } else { Reply::Null });
        }
        if let Some((at, _)) = self.expires_at
            && at <= now_ms
        {
            if db.remove(key).is_some() {
                db.notify(GENERIC, "del", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![
                        Bytes::from_static(b"DEL"),
                        Bytes::copy_from_slice(key),
                    ]);
                }
            }
            return Ok(reply(old));
        }
        let ttl = match self.expires_at {
            Some((at, _)) => Some(at),
            None if self.keep_ttl => db.expiry(key),
            None => None,
        };
        db.insert(
            Bytes::copy_from_slice(key),
            Value::String(Bytes::copy_from_slice(value)),
        );
        db.set_expiry(key, ttl);
        db.notify(STRING, "set", key);
        if self.expires_at.is_some() {
            db.notify(GENERIC, "expire", key);
        }
        db.add_dirty(1);
        if db.propagating() {
            db.propagate(self.form(argv));
        }
        Ok(reply(old))
    }

    /// What a SET that stored propagates (see the module doc).
    fn form(&self, argv: &[&[u8]]) -> Vec<Bytes> {
        let copy = |a: &[u8]| Bytes::copy_from_slice(a);
        match self.expires_at {
            Some((at, unit)) if unit != Unit::PxAt => {
                let name = if argv.len() == 5 {
                    copy(argv[0])
                } else {
                    Bytes::from_static(b"SET")
                };
                vec![
                    name,
                    copy(argv[1]),
                    copy(argv[2]),
                    Bytes::from_static(b"PXAT"),
                    Bytes::from(at.to_string()),
                ]
            }
            None if self.get => argv
                .iter()
                .enumerate()
                .filter(|&(i, a)| i < 3 || !is(a, "get"))
                .map(|(_, a)| copy(a))
                .collect(),
            _ => argv.iter().map(|a| copy(a)).collect(),
        }
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Set::parse(argv, snapshot.now_ms)?.apply(db, argv, snapshot.now_ms)
    }
}
