//! `HEXPIRE key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]`, HPEXPIRE
//! (milliseconds), HEXPIREAT and HPEXPIREAT (Unix times), and `HPERSIST key FIELDS numfields
//! field [field ...]`.
//!
//! Errors, in Redis 8.8's order (`hexpireGenericCommand`): WRONGTYPE; the time (the integer
//! error, `ERR invalid expire time, must be >= 0`, then past 2^46 ms `ERR invalid expire time
//! in '<command>' command`); the arguments after it, left to right: FIELDS twice (`ERR FIELDS
//! keyword specified multiple times`), FIELDS without room for a field (`ERR FIELDS requires
//! at least numfields and one field argument`), a count not from 1 to `i32::MAX` (`ERR
//! Parameter `numFields` should be greater than 0`), more fields counted than given (`ERR wrong
//! number of arguments`), an unknown word (`ERR unknown argument: <word>`); then no FIELDS
//! (`ERR missing FIELDS argument`), then two conditions (`ERR Multiple condition flags
//! specified`).
//!
//! Each field replies -2 (no such field), 0 (the condition failed), 1 (set) or 2 (deleted:
//! the time is not in the future). A field without expiry counts as an infinite TTL for GT
//! and LT. A missing key replies -2 per field. Any call on a listpack makes it listpackex.
//!
//! Effects as Redis: deletions propagated as `HDEL key field` as they happen; then, if a
//! field changed, one change per field, WATCH touched, `hdel` fired for the deleted and
//! `hexpire` for the set; a hash left empty is deleted (`del`). When a field was set, the
//! command propagates as `HPEXPIREAT key <unix ms> ...` naming only the fields set.
//!
//! HPERSIST: WRONGTYPE, then the FIELDS block as HTTL's; each field replies -2 (missing or
//! expired), -1 (no expiry) or 1 (expiry removed). When one was: `hpersist` fired, WATCH
//! touched, 1 change, propagated verbatim.

use bytes::Bytes;

use crate::command::parse_i64;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, HASH};
use crate::reply::Reply;
use crate::types::hash::API_EXPIRE_TIME_MAX_MS;

use super::expiry::propagate_deletion;
use super::{fields_block, hash_mut, owned, read_hash, track_ttls};

/// An HEXPIRE-family condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cond {
    None,
    Nx,
    Xx,
    Gt,
    Lt,
}

/// What setting one field's expiry did (the reply integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetEx {
    NoField = -2,
    NotMet = 0,
    Set = 1,
    Deleted = 2,
}

/// Reads a time argument as Redis's `parseExpireTime`: an absolute Unix time in ms, from
/// `base_ms` (0 for the AT forms) plus the value in `unit_ms`.
pub(crate) fn parse_time(
    arg: &[u8],
    unit_ms: u64,
    base_ms: u64,
    name: &'static str,
) -> Result<u64> {
    let val = parse_i64(arg)?;
    let val = u64::try_from(val).map_err(|_| Error::Text("invalid expire time, must be >= 0"))?;
    if unit_ms == 1000 && val > API_EXPIRE_TIME_MAX_MS / 1000 {
        return Err(Error::InvalidExpireTime(name));
    }
    let val = val * unit_ms;
    if val > API_EXPIRE_TIME_MAX_MS.saturating_sub(base_ms) {
        return Err(Error::InvalidExpireTime(name));
    }
    Ok(val + base_ms)
}

/// Sets `field`'s expiry to `at` under `cond` in the hash under `key` (Redis's
/// `hashTypeSetEx`); a time not in the future deletes the field (propagated as HDEL).
pub(crate) fn set_field_expiry(
    db: &mut Db,
    key: &[u8],
    field: &[u8],
    at: u64,
    cond: Cond,
) -> SetEx {
    let now = db.now_ms();
    let Ok(Some(hash)) = hash_mut(db, key) else {
        return SetEx::NoField;
    };
    let Some((_, prev)) = hash.get(field) else {
        return SetEx::NoField;
    };
    match prev {
        None if matches!(cond, Cond::Xx | Cond::Gt) => return SetEx::NotMet,
        Some(prev)
            if cond == Cond::Nx
                || (cond == Cond::Gt && prev >= at)
                || (cond == Cond::Lt && prev <= at) =>
        {
            return SetEx::NotMet;
        }
        // A table leaves an unchanged time alone, even a past one (Redis's
        // `hashTypeSetExpiryHT` returns before its past-time check).
        Some(prev) if prev == at && hash.is_table() => return SetEx::Set,
        _ => {}
    }
    if at <= now {
        hash.remove(field);
        propagate_deletion(db, key, field);
        db.stats.expired_subkeys += 1;
        return SetEx::Deleted;
    }
    hash.set_expiry(field, Some(at));
    db.track_hash_ttls(key);
    SetEx::Set
}

/// HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT.
#[derive(Debug)]
pub struct HExpire;

/// A parsed HEXPIRE-family call.
struct Parsed<'a> {
    at: u64,
    cond: Cond,
    /// Where the count argument is.
    count_at: usize,
    fields: &'a [&'a [u8]],
}

