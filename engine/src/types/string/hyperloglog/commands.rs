//! `PFADD key [element ...]`, `PFCOUNT key [key ...]`, `PFMERGE destkey [sourcekey ...]`,
//! `PFDEBUG GETREG|DECODE|ENCODING|TODENSE|SIMD key`, `PFSELFTEST`.
//!
//! A key that holds another type is WRONGTYPE; a string that is not an HLL (an integer, too
//! short, no `HYLL`, an unknown encoding, a dense one of the wrong length) is `WRONGTYPE Key is
//! not a valid HyperLogLog string value.`; a sparse one whose runs do not add up is
//! `INVALIDOBJ Corrupted HLL object detected`. Each command changes its key in place (turning
//! it `raw`, as Redis's `dbUnshareStringValue`).
//!
//! Effects as Redis 8.8's `hyperloglog.c`:
//! - PFADD: a missing key is created (`new`); when a register changed or the key was created
//!   the cache is invalidated, `pfadd` fires, WATCH is touched, one change is counted per
//!   element that changed a register (and one for the creation), propagated verbatim; replies
//!   1, else 0 with no effects.
//! - PFCOUNT of one key: the cached estimate, else the estimate is computed and cached (WATCH
//!   touched, 1 change, propagated verbatim, no event). Of several keys: the estimate of their
//!   union, nothing written. Missing keys are empty.
//! - PFMERGE: the union of the sources (the destination included) stored in the destination
//!   (created if missing, `new`), dense if any source is; `pfadd` fires, WATCH touched,
//!   1 change, propagated verbatim; replies OK.
//! - PFDEBUG GETREG (turning a sparse HLL dense, 1 change) replies the 16384 registers; DECODE
//!   the sparse opcodes; ENCODING `dense` or `sparse`; TODENSE converts (1 change), replying
//!   1 or 0. A missing key is `ERR The specified key does not exist`, checked before the
//!   subcommand (`ERR Unknown PFDEBUG subcommand '<name>'`). SIMD ON|OFF replies `disabled`:
//!   echomq has no vector paths to switch.

use bytes::Bytes;

use super::{
    Corrupt, REGISTERS, cached, compress_into, count, count_raw, decode, dense_get, invalidate,
    is_dense, is_valid, merge_into, new_sparse, pattern, self_test, set, set_cached, to_dense,
};
use crate::command::args::is;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STRING;
use crate::reply::Reply;
use crate::types::Value;
use crate::types::string::{Encoding, StringValue};

impl From<Corrupt> for Error {
    fn from(_: Corrupt) -> Error {
        Error::HllCorrupt
    }
}

/// The HLL bytes of `value`, or Redis's error for a string that is not one.
fn hll_bytes(value: &StringValue) -> Result<std::borrow::Cow<'_, [u8]>> {
    if value.encoding() == Encoding::Int {
        return Err(Error::NotHll);
    }
    let bytes = value.bytes();
    if is_valid(&bytes) {
        Ok(bytes)
    } else {
        Err(Error::NotHll)
    }
}

/// Merges the HLL under `key` (a read lookup) into `max`, where it is read, with no copy;
/// returns whether it is dense, None when missing.
fn merge_hll(db: &mut Db, key: &[u8], max: &mut [u8; REGISTERS]) -> Result<Option<bool>> {
    db.count_read(key, false);
    match db.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let hll = hll_bytes(s)?;
            merge_into(max, &hll)?;
            Ok(Some(is_dense(&hll)))
        }
        Some(_) => Err(Error::WrongType),
    }
}

/// Replaces the contents of a string with `bytes`, in place.
fn store(s: &mut StringValue, bytes: &[u8]) {
    s.resize(bytes.len());
    s.bytes_mut().copy_from_slice(bytes);
}

/// Checks the HLL under `key` and turns it `raw`; None when missing.
fn unshare(db: &mut Db, key: &[u8]) -> Result<Option<()>> {
    let checked = db.string_mut(key, |s| {
        hll_bytes(s)?;
        s.make_raw();
        Ok(())
    })?;
    checked.transpose()
}

/// PFADD.
#[derive(Debug)]
pub struct PfAdd;

