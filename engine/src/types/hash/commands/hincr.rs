//! `HINCRBY key field increment` and `HINCRBYFLOAT key field increment`: add to the number a
//! field holds (a missing field counts as 0), keeping the field's expiry time.
//!
//! Errors, in Redis's order: the increment (`ERR value is not an integer or out of range`;
//! for HINCRBYFLOAT `ERR value is not a valid float`, then `ERR value is NaN or Infinity`),
//! WRONGTYPE, the field's value (`ERR hash value is not an integer` / `... a float`), then
//! the result (`ERR increment or decrement would overflow` / `ERR increment would produce
//! NaN or Infinity`). The key is created before the field is read, as Redis's
//! `hashTypeLookupWriteOrCreate` does.
//!
//! HINCRBYFLOAT computes in the emulated x87 long double INCRBYFLOAT uses, so its digits
//! match Redis's.
//!
//! Effects: WATCH touched, `hincrby` / `hincrbyfloat` fired, 1 change; HINCRBY propagates
//! verbatim, HINCRBYFLOAT as `HSETEX key KEEPTTL FIELDS 1 field result` so the float is never
//! recomputed.

use bytes::Bytes;

use crate::command::parse_i64;
use crate::config::Thresholds;
use crate::error::{Error, Result};
use crate::id::string_to_i64;
use crate::keyspace::{Db, Snapshot};
use crate::notify::HASH;
use crate::reply::Reply;
use crate::types::string::commands::incrbyfloat::parse_float;
use crate::types::string::long_double::{LongDouble, NotFinite};

use super::expiry::{FieldRead, Lazy, read_field};
use super::hash_or_create;

/// The field's value after lazy expiry (the hash created if missing, or re-created if the
/// expiry emptied it).
fn current(db: &mut Db, key: &[u8], field: &[u8]) -> Result<Option<Bytes>> {
    hash_or_create(db, key)?;
    Ok(match read_field(db, key, field, Lazy::FULL) {
        FieldRead::Found(v) => Some(v),
        _ => None,
    })
}

/// Stores the result, keeping the field's expiry time.
fn store(db: &mut Db, lim: &Thresholds, key: &[u8], field: &[u8], value: &[u8]) -> Result<()> {
    hash_or_create(db, key)?.set(field, value, true, lim);
    Ok(())
}

/// HINCRBY and HINCRBYFLOAT.
#[derive(Debug)]
pub struct HIncrBy;

impl HIncrBy {
    /// HINCRBY.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, field) = (argv[1], argv[2]);
        let by = parse_i64(argv[3])?;
        let old = match current(db, key, field)? {
            Some(v) => string_to_i64(&v).ok_or(Error::HashNotInteger)?,
            None => 0,
        };
        let new = old.checked_add(by).ok_or(Error::IncrOverflow)?;
        store(
            db,
            &snap.encoding,
            key,
            field,
            itoa::Buffer::new().format(new).as_bytes(),
        )?;
        db.touch(key);
        db.notify_subkeys(HASH, "hincrby", key, &[field]);
        db.changed(1, argv);
        Ok(Reply::Int(new))
    }

    /// HINCRBYFLOAT.
    pub fn run_float(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let (key, field) = (argv[1], argv[2]);
        let by = parse_float(argv[3])?.map_err(|_| Error::Text("value is NaN or Infinity"))?;
        let old = match current(db, key, field)? {
            Some(v) => parse_float(&v).map_err(|_| Error::HashNotFloat)?,
            None => Ok(LongDouble::ZERO),
        };
        let new = match old.and_then(|old| old.add(by)) {
            Ok(n) => n,
            Err(NotFinite::Underflow) => LongDouble::ZERO,
            Err(NotFinite::Infinite) => return Err(Error::FloatNotFinite),
        };
        let text = Bytes::from(new.to_human());
        store(db, &snap.encoding, key, field, &text)?;
        db.touch(key);
        db.notify_subkeys(HASH, "hincrbyfloat", key, &[field]);
        db.add_dirty(1);
        if db.propagating() {
            db.propagate(vec![
                Bytes::from_static(b"HSETEX"),
                Bytes::copy_from_slice(key),
                Bytes::from_static(b"KEEPTTL"),
                Bytes::from_static(b"FIELDS"),
                Bytes::from_static(b"1"),
                Bytes::copy_from_slice(field),
                text.clone(),
            ]);
        }
        Ok(Reply::Bulk(text))
    }
}
