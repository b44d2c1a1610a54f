//! `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]`: replies the live entries removed.
//!
//! Arguments are parsed before the key is looked up; a missing key replies 0.

use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::reply::Reply;
use crate::stream::Trim;

use super::trim_args;

/// XTRIM.
#[derive(Debug)]
pub struct XTrim;

/// Parses XTRIM's options into the trim it asks for, with Redis's errors.
pub fn parse_xtrim(argv: &[&[u8]]) -> Result<Trim> {
    trim_args::parse(argv, false)?
        .trim
        .ok_or(Error::XtrimWithoutStrategy)
}

impl XTrim {
    /// Parses and applies.
    pub fn run(db: &mut Db, snapshot: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let trim = parse_xtrim(argv)?;
        let Some(stream) = db.stream_mut(argv[1])? else {
            return Ok(Reply::Int(0));
        };
        let removed = stream.trim(&trim, snapshot.limits);
        if removed > 0 {
            db.touch(argv[1]);
        }
        Ok(Reply::Int(removed as i64))
    }
}
