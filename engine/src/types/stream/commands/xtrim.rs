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
        if removed > 0 {
            db.notify(STREAM, "xtrim", key);
            if db.propagating() {
                let mut form = forms::verbatim(argv);
                if trim.approx
                    && let Ok(Some(stream)) = db.stream(key)
                {
                    forms::exact_trim(&mut form, &opts.words, trim.strategy, stream);
                }
                db.propagate(form);
            }
            db.touch(key);
            db.add_dirty(removed);
        }
        Ok(Reply::Int(removed as i64))
    }
}
