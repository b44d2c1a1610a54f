//! `SET key value [NX|XX|IFEQ v|IFNE v|IFDEQ d|IFDNE d] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`:
//! stores the string, replying OK (nil when a condition refused), or with GET the old string
//! (nil for none). IFEQ and IFDEQ need the key; on an existing key a condition is checked
//! against its string (WRONGTYPE for another type, a digest of the wrong length an error).
//!
//! Options are read left to right as Redis's `parseExtendedStringArgumentsOrReply` does
//! ([`Options`]): NX and XX exclude each other, as do KEEPTTL and the different expiry
//! options (the same one may repeat, the last winning); one without its value, or anything
//! else is `ERR syntax error`. Only then is the time read: not an integer is `ERR value is not
//! an integer or out of range`, at or below 0 or overflowing in ms `ERR invalid expire time in
//! 'set' command`. Then, with GET, the key is read (WRONGTYPE for another type). Nothing
//! changes on an error.
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

use super::digest_delex::Condition;
use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;

/// How SET's time was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
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
    /// SETNX's replies: 1 when stored, 0 when refused (instead of OK and nil).
    int_reply: bool,
    /// Where the value is in argv (3 for SETEX and PSETEX, 2 otherwise).
    value_index: usize,
    /// IFEQ, IFNE, IFDEQ or IFDNE and its argument.
    condition: Option<(Condition, Bytes)>,
}

impl Set {
    /// Parses the options (`argv[3..]`) at time `now_ms`: first the words, then the time.
    pub fn parse(argv: &[&[u8]], now_ms: u64) -> Result<Set> {
        let options = Options::parse(argv, 3, Grammar::Set)?;
        let expires_at = match options.expire {
            Some((arg, unit)) => Some((expire_at(arg, unit, now_ms, "set")?, unit)),
            None => None,
        };
        Ok(Set {
            nx: options.nx,
            xx: options.xx,
            get: options.get,
            keep_ttl: options.keep_ttl,
            expires_at,
            int_reply: false,
            value_index: 2,
            condition: options
                .condition
                .map(|(c, arg)| (c, Bytes::copy_from_slice(arg))),
        })
    }

    /// SETNX: SET NX replying 1 or 0.
    pub(crate) fn setnx() -> Set {
        Set {
            nx: true,
            int_reply: true,
            value_index: 2,
            ..Set::default()
        }
    }

    /// SETEX (`ms` false) or PSETEX (`ms` true): `argv[2]` the time, `argv[3]` the value.
    pub(crate) fn setex(argv: &[&[u8]], ms: bool, now_ms: u64) -> Result<Set> {
        let (unit, name) = if ms {
            (Unit::Px, "psetex")
        } else {
            (Unit::Ex, "setex")
        };
        Ok(Set {
            expires_at: Some((expire_at(argv[2], unit, now_ms, name)?, unit)),
            value_index: 3,
            ..Set::default()
        })
    }

