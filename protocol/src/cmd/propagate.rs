//! What the server's own write commands propagate (the stream commands' forms come from the
//! engine): DEL/UNLINK when they removed keys, RENAME/RENAMENX when they renamed, FLUSHDB and
//! FLUSHALL, INCR, and SET as `SET key value [PXAT ms]` (a relative or kept expiry becomes an
//! absolute one, as Redis does), when it set; EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT as
//! `PEXPIREAT key ms` (or `DEL key` when the time had passed), and PERSIST, COPY, MOVE and
//! SWAPDB verbatim, when they changed something; RESTORE
//! as `RESTORE key abs-ttl payload REPLACE [ABSTTL]` (or `DEL key` if it was born expired). SELECT is not propagated: the AOF writer emits
//! `SELECT n` itself whenever the database changes. The dirty counter counts as Redis does
//! (keys removed for DEL, 1 otherwise).

use bytes::Bytes;
use echomq_engine::{Db, Reply, Value};

use crate::cmd::is;

/// Records what server command `argv` (which replied `reply`) propagates into `db`; the
/// dispatch calls it for the commands its table flags WRITE only.
pub(crate) fn server_command(db: &mut Db, argv: &[&[u8]], reply: &Reply) {
    if matches!(reply, Reply::Error(_)) {
        return;
    }
    let name = argv[0];
    let verbatim = || {
        argv.iter()
            .map(|a| Bytes::copy_from_slice(a))
            .collect::<Vec<_>>()
    };
    if is(name, "del") || is(name, "unlink") {
        if let Reply::Int(n) = reply
            && *n > 0
        {
            db.propagate(verbatim());
            db.add_dirty(*n as u64);
        }
    } else if is(name, "rename") || is(name, "renamenx") {
        if matches!(reply, Reply::Status(_) | Reply::Int(1)) {
            db.propagate(verbatim());
            db.add_dirty(1);
        }
    } else if is(name, "flushdb") || is(name, "flushall") || is(name, "incr") {
        db.propagate(verbatim());
        db.add_dirty(1);
    } else if ["expire", "pexpire", "expireat", "pexpireat"]
        .iter()
        .any(|n| is(name, n))
    {
        if matches!(reply, Reply::Int(1)) && argv.len() >= 2 {
            let key = argv[1];
            // As Redis: an absolute PEXPIREAT, or a DEL when the time had already passed.
            let form = match db.expiry(key) {
                Some(at) => vec![
                    Bytes::from_static(b"PEXPIREAT"),
                    Bytes::copy_from_slice(key),
                    Bytes::from(at.to_string()),
                ],
                None => vec![Bytes::from_static(b"DEL"), Bytes::copy_from_slice(key)],
            };
            db.propagate(form);
            db.add_dirty(1);
        }
    } else if ["persist", "copy", "move"].iter().any(|n| is(name, n)) {
        if matches!(reply, Reply::Int(1)) {
            db.propagate(verbatim());
            db.add_dirty(1);
        }
    } else if is(name, "swapdb") {
        db.propagate(verbatim());
        db.add_dirty(1);
    } else if is(name, "restore") && argv.len() >= 4 {
        // As Redis: the TTL absolute (ABSTTL), or a DEL when the key was born expired.
        let key = argv[1];
        let form = if db.get(key).is_some() {
            let mut form = vec![
                Bytes::from_static(b"RESTORE"),
                Bytes::copy_from_slice(key),
                Bytes::from(db.expiry(key).unwrap_or(0).to_string()),
                Bytes::copy_from_slice(argv[3]),
                Bytes::from_static(b"REPLACE"),
            ];
            if db.expiry(key).is_some() {
                form.push(Bytes::from_static(b"ABSTTL"));
            }
            form
        } else {
            vec![Bytes::from_static(b"DEL"), Bytes::copy_from_slice(key)]
        };
        db.propagate(form);
        db.add_dirty(1);
    } else if is(name, "set") && argv.len() >= 3 {
        let key = argv[1];
        let set = matches!(db.get(key), Some(Value::String(v)) if v.as_ref() == argv[2]);
        if set {
            let mut form = vec![
                Bytes::from_static(b"SET"),
                Bytes::copy_from_slice(key),
                Bytes::copy_from_slice(argv[2]),
            ];
            if let Some(at) = db.expiry(key) {
                form.push(Bytes::from_static(b"PXAT"));
                form.push(Bytes::from(at.to_string()));
            }
            db.propagate(form);
            db.add_dirty(1);
        }
    }
}
