//! DUMP and RESTORE, as Redis 8.8's `cluster.c` implements them.
//!
//! - `DUMP key`: the value's RDB payload with the RDB version and CRC64 footer
//!   ([`echomq_engine::rdb::dump`]), nil for a missing key. `rdbcompression` applies, as in
//!   Redis, so equal values give Redis's bytes.
//! - `RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]`: options first (IDLETIME
//!   and FREQ exclude each other; IDLETIME sets the key's access time unless an LFU policy is
//!   in force, FREQ its LFU counter only under one, as Redis's `objectSetLRUOrLFU`), then `-BUSYKEY` without REPLACE, then the TTL, then the footer
//!   (`-ERR DUMP payload version or checksum are wrong`), then the value (`-ERR Bad data
//!   format`). The value is decoded whole before anything changes, so a bad payload leaves the
//!   key as it was. A TTL already in the past deletes (with REPLACE) and stores nothing.
//!
//! Effects of RESTORE as Redis 8.8's `restoreCommand`: a stored value fires `new` (the old key,
//! if REPLACE removed one, is gone first), `restore`, then `overwritten` and `type_changed`;
//! it is propagated verbatim, a relative TTL rewritten as the absolute time with ABSTTL
//! appended, counting 1 change. A TTL in the past that deleted a key fires `del` and is
//! propagated as `DEL key`, counting 1; one that deleted nothing changes nothing.

use bytes::Bytes;
use echomq_engine::notify::{GENERIC, OVERWRITTEN, TYPE_CHANGED};
use echomq_engine::rdb::dump;
use echomq_engine::{Error, Reply};

use super::{Ctx, error, int_arg, is};

use crate::error::CommandError;

/// What a RESTORE that stored its value propagates, as Redis rewrites it: verbatim, except
/// that a relative TTL becomes the absolute `at` with ABSTTL appended.
fn restore_form(argv: &[&[u8]], at: Option<u64>) -> Vec<Bytes> {
    let mut form: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
    if let Some(at) = at {
        form[2] = Bytes::from(at.to_string());
        form.push(Bytes::from_static(b"ABSTTL"));
    }
    form
}

/// `DUMP key`.
pub(crate) fn dump(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let now = ctx.snapshot.now_ms;
    let compress = ctx.state.settings().rdbcompression;
    match ctx.db().get(argv[1]) {
        None => Reply::Null,
        Some(value) => Reply::Bulk(Bytes::from(dump::dump(value, now, compress))),
    }
}

/// `RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]`.
pub(crate) fn restore(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<u64>, Option<u8>) = (None, None);
    let mut j = 4;
    while j < argv.len() {
        let more = j + 1 < argv.len();
        if is(argv[j], "replace") {
            replace = true;
        } else if is(argv[j], "absttl") {
            absttl = true;
        } else if is(argv[j], "idletime") && more && freq.is_none() {
            match int_arg(argv[j + 1]) {
                Ok(n) if n < 0 => {
                    return CommandError::InvalidIdleTime.into();
                }
                Ok(n) => idle = Some(n as u64),
                Err(reply) => return reply,
            }
            j += 1;
        } else if is(argv[j], "freq") && more && idle.is_none() {
            match int_arg(argv[j + 1]) {
                Ok(n) if !(0..=255).contains(&n) => {
                    return CommandError::InvalidFreq.into();
                }
                Ok(n) => freq = Some(n as u8),
                Err(reply) => return reply,
            }
            j += 1;
        } else {
            return error(Error::Syntax);
        }
        j += 1;
    }
    let key = argv[1];
    let now = ctx.snapshot.now_ms;
    if !replace && ctx.db().get(key).is_some() {
        return CommandError::BusyKey.into();
    }
    let ttl = match int_arg(argv[2]) {
        Ok(ttl) if ttl < 0 => return CommandError::InvalidTtl.into(),
        Ok(ttl) => ttl as u64,
        Err(reply) => return reply,
    };
    let payload = argv[3];
    if !dump::verify(payload) {
        return CommandError::BadDumpPayload.into();
    }
    let Ok(value) = dump::restore(
        payload,
        now,
        &echomq_engine::rdb::LoadLimits {
            encoding: ctx.snapshot.encoding,
            list: ctx.snapshot.list,
        },
    ) else {
        return CommandError::BadDataFormat.into();
    };
    let expire_at = (ttl != 0).then(|| if absttl { ttl } else { ttl.saturating_add(now) });
    let db = ctx.db();
    let replaced = if replace {
        db.remove(key).map(|v| v.type_name())
    } else {
        None
    };
    if expire_at.is_some_and(|at| at <= now) {
        if replaced.is_some() {
            db.notify(GENERIC, "del", key);
            db.add_dirty(1);
            if db.propagating() {
                db.propagate(vec![
                    Bytes::from_static(b"DEL"),
                    Bytes::copy_from_slice(key),
                ]);
            }
        }
        return Reply::OK;
    }
    let kind = value.type_name();
    db.insert(key, value);
    if expire_at.is_some() {
        db.set_expiry(key, expire_at);
    }
    db.restore_access(key, idle, freq);
    db.notify(GENERIC, "restore", key);
    if let Some(was) = replaced {
        db.notify(OVERWRITTEN, "overwritten", key);
        if was != kind {
            db.notify(TYPE_CHANGED, "type_changed", key);
        }
    }
    db.add_dirty(1);
    if db.propagating() {
        db.propagate(restore_form(argv, expire_at.filter(|_| !absttl)));
    }
    Reply::OK
}
