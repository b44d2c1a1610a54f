//! `XADD key [NOMKSTREAM] [IDMP pid iid | IDMPAUTO pid] [MAXLEN|MINID [=|~] threshold
//! [LIMIT count]] <*|id> field value [field value ...]` (options in any order)
//!
//! Appends, then trims. Replies the new id, or a null with NOMKSTREAM on a missing key. The id
//! `0-0` is rejected before the key is looked up, so a failed XADD never creates a key.
//!
//! With IDMP/IDMPAUTO (`docs/reference/streams-8.md` §3.2), after the key lookup (NOMKSTREAM on a missing key
//! still replies null) the producer's iid is looked up: a duplicate replies the id the iid
//! first produced and changes nothing else (no append, no trim, no wake-up, no WATCH touched;
//! `iids-duplicates` counts it); a miss appends, records the iid against the new id, then trims.
//!
//! Effects (Redis's `xaddCommand`): the key modified and signalled to blocked readers (a new
//! key fires `new`), `xadd`, then `xtrim` when the trim removed entries; one change; the
//! arguments propagated with the id the entry got and a `~` trim as the exact trim it amounted
//! to (LIMIT dropped). An IDMP duplicate counts one change and propagates verbatim (it replays
//! as the same duplicate), and fires and signals nothing. A stream a [`crate::TrimHook`]
//! covers is trimmed by the hook, which may refuse a trimming XADD before anything changes or
//! defer the trim (then the XADD propagates without it).

use crate::error::{Error, Result};
use crate::id::{AddId, StreamId};

use crate::keyspace::{Db, Snapshot, Value};
use crate::notify::STREAM;
use crate::reply::Reply;
use crate::stream::{Stream, Trim};
use crate::trim_hook::{TrimDone, TrimHook};

use super::forms;
use super::trim_args::{self, IdmpArg, TrimWords};
use crate::stream::idmp::{AUTO_IID_BYTES, FreshIid, IdmpCheck, auto_iid};

/// A parsed XADD.
#[derive(Debug)]
pub struct XAdd<'a> {
    argv: &'a [&'a [u8]],
    key: &'a [u8],
    no_mkstream: bool,
    trim: Option<Trim>,
    /// Where the trim's words are (for the propagated form).
    words: TrimWords,
    id: AddId,
    /// The id's index in `argv`.
    id_at: usize,
    fields: &'a [&'a [u8]],
    idmp: Option<IdmpArg<'a>>,
}

/// What XADD's trim step did.
#[derive(Debug, Clone, Copy)]
enum Trimmed {
    /// No trim was asked.
    Not,
    /// The trim ran here or in the hook.
    Done(TrimDone),
}

