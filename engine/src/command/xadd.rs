//! `XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] <*|id> field value
//! [field value ...]`
//!
//! Appends, then trims. Replies the new id, or a null with NOMKSTREAM on a missing key. The id
//! `0-0` is rejected before the key is looked up, so a failed XADD never creates a key.

use crate::error::{Error, Result};
use crate::id::{AddId, StreamId};
use bytes::Bytes;

use crate::config::NodeLimits;
use crate::keyspace::{Db, Snapshot, Value};
use crate::reply::Reply;
use crate::stream::{Stream, Trim};

use super::trim_args;

/// Runs XADD's trim: `(key, stream, trim, node limits)`.
pub type Trimmer<'t> = dyn FnMut(&[u8], &mut Stream, &Trim, NodeLimits) + 't;

/// A parsed XADD.
#[derive(Debug)]
pub struct XAdd<'a> {
    key: &'a [u8],
    no_mkstream: bool,
    trim: Option<Trim>,
    id: AddId,
    fields: &'a [&'a [u8]],
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
            key: argv[1],
            no_mkstream: opts.no_mkstream,
            trim: opts.trim,
            id,
            fields,
        })
    }

    fn apply(self, db: &mut Db, snapshot: &Snapshot, trimmer: &mut Trimmer<'_>) -> Result<Reply> {
        // The common case, an existing stream, looks the key up once.
        if let Some(stream) = db.stream_mut(self.key)? {
            let id = stream.add(self.id, self.fields, snapshot.now_ms, snapshot.limits)?;
            if let Some(trim) = &self.trim {
                trimmer(self.key, stream, trim, snapshot.limits);
            }
            db.touch(self.key);
            db.signal_ready(self.key);
            return Ok(Reply::id(id));
        }
        if self.no_mkstream {
            return Ok(Reply::Null);
        }
        let mut stream = Stream::new();
        // Only an oversized entry fails on a new stream, and then no key is created.
        let id = stream.add(self.id, self.fields, snapshot.now_ms, snapshot.limits)?;
        if let Some(trim) = &self.trim {
            trimmer(self.key, &mut stream, trim, snapshot.limits);
        }
        db.insert(Bytes::copy_from_slice(self.key), Value::Stream(stream));
        Ok(Reply::id(id))
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        XAdd::parse(argv)?.apply(db, snapshot, &mut |_, stream, trim, limits| {
            stream.trim(trim, limits);
        })
    }

    /// Whether `argv` is a well-formed XADD that trims (MAXLEN or MINID).
    pub fn trims(argv: &[&[u8]]) -> bool {
        XAdd::parse(argv).is_ok_and(|add| add.trim.is_some())
    }

    /// Parses and applies, with `trimmer` doing the trim XADD's options ask for (the archive
    /// folds before it trims). The entry is added whatever the trimmer does.
    pub fn run_trimming(
        db: &mut Db,
        snapshot: &Snapshot,
        argv: &[&[u8]],
        trimmer: &mut Trimmer<'_>,
    ) -> Result<Reply> {
        XAdd::parse(argv)?.apply(db, snapshot, trimmer)
    }
}
