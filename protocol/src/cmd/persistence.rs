//! `BGREWRITEAOF`, `SAVE`, `BGSAVE`, `LASTSAVE`, `WAITAOF`, and the persistence checks every
//! request passes (`-LOADING` while the AOF or `dump.rdb` loads, `-MISCONF` for writes while
//! AOF writes fail or after a failed background save) (INFO's `persistence` section is in
//! `info/process.rs`).
//!
//! WAITAOF answers `[local, replicas]`: `local` is 1 once everything appended is fsynced;
//! `replicas` is always 0 (echomq has none). A client that may block gets its fsync at once,
//! outside any keyspace call, instead of waiting for the `everysec` thread (the answer Redis
//! gives once that fsync happened); inside MULTI (Redis: may not block) it gets the state as
//! it is. Asking for replicas does not wait for the timeout (nothing could arrive), as WAIT.

use echomq_engine::Reply;
use echomq_engine::command::CommandSpec;
use echomq_engine::command::flags::{LOADING_OK, WRITE};

use super::{Ctx, int_arg};
use crate::error::CommandError;
use crate::persist::aof::load::AOF_CLIENT_ID;
use crate::state::{ClientState, ServerState};

/// The error that refuses a command with this table row now, if any: `-LOADING` while the
/// dataset loads (but for the LOADING_OK commands), `-MISCONF` for a WRITE or PING after a
/// failed background save (`stop-writes-on-bgsave-error`) or while the AOF cannot be written
/// (Redis's `writeCommandsDeniedByDiskError`, in its order).
///
/// Nothing refuses while no load runs, the AOF writes and the last save did not fail: three
/// flags, read here on every request before anything else.
#[inline]
pub(crate) fn refusal(
    state: &ServerState,
    client: &ClientState,
    spec: &CommandSpec,
) -> Option<Reply> {
    if !state.loading() && !state.aof().write_failed_now() && !state.rdb().last_failed() {
        return None;
    }
    refusal_checked(state, client, spec)
}

/// [`refusal`] once one of its flags is set.
#[cold]
fn refusal_checked(state: &ServerState, client: &ClientState, spec: &CommandSpec) -> Option<Reply> {
    if client.info.id == AOF_CLIENT_ID {
        return None;
    }
    if state.loading() && !spec.has(LOADING_OK) {
        return Some(CommandError::Loading.into());
    }
    // Redis refuses PING too, so a health check sees the disk error; the RDB's comes first.
    if !(spec.has(WRITE) || spec.name == "ping") {
        return None;
    }
    if state.rdb_write_refusal() {
        return Some(CommandError::BgsaveFailed.into());
    }
    if state.aof().enabled()
        && let Some(error) = state.aof().write_error()
    {
        return Some(CommandError::AofWriteFailed(error).into());
    }
    None
}

/// SAVE.
pub(crate) fn save(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.state.rdb().bgsave_in_progress() {
        return CommandError::SaveInProgress.into();
    }
    match ctx.state.save(ctx.dbs.all()) {
        Ok(()) => Reply::OK,
        Err(e) => e.into(),
    }
}

/// `BGSAVE [SCHEDULE]`, as Redis 8.8's: one child at a time. While an AOF rewrite runs (or
/// inside EXEC) it is refused, or with SCHEDULE (always inside EXEC) scheduled for the cron
/// to start once no child runs; a running BGSAVE refuses it even with SCHEDULE.
pub(crate) fn bgsave(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let schedule = argv.len() == 2 && super::is(argv[1], "schedule");
    if argv.len() > 2 || (argv.len() == 2 && !schedule) {
        return super::error(echomq_engine::Error::Syntax);
    }
    if ctx.state.rdb().bgsave_in_progress() {
        return CommandError::SaveInProgress.into();
    }
    if ctx.state.child_active() || ctx.client.in_exec {
        if !(schedule || ctx.client.in_exec) {
            return CommandError::AnotherChildActive.into();
        }
        ctx.state.rdb().schedule();
        return Reply::Status("Background saving scheduled");
    }
    match ctx.state.bgsave(ctx.dbs.all()) {
        Ok(()) => Reply::Status("Background saving started"),
        Err(e) => e.into(),
    }
}

/// LASTSAVE: Unix seconds of the last successful save.
pub(crate) fn lastsave(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    Reply::Int(ctx.state.rdb().last_save_s() as i64)
}

/// WAITAOF's arguments checked in Redis 8.8's order: `numlocal` (0 or 1), `numreplicas`,
/// the timeout (ms), then that `numlocal` needs the AOF. Returns `numlocal`.
fn waitaof_args(state: &ServerState, argv: &[&[u8]]) -> Result<i64, Reply> {
    let numlocal = int_arg(argv[1])?;
    if !(0..=1).contains(&numlocal) {
        return Err(CommandError::NumLocalOutOfRange.into());
    }
    // Redis's message for numreplicas covers a non-integer too.
    if int_arg(argv[2]).map_or(true, |n| n < 0) {
        return Err(CommandError::NumReplicasNegative.into());
    }
    let timeout = echomq_engine::command::parse_i64(argv[3])
        .map_err(|_| Reply::from(CommandError::TimeoutNotInteger))?;
    if timeout < 0 {
        return Err(CommandError::TimeoutNegative.into());
    }
    let now = i64::try_from(state.clock().now_ms()).unwrap_or(i64::MAX);
    if timeout > 0 && timeout > i64::MAX - now {
        return Err(CommandError::TimeoutOutOfRange.into());
    }
    if numlocal > 0 && !state.aof().enabled() {
        return Err(CommandError::WaitaofWithoutAof.into());
    }
    Ok(numlocal)
}

fn waitaof_reply(local: bool) -> Reply {
    Reply::Array(vec![Reply::Int(i64::from(local)), Reply::Int(0)])
}

/// `WAITAOF numlocal numreplicas timeout` from a client that may block: run outside any
/// keyspace call, fsyncing first when `numlocal` asks for it.
pub(crate) fn waitaof(state: &ServerState, argv: &[&[u8]]) -> Reply {
    match waitaof_args(state, argv) {
        Ok(numlocal) => {
            let aof = state.aof();
            waitaof_reply(if numlocal > 0 && !aof.synced() {
                aof.sync_all()
            } else {
                aof.synced()
            })
        }
        Err(reply) => reply,
    }
}

/// WAITAOF inside MULTI/EXEC: the state as it is, without waiting (Redis's deny-blocking).
pub(crate) fn waitaof_queued(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    match waitaof_args(ctx.state, argv) {
        Ok(_) => waitaof_reply(ctx.state.aof().synced()),
        Err(reply) => reply,
    }
}

/// BGREWRITEAOF, as Redis 8.8's: refused while a rewrite runs; while a BGSAVE runs (or
/// inside EXEC) scheduled for the cron to start once no child runs.
pub(crate) fn bgrewriteaof(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.state.aof().rewriting() {
        return CommandError::RewriteInProgress.into();
    }
    if ctx.state.child_active() || ctx.client.in_exec {
        ctx.state.aof().schedule_rewrite();
        return Reply::Status("Background append only file rewriting scheduled");
    }
    match ctx.state.rewrite_aof(ctx.dbs.all()) {
        Ok(()) => Reply::Status("Background append only file rewriting started"),
        Err(_) => CommandError::RewriteFailed.into(),
    }
}
