//! `HGETEX key [EX seconds | PX ms | EXAT unix-seconds | PXAT unix-ms | PERSIST] FIELDS
//! numfields field [field ...]`: HMGET that also sets or removes the fields' expiry.
//!
//! Errors, in Redis 8.8's order: WRONGTYPE, then the options left to right
//! ([`parse_field_options`]). A missing key replies nil per field.
//!
//! Effects as Redis's `hgetexCommand`: an expired field read is deleted (HDEL propagated);
//! then one change per field whose expiry changed or that was deleted (a time not in the
//! future deletes), WATCH touched, `hexpired`, then `hpersist` or `hexpire` (propagated as
//! `HPERSIST key FIELDS n field...` or `HPEXPIREAT key <unix ms> FIELDS n field...` naming
//! every field given) or, when fields were only deleted, `hdel`; a hash left empty is deleted
//! (`del`).

use bytes::Bytes;

use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::HASH;
use crate::reply::Reply;

use super::expiry::{FieldRead, Lazy, read_field};
use super::hexpire::{Cond, SetEx, parse_time, set_field_expiry};
use super::{hash_mut, owned, read_hash, remove_if_empty, track_ttls};

/// The expiry option of HGETEX and HSETEX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExpiryOpt {
    /// None given.
    None,
    /// An absolute time (ms); `pxat` says it was given as PXAT, `pos` is where its value is.
    At { ms: u64, pxat: bool, pos: usize },
    /// PERSIST (HGETEX).
    Persist,
    /// KEEPTTL (HSETEX).
    KeepTtl,
}

/// HSETEX's field condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldCond {
    None,
    Fxx,
    Fnx,
}

/// Parsed HGETEX / HSETEX options.
pub(crate) struct FieldOptions<'a> {
    pub(crate) expiry: ExpiryOpt,
    pub(crate) cond: FieldCond,
    /// The field arguments (pairs for HSETEX).
    pub(crate) fields: &'a [&'a [u8]],
    /// The count of fields.
    pub(crate) count: usize,
}

/// Reads HGETEX's (`setex` false) or HSETEX's options as Redis's `parseHashFieldExpireArgs`.
pub(crate) fn parse_field_options<'a>(
    argv: &'a [&'a [u8]],
    setex: bool,
    now_ms: u64,
    name: &'static str,
) -> Result<FieldOptions<'a>> {
    let mut opts = FieldOptions {
        expiry: ExpiryOpt::None,
        cond: FieldCond::None,
        fields: &[],
        count: 0,
    };
    let mut have_fields = false;
    let per_field = if setex { 2 } else { 1 };
    let one_of = if setex {
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    } else {
        "Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified"
    };
    let mut i = 2;
    while i < argv.len() {
        let arg = argv[i];
        if is(arg, "fields") {
            if have_fields {
                return Err(Error::Text("FIELDS keyword specified multiple times"));
            }
            if i + 1 >= argv.len() {
                return Err(Error::WrongArity(name.to_string()));
            }
            let bad = Error::Text("invalid number of fields");
            let n = crate::command::parse_i64(argv[i + 1]).map_err(|_| bad.clone())?;
            if !(1..=i64::from(i32::MAX)).contains(&n) {
                return Err(bad);
            }
            let first = i + 2;
            let n = n as usize;
            if first + n * per_field > argv.len() {
                return Err(Error::Text("wrong number of arguments"));
            }
            have_fields = true;
            opts.fields = &argv[first..first + n * per_field];
            opts.count = n;
            i = first + n * per_field;
            continue;
        }
        let time = [
            ("ex", 1000, true),
            ("px", 1, true),
            ("exat", 1000, false),
            ("pxat", 1, false),
        ]
        .into_iter()
        .find(|(w, _, _)| is(arg, w));
        if let Some((word, unit, relative)) = time {
            if !matches!(opts.expiry, ExpiryOpt::None) {
                return Err(Error::Text(one_of));
            }
            if i + 1 >= argv.len() {
                return Err(Error::Text("missing expire time"));
            }
            let base = if relative { now_ms } else { 0 };
            let ms = parse_time(argv[i + 1], unit, base, name)?;
            opts.expiry = ExpiryOpt::At {
                ms,
                pxat: word == "pxat",
                pos: i + 1,
            };
            i += 2;
        } else if !setex && is(arg, "persist") {
            if !matches!(opts.expiry, ExpiryOpt::None) {
                return Err(Error::Text(one_of));
            }
            opts.expiry = ExpiryOpt::Persist;
            i += 1;
        } else if setex && is(arg, "keepttl") {
            if !matches!(opts.expiry, ExpiryOpt::None) {
                return Err(Error::Text(one_of));
            }
            opts.expiry = ExpiryOpt::KeepTtl;
            i += 1;
        } else if setex && (is(arg, "fxx") || is(arg, "fnx")) {
            if opts.cond != FieldCond::None {
                return Err(Error::Text(
                    "Only one of FXX or FNX arguments can be specified",
                ));
            }
            opts.cond = if is(arg, "fxx") {
                FieldCond::Fxx
            } else {
                FieldCond::Fnx
            };
            i += 1;
        } else {
            return Err(Error::UnknownArgument(crate::error::shown(arg)));
        }
    }
    if !have_fields {
        return Err(Error::Text("missing FIELDS argument"));
    }
    Ok(opts)
}

