//! `SPOP key [count]` and `SRANDMEMBER key [count]`: random members, removed or not.
//!
//! Errors, in Redis's order: more than one count argument (`ERR syntax error`); the count
//! (SPOP's not an integer or below 0 is `ERR value is out of range, must be positive`,
//! SRANDMEMBER's not an integer is the integer error,
//! SRANDMEMBER's `i64::MIN` `ERR value is out of range, value must between ...`); then WRONGTYPE.
//!
//! SPOP without a count replies one member (nil for a missing key); with a count, a set of up
//! to that many distinct members. SRANDMEMBER with a count `n`: `n >= 0` distinct members, all
//! of them (in the encoding's order) when `n` is at least the size; `n < 0` gives `|n|`
//! members that may repeat.
//!
//! Effects of SPOP as Redis 8.8's `spopCommand` / `spopWithCountCommand`: `spop` fired, one
//! change per member removed, WATCH touched, an emptied set deleted (`del`). Propagated as
//! `SREM key member` (without a count), as `DEL key` when a count takes the whole set, else
//! as `SREM key member...` in batches of 1024. When few members are left, they are moved to a
//! new set, whose encoding Redis picks again (a table may become an intset or listpack).

use bytes::Bytes;

use crate::command::parse_i64;
use crate::config::Thresholds;
use crate::error::{Error, Result};
use crate::keyspace::{Db, Snapshot};
use crate::notify::{GENERIC, SET};
use crate::reply::Reply;
use crate::types::hash::commands::hrandfield::PICKS_MAX;
use crate::types::set::Set;

use super::{read_set, set_mut, set_reply};

/// Members per propagated SREM (Redis's batch).
const SREM_BATCH: usize = 1024;
/// SPOP rebuilds the set when what stays times this is at most what goes.
const MOVE_STRATEGY_MUL: usize = 5;

/// SPOP.
#[derive(Debug)]
pub struct SPop;

impl SPop {
    /// Parses and applies.
    pub fn run(db: &mut Db, snap: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        if argv.len() > 3 {
            return Err(Error::Syntax);
        }
        let key = argv[1];
        if argv.len() == 3 {
            // Redis's `getPositiveLongFromObjectOrReply`: one message for both failures.
            let count = parse_i64(argv[2])
                .ok()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(Error::MustBePositive)?;
            return SPop::with_count(db, &snap.encoding, key, count);
        }
        let Some(set) = set_mut(db, key)? else {
            return Ok(Reply::Null);
        };
        let Some(member) = set.pop_random() else {
            return Ok(Reply::Null);
        };
        let emptied = set.is_empty();
        db.notify(SET, "spop", key);
        if db.propagating() {
            db.propagate(vec![
                Bytes::from_static(b"SREM"),
                Bytes::copy_from_slice(key),
                member.clone(),
            ]);
        }
        if emptied {
            db.remove(key);
            db.notify(GENERIC, "del", key);
        }
        db.touch(key);
        db.add_dirty(1);
        Ok(Reply::Bulk(member))
    }

    fn with_count(db: &mut Db, lim: &Thresholds, key: &[u8], count: usize) -> Result<Reply> {
        let Some(set) = set_mut(db, key)? else {
            return Ok(set_reply(Vec::new()));
        };
        if count == 0 {
            return Ok(set_reply(Vec::new()));
        }
        let size = set.len();
        if count >= size {
            let members = set.members();
            db.notify(SET, "spop", key);
            db.add_dirty(size as u64);
            db.remove(key);
            db.notify(GENERIC, "del", key);
            if db.propagating() {
                db.propagate(vec![
                    Bytes::from_static(b"DEL"),
                    Bytes::copy_from_slice(key),
                ]);
            }
            return Ok(set_reply(members));
        }
        let remaining = size - count;
        let picked: Vec<Bytes> = if remaining * MOVE_STRATEGY_MUL > count || set.is_listpack() {
            (0..count).filter_map(|_| set.pop_random()).collect()
        } else {
            // Most members go: draw the few that stay into a new set, whose encoding is
            // picked again, and reply what is left of the old one.
            let mut fresh: Option<Set> = None;
            for _ in 0..remaining {
                let Some(m) = set.pop_random() else { break };
                fresh
                    .get_or_insert_with(|| Set::for_members(&m, 1, lim))
                    .add(&m, lim);
            }
            let picked = set.members();
            *set = fresh.unwrap_or_else(Set::new_intset);
            picked
        };
        db.notify(SET, "spop", key);
        db.add_dirty(count as u64);
        if db.propagating() {
            for batch in picked.chunks(SREM_BATCH) {
                let mut form = vec![Bytes::from_static(b"SREM"), Bytes::copy_from_slice(key)];
                form.extend(batch.iter().cloned());
                db.propagate(form);
            }
        }
        db.touch(key);
        Ok(set_reply(picked))
    }
}

/// SRANDMEMBER.
#[derive(Debug)]
pub struct SRandMember;

impl SRandMember {
    /// Parses and applies.
    pub fn run(db: &mut Db, _: &Snapshot, argv: &[&[u8]]) -> Result<Reply> {
        if argv.len() > 3 {
            return Err(Error::Syntax);
        }
        let key = argv[1];
        if argv.len() == 2 {
            db.count_read(key, false);
            return Ok(read_set(db, key)?
                .and_then(Set::random_member)
                .map_or(Reply::Null, Reply::Bulk));
        }
        let n = parse_i64(argv[2])?;
        if n == i64::MIN {
            return Err(Error::OutOfRangeBetween(-i64::MAX, i64::MAX));
        }
        db.count_read(key, false);
        let Some(set) = read_set(db, key)? else {
            return Ok(Reply::Array(Vec::new()));
        };
        let size = set.len();
        let count = n.unsigned_abs();
        if count == 0 || size == 0 {
            return Ok(Reply::Array(Vec::new()));
        }
        let picked = if n < 0 || count == 1 {
            set.random_members(count.min(PICKS_MAX) as usize)
        } else if count >= size as u64 {
            set.members()
        } else {
            set.random_distinct(count as usize)
        };
        Ok(Reply::Array(picked.into_iter().map(Reply::Bulk).collect()))
    }
}