impl PfAdd {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let mut updated = 0u64;
        if unshare(db, key)?.is_none() {
            db.replace_value(key, Value::String(StringValue::raw(&new_sparse())));
            updated += 1;
        }
        let max_bytes = snapshot.hll_sparse_max_bytes;
        let outcome = db.string_mut(key, |s| -> Result<u64> {
            let mut changed = 0;
            if is_dense(&s.bytes()) {
                let registers = &mut s.bytes_mut()[super::HEADER_BYTES..];
                for element in &argv[2..] {
                    let (index, count) = pattern(element);
                    changed += u64::from(super::dense_set(registers, index, count));
                }
            } else {
                let mut hll = s.bytes().into_owned();
                let mut result = Ok(());
                for element in &argv[2..] {
                    let (index, count) = pattern(element);
                    match set(&mut hll, index, count, max_bytes) {
                        Ok(c) => changed += u64::from(c),
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                // Redis keeps what it changed before finding the corruption.
                store(s, &hll);
                result?;
            }
            if changed > 0 || updated > 0 {
                invalidate(s.bytes_mut());
            }
            Ok(changed)
        })?;
        updated += outcome.unwrap_or(Ok(0))?;
        if updated == 0 {
            return Ok(Reply::Int(0));
        }
        db.touch(key);
        db.notify(STRING, "pfadd", key);
        db.changed(updated, argv);
        Ok(Reply::Int(1))
    }
}

/// PFCOUNT.
#[derive(Debug)]
pub struct PfCount;

impl PfCount {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        if argv.len() > 2 {
            let mut max = [0u8; REGISTERS];
            for key in &argv[1..] {
                merge_hll(db, key, &mut max)?;
            }
            return Ok(Reply::Int(count_raw(&max) as i64));
        }
        let key = argv[1];
        db.count_read(key, false);
        let outcome = db.string_mut(key, |s| -> Result<(u64, bool)> {
            hll_bytes(s)?;
            s.make_raw();
            let bytes = s.bytes();
            if let Some(card) = cached(&bytes) {
                return Ok((card, false));
            }
            let card = count(&bytes)?;
            set_cached(s.bytes_mut(), card);
            Ok((card, true))
        })?;
        let Some(outcome) = outcome else {
            return Ok(Reply::Int(0));
        };
        let (card, computed) = outcome?;
        if computed {
            db.touch(key);
            db.changed(1, argv);
        }
        Ok(Reply::Int(card as i64))
    }
}

/// PFMERGE.
#[derive(Debug)]
pub struct PfMerge;

impl PfMerge {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let mut max = [0u8; REGISTERS];
        let mut use_dense = false;
        for source in &argv[1..] {
            use_dense |= merge_hll(db, source, &mut max)? == Some(true);
        }
        if unshare(db, key)?.is_none() {
            db.replace_value(key, Value::String(StringValue::raw(&new_sparse())));
        }
        let max_bytes = snapshot.hll_sparse_max_bytes;
        let outcome = db.string_mut(key, |s| -> Result<()> {
            let mut hll = s.bytes().into_owned();
            if use_dense {
                to_dense(&mut hll)?;
                compress_into(&mut hll, &max);
            } else {
                for (i, &m) in max.iter().enumerate() {
                    if m > 0 {
                        // A corrupt destination was already refused as a source.
                        let _ = set(&mut hll, i, m, max_bytes);
                    }
                }
            }
            invalidate(&mut hll);
            store(s, &hll);
            Ok(())
        })?;
        outcome.unwrap_or(Ok(()))?;
        db.touch(key);
        db.notify(STRING, "pfadd", key);
        db.changed(1, argv);
        Ok(Reply::OK)
    }
}

/// PFDEBUG.
#[derive(Debug)]
pub struct PfDebug;

impl PfDebug {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let sub = argv[1];
        if is(sub, "simd") {
            if is(argv[2], "on") || is(argv[2], "off") {
                return Ok(Reply::Status("disabled"));
            }
            return Err(Error::Text("Argument must be ON or OFF"));
        }
        let key = argv[2];
        let Some(()) = unshare(db, key)? else {
            return Err(Error::Text("The specified key does not exist"));
        };
        let densify = |db: &mut Db| -> Result<bool> {
            let converted = db.string_mut(key, |s| -> Result<bool> {
                if is_dense(&s.bytes()) {
                    return Ok(false);
                }
                let mut hll = s.bytes().into_owned();
                to_dense(&mut hll)?;
                store(s, &hll);
                Ok(true)
            })?;
            let converted = converted.unwrap_or(Ok(false))?;
            if converted {
                db.changed(1, argv);
            }
            Ok(converted)
        };
        if is(sub, "getreg") {
            densify(db)?;
            let hll = db_bytes(db, key).unwrap_or_default();
            let registers = &hll[super::HEADER_BYTES.min(hll.len())..];
            let regs = (0..REGISTERS)
                .map(|i| Reply::Int(i64::from(dense_get(registers, i))))
                .collect();
            Ok(Reply::Array(regs))
        } else if is(sub, "decode") {
            let hll = db_bytes(db, key).unwrap_or_default();
            if is_dense(&hll) {
                return Err(Error::Text("HLL encoding is not sparse"));
            }
            Ok(Reply::Bulk(Bytes::from(decode(&hll))))
        } else if is(sub, "encoding") {
            let hll = db_bytes(db, key).unwrap_or_default();
            Ok(Reply::Status(if is_dense(&hll) {
                "dense"
            } else {
                "sparse"
            }))
        } else if is(sub, "todense") {
            Ok(Reply::Int(i64::from(densify(db)?)))
        } else {
            Err(Error::UnknownPfdebug(
                String::from_utf8_lossy(sub).into_owned(),
            ))
        }
    }
}

/// The bytes of the string under `key`.
fn db_bytes(db: &Db, key: &[u8]) -> Option<Vec<u8>> {
    match db.get(key) {
        Some(Value::String(s)) => Some(s.bytes().into_owned()),
        _ => None,
    }
}

/// PFSELFTEST.
#[derive(Debug)]
pub struct PfSelfTest;

impl PfSelfTest {
    /// Runs the checks.
    pub fn run(_: &mut Db, snapshot: &Snapshot, _: &[&[u8]]) -> Result<Reply> {
        match self_test(snapshot.hll_sparse_max_bytes) {
            Ok(()) => Ok(Reply::OK),
            Err(text) => Err(Error::SelfTest(text)),
        }
    }
}
