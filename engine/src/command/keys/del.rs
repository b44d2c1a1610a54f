//! `DEL key [key ...]` and `UNLINK key [key ...]`: removes the keys, replying how many
//! existed (a key named twice counts once). UNLINK, and DEL under `lazyfree-lazy-user-del`,
//! free a big value in the background (`engine/src/lazyfree.rs`).
//!
//! Effects as Redis 8.8's `delGenericCommand`: per key removed, WATCH touched, `del` fired
//! and 1 change counted; propagated verbatim when a key was removed.

use crate::error::Result;
use crate::keyspace::{Db, Snapshot};
use crate::notify::GENERIC;
use crate::reply::Reply;

/// DEL and UNLINK.
#[derive(Debug)]
pub struct Del;

impl Del {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        let lazily = argv[0].eq_ignore_ascii_case(b"unlink") || db.lazyfree().user_del();
        let mut deleted = 0;
        for key in &argv[1..] {
            if let Some(value) = db.remove(key) {
                if lazily {
                    db.free_lazily(value);
                }
                db.notify(GENERIC, "del", key);
                deleted += 1;
            }
        }
        if deleted > 0 {
            db.changed(deleted, argv);
        }
        Ok(Reply::Int(deleted as i64))
    }
}