    /// Applies the parsed SET of `argv` to `db` at time `now_ms`.
    pub fn apply(&self, db: &mut Db, argv: &[&[u8]], now_ms: u64) -> Result<Reply> {
        let (key, value) = (argv[1], argv[self.value_index]);
        if self.get {
            db.count_read(key, false);
        }
        // The old string matters only to GET's reply; another type is only "there". A SET
        // with neither GET nor a condition overwrites whatever is there, unread.
        let reads_old = self.get || self.nx || self.xx || self.condition.is_some();
        let old = match reads_old.then(|| db.get(key)).flatten() {
            None => None,
            Some(Value::String(s)) if self.get => Some(Some(s.to_bytes())),
            Some(Value::String(_)) => Some(None),
            Some(_) if self.get => return Err(Error::WrongType),
            Some(_) => Some(None),
        };
        let reply = |old: Option<Option<Bytes>>| match (self.get, old) {
            (true, Some(Some(s))) => Reply::Bulk(s),
            (true, _) => Reply::Null,
            (false, _) if self.int_reply => Reply::Int(1),
            (false, _) => Reply::OK,
        };
        let refused = |old| {
            Ok(match (self.get, self.int_reply) {
                (true, _) => reply(old),
                (false, true) => Reply::Int(0),
                (false, false) => Reply::Null,
            })
        };
        let needs_key = self.xx
            || matches!(
                self.condition,
                Some((Condition::Eq | Condition::DigestEq, _))
            );
        if (self.nx && old.is_some()) || (needs_key && old.is_none()) {
            return refused(old);
        }
        if let Some((condition, arg)) = &self.condition
            && old.is_some()
        {
            db.count_read(key, false);
            let Some(Value::String(current)) = db.get(key) else {
                return Err(Error::WrongType);
            };
            if !condition.holds(&current.bytes(), arg)? {
                return refused(old);
            }
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
        db.insert(key, Value::String(StringValue::from_arg(value)));
        // The insert left the key without an expiry.
        if ttl.is_some() {
            db.set_expiry(key, ttl);
        }
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
                let name = if argv.len() == 5 && is(argv[0], "set") {
                    copy(argv[0])
                } else {
                    Bytes::from_static(b"SET")
                };
                vec![
                    name,
                    copy(argv[1]),
                    copy(argv[self.value_index]),
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

/// The absolute time (Unix ms) an expiry argument `arg` given in `unit` names at `now_ms`, as
/// Redis's `getExpireMillisecondsOrReply`: not an integer is `ERR value is not an integer or
/// out of range`; at or below 0, or overflowing in ms, is `ERR invalid expire time in
/// '<command>' command`.
pub(crate) fn expire_at(arg: &[u8], unit: Unit, now_ms: u64, command: &'static str) -> Result<u64> {
    let n = parse_i64(arg)?;
    let invalid = || Error::InvalidExpireTime(command);
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
    // Redis keeps the time in an i64.
    at.filter(|&at| at <= i64::MAX as u64).ok_or_else(invalid)
}

/// Which command's options [`Options::parse`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grammar {
    /// SET: all but PERSIST.
    Set,
    /// GETEX: the times and PERSIST.
    GetEx,
    /// MSETEX: NX, XX, KEEPTTL and the times.
    MSetEx,
}

/// The words of SET's, GETEX's or MSETEX's options as Redis's
/// `parseExtendedStringArgumentsOrReply` reads them, left to right: NX and XX exclude each
/// other; KEEPTTL (SET), PERSIST (GETEX) and the four time options exclude one another but
/// one may repeat (the last time wins); a time option needs a following argument; anything
/// else is `ERR syntax error`. The time itself is read later, by the command.
#[derive(Debug, Default)]
pub(crate) struct Options<'a> {
    /// NX.
    pub nx: bool,
    /// XX.
    pub xx: bool,
    /// GET.
    pub get: bool,
    /// KEEPTTL.
    pub keep_ttl: bool,
    /// PERSIST.
    pub persist: bool,
    /// The time argument and its unit.
    pub expire: Option<(&'a [u8], Unit)>,
    /// Where the last time option's keyword is in argv.
    pub expire_index: usize,
    /// IFEQ, IFNE, IFDEQ or IFDNE (SET) and its argument.
    pub condition: Option<(Condition, &'a [u8])>,
}

impl<'a> Options<'a> {
    /// Parses `argv[from..]`.
    pub(crate) fn parse(argv: &[&'a [u8]], from: usize, grammar: Grammar) -> Result<Options<'a>> {
        let set = grammar == Grammar::Set;
        let for_set = grammar != Grammar::GetEx;
        let mut o = Options::default();
        let mut i = from;
        while i < argv.len() {
            let arg = argv[i];
            let next = argv.get(i + 1).copied();
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
            let other_time = |u: Unit| matches!(o.expire, Some((_, was)) if was != u);
            let condition = Condition::named(arg).filter(|_| set);
            // A condition excludes NX, XX and the other conditions (but may repeat); NX
            // checks only XX, as Redis does.
            let other_condition =
                |c: Condition| o.nx || o.xx || matches!(o.condition, Some((was, _)) if was != c);
            if let (Some(c), Some(value)) = (condition, next)
                && !other_condition(c)
            {
                o.condition = Some((c, value));
                i += 1;
            } else if for_set && is(arg, "nx") && !o.xx {
                o.nx = true;
            } else if for_set && is(arg, "xx") && !o.nx && o.condition.is_none() {
                o.xx = true;
            } else if set && is(arg, "get") {
                o.get = true;
            } else if for_set && is(arg, "keepttl") && !o.persist && o.expire.is_none() {
                o.keep_ttl = true;
            } else if !for_set && is(arg, "persist") && !o.keep_ttl && o.expire.is_none() {
                o.persist = true;
            } else if let (Some(unit), Some(value)) = (unit, next)
                && !o.keep_ttl
                && !o.persist
                && !other_time(unit)
            {
                o.expire = Some((value, unit));
                o.expire_index = i;
                i += 1;
            } else {
                return Err(Error::Syntax);
            }
            i += 1;
        }
        Ok(o)
    }
}
