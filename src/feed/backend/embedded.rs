//! The embedded engine as a backend: direct calls into a [`Keyspace`], no sockets.

use std::sync::Arc;

use echomq_archive::Archive;
use echomq_engine::{AddId, EntryRef, Keyspace, StreamId, Trim};

use super::{Backend, RawEntry, Recorded, StreamMeta};
use crate::feed::error::FeedError;
use crate::feed::fields::FieldsBuilder;

/// A backend over an in-process keyspace (database 0).
#[derive(Debug, Clone)]
pub struct Embedded {
    keyspace: Arc<Keyspace>,
}

impl Embedded {
    /// A backend over `keyspace`.
    pub fn new(keyspace: Arc<Keyspace>) -> Embedded {
        Embedded { keyspace }
    }

    /// The keyspace.
    pub fn keyspace(&self) -> &Arc<Keyspace> {
        &self.keyspace
    }
}

/// The one mapping from the engine's errors to the feed's: the refusals callers act on get
/// their own variant, every other error keeps the engine's text (Redis's) as
/// [`FeedError::Backend`].
pub(super) fn engine_error(e: echomq_engine::Error) -> FeedError {
    use echomq_engine::Error;
    let text = e.to_string();
    match e {
        Error::NoGroupForKey { .. }
        | Error::NoKeyOrGroup { .. }
        | Error::NoKeyOrGroupXreadgroup { .. } => FeedError::NoGroup(text),
        Error::BusyGroup => FeedError::BusyGroup(text),
        Error::WrongType => FeedError::WrongType(text),
        Error::NoSuchKey => FeedError::NoSuchKey(text),
        Error::XaddIdTooSmall => FeedError::IdNotAboveTop(text),
        _ => FeedError::Backend(text),
    }
}

impl Backend for Embedded {
    fn add(&self, key: &str, id: StreamId, fields: &[&[u8]]) -> Result<StreamId, FeedError> {
        // Through the engine's write path, so the append has XADD's effects: blocked readers
        // woken, WATCH touched, `xadd` fired, propagated to the AOF.
        self.keyspace.run(|db, snapshot| {
            db.xadd(key.as_bytes(), AddId::Explicit(id), fields, snapshot)
                .map_err(engine_error)
        })
    }

    /// The engine has XIDMPRECORD.
    fn records_appends(&self) -> Result<bool, FeedError> {
        Ok(true)
    }

    /// XADD then XIDMPRECORD under one keyspace lock, through the engine's commands (so both
    /// signal, touch and track IDMP state as they do from a client).
    fn add_recorded(
        &self,
        key: &str,
        id: StreamId,
        fields: &[&[u8]],
        pid: &[u8],
        iid: &[u8],
    ) -> Result<Recorded, FeedError> {
        let id_text = id.to_string();
        let mut xadd: Vec<&[u8]> = Vec::with_capacity(fields.len() + 3);
        xadd.extend([b"XADD".as_slice(), key.as_bytes(), id_text.as_bytes()]);
        xadd.extend_from_slice(fields);
        let record: [&[u8]; 5] = [b"XIDMPRECORD", key.as_bytes(), pid, iid, id_text.as_bytes()];
        self.keyspace.run(|db, snapshot| {
            let added = echomq_engine::command::execute(db, snapshot, &xadd);
            let recorded = echomq_engine::command::execute(db, snapshot, &record);
            match (added, recorded) {
                (Ok(_), _) => Ok(Recorded::Added(id)),
                (Err(echomq_engine::Error::XaddIdTooSmall), Ok(_)) => Ok(Recorded::Exists),
                (Err(echomq_engine::Error::XaddIdTooSmall), Err(_)) => Ok(Recorded::Absent),
                (Err(e), _) => Err(engine_error(e)),
            }
        })
    }

    fn range(
        &self,
        key: &str,
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        reverse: bool,
    ) -> Result<Vec<RawEntry>, FeedError> {
        self.keyspace.run(|db, _| {
            let Some(stream) = db.stream(key.as_bytes()).map_err(engine_error)? else {
                return Ok(Vec::new());
            };
            let limit = count.unwrap_or(usize::MAX);
            // One buffer for the whole read, shared by every entry's fields.
            let mut builder = FieldsBuilder::with_capacity(0);
            let take = |e: EntryRef<'_>, builder: &mut FieldsBuilder| {
                let mut fields = builder.start();
                for (f, v) in e.fields() {
                    builder.push(&mut fields, f, v);
                }
                RawEntry { id: e.id, fields }
            };
            let mut entries: Vec<RawEntry> = if reverse {
                stream
                    .rev_range(start, end)
                    .take(limit)
                    .map(|e| take(e, &mut builder))
                    .collect()
            } else {
                stream
                    .range(start, end)
                    .take(limit)
                    .map(|e| take(e, &mut builder))
                    .collect()
            };
            let data = builder.finish();
            for entry in &mut entries {
                FieldsBuilder::attach(&mut entry.fields, &data);
            }
            Ok(entries)
        })
    }

    fn meta(&self, key: &str) -> Result<Option<StreamMeta>, FeedError> {
        self.keyspace.run(|db, _| {
            Ok(db
                .stream(key.as_bytes())
                .map_err(engine_error)?
                .map(|s| StreamMeta {
                    length: s.len(),
                    last_id: s.last_id(),
                    first_id: s.first_id(),
                    max_deleted_id: s.max_deleted_entry_id(),
                    entries_added: s.entries_added(),
                }))
        })
    }

    fn trim(&self, key: &str, trim: &Trim) -> Result<u64, FeedError> {
        // XTRIM's effects: `xtrim`, WATCH, dirty, the AOF.
        self.keyspace.run(|db, snapshot| {
            db.xtrim(key.as_bytes(), trim, snapshot)
                .map_err(engine_error)
        })
    }

    /// The engine previews the trim, so exactly the entries it removes are folded. The
    /// keyspace lock is held through the fold's fsync: nothing can be appended or trimmed
    /// between the preview and the trim (commands on other keys wait, as they would behind
    /// Redis's `appendfsync always`).
    fn fold_then_trim(&self, key: &str, trim: &Trim, archive: &Archive) -> Result<u64, FeedError> {
        self.keyspace.run(|db, snapshot| {
            let Some(stream) = db.stream_mut_raw(key.as_bytes()).map_err(engine_error)? else {
                return Ok(0);
            };
            let outcome = archive.fold_then_trim(key.as_bytes(), stream, trim, snapshot.limits)?;
            db.stream_trimmed(key.as_bytes(), outcome.removed, trim);
            Ok(outcome.removed)
        })
    }
}
