//! `FLUSHALL [ASYNC|SYNC]`: removes every key of every database (FLUSHDB, which needs one,
//! is the engine's, whose mode check this shares). Anything else after the name is `ERR
//! syntax error`.
//!
//! Effects: per database, WATCH touched when it had keys and blocked XREADGROUP readers of a
//! stream signalled (they fail with NOGROUP), as the engine's [`echomq_engine::Db::clear`]
//! does; propagated verbatim in the client's database, counting 1 change. A running BGSAVE's
//! child is killed, as Redis's `flushAllDataAndResetRDB` does: its snapshot is of data no
//! longer there.

use echomq_engine::command::FlushDb;
use echomq_engine::{Error, Reply};

use super::{Ctx, error};

/// `FLUSHALL [ASYNC|SYNC]`.
pub(crate) fn flushall(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if !FlushDb::mode_ok(argv) {
        return error(Error::Syntax);
    }
    for db in ctx.dbs.all().iter_mut() {
        db.clear();
    }
    ctx.state.rdb().kill_child();
    ctx.db().changed(1, argv);
    Reply::OK
}
