//! CLIENT PAUSE and CLIENT UNPAUSE. A WRITE pause holds the commands the tables flag WRITE or
//! MAY_REPLICATE.

use echomq_engine::Reply;

use super::{Ctx, int_arg, is, subcommand_syntax};

use crate::error::CommandError;

/// `CLIENT PAUSE timeout [WRITE|ALL]` (milliseconds).
pub(crate) fn pause(ctx: &mut Ctx<'_>, argv: &[&[u8]]) -> Reply {
    if argv.len() > 4 {
        return subcommand_syntax(argv);
    }
    let all = match argv.get(3) {
        None => true,
        Some(mode) if is(mode, "all") => true,
        Some(mode) if is(mode, "write") => false,
        Some(_) => return CommandError::PauseMode.into(),
    };
    let ms = match int_arg(argv[2]) {
        Ok(ms) if ms < 0 => return CommandError::TimeoutNegative.into(),
        Ok(ms) => ms as u64,
        Err(_) => return CommandError::TimeoutNotInteger.into(),
    };
    ctx.state.pause().pause(ms, all);
    Reply::OK
}

/// `CLIENT UNPAUSE`.
pub(crate) fn unpause(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Reply {
    ctx.state.pause().unpause();
    Reply::OK
}