impl<'a> XAdd<'a> {
    fn parse(argv: &'a [&'a [u8]]) -> Result<XAdd<'a>> {
        let opts = trim_args::parse(argv, true)?;
        let Some((id, fields_at)) = opts.id else {
            return Err(Error::WrongArity("xadd".into()));
        };
        let fields = &argv[fields_at.min(argv.len())..];
        if fields.len() < 2 || fields.len() % 2 != 0 {
            return Err(Error::WrongArity("xadd".into()));
        }
        if id == AddId::Explicit(StreamId::MIN) {
            return Err(Error::XaddIdZero);
        }
        Ok(XAdd {
            argv,
            key: argv[1],
            no_mkstream: opts.no_mkstream,
            trim: opts.trim,
            words: opts.words,
            id,
            id_at: fields_at - 1,
            fields,
            idmp: opts.idmp,
        })
    }

    /// The producer and iid of an IDMP/IDMPAUTO XADD (`scratch` holds IDMPAUTO's digest).
    fn producer_iid<'s>(
        &self,
        scratch: &'s mut [u8; AUTO_IID_BYTES],
    ) -> Option<(&'a [u8], &'s [u8])>
    where
        'a: 's,
    {
        match self.idmp? {
            IdmpArg::Explicit { pid, iid } => Some((pid, iid)),
            IdmpArg::Auto { pid } => {
                *scratch = auto_iid(self.fields);
                Some((pid, &scratch[..]))
            }
        }
    }

    /// Appends, records the iid (if any; `fresh` is what its duplicate check found), trims
    /// (through `hook` when one covers the key).
    fn add_to(
        &self,
        stream: &mut Stream,
        idmp: Option<(&[u8], &[u8])>,
        fresh: FreshIid,
        snapshot: &Snapshot,
        hook: Option<&dyn TrimHook>,
    ) -> Result<(StreamId, Trimmed)> {
        let id = stream.add(self.id, self.fields, snapshot.now_ms, snapshot.limits)?;
        if let Some((pid, iid)) = idmp {
            stream
                .idmp_mut()
                .record(pid, iid, id, snapshot.now_ms, fresh);
        }
        let trimmed = match (&self.trim, hook) {
            (None, _) => Trimmed::Not,
            (Some(trim), Some(hook)) => {
                Trimmed::Done(hook.trim_after_add(self.key, stream, trim, snapshot.limits))
            }
            (Some(trim), None) => {
                Trimmed::Done(TrimDone::Removed(stream.trim(trim, snapshot.limits)))
            }
        };
        Ok((id, trimmed))
    }

    /// Applies: the id the entry got (or an IDMP duplicate's original), `None` when
    /// NOMKSTREAM found no stream.
    fn apply(self, db: &mut Db, snapshot: &Snapshot) -> Result<Option<StreamId>> {
        // Only a trimming XADD asks the hook, and it may refuse before anything changes.
        let hook = match self.trim {
            Some(_) => db.trim_hook_for(self.key),
            None => None,
        };
        if let Some(refusal) = hook.as_ref().and_then(|h| h.refusal()) {
            return Err(refusal);
        }
        let hook = hook.as_deref();
        let mut scratch = [0u8; AUTO_IID_BYTES];
        let idmp = self.producer_iid(&mut scratch);
        // The common case, an existing stream, looks the key up once.
        if let Some(stream) = db.stream_mut(self.key)? {
            let mut fresh = FreshIid::default();
            if let Some((pid, iid)) = idmp {
                match stream.idmp_mut().check(pid, iid, snapshot.now_ms) {
                    IdmpCheck::Duplicate(original) => {
                        // Redis replies before it signals or notifies: no WATCH is touched, no
                        // event fires; the call replays as the same duplicate.
                        db.add_dirty(1);
                        if db.propagating() {
                            db.propagate(forms::verbatim(self.argv));
                        }
                        return Ok(Some(original));
                    }
                    IdmpCheck::Fresh(found) => fresh = found,
                }
            }
            // A stream already holding iids is tracked already (`Db::check_invariants`).
            let untracked = idmp.is_some() && stream.idmp().pids_tracked() == 0;
            let (id, trimmed) = self.add_to(stream, idmp, fresh, snapshot, hook)?;
            db.touch(self.key);
            db.signal_ready(self.key);
            if untracked {
                db.track_idmp(self.key);
            }
            self.wrote(db, id, trimmed);
            return Ok(Some(id));
        }
        if self.no_mkstream {
            return Ok(None);
        }
        // A new stream holds no iid: no duplicate check. Only an oversized entry fails here,
        // and then no key is created.
        let mut stream = Stream::with_idmp_config(snapshot.idmp);
        let (id, trimmed) = self.add_to(&mut stream, idmp, FreshIid::default(), snapshot, hook)?;
        // Inserting fires `new`, touches WATCH and signals blocked readers.
        db.insert(self.key, Value::Stream(Box::new(stream)));
        self.wrote(db, id, trimmed);
        Ok(Some(id))
    }

    /// XADD's effects once the entry is in: `xadd`, then `xtrim` if its trim removed entries;
    /// one change; the arguments with the id it got and a `~` trim as the exact trim it
    /// amounted to (or, for a trim the hook deferred, without the trim).
    fn wrote(&self, db: &mut Db, id: StreamId, trimmed: Trimmed) {
        db.notify(STREAM, "xadd", self.key);
        if matches!(trimmed, Trimmed::Done(TrimDone::Removed(n)) if n > 0) {
            db.notify(STREAM, "xtrim", self.key);
        }
        db.add_dirty(1);
        if !db.propagating() {
            return;
        }
        let mut form = forms::verbatim(self.argv);
        form[self.id_at] = forms::id_bytes(id);
        match (trimmed, &self.trim) {
            (Trimmed::Done(TrimDone::Deferred), _) => form = forms::without_trim(form, &self.words),
            (Trimmed::Done(TrimDone::Removed(_)), Some(trim)) if trim.approx => {
                if let Ok(Some(stream)) = db.stream(self.key) {
                    forms::exact_trim(&mut form, &self.words, trim.strategy, stream);
                }
            }
            _ => {}
        }
        db.propagate(form);
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        Ok(match XAdd::parse(argv)?.apply(db, snapshot)? {
            Some(id) => Reply::id(id),
            None => Reply::Null,
        })
    }
}

impl Db {
    /// Appends an entry to the stream under `key` (created if missing) as `XADD key <id>
    /// field value ...` does, with every effect it has: blocked readers of the key are woken,
    /// WATCH sees the key modified, `xadd` fires, and the XADD is propagated (to the AOF) with
    /// the id it got. This is the typed way to write a stream in a keyspace; a [`Stream`]
    /// reached any other way is changed without effects.
    ///
    /// `fields` alternate field and value (an even count, at least two).
    pub fn xadd<T: AsRef<[u8]>>(
        &mut self,
        key: &[u8],
        id: AddId,
        fields: &[T],
        snapshot: &Snapshot,
    ) -> Result<StreamId> {
        let id_text = id.to_string();
        let mut argv: Vec<&[u8]> = Vec::with_capacity(fields.len() + 3);
        argv.extend([b"XADD".as_slice(), key, id_text.as_bytes()]);
        argv.extend(fields.iter().map(AsRef::as_ref));
        XAdd::parse(&argv)?
            .apply(self, snapshot)?
            .ok_or(Error::NoSuchKey)
    }
}
