//! `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]`: replies the live entries removed.
//!
//! Arguments are parsed before the key is looked up; a missing key replies 0. A stream a
//! [`crate::TrimHook`] covers is trimmed by the hook, which may refuse before anything is
//! parsed or changed.
//!
//! Effects (Redis's `xtrimCommand`), when it removed entries: `xtrim`, the key modified, as
//! many changes as entries removed, and the arguments propagated with a `~` trim rewritten to
//! the exact trim it amounted to.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::STREAM;
use crate::reply::Reply;
use crate::stream::Trim;

use super::forms;
use super::trim_args;

/// XTRIM.
#[derive(Debug)]
pub struct XTrim;

impl XTrim {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let key = argv[1];
        let hook = db.trim_hook_for(key);
        if let Some(refusal) = hook.as_ref().and_then(|h| h.refusal()) {
            return Err(refusal);
        }
        let opts = trim_args::parse(argv, false)?;
        let trim = opts.trim.ok_or(Error::XtrimWithoutStrategy)?;
        let Some(stream) = db.stream_mut(key)? else {
            return Ok(Reply::Int(0));
        };
        let removed = match &hook {
            Some(hook) => hook.trim(key, stream, &trim, snapshot.limits)?,
            None => stream.trim(&trim, snapshot.limits),
        };
        trimmed(db, key, removed, &trim, &opts.words, || {
            forms::verbatim(argv)
        });
        Ok(Reply::Int(removed as i64))
    }
}

/// XTRIM's effects when `removed` entries went: `xtrim`, the form `form` builds (with a `~`
/// trim at `words` rewritten to the exact trim it amounted to), the key modified, `removed`
/// changes.
fn trimmed(
    db: &mut Db,
    key: &[u8],
    removed: u64,
    trim: &Trim,
    words: &trim_args::TrimWords,
    form: impl FnOnce() -> Vec<bytes::Bytes>,
) {
    if removed == 0 {
        return;
    }
    db.notify(STREAM, "xtrim", key);
    if db.propagating() {
        let mut form = form();
        if trim.approx
            && let Ok(Some(stream)) = db.stream(key)
        {
            forms::exact_trim(&mut form, words, trim.strategy, stream);
        }
        db.propagate(form);
    }
    db.touch(key);
    db.add_dirty(removed);
}

impl Db {
    /// Trims the stream under `key` as `XTRIM` with `trim` does, with its effects (a
    /// [`crate::TrimHook`] covering the key trims it); returns the entries removed, 0 for a
    /// missing key.
    pub fn xtrim(&mut self, key: &[u8], trim: &Trim, snapshot: &Snapshot) -> Result<u64> {
        let (form, _) = forms::xtrim(key, trim);
        let argv: Vec<&[u8]> = form.iter().map(|a| a.as_ref()).collect();
        match XTrim::run(self, snapshot, &argv)? {
            Reply::Int(n) => Ok(u64::try_from(n).unwrap_or(0)),
            _ => Ok(0),
        }
    }

    /// The effects of a trim the caller ran itself on the stream under `key` (one that folds
    /// what it removes first, say): XTRIM's, as if `XTRIM` with `trim` had removed `removed`
    /// entries.
    pub fn stream_trimmed(&mut self, key: &[u8], removed: u64, trim: &Trim) {
        let (form, words) = forms::xtrim(key, trim);
        trimmed(self, key, removed, trim, &words, || form);
    }
}
