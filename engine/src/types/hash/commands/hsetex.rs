//! `HSETEX key [FNX | FXX] [EX seconds | PX ms | EXAT unix-seconds | PXAT unix-ms | KEEPTTL]
//! FIELDS numfields field value [field value ...]`: HSET with a condition on the fields and
//! an expiry for them.
//!
//! Errors, in Redis 8.8's order: the options left to right (before the key is looked up, see
//! [`super::hgetex::parse_field_options`]), then WRONGTYPE. Replies 1 when the fields were
//! set, 0 when FNX found one or FXX missed one (a missing key with FXX included). Without
//! KEEPTTL or a time, the fields lose their expiry; a time not in the future sets then
//! deletes them.
//!
//! Effects as Redis's `hsetexCommand`: the key created if missing (`new`); the condition's
//! reads delete expired fields (HDEL propagated); one change per field; WATCH touched,
//! `hexpired`, `hset`, then `hdel` (fields deleted by a past time) or `hexpire`; a hash left
//! empty deleted (`del`). Propagated verbatim, EX/PX/EXAT rewritten as `PXAT <unix ms>`; not
//! at all when a past time deleted the fields (their HDELs say it all).

use bytes::Bytes;

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::HASH;
use crate::reply::Reply;

use super::expiry::{FieldRead, Lazy, read_field};
use super::hexpire::{Cond, SetEx, set_field_expiry};
use super::hgetex::{ExpiryOpt, FieldCond, parse_field_options};
use super::{hash_or_create, owned, read_hash, remove_if_empty, track_ttls};

/// HSETEX.
#[derive(Debug)]
pub struct HSetEx;

impl HSetEx {
    /// Parses and applies.
    pub fn run(db: &mut Db, s: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let opts = parse_field_options(argv, true, s.now_ms, "hsetex")?;
        let exists = read_hash(db, key)?.is_some();
        if !exists && opts.cond == FieldCond::Fxx {
            return Ok(Reply::Int(0));
        }
        hash_or_create(db, key)?;
        let mut expired: Vec<&[u8]> = Vec::new();
        let mut refused = false;
        if opts.cond != FieldCond::None {
            let mut found = 0;
            for pair in opts.fields.chunks_exact(2) {
                let read = read_field(db, key, pair[0], Lazy::DEFERRED);
                if matches!(read, FieldRead::Expired | FieldRead::ExpiredHash) {
                    expired.push(pair[0]);
                }
                let there = matches!(read, FieldRead::Found(_));
                found += usize::from(there);
                if (opts.cond == FieldCond::Fxx && !there) || (opts.cond == FieldCond::Fnx && there)
                {
                    break;
                }
            }
            refused = match opts.cond {
                FieldCond::Fnx => found != 0,
                _ => found != opts.count,
            };
        }
        let mut deleted: Vec<&[u8]> = Vec::new();
        let mut updated: Vec<&[u8]> = Vec::new();
        if !refused {
            let keep = opts.expiry != ExpiryOpt::None;
            let hash = hash_or_create(db, key)?;
            hash.prepare_for(opts.count, opts.fields.iter().map(|a| a.len()), &s.encoding);
            if let ExpiryOpt::At { .. } = opts.expiry {
                hash.enable_ttls();
            }
            for pair in opts.fields.chunks_exact(2) {
                hash_or_create(db, key)?.set(pair[0], pair[1], keep, &s.encoding);
                if let ExpiryOpt::At { ms, .. } = opts.expiry {
                    match set_field_expiry(db, key, pair[0], ms, Cond::None) {
                        SetEx::Set => updated.push(pair[0]),
                        SetEx::Deleted => deleted.push(pair[0]),
                        _ => {}
                    }
                }
            }
            db.add_dirty(opts.count as u64);
            if deleted.is_empty() && db.propagating() {
                let mut form = owned(argv);
                if let ExpiryOpt::At {
                    ms,
                    pxat: false,
                    pos,
                } = opts.expiry
                {
                    form[pos - 1] = Bytes::from_static(b"PXAT");
                    form[pos] = Bytes::from(ms.to_string());
                }
                db.propagate(form);
            }
        }
        if !refused || !expired.is_empty() {
            db.touch(key);
            if !expired.is_empty() {
                db.notify_subkeys(HASH, "hexpired", key, &expired);
            }
            if !refused {
                let set: Vec<&[u8]> = opts.fields.chunks_exact(2).map(|p| p[0]).collect();
                db.notify_subkeys(HASH, "hset", key, &set);
                if !deleted.is_empty() {
                    db.notify_subkeys(HASH, "hdel", key, &deleted);
                } else if !updated.is_empty() {
                    db.notify_subkeys(HASH, "hexpire", key, &updated);
                }
            }
        }
        remove_if_empty(db, key);
        track_ttls(db, key);
        Ok(Reply::Int(i64::from(!refused)))
    }
}
