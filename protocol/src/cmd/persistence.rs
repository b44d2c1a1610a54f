//! `BGREWRITEAOF`, `SAVE`, `BGSAVE`, `LASTSAVE`, and the persistence checks every request
//! passes (`-LOADING` while the AOF or `dump.rdb` loads, `-MISCONF` for writes while AOF
//! writes fail or after a failed background save) (INFO's `persistence` section is in
//! `info/process.rs`).

use echomq_engine::Reply;
use echomq_engine::command::CommandSpec;
use echomq_engine::command::flags::{LOADING_OK, WRITE};

use super::Ctx;
use crate::aof::load::AOF_CLIENT_ID;
use crate::state::{ClientState, ServerState};

/// The error that refuses a command with this table row now, if any: `-LOADING` while the
/// dataset loads (but for the LOADING_OK commands), `-MISCONF` for a WRITE while the AOF
/// cannot be written.
pub(crate) fn refusal(
    state: &ServerState,
    client: &ClientState,
    spec: &CommandSpec,
) -> Option<Reply> {
    if client.info.id == AOF_CLIENT_ID {
        return None;
    }
    if state.loading() && !spec.has(LOADING_OK) {
        return Some(Reply::Error(
            "LOADING Redis is loading the dataset in memory".into(),
        ));
    }
    if spec.has(WRITE)
        && let Some(error) = state.aof().write_error()
    {
        return Some(Reply::Error(format!(
            "MISCONF Errors writing to the AOF file: {error}"
        )));
    }
    if (spec.has(WRITE) || spec.name == "ping")
        && let Some(misconf) = state.rdb_write_refusal()
    {
        return Some(Reply::Error(misconf.into()));
    }
    None
}

/// SAVE.
pub(crate) fn save(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    if ctx.state.rdb().bgsave_in_progress() {
        return Reply::Error("ERR Background save already in progress".into());
    }
    match ctx.state.save(ctx.dbs) {
        Ok(()) => Reply::OK,
        Err(e) => Reply::Error(e),
    }
}

/// `BGSAVE [SCHEDULE]`: with SCHEDULE while a save runs, one more starts when it ends.
pub(crate) fn bgsave(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    let schedule = argv.len() == 2 && super::is(argv[1], "schedule");
    if argv.len() > 2 || (argv.len() == 2 && !schedule) {
        return super::error(echomq_engine::Error::Syntax);
    }
    if schedule && ctx.state.rdb().in_progress() {
        ctx.state.rdb().schedule();
        return Reply::Status("Background saving scheduled");
    }
    match ctx.state.bgsave(ctx.dbs) {
        Ok(()) => Reply::Status("Background saving started"),
        Err(e) => Reply::Error(e),
    }
}

/// LASTSAVE: Unix seconds of the last successful save.
pub(crate) fn lastsave(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    Reply::Int(ctx.state.rdb().last_save_s() as i64)
}

/// BGREWRITEAOF.
pub(crate) fn bgrewriteaof(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    let aof = ctx.state.aof();
    if aof.rewriting() {
        return Reply::Error(
            "ERR Background append only file rewriting already in progress".into(),
        );
    }
    let config = ctx.state.aof_config();
    match aof.rewrite(ctx.dbs, &config) {
        Ok(()) => Reply::Status("Background append only file rewriting started"),
        Err(_) => Reply::Error(
            "ERR Can't execute an AOF background rewriting. Please check the server logs for more information."
                .into(),
        ),
    }
}