/// HGETEX.
#[derive(Debug)]
pub struct HGetEx;

impl HGetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, s: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let exists = read_hash(db, key)?.is_some();
        let opts = parse_field_options(argv, false, s.now_ms, "hgetex")?;
        if !exists {
            return Ok(Reply::Array(vec![Reply::Null; opts.count]));
        }
        if opts.expiry != ExpiryOpt::None
            && let Some(hash) = hash_mut(db, key)?
        {
            hash.enable_ttls();
        }
        let mut out = Vec::with_capacity(opts.count);
        let mut expired: Vec<&[u8]> = Vec::new();
        let mut deleted: Vec<&[u8]> = Vec::new();
        let mut updated: Vec<&[u8]> = Vec::new();
        for field in opts.fields {
            match read_field(db, key, field, Lazy::DEFERRED) {
                FieldRead::Found(v) => {
                    out.push(Reply::Bulk(v));
                    match opts.expiry {
                        ExpiryOpt::Persist => {
                            if let Some(hash) = hash_mut(db, key)?
                                && hash.get(field).is_some_and(|f| f.1.is_some())
                            {
                                hash.set_expiry(field, None);
                                updated.push(field);
                            }
                        }
                        ExpiryOpt::At { ms, .. } => {
                            match set_field_expiry(db, key, field, ms, Cond::None) {
                                SetEx::Set => updated.push(field),
                                SetEx::Deleted => deleted.push(field),
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
                FieldRead::Expired | FieldRead::ExpiredHash => {
                    expired.push(field);
                    out.push(Reply::Null);
                }
                FieldRead::Missing => out.push(Reply::Null),
            }
        }
        if expired.is_empty() && deleted.is_empty() && updated.is_empty() {
            return Ok(Reply::Array(out));
        }
        db.add_dirty((deleted.len() + updated.len()) as u64);
        db.touch(key);
        if !expired.is_empty() {
            db.notify_subkeys(HASH, "hexpired", key, &expired);
        }
        if !updated.is_empty() {
            let mut form = match opts.expiry {
                ExpiryOpt::At { ms, .. } => {
                    db.notify_subkeys(HASH, "hexpire", key, &updated);
                    vec![
                        Bytes::from_static(b"HPEXPIREAT"),
                        Bytes::copy_from_slice(key),
                        Bytes::from(ms.to_string()),
                    ]
                }
                _ => {
                    db.notify_subkeys(HASH, "hpersist", key, &updated);
                    vec![Bytes::from_static(b"HPERSIST"), Bytes::copy_from_slice(key)]
                }
            };
            if db.propagating() {
                form.push(Bytes::from_static(b"FIELDS"));
                form.push(Bytes::from(opts.count.to_string()));
                form.extend(owned(opts.fields));
                db.propagate(form);
            }
        } else if !deleted.is_empty() {
            db.notify_subkeys(HASH, "hdel", key, &deleted);
        }
        remove_if_empty(db, key);
        track_ttls(db, key);
        Ok(Reply::Array(out))
    }
}
