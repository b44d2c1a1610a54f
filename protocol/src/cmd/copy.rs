//! COPY, MOVE and SWAPDB: values between keys and databases, as Redis 8.8's `db.c` does.
//!
//! - `COPY source destination [DB index] [REPLACE]` stores a deep copy of the value of every
//!   kind (a stream with its consumer groups, PELs and IDMP state: bounds, producers with their
//!   IIDs, `iids-added` and `iids-duplicates`, as `streamDup` copies them) and its expiry time.
//! - `MOVE key db` moves the value and its expiry time; the source is gone, the IDMP state goes
//!   with the value.
//! - `SWAPDB a b` exchanges two databases' data; WATCH registrations and blocked readers stay
//!   with their database (see [`echomq_engine::Db::swap_contents`] for what is touched and
//!   signalled).
//!
//! Options are checked left to right, a DB index as it is met (`COPY a b DB 99 FOO` fails on
//! the index, `COPY a b FOO DB 99` on the syntax), as Redis does. Deleting, creating and
//! overwriting keys go through [`echomq_engine::Db`]'s `remove` and `insert`, which touch
//! WATCHed keys and signal blocked readers. Nothing changes on error.
//!
//! Keyspace events as Redis 8.8: COPY fires `new` and `copy_to` for the destination, then
//! `overwritten` (and `type_changed`) when REPLACE replaced a key; MOVE fires `new` in the
//! target database, `move_from` in the source, `move_to` in the target. COPY's read of its
//! source counts as a read lookup.
//!
//! Propagation and dirty as Redis: each is propagated verbatim, in the client's database,
//! counting 1 change, when it changed something (COPY and MOVE replied 1; SWAPDB always, a
//! database swapped with itself included).

use echomq_engine::notify::{GENERIC, OVERWRITTEN, TYPE_CHANGED};
use echomq_engine::{Db, Error, Reply};

use super::{Ctx, error, is};
use crate::error::CommandError;

/// A database index argument below `count`, as Redis's `getIntFromObjectOrReply` reads it:
/// no 64-bit integer is `message` (Redis's not-an-integer error when `None`), one outside 32
/// bits is `message` too (Redis's range error when `None`), and a negative one or one not below
/// `count` is out of range.
fn db_index(arg: &[u8], count: usize, message: Option<CommandError>) -> Result<usize, Reply> {
    let index = match echomq_engine::command::parse_i64(arg) {
        Ok(index) => index,
        Err(e) => return Err(message.map_or_else(|| error(e), Reply::from)),
    };
    if i32::try_from(index).is_err() {
        let range = CommandError::IntOutOfRange(i32::MIN, i32::MAX);
        return Err(message.unwrap_or(range).into());
    }
    usize::try_from(index)
        .ok()
        .filter(|&i| i < count)
        .ok_or_else(|| CommandError::DbIndexOutOfRange.into())
}

/// Two distinct databases of `dbs`, mutably.
fn pair(dbs: &mut [Db], a: usize, b: usize) -> (&mut Db, &mut Db) {
    if a < b {
        let (low, high) = dbs.split_at_mut(b);
        (&mut low[a], &mut high[0])
    } else {
        let (low, high) = dbs.split_at_mut(a);
        (&mut high[0], &mut low[b])
    }
}

/// `COPY source destination [DB destination-db] [REPLACE]`: 1 if copied, 0 if the source is
/// missing or the destination exists without REPLACE.
pub(crate) fn copy(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let src = ctx.client.db.min(ctx.dbs.len() - 1);
    let mut dst = src;
    let mut replace = false;
    let mut i = 3;
    while i < argv.len() {
        if is(argv[i], "replace") {
            replace = true;
        } else if is(argv[i], "db") && i + 1 < argv.len() {
            dst = match db_index(argv[i + 1], ctx.dbs.len(), None) {
                Ok(index) => index,
                Err(reply) => return reply,
            };
            i += 1;
        } else {
            return error(Error::Syntax);
        }
        i += 1;
    }
    if let Some(refused) = super::cluster::refuses_db(ctx, src != 0 || dst != 0, "COPY") {
        return refused;
    }
    let (key, new_key) = (argv[1], argv[2]);
    if src == dst && key == new_key {
        return CommandError::SameObject.into();
    }
    let source = &mut ctx.dbs.all()[src];
    source.count_read(key, false);
    let Some(value) = source.get(key).cloned() else {
        return Reply::Int(0);
    };
    let expiry = source.expiry(key);
    let target = &mut ctx.dbs.all()[dst];
    let mut replaced = None;
    if target.get(new_key).is_some() {
        if !replace {
            return Reply::Int(0);
        }
        replaced = target.remove(new_key).map(|v| v.type_name());
    }
    let kind = value.type_name();
    target.insert(new_key, value);
    if expiry.is_some() {
        target.set_expiry(new_key, expiry);
    }
    target.notify(GENERIC, "copy_to", new_key);
    if let Some(was) = replaced {
        target.notify(OVERWRITTEN, "overwritten", new_key);
        if was != kind {
            target.notify(TYPE_CHANGED, "type_changed", new_key);
        }
    }
    ctx.db().changed(1, argv);
    Reply::Int(1)
}

/// `MOVE key db`: 1 if moved, 0 if the key is missing here or exists there.
pub(crate) fn move_(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if let Some(refused) = super::cluster::refuses_db(ctx, true, "MOVE") {
        return refused;
    }
    let src = ctx.client.db.min(ctx.dbs.len() - 1);
    let dst = match db_index(argv[2], ctx.dbs.len(), None) {
        Ok(index) => index,
        Err(reply) => return reply,
    };
    if src == dst {
        return CommandError::SameObject.into();
    }
    let key = argv[1];
    let (source, target) = pair(ctx.dbs.all(), src, dst);
    if source.get(key).is_none() || target.get(key).is_some() {
        return Reply::Int(0);
    }
    let expiry = source.expiry(key);
    let Some(value) = source.remove(key) else {
        return Reply::Int(0);
    };
    target.insert(key, value);
    if expiry.is_some() {
        target.set_expiry(key, expiry);
    }
    source.notify(GENERIC, "move_from", key);
    target.notify(GENERIC, "move_to", key);
    source.changed(1, argv);
    Reply::Int(1)
}

/// `SWAPDB index1 index2`.
pub(crate) fn swapdb(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if let Some(refused) = super::cluster::refuses_db(ctx, true, "SWAPDB") {
        return refused;
    }
    let count = ctx.dbs.len();
    // Both are parsed before either is range-checked, as Redis does.
    let first = db_index(argv[1], usize::MAX, Some(CommandError::InvalidFirstDb));
    let second = db_index(argv[2], usize::MAX, Some(CommandError::InvalidSecondDb));
    let (a, b) = match (first, second) {
        (Err(reply), _) => return reply,
        (_, Err(reply)) => return reply,
        (Ok(a), Ok(b)) if a < count && b < count => (a, b),
        _ => return CommandError::DbIndexOutOfRange.into(),
    };
    if a != b {
        let (one, other) = pair(ctx.dbs.all(), a, b);
        one.swap_contents(other);
    }
    ctx.db().changed(1, argv);
    Reply::OK
}
