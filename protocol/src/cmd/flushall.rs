//! `FLUSHALL [ASYNC|SYNC]`: removes every key of every database (FLUSHDB, which needs one,
//! is the engine's, whose mode check this shares); ASYNC, or no mode under
//! `lazyfree-lazy-user-flush`, hands each database's table to the lazy-free thread
//! (`engine/src/lazyfree.rs`). Anything else after the name is `ERR syntax error`.
//!
//! Effects: per database, WATCH touched when it had keys and blocked XREADGROUP readers of a
//! stream signalled (they fail with NOGROUP), as the engine's [`echomq_engine::Db::clear`]
//! does; propagated verbatim in the client's database, counting 1 change. A running BGSAVE's
//! child is killed, as Redis's `flushAllDataAndResetRDB` does: its snapshot is of data no
//! longer there.

use echomq_engine::Reply;
use echomq_engine::command::FlushDb;

use super::{Ctx, error};

/// `FLUSHALL [ASYNC|SYNC]`.
pub(crate) fn flushall(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let lazily = match FlushDb::lazily(argv, ctx.state.keyspace().lazyfree()) {
        Ok(lazily) => lazily,
        Err(e) => return error(e),
    };
    for db in ctx.dbs.all().iter_mut() {
        db.flush(lazily);
    }
    ctx.state.rdb().kill_child();
    ctx.db().changed(1, argv);
    Reply::OK
}
