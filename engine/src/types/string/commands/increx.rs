//! `INCREX key [BYFLOAT increment | BYINT increment] [LBOUND lower] [UBOUND upper]
//! [SATURATE] [EX s | PX ms | EXAT s | PXAT ms | PERSIST] [ENX]` (Redis 8.8): INCR or
//! INCRBYFLOAT kept within bounds, that may also set or clear the key's time. Replies
//! `[value, applied increment]` (integers, or doubles with BYFLOAT).
//!
//! The options are read left to right as Redis's `parseIncrExArgumentsOrReply`: each at most
//! once (BYINT and BYFLOAT exclude each other, as do the times and PERSIST, and PERSIST and
//! ENX), one missing its value, or anything else, is `ERR syntax error`; the increment is read
//! as it is met (`ERR Increment is not an integer or out of range`, `ERR Increment is not a
//! valid float`, `ERR BYFLOAT increment cannot be Infinity`). After the loop the bounds are
//! read as the increment's type (`ERR LBOUND is not ...`, `ERR UBOUND is not ...`), then
//! `ERR LBOUND can't be greater than UBOUND`, `ERR ENX flag requires an expiration`, then the
//! time (as SET's, `'increx'`). Then the key: WRONGTYPE, the value as INCRBY's or
//! INCRBYFLOAT's, `ERR value cannot be Infinity`.
//!
//! A result past a bound (or overflowing the type) is refused, replying `[current, 0]` and
//! changing nothing, unless SATURATE clamps it to the bound (to the type's limit without
//! one). A clamped result whose increment from the current value overflows is `ERR applied
//! increment would overflow` (`would be Infinity` for floats), changing nothing.
//!
//! Effects as Redis 8.8's `increxCommand`: a time already past deletes the key (firing `del`,
//! 1 change, propagated as `DEL key`) and creates nothing; otherwise the value is stored
//! (`int` for BYINT, as INCRBYFLOAT's for BYFLOAT; a new key fires `new`), WATCH touched,
//! 1 change, `incrby` (`incrbyfloat`) fired, then `persist` when PERSIST removed a time,
//! `expire` when a time was set (ENX sets one only on a key without). Propagated as
//! `SET key value` with PERSIST, `SET key value PXAT ms` when a time was set, else
//! `SET key value KEEPTTL`.

use std::cmp::Ordering;

use bytes::Bytes;

use super::incrbyfloat::parse_float;
use super::set::{Unit, expire_at};
use crate::command::args::is;
use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, STRING};
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::StringValue;
use crate::types::string::long_double::{LongDouble, NotFinite};

/// A float bound: a long double or an infinity (which a bound may be, unlike the
/// increment).
#[derive(Debug, Clone, Copy)]
enum Float {
    NegInf,
    Finite(LongDouble),
    PosInf,
}

