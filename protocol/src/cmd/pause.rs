//! CLIENT PAUSE and CLIENT UNPAUSE. A WRITE pause holds the commands the tables flag WRITE or
//! MAY_REPLICATE.

use echomq_engine::Reply;

use super::{Ctx, int_arg, is, subcommand_syntax};

/// `CLIENT PAUSE timeout [WRITE|ALL]` (milliseconds).
pub(crate) fn pause(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv.len() > 4 {
        return subcommand_syntax(argv);
    }
    let all = match argv.get(3) {
        None => true,
        Some(mode) if is(mode, "all") => true,
        Some(mode) if is(mode, "write") => false,
        Some(_) => return Reply::Error("ERR CLIENT PAUSE mode must be WRITE or ALL".into()),
    };
    let ms = match int_arg(argv[2]) {
        Ok(ms) if ms < 0 => return Reply::Error("ERR timeout is negative".into()),
        Ok(ms) => ms as u64,
        Err(_) => return Reply::Error("ERR timeout is not an integer or out of range".into()),
    };
    ctx.state.pause().pause(ms, all);
    Reply::OK
}

/// `CLIENT UNPAUSE`.
pub(crate) fn unpause(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    ctx.state.pause().unpause();
    Reply::OK
}
