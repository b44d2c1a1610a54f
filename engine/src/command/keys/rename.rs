//! `RENAME key newkey` (OK) and `RENAMENX key newkey` (1, or 0 when `newkey` exists): moves
//! the value and its expiry time. Errors: `ERR no such key` for a missing `key`, checked
//! first. A key renamed to itself changes nothing (RENAME replies OK, RENAMENX 0).
//!
//! Effects as Redis 8.8's `renameGenericCommand`: the destination is deleted first (so adding
//! it fires `new`), then `rename_from` on `key`, `rename_to` on `newkey`, and `overwritten`
//! (and `type_changed`) when a key was replaced; WATCH touched on both; 1 change;
//! propagated verbatim. A refused RENAMENX changes nothing.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, OVERWRITTEN, TYPE_CHANGED};
use crate::reply::Reply;

/// RENAME and RENAMENX.
#[derive(Debug)]
pub struct Rename {
    /// RENAMENX: only when `newkey` is missing.
    only_if_absent: bool,
}

impl Rename {
    /// RENAME: parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Rename {
            only_if_absent: false,
        }
        .apply(db, argv)
    }

    /// RENAMENX: parses and applies.
    pub fn run_nx(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Rename {
            only_if_absent: true,
        }
        .apply(db, argv)
    }

    fn done(&self, renamed: bool) -> Reply {
        match (self.only_if_absent, renamed) {
            (true, renamed) => Reply::Int(i64::from(renamed)),
            (false, _) => Reply::OK,
        }
    }

    /// Applies to `db`.
    pub fn apply(&self, db: &mut Db, argv: &[&[u8]]) -> Result<Reply> {
        let (from, to) = (argv[1], argv[2]);
        if db.get(from).is_none() {
            return Err(Error::NoSuchKey);
        }
        if from == to || (self.only_if_absent && db.get(to).is_some()) {
            return Ok(self.done(false));
        }
        let expiry = db.expiry(from);
        let replaced = db.remove(to).map(|v| v.type_name());
        let Some(value) = db.remove(from) else {
            return Err(Error::NoSuchKey);
        };
        let kind = value.type_name();
        db.insert(to, value);
        db.set_expiry(to, expiry);
        db.notify(GENERIC, "rename_from", from);
        db.notify(GENERIC, "rename_to", to);
        if let Some(was) = replaced {
            db.notify(OVERWRITTEN, "overwritten", to);
            if was != kind {
                db.notify(TYPE_CHANGED, "type_changed", to);
            }
        }
        db.changed(1, argv);
        Ok(self.done(true))
    }
}
