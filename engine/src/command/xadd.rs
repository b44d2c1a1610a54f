//! `XADD key [NOMKSTREAM] [IDMP pid iid | IDMPAUTO pid] [MAXLEN|MINID [=|~] threshold
//! [LIMIT count]] <*|id> field value [field value ...]` (options in any order)
//!
//! Appends, then trims. Replies the new id, or a null with NOMKSTREAM on a missing key. The id
//! `0-0` is rejected before the key is looked up, so a failed XADD never creates a key.
//!
//! With IDMP/IDMPAUTO (`docs/reference/streams-8.md` §3.2), after the key lookup (NOMKSTREAM on a
//! missing key still replies null) the producer's iid is looked up: a duplicate replies the id the
//! iid first produced and changes nothing else (no append, no trim, no wake-up, no WATCH touched;
//! `iids-duplicates` counts it); a miss appends, records the iid against the new id, then trims.

use crate::error::{Error, Result};
use crate::id::{AddId, StreamId};
use bytes::Bytes;

use crate::config::NodeLimits;
use crate::keyspace::{Db, Snapshot, Value};
use crate::reply::Reply;
use crate::stream::{Stream, Trim};

use super::args::is;
use super::trim_args::{self, IdmpArg};
use crate::stream::idmp::{AUTO_IID_BYTES, FreshIid, IdmpCheck, auto_iid};

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
    idmp: Option<IdmpArg<'a>>,
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

    /// Appends, records the iid (if any; `fresh` is what its duplicate check found), trims.
    fn add_to(
        &self,
        key: &[u8],
        stream: &mut Stream,
        idmp: Option<(&[u8], &[u8])>,
        fresh: FreshIid,
        snapshot: &Snapshot,
        trimmer: &mut Trimmer<'_>,
    ) -> Result<StreamId> {
        let id = stream.add(self.id, self.fields, snapshot.now_ms, snapshot.limits)?;
        if let Some((pid, iid)) = idmp {
            stream
                .idmp_mut()
                .record(pid, iid, id, snapshot.now_ms, fresh);
        }
        if let Some(trim) = &self.trim {
            trimmer(key, stream, trim, snapshot.limits);
        }
        Ok(id)
    }

    fn apply(self, db: &mut Db, snapshot: &Snapshot, trimmer: &mut Trimmer<'_>) -> Result<Reply> {
        let mut scratch = [0u8; AUTO_IID_BYTES];
        let idmp = self.producer_iid(&mut scratch);
        // The common case, an existing stream, looks the key up once.
        if let Some(stream) = db.stream_mut(self.key)? {
            let mut fresh = FreshIid::default();
            if let Some((pid, iid)) = idmp {
                match stream.idmp_mut().check(pid, iid, snapshot.now_ms) {
                    // Redis marks the key modified without signalling it: no WATCH is touched.
                    IdmpCheck::Duplicate(original) => return Ok(Reply::id(original)),
                    IdmpCheck::Fresh(found) => fresh = found,
                }
            }
            // A stream already holding iids is tracked already (`Db::check_invariants`).
            let untracked = idmp.is_some() && stream.idmp().pids_tracked() == 0;
            let id = self.add_to(self.key, stream, idmp, fresh, snapshot, trimmer)?;
            db.touch(self.key);
            db.signal_ready(self.key);
            if untracked {
                db.track_idmp(self.key);
            }
            return Ok(Reply::id(id));
        }
        if self.no_mkstream {
            return Ok(Reply::Null);
        }
        // A new stream holds no iid: no duplicate check. Only an oversized entry fails here,
        // and then no key is created.
        let mut stream = Stream::with_idmp_config(snapshot.idmp);
        let id = self.add_to(
            self.key,
            &mut stream,
            idmp,
            FreshIid::default(),
            snapshot,
            trimmer,
        )?;
        db.insert(Bytes::copy_from_slice(self.key), Value::Stream(stream));
        Ok(Reply::id(id))
    }

    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        XAdd::parse(argv)?.apply(db, snapshot, &mut |_, stream, trim, limits| {
            stream.trim(trim, limits);
        })
    }

    /// `argv`, a well-formed XADD, without its trim (MAXLEN/MINID with its `=`/`~` and
    /// threshold, LIMIT, and the deletion strategy): what the server's deferred
    /// fold-before-trim runs and propagates, its trim following later as an XTRIM. `None`
    /// when `argv` does not parse.
    pub fn without_trim<'v>(argv: &[&'v [u8]]) -> Option<Vec<&'v [u8]>> {
        let opts = trim_args::parse(argv, true).ok()?;
        let (_, fields_at) = opts.id?;
        let id_at = fields_at - 1;
        let mut out = Vec::with_capacity(argv.len());
        out.extend_from_slice(&argv[..2]);
        let mut i = 2;
        while i < id_at {
            let word = argv[i];
            if is(word, "maxlen") || is(word, "minid") {
                let sign = argv.get(i + 1).is_some_and(|w| *w == b"~" || *w == b"=");
                i += if sign { 3 } else { 2 };
            } else if is(word, "limit") {
                i += 2;
            } else if is(word, "keepref") || is(word, "delref") || is(word, "acked") {
                i += 1;
            } else {
                // NOMKSTREAM, or IDMP/IDMPAUTO with their arguments (which may spell a
                // keyword: they are copied whole).
                let take = if is(word, "idmp") {
                    3
                } else if is(word, "idmpauto") {
                    2
                } else {
                    1
                };
                out.extend_from_slice(&argv[i..(i + take).min(id_at)]);
                i += take;
            }
        }
        out.extend_from_slice(&argv[id_at..]);
        Some(out)
    }

    /// Whether `argv` is a well-formed XADD whose trim is approximate (`MAXLEN ~`, `MINID ~`):
    /// one that may leave more entries than asked, so the server may run it a little later.
    pub fn trims_approximately(argv: &[&[u8]]) -> bool {
        XAdd::parse(argv).is_ok_and(|add| add.trim.is_some_and(|trim| trim.approx))
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

#[cfg(test)]
mod without_trim_tests {
    use super::XAdd;

    fn words(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    fn shown(argv: Option<Vec<&[u8]>>) -> Option<String> {
        argv.map(|a| {
            a.iter()
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    #[test]
    fn the_trim_and_its_options_go_the_rest_stays_in_order() {
        for (line, expected) in [
            ("XADD s MAXLEN ~ 1000 * f v", "XADD s * f v"),
            ("XADD s MAXLEN 10 1-1 f v", "XADD s 1-1 f v"),
            (
                "XADD s NOMKSTREAM MINID ~ 5-0 LIMIT 0 ACKED * f v",
                "XADD s NOMKSTREAM * f v",
            ),
            // IDMP's arguments are copied whole, even when they spell a keyword.
            (
                "XADD s IDMP maxlen limit MAXLEN ~ 3 * f v",
                "XADD s IDMP maxlen limit * f v",
            ),
            (
                "XADD s IDMPAUTO minid MINID ~ 1 * f v",
                "XADD s IDMPAUTO minid * f v",
            ),
            ("XADD s * maxlen 1", "XADD s * maxlen 1"),
        ] {
            assert_eq!(
                shown(XAdd::without_trim(&words(line))).as_deref(),
                Some(expected),
                "{line}"
            );
        }
        assert_eq!(shown(XAdd::without_trim(&words("XADD s MAXLEN"))), None);
    }
}
