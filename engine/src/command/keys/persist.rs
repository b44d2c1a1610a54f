//! `PERSIST key`: 1 if the key had an expiry time and now has none, else 0.
//!
//! Effects as Redis 8.8's `persistCommand`, when it removed a time: WATCH touched,
//! `persist` fired, 1 change, propagated verbatim.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::GENERIC;
use crate::reply::Reply;

/// PERSIST.
#[derive(Debug)]
pub struct Persist;

impl Persist {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let removed = db.persist(argv[1]);
        if removed {
            db.notify(GENERIC, "persist", argv[1]);
            db.changed(1, argv);
        }
        Ok(Reply::Int(i64::from(removed)))
    }
}