impl Float {
    fn cmp(self, other: Float) -> Ordering {
        let rank = |f: Float| match f {
            Float::NegInf => 0,
            Float::Finite(_) => 1,
            Float::PosInf => 2,
        };
        match (self, other) {
            (Float::Finite(a), Float::Finite(b)) => a.cmp_value(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

/// Reads a float bound as `string2ld`, an infinity allowed.
fn parse_bound(arg: &[u8], message: &'static str) -> Result<Float> {
    match parse_float(arg).map_err(|_| Error::Text(message))? {
        Ok(x) => Ok(Float::Finite(x)),
        Err(_) if arg.first() == Some(&b'-') => Ok(Float::NegInf),
        Err(_) => Ok(Float::PosInf),
    }
}

/// A parsed INCREX.
#[derive(Debug)]
struct Options {
    by_float: Option<LongDouble>,
    by_int: i64,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    saturate: bool,
    enx: bool,
    persist: bool,
    expire: Option<(Unit, Vec<u8>)>,
}

impl Options {
    fn parse(argv: &[&[u8]]) -> Result<Options> {
        let mut o = Options {
            by_float: None,
            by_int: 1,
            lower: None,
            upper: None,
            saturate: false,
            enx: false,
            persist: false,
            expire: None,
        };
        let mut by_given = false;
        let mut j = 2;
        while j < argv.len() {
            let opt = argv[j];
            let next = argv.get(j + 1).copied();
            let timed = o.expire.is_some() || o.persist;
            match next {
                Some(n) if is(opt, "byint") && !by_given => {
                    o.by_int = parse_i64(n)
                        .map_err(|_| Error::Text("Increment is not an integer or out of range"))?;
                    by_given = true;
                    j += 1;
                }
                Some(n) if is(opt, "byfloat") && !by_given => {
                    let by = parse_float(n)
                        .map_err(|_| Error::Text("Increment is not a valid float"))?;
                    let by = by.map_err(|_| Error::Text("BYFLOAT increment cannot be Infinity"))?;
                    o.by_float = Some(by);
                    by_given = true;
                    j += 1;
                }
                Some(n) if is(opt, "lbound") && o.lower.is_none() => {
                    o.lower = Some(n.to_vec());
                    j += 1;
                }
                Some(n) if is(opt, "ubound") && o.upper.is_none() => {
                    o.upper = Some(n.to_vec());
                    j += 1;
                }
                _ if is(opt, "saturate") && !o.saturate => o.saturate = true,
                _ if is(opt, "enx") && !o.enx && !o.persist => o.enx = true,
                _ if is(opt, "persist") && !timed && !o.enx => o.persist = true,
                Some(n) if !timed && unit_of(opt).is_some() => {
                    o.expire = unit_of(opt).map(|u| (u, n.to_vec()));
                    j += 1;
                }
                _ => return Err(Error::Syntax),
            }
            j += 1;
        }
        Ok(o)
    }
}

fn unit_of(opt: &[u8]) -> Option<Unit> {
    [
        ("ex", Unit::Ex),
        ("px", Unit::Px),
        ("exat", Unit::ExAt),
        ("pxat", Unit::PxAt),
    ]
    .into_iter()
    .find(|(name, _)| is(opt, name))
    .map(|(_, u)| u)
}

/// The outcome of the arithmetic: the reply, and the value to store (None when refused).
struct Outcome {
    reply: Reply,
    store: Option<StringValue>,
}

/// INCREX.
#[derive(Debug)]
pub struct Increx;

impl Increx {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let o = Options::parse(argv)?;
        let float_bounds = match o.by_float {
            Some(_) => {
                let lower = match &o.lower {
                    Some(b) => parse_bound(b, "LBOUND is not a valid float")?,
                    None => Float::Finite(LongDouble::MAX.neg()),
                };
                let upper = match &o.upper {
                    Some(b) => parse_bound(b, "UBOUND is not a valid float")?,
                    None => Float::Finite(LongDouble::MAX),
                };
                if lower.cmp(upper) == Ordering::Greater {
                    return Err(Error::Text("LBOUND can't be greater than UBOUND"));
                }
                Some((lower, upper))
            }
            None => None,
        };
        let mut int_bounds = (i64::MIN, i64::MAX);
        if float_bounds.is_none() {
            if let Some(b) = &o.lower {
                int_bounds.0 = parse_i64(b)
                    .map_err(|_| Error::Text("LBOUND is not an integer or out of range"))?;
            }
            if let Some(b) = &o.upper {
                int_bounds.1 = parse_i64(b)
                    .map_err(|_| Error::Text("UBOUND is not an integer or out of range"))?;
            }
            if int_bounds.0 > int_bounds.1 {
                return Err(Error::Text("LBOUND can't be greater than UBOUND"));
            }
        }
        if o.enx && o.expire.is_none() && !o.persist {
            return Err(Error::Text("ENX flag requires an expiration"));
        }
        let expire_ms = match &o.expire {
            Some((unit, arg)) => Some(expire_at(arg, *unit, snapshot.now_ms, "increx")?),
            None => None,
        };
        let current = match db.get(key) {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(Error::WrongType),
        };
        let outcome = match (o.by_float, float_bounds) {
            (Some(by), Some((lower, upper))) => {
                float_step(current.as_ref(), by, lower, upper, o.saturate)?
            }
            _ => int_step(current.as_ref(), o.by_int, int_bounds, o.saturate)?,
        };
        let Some(value) = outcome.store else {
            return Ok(outcome.reply);
        };
        let existed = current.is_some();
        let has_expiry = existed && db.expiry(key).is_some();
        let new_expire = expire_ms.filter(|_| !o.enx || !has_expiry);
        if let Some(at) = new_expire
            && at <= snapshot.now_ms
        {
            if existed && db.remove(key).is_some() {
                db.notify(GENERIC, "del", key);
                db.add_dirty(1);
                if db.propagating() {
                    db.propagate(vec![
                        Bytes::from_static(b"DEL"),
                        Bytes::copy_from_slice(key),
                    ]);
                }
            }
            return Ok(outcome.reply);
        }
        let text = value.to_bytes();
        db.replace_value(key, Value::String(value));
        let mut persisted = false;
        let mut form = vec![
            Bytes::from_static(b"SET"),
            Bytes::copy_from_slice(key),
            text,
        ];
        if o.persist {
            persisted = db.persist(key);
        } else if let Some(at) = new_expire {
            db.set_expiry(key, Some(at));
            form.push(Bytes::from_static(b"PXAT"));
            form.push(Bytes::from(at.to_string()));
        } else {
            form.push(Bytes::from_static(b"KEEPTTL"));
        }
        db.touch(key);
        db.add_dirty(1);
        let event = if o.by_float.is_some() {
            "incrbyfloat"
        } else {
            "incrby"
        };
        db.notify(STRING, event, key);
        if persisted {
            db.notify(GENERIC, "persist", key);
        }
        if new_expire.is_some() && !o.persist {
            db.notify(GENERIC, "expire", key);
        }
        if db.propagating() {
            db.propagate(form);
        }
        Ok(outcome.reply)
    }
}

/// BYINT (or the default increment of 1).
fn int_step(
    current: Option<&StringValue>,
    by: i64,
    (lower, upper): (i64, i64),
    saturate: bool,
) -> Result<Outcome> {
    let old = match current {
        None => 0,
        Some(s) => match s.as_int() {
            Some(n) => n,
            None => parse_i64(&s.bytes())?,
        },
    };
    let sum = old.checked_add(by);
    let value = match sum {
        Some(v) if (lower..=upper).contains(&v) => v,
        _ if !saturate => {
            return Ok(Outcome {
                reply: Reply::Array(vec![Reply::Int(old), Reply::Int(0)]),
                store: None,
            });
        }
        None if by >= 0 => upper,
        None => lower,
        Some(v) if v > upper => upper,
        Some(_) => lower,
    };
    let delta = value
        .checked_sub(old)
        .ok_or(Error::Text("applied increment would overflow"))?;
    Ok(Outcome {
        reply: Reply::Array(vec![Reply::Int(value), Reply::Int(delta)]),
        store: Some(StringValue::from_int(value)),
    })
}

/// A long double's reply, as `addReplyHumanLongDouble`.
fn double(x: LongDouble) -> Reply {
    Reply::Double(Bytes::from(x.to_human()))
}

/// BYFLOAT.
fn float_step(
    current: Option<&StringValue>,
    by: LongDouble,
    lower: Float,
    upper: Float,
    saturate: bool,
) -> Result<Outcome> {
    let old = match current {
        None => LongDouble::ZERO,
        Some(s) => parse_float(&s.bytes())?.map_err(|_| Error::Text("value cannot be Infinity"))?,
    };
    let sum = match old.add(by) {
        Ok(x) => Float::Finite(x),
        Err(NotFinite::Underflow) => Float::Finite(LongDouble::ZERO),
        Err(NotFinite::Infinite) => Float::PosInf,
    };
    let overflow = matches!(sum, Float::PosInf);
    let out_of_range =
        overflow || sum.cmp(upper) == Ordering::Greater || sum.cmp(lower) == Ordering::Less;
    let value = if !out_of_range {
        sum
    } else if !saturate {
        return Ok(Outcome {
            reply: Reply::Array(vec![double(old), double(LongDouble::ZERO)]),
            store: None,
        });
    } else if overflow {
        if by.cmp_value(LongDouble::ZERO) != Ordering::Less {
            upper
        } else {
            lower
        }
    } else if sum.cmp(upper) == Ordering::Greater {
        upper
    } else {
        lower
    };
    let infinite = Error::Text("applied increment would be Infinity");
    let Float::Finite(value) = value else {
        return Err(infinite);
    };
    let delta = match value.add(old.neg()) {
        Ok(d) => d,
        Err(NotFinite::Underflow) => LongDouble::ZERO,
        Err(NotFinite::Infinite) => return Err(infinite),
    };
    Ok(Outcome {
        reply: Reply::Array(vec![double(value), double(delta)]),
        store: Some(StringValue::created(value.to_human().as_bytes())),
    })
}
