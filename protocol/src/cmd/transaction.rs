//! MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! EXEC runs the queued commands under one lock and one time snapshot, so the whole
//! transaction is atomic and every `*` id in it shares a millisecond. A command that failed to
//! queue (unknown, wrong arity) makes EXEC abort; a watched key changed since WATCH makes it
//! reply a null array. Blocking reads inside EXEC reply as if they timed out.

use bytes::Bytes;
use echomq_engine::command::flags::DENY_OOM;
use echomq_engine::{Batch, Reply};

use super::{Ctx, execute_queued};

use crate::error::CommandError;
use crate::state::ClientState;

/// Whether the client's transaction queued a DENY_OOM command (Redis's `mstate.cmd_flags`), so
/// EXEC is refused whole over `maxmemory`.
pub(crate) fn queued_deny_oom(client: &ClientState) -> bool {
    client.multi.as_ref().is_some_and(|queue| {
        queue.iter().any(|argv| {
            let Some(found) = argv.first().and_then(|name| super::rename::lookup(name)) else {
                return false;
            };
            let spec = found.spec();
            spec.has(DENY_OOM)
                || argv
                    .get(1)
                    .filter(|_| !spec.subcommands.is_empty())
                    .and_then(|sub| spec.subcommand(sub))
                    .is_some_and(|sub| sub.has(DENY_OOM))
        })
    })
}

/// Discards the client's transaction and its watches, as Redis's `execCommandAbort` does before
/// EXEC's refusal is answered.
pub(crate) fn abort(client: &mut ClientState, batch: &mut Batch<'_>) {
    client.multi = None;
    client.multi_failed = false;
    client.info.set_watching(0);
    let watched = std::mem::take(&mut client.watched);
    if !watched.is_empty() {
        batch.run_all(|mut dbs, _| {
            for (db, key, _) in watched {
                if let Some(db) = dbs.get_mut(db) {
                    db.unwatch(&key);
                }
            }
        });
    }
}

/// Drops every watch the client holds.
pub(crate) fn forget_watches(ctx: &mut Ctx<'_>) {
    ctx.client.info.set_watching(0);
    for (db, key, _) in std::mem::take(&mut ctx.client.watched) {
        if let Some(db) = ctx.dbs.get_mut(db) {
            db.unwatch(&key);
        }
    }
}

/// `MULTI`.
pub(crate) fn multi(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.client.multi.is_some() {
        return CommandError::NestedMulti.into();
    }
    ctx.client.multi = Some(Vec::new());
    ctx.client.multi_failed = false;
    Reply::OK
}

/// `DISCARD`.
pub(crate) fn discard(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.client.multi.take().is_none() {
        return CommandError::DiscardWithoutMulti.into();
    }
    ctx.client.multi_failed = false;
    forget_watches(ctx);
    Reply::OK
}

/// `EXEC`.
pub(crate) fn exec(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    let Some(queue) = ctx.client.multi.take() else {
        return CommandError::ExecWithoutMulti.into();
    };
    let failed = std::mem::take(&mut ctx.client.multi_failed);
    let changed = ctx.client.watched.iter().any(|(db, key, version)| {
        ctx.dbs
            .get_mut(*db)
            .is_some_and(|db| db.version(key) != *version)
    });
    forget_watches(ctx);
    if failed {
        return CommandError::ExecAbort.into();
    }
    if changed {
        return Reply::NullArray;
    }
    ctx.client.in_exec = true;
    let replies = queue
        .iter()
        .map(|argv| {
            let argv: Vec<&[u8]> = argv.iter().map(|a| a.as_ref()).collect();
            execute_queued(ctx, &argv)
        })
        .collect();
    ctx.client.in_exec = false;
    Reply::Array(replies)
}

/// `WATCH key [key ...]`.
pub(crate) fn watch(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if ctx.client.multi.is_some() {
        return CommandError::WatchInsideMulti.into();
    }
    let index = ctx.client.db;
    for key in &argv[1..] {
        if ctx
            .client
            .watched
            .iter()
            .any(|(db, k, _)| *db == index && k == key)
        {
            continue;
        }
        let version = ctx.db().watch(key);
        ctx.client
            .watched
            .push((index, Bytes::copy_from_slice(key), version));
    }
    ctx.client.info.set_watching(ctx.client.watched.len());
    Reply::OK
}

/// `UNWATCH`.
pub(crate) fn unwatch(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    forget_watches(ctx);
    Reply::OK
}