impl HExpire {
    fn parse<'a>(
        argv: &'a [&'a [u8]],
        unit_ms: u64,
        base_ms: u64,
        name: &'static str,
    ) -> Result<Parsed<'a>> {
        let at = parse_time(argv[2], unit_ms, base_ms, name)?;
        let mut fields: Option<(usize, &[&[u8]])> = None;
        let mut conds = 0;
        let mut cond = Cond::None;
        let mut i = 3;
        while i < argv.len() {
            let arg = argv[i];
            if arg.eq_ignore_ascii_case(b"fields") {
                if fields.is_some() {
                    return Err(Error::Text("FIELDS keyword specified multiple times"));
                }
                if i + 2 >= argv.len() {
                    return Err(Error::Text(
                        "FIELDS requires at least numfields and one field argument",
                    ));
                }
                let bad = Error::Text("Parameter `numFields` should be greater than 0");
                let n = parse_i64(argv[i + 1]).map_err(|_| bad.clone())?;
                if !(1..=i64::from(i32::MAX)).contains(&n) {
                    return Err(bad);
                }
                let first = i + 2;
                let n = n as usize;
                if n > argv.len() - first {
                    return Err(Error::Text("wrong number of arguments"));
                }
                fields = Some((i + 1, &argv[first..first + n]));
                i = first + n;
                continue;
            }
            let c = [
                ("nx", Cond::Nx),
                ("xx", Cond::Xx),
                ("gt", Cond::Gt),
                ("lt", Cond::Lt),
            ]
            .into_iter()
            .find(|(w, _)| arg.eq_ignore_ascii_case(w.as_bytes()));
            match c {
                Some((_, c)) => {
                    if cond != c {
                        conds += 1;
                    }
                    cond = c;
                }
                None => {
                    return Err(Error::UnknownArgument(crate::error::shown(arg)));
                }
            }
            i += 1;
        }
        let Some((count_at, fields)) = fields else {
            return Err(Error::Text("missing FIELDS argument"));
        };
        if conds > 1 {
            return Err(Error::Text("Multiple condition flags specified"));
        }
        Ok(Parsed {
            at,
            cond,
            count_at,
            fields,
        })
    }

    fn apply(
        db: &mut Db,
        argv: &[&[u8]],
        unit_ms: u64,
        base_ms: u64,
        name: &'static str,
    ) -> Result<Reply> {
        let key = argv[1];
        let exists = read_hash(db, key)?.is_some();
        let p = HExpire::parse(argv, unit_ms, base_ms, name)?;
        if !exists {
            return Ok(Reply::Array(vec![Reply::Int(-2); p.fields.len()]));
        }
        if let Some(hash) = hash_mut(db, key)? {
            hash.enable_ttls();
        }
        let mut out = Vec::with_capacity(p.fields.len());
        let mut set_fields = Vec::new();
        let mut deleted: Vec<&[u8]> = Vec::new();
        for field in p.fields {
            let res = set_field_expiry(db, key, field, p.at, p.cond);
            match res {
                SetEx::Set => set_fields.push(*field),
                SetEx::Deleted => deleted.push(field),
                _ => {}
            }
            out.push(Reply::Int(res as i64));
        }
        if !deleted.is_empty() || !set_fields.is_empty() {
            db.add_dirty((deleted.len() + set_fields.len()) as u64);
            db.touch(key);
            if !deleted.is_empty() {
                db.notify_subkeys(HASH, "hdel", key, &deleted);
            }
            if !set_fields.is_empty() {
                db.notify_subkeys(HASH, "hexpire", key, &set_fields);
            }
        }
        if matches!(db.get(key), Some(crate::types::Value::Hash(h)) if h.is_empty()) {
            db.remove(key);
            db.notify(GENERIC, "del", key);
        }
        if !set_fields.is_empty() && db.propagating() {
            // Redis rewrites the call: HPEXPIREAT, the absolute time, only the fields set.
            let first_field = p.count_at + 1;
            let mut form: Vec<Bytes> = vec![
                Bytes::from_static(b"HPEXPIREAT"),
                Bytes::copy_from_slice(key),
                Bytes::from(p.at.to_string()),
            ];
            form.extend(owned(&argv[3..p.count_at]));
            form.push(Bytes::from(set_fields.len().to_string()));
            form.extend(owned(&set_fields));
            form.extend(owned(&argv[first_field + p.fields.len()..]));
            db.propagate(form);
        }
        Ok(Reply::Array(out))
    }

    /// HEXPIRE.
    pub fn run_hexpire(db: &mut Db, s: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HExpire::apply(db, argv, 1000, s.now_ms, "hexpire")
    }

    /// HPEXPIRE.
    pub fn run_hpexpire(db: &mut Db, s: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HExpire::apply(db, argv, 1, s.now_ms, "hpexpire")
    }

    /// HEXPIREAT.
    pub fn run_hexpireat(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HExpire::apply(db, argv, 1000, 0, "hexpireat")
    }

    /// HPEXPIREAT.
    pub fn run_hpexpireat(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        HExpire::apply(db, argv, 1, 0, "hpexpireat")
    }
}

/// HPERSIST.
#[derive(Debug)]
pub struct HPersist;

impl HPersist {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let exists = read_hash(db, key)?.is_some();
        let fields = fields_block(argv, 2)?;
        if !exists {
            return Ok(Reply::Array(vec![Reply::Int(-2); fields.len()]));
        }
        let now = db.now_ms();
        let mut out = Vec::with_capacity(fields.len());
        let mut persisted: Vec<&[u8]> = Vec::new();
        if let Some(hash) = hash_mut(db, key)? {
            for field in fields {
                out.push(Reply::Int(match hash.get(field) {
                    None => -2,
                    Some((_, None)) => -1,
                    Some((_, Some(at))) if at < now => -2,
                    Some(_) => {
                        hash.set_expiry(field, None);
                        persisted.push(field);
                        1
                    }
                }));
            }
        }
        if !persisted.is_empty() {
            db.notify_subkeys(HASH, "hpersist", key, &persisted);
            db.touch(key);
            db.changed(1, argv);
        }
        track_ttls(db, key);
        Ok(Reply::Array(out))
    }
}
